//! Where a tool's output goes: stdout, or a file written atomically, and
//! either way a write error names it. Files are written into a temporary file beside the
//! destination, renamed over it only when complete, so a reader (a cron job
//! mailing the report) never sees half a file. Only a regular file is
//! replaced: a device or a FIFO (`-o /dev/null`, `-o /dev/stdout`) is
//! written in place, and a symlink's target is replaced (or created), not
//! the link. A temporary file is removed when the process ends on
//! SIGINT, SIGTERM or SIGHUP before it is renamed.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once, PoisonError};

use anyhow::Context;

use crate::plumbing::diag::io_reason;

pub(crate) struct AtomicFile {
    dest: PathBuf,
    /// The temporary file renamed over `dest` on commit; `None` when `dest`
    /// is written in place.
    tmp: Option<PathBuf>,
    file: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `dest`; nothing appears there until [`commit`](Self::commit).
    pub(crate) fn create(dest: &Path) -> anyhow::Result<Self> {
        let opened = |path: &Path| {
            File::create(path).map_err(|e| anyhow::anyhow!("{}: {}", dest.display(), io_reason(&e)))
        };
        let buffered = |file| Some(BufWriter::with_capacity(256 * 1024, file));
        let existing = std::fs::metadata(dest);
        let dest = match &existing {
            Ok(meta) if meta.is_dir() => {
                anyhow::bail!("{}: a directory: name the file to write", dest.display())
            }
            // Renaming over a device would replace it with a file: as root,
            // `-o /dev/null` left every later `> /dev/null` writing to a file.
            Ok(meta) if !meta.is_file() => {
                return Ok(AtomicFile {
                    dest: dest.to_path_buf(),
                    tmp: None,
                    file: buffered(opened(dest)?),
                });
            }
            Ok(_) => std::fs::canonicalize(dest).unwrap_or_else(|_| dest.to_path_buf()),
            // A link to a file not written yet (`latest.md` -> tomorrow's
            // report) is followed too.
            Err(_) => match std::fs::read_link(dest) {
                Ok(target) => dest.parent().unwrap_or(Path::new("")).join(target),
                Err(_) => dest.to_path_buf(),
            },
        };
        let name = dest
            .file_name()
            .with_context(|| format!("{}: not a file name", dest.display()))?;
        let tmp = dest.with_file_name(format!(
            ".{}.{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        // Known before it exists, so a signal cannot slip in between.
        pending().push(tmp.clone());
        remove_on_signal();
        let file = File::create(&tmp).map_err(|e| {
            forget(&tmp);
            let dir = tmp.parent().filter(|d| !d.as_os_str().is_empty());
            anyhow::anyhow!(
                "{}: cannot write a file beside it in {}: {}",
                dest.display(),
                dir.unwrap_or(Path::new(".")).display(),
                io_reason(&e)
            )
        })?;
        if let Ok(meta) = &existing {
            keep_mode_and_owner(&file, meta);
        }
        Ok(AtomicFile {
            file: buffered(file),
            dest,
            tmp: Some(tmp),
        })
    }

    /// Flushes, syncs and renames the file into place.
    pub(crate) fn commit(mut self) -> anyhow::Result<()> {
        let Some(w) = self.file.take() else {
            return Ok(());
        };
        let file = w
            .into_inner()
            .map_err(|e| named(&self.dest, e.into_error()))?;
        let Some(tmp) = &self.tmp else {
            return Ok(());
        };
        file.sync_all()?;
        // Held across the rename: a signal either finds the file still
        // pending (and removes it) or renamed, never half-way.
        let mut pending = pending();
        std::fs::rename(tmp, &self.dest)
            .map_err(|e| anyhow::anyhow!("{}: {}", self.dest.display(), io_reason(&e)))?;
        pending.retain(|p| p != tmp);
        Ok(())
    }
}

/// Temporary files not yet renamed into place.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(PoisonError::into_inner)
}

fn forget(tmp: &Path) {
    pending().retain(|p| p != tmp);
}

/// Removes the pending temporary files and ends the process as the signal
/// would have. Starts a thread that waits for the signals, the first time
/// a temporary file is made.
fn remove_on_signal() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    static WATCH: Once = Once::new();
    WATCH.call_once(|| {
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
            return;
        };
        let _ = std::thread::Builder::new()
            .name("outfile-signals".into())
            .spawn(move || {
                if let Some(signal) = signals.forever().next() {
                    // The lock is kept: nothing is renamed after this.
                    let pending = pending();
                    for tmp in pending.iter() {
                        let _ = std::fs::remove_file(tmp);
                    }
                    let _ = signal_hook::low_level::emulate_default_handler(signal);
                    std::process::exit(128 + signal);
                }
            });
    });
}

/// The process's stdout, whose write errors say "stdout" (`> /dev/full`).
pub(crate) struct Stdout(io::StdoutLock<'static>);

/// Stdout, locked and buffered with `capacity` bytes.
pub(crate) fn stdout(capacity: usize) -> BufWriter<Stdout> {
    BufWriter::with_capacity(capacity, Stdout(io::stdout().lock()))
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(|e| named(Path::new("stdout"), e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(|e| named(Path::new("stdout"), e))
    }
}

/// A write error that says which file (`-o /dev/full`: "no space left").
fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {}", path.display(), io_reason(&e)))
}

/// Gives the replacement the file's permissions (a private report stays
/// private) and, where allowed (as root), its owner.
fn keep_mode_and_owner(file: &File, was: &std::fs::Metadata) {
    use std::os::unix::fs::MetadataExt;
    let _ = file.set_permissions(was.permissions());
    let _ = std::os::unix::fs::fchown(file, Some(was.uid()), Some(was.gid()));
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(buf).map_err(|e| named(&self.dest, e)),
            None => Err(io::Error::other("file already committed")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush().map_err(|e| named(&self.dest, e)),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    /// An uncommitted file (a failed commit too) is removed: the
    /// destination keeps its old content.
    fn drop(&mut self) {
        if let Some(tmp) = &self.tmp {
            let mut pending = pending();
            if pending.contains(tmp) {
                let _ = std::fs::remove_file(tmp);
                pending.retain(|p| p != tmp);
            }
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

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_written_in_place_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("report.fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            return;
        }
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        let mut f = AtomicFile::create(&fifo).unwrap();
        f.write_all(b"report").unwrap();
        f.commit().unwrap();
        // Checked before the reader is joined: a FIFO renamed over would
        // leave it waiting for a writer forever.
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(kind.is_fifo(), "{kind:?}");
        assert_eq!(reader.join().unwrap(), "report");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_directory_is_refused_up_front() {
        let dir = tempfile::tempdir().unwrap();
        let e = AtomicFile::create(dir.path()).err().unwrap().to_string();
        assert!(e.ends_with("a directory: name the file to write"), "{e}");
    }

    fn is_symlink(path: &Path) -> bool {
        std::fs::symlink_metadata(path)
            .unwrap()
            .file_type()
            .is_symlink()
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_keeps_pointing_at_the_replaced_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("2026-12-03.md");
        let link = dir.path().join("latest.md");
        std::fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let mut f = AtomicFile::create(&link).unwrap();
        f.write_all(b"new").unwrap();
        f.commit().unwrap();
        assert!(is_symlink(&link));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("private.md");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mut f = AtomicFile::create(&path).unwrap();
        f.write_all(b"new").unwrap();
        f.commit().unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_symlink_gets_its_target_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("reports")).unwrap();
        let link = dir.path().join("latest.md");
        std::os::unix::fs::symlink("reports/2026-12-04.md", &link).unwrap();
        let mut f = AtomicFile::create(&link).unwrap();
        f.write_all(b"tomorrow").unwrap();
        f.commit().unwrap();
        assert!(is_symlink(&link));
        let written = dir.path().join("reports/2026-12-04.md");
        assert_eq!(std::fs::read_to_string(written).unwrap(), "tomorrow");
    }
}
