//! Output files written atomically: into a temporary file beside the
//! destination, renamed over it only when complete, so a reader (a cron job
//! mailing the report) never sees half a file.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::cli::io_reason;

pub struct AtomicFile {
    dest: PathBuf,
    tmp: PathBuf,
    file: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `dest`; nothing appears there until [`commit`](Self::commit).
    pub fn create(dest: &Path) -> anyhow::Result<Self> {
        let name = dest
            .file_name()
            .with_context(|| format!("{}: not a file name", dest.display()))?;
        let tmp = dest.with_file_name(format!(
            ".{}.{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = File::create(&tmp)
            .map_err(|e| anyhow::anyhow!("{}: {}", dest.display(), io_reason(&e)))?;
        Ok(AtomicFile {
            dest: dest.to_path_buf(),
            tmp,
            file: Some(BufWriter::with_capacity(256 * 1024, file)),
        })
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(mut self) -> anyhow::Result<()> {
        let Some(w) = self.file.take() else {
            return Ok(());
        };
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&self.tmp, &self.dest)
            .map_err(|e| anyhow::anyhow!("{}: {}", self.dest.display(), io_reason(&e)))?;
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(buf),
            None => Err(io::Error::other("file already committed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    /// An uncommitted file is removed: the destination keeps its old content.
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appears_only_on_commit() {
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("report.md");
        std::fs::write(&dest, "old").unwrap();
        let mut f = AtomicFile::create(&dest).unwrap();
        f.write_all(b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "old");
        f.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "new");
        let mut f = AtomicFile::create(&dest).unwrap();
        f.write_all(b"half").unwrap();
        drop(f);
        assert_eq!(std::fs::read_to_string(&dest).unwrap(), "new");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
