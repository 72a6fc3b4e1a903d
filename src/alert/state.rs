//! The cooldown state file: when each pattern last fired. Every
//! triage-alert run that may send holds an exclusive lock on a companion
//! `.lock` file from reading the state to writing it back, so two cron jobs
//! cannot both fire one pattern; the state itself is replaced atomically,
//! so a crash never leaves half a file.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use crate::plumbing::diag::{io_reason, output_reason};
use crate::plumbing::outfile::AtomicFile;

/// The state file's format version.
const VERSION: u64 = 1;
/// Seconds a `last_fired` may lie ahead of the clock (a clock stepped
/// back a little) before the entry counts as corrupt.
pub(crate) const CLOCK_SLACK: i64 = 300;

#[derive(Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct OnDisk {
    version: u64,
    /// Pattern id → Unix second it last fired.
    last_fired: BTreeMap<String, i64>,
}

/// The cooldown state, locked for writing or read-only (`--dry-run`).
pub(crate) struct AlertState {
    path: PathBuf,
    /// Held while this run may send; released when dropped.
    lock: Option<File>,
    last_fired: BTreeMap<String, i64>,
}

impl AlertState {
    /// `$XDG_STATE_HOME/triage/alert-state.json`, else under
    /// `~/.local/state`.
    pub(crate) fn default_path() -> anyhow::Result<PathBuf> {
        let base = match std::env::var_os("XDG_STATE_HOME").filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|home| PathBuf::from(home).join(".local/state"))
                .context("no state file: set --state, XDG_STATE_HOME or HOME")?,
        };
        Ok(base.join("triage/alert-state.json"))
    }

    /// Takes the exclusive lock (waiting for another run to finish), then
    /// reads the state. The directory is created when missing.
    pub(crate) fn lock(path: &Path) -> anyhow::Result<Self> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow::anyhow!("{}: {}", dir.display(), io_reason(&e)))?;
        }
        let lock_path = lock_path(path);
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| anyhow::anyhow!("{}: {}", lock_path.display(), io_reason(&e)))?;
        lock.lock().map_err(|e| {
            anyhow::anyhow!("{}: cannot lock: {}", lock_path.display(), io_reason(&e))
        })?;
        let mut state = Self::read(path)?;
        state.lock = Some(lock);
        Ok(state)
    }

    /// Reads the state without locking it; a missing file is an empty state.
    pub(crate) fn read(path: &Path) -> anyhow::Result<Self> {
        let on_disk = match std::fs::read(path) {
            Ok(bytes) => parse(&bytes).map_err(|e| {
                anyhow::anyhow!(
                    "{}: not a triage-alert state file ({e}); move it away to start over",
                    path.display()
                )
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => OnDisk::default(),
            Err(e) => anyhow::bail!("{}: {}", path.display(), output_reason(&e)),
        };
        Ok(AlertState {
            path: path.to_path_buf(),
            lock: None,
            last_fired: on_disk.last_fired,
        })
    }

    /// Drops the entries that fired more than [`CLOCK_SLACK`] seconds
    /// after `now` and returns them: such a time is corrupt (a clock once
    /// far ahead, a hand edit) and would silence its pattern for ever.
    pub(crate) fn drop_future(&mut self, now: i64) -> Vec<(String, i64)> {
        let limit = now.saturating_add(CLOCK_SLACK);
        let future: Vec<(String, i64)> = self
            .last_fired
            .iter()
            .filter(|&(_, &at)| at > limit)
            .map(|(id, &at)| (id.clone(), at))
            .collect();
        for (id, _) in &future {
            self.last_fired.remove(id);
        }
        future
    }

    pub(crate) fn last_fired(&self, pattern_id: &str) -> Option<i64> {
        self.last_fired.get(pattern_id).copied()
    }

    /// Notes that `pattern_id` fired at Unix second `at`, in memory only.
    pub(crate) fn fired(&mut self, pattern_id: &str, at: i64) {
        self.last_fired.insert(pattern_id.to_string(), at);
    }

    /// Writes the state back atomically. Only a locked state may be saved.
    pub(crate) fn save(&self) -> anyhow::Result<()> {
        anyhow::ensure!(
            self.lock.is_some(),
            "{}: state read without its lock cannot be written",
            self.path.display()
        );
        let on_disk = OnDisk {
            version: VERSION,
            last_fired: self.last_fired.clone(),
        };
        let mut file = AtomicFile::create(&self.path)?;
        serde_json::to_writer(&mut file, &on_disk)?;
        file.write_all(b"\n")?;
        file.commit()
    }
}

fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

/// Why a state file cannot be read.
#[derive(Debug, thiserror::Error)]
enum StateError {
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error("version {0} is newer than this tool's {VERSION}")]
    Newer(u64),
}

fn parse(bytes: &[u8]) -> Result<OnDisk, StateError> {
    let on_disk: OnDisk = serde_json::from_slice(bytes)?;
    if on_disk.version > VERSION {
        return Err(StateError::Newer(on_disk.version));
    }
    Ok(on_disk)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_state_reads_back_and_a_missing_file_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/state.json");
        let mut s = AlertState::lock(&path).unwrap();
        assert_eq!(s.last_fired("a/b"), None);
        s.fired("a/b", 1_700_000_000);
        s.save().unwrap();
        drop(s);
        let back = AlertState::read(&path).unwrap();
        assert_eq!(back.last_fired("a/b"), Some(1_700_000_000));
    }

    #[test]
    fn entries_fired_in_the_future_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = AlertState::read(&dir.path().join("s.json")).unwrap();
        s.fired("past", 1000);
        s.fired("skewed", 1000 + CLOCK_SLACK);
        s.fired("future", 99_999_999_999);
        assert_eq!(s.drop_future(1000), vec![("future".into(), 99_999_999_999)]);
        assert_eq!(s.last_fired("future"), None);
        assert_eq!(s.last_fired("past"), Some(1000));
        assert_eq!(s.last_fired("skewed"), Some(1000 + CLOCK_SLACK));
    }

    #[test]
    fn a_read_only_state_cannot_be_saved() {
        let dir = tempfile::tempdir().unwrap();
        let s = AlertState::read(&dir.path().join("s.json")).unwrap();
        assert!(s.save().is_err());
        assert!(!dir.path().join("s.json").exists());
    }

    #[test]
    fn a_corrupt_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        std::fs::write(&path, "{\"version\":1,\"last_fired\":").unwrap();
        let e = AlertState::read(&path).err().unwrap().to_string();
        assert!(e.contains("s.json: not a triage-alert state file"), "{e}");
        std::fs::write(&path, "{\"version\":9,\"last_fired\":{}}").unwrap();
        let e = AlertState::read(&path).err().unwrap().to_string();
        assert!(e.contains("newer"), "{e}");
    }

    #[test]
    fn the_lock_excludes_a_second_holder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        let held = AlertState::lock(&path).unwrap();
        let other = File::options().write(true).open(lock_path(&path)).unwrap();
        assert!(other.try_lock().is_err());
        drop(held);
        assert!(other.try_lock().is_ok());
    }
}
