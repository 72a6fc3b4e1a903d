//! Warnings and error wording every layer shares: the `Diag` printer with
//! its per-kind cap, and the reasons of io and JSON errors as a person
//! reads them.

use std::collections::BTreeMap;
use std::fmt;
use std::io;

/// Warnings of one kind printed before the rest are only counted.
pub(crate) const WARNINGS_PER_KIND: u64 = 10;

/// Writes a message to stderr. Unlike `eprint!`, a stderr that is closed
/// (`2>&1 | head -1` after the reader left) is no panic: there is no one
/// left to tell.
pub(crate) fn to_stderr(msg: fmt::Arguments<'_>) {
    let _ = io::Write::write_fmt(&mut io::stderr().lock(), msg);
}

/// Warnings and their per-kind cap, printed as `tool: warning: ...`.
pub struct Diag {
    tool: &'static str,
    quiet: bool,
    counts: BTreeMap<&'static str, u64>,
    /// Inputs of which nothing could be read.
    unread: Vec<String>,
    /// For a service: the cap holds per window (a minute) rather than for
    /// the process's life, so an operator hears of an attack that goes on.
    window: Option<Windowed>,
}

/// Per kind: when its window opened, and the warnings counted in it.
struct Windowed {
    length: std::time::Duration,
    kinds: BTreeMap<&'static str, (std::time::Instant, u64)>,
}

impl Diag {
    pub fn new(tool: &'static str, quiet: bool) -> Self {
        Diag {
            tool,
            quiet,
            counts: BTreeMap::new(),
            unread: Vec::new(),
            window: None,
        }
    }

    /// Caps warnings per kind per `length` of time, not for the process's
    /// life: each window prints the first [`WARNINGS_PER_KIND`], then says
    /// how many more it left out when the next one of the kind comes.
    pub(crate) fn cap_per(&mut self, length: std::time::Duration) {
        self.window = Some(Windowed {
            length,
            kinds: BTreeMap::new(),
        });
    }

    /// Notes an input of which nothing could be read: the tool goes on
    /// with the other inputs, then fails (see [`Diag::unread`]).
    pub(crate) fn nothing_read(&mut self, input: &str) {
        self.unread.push(input.to_string());
    }

    /// The inputs of which nothing could be read.
    pub(crate) fn unread(&self) -> &[String] {
        &self.unread
    }

    pub(crate) fn tool(&self) -> &'static str {
        self.tool
    }

    /// Prints a warning of `kind` unless ten of that kind were printed already.
    pub(crate) fn warn(&mut self, kind: &'static str, msg: fmt::Arguments<'_>) {
        let n = self.counts.entry(kind).or_insert(0);
        *n += 1;
        if self.quiet {
            return;
        }
        let Some(w) = &mut self.window else {
            if *n <= WARNINGS_PER_KIND {
                to_stderr(format_args!("{}: warning: {}\n", self.tool, msg));
            }
            return;
        };
        let now = std::time::Instant::now();
        let (opened, in_window) = w.kinds.entry(kind).or_insert((now, 0));
        if now.duration_since(*opened) >= w.length {
            if *in_window > WARNINGS_PER_KIND {
                let more = *in_window - WARNINGS_PER_KIND;
                to_stderr(format_args!(
                    "{}: warning: {more} more {kind} warnings in the last {}s not shown\n",
                    self.tool,
                    w.length.as_secs()
                ));
            }
            (*opened, *in_window) = (now, 0);
        }
        *in_window += 1;
        if *in_window <= WARNINGS_PER_KIND {
            to_stderr(format_args!("{}: warning: {}\n", self.tool, msg));
        }
    }

    /// Prints a note (what a run cost, say) as `tool: note: ...`, unless quiet.
    pub(crate) fn note(&self, msg: fmt::Arguments<'_>) {
        if !self.quiet {
            to_stderr(format_args!("{}: note: {}\n", self.tool, msg));
        }
    }

    /// How many warnings of `kind` were raised, printed or not.
    pub fn count(&self, kind: &str) -> u64 {
        self.counts.get(kind).copied().unwrap_or(0)
    }

    /// Prints how many warnings of each kind were not shown.
    pub(crate) fn finish(&mut self) {
        if self.quiet {
            return;
        }
        for (kind, n) in &self.counts {
            // Windowed, only the last window's overflow is still untold.
            let untold = match &self.window {
                Some(w) => w.kinds.get(kind).map_or(0, |&(_, k)| k),
                None => *n,
            };
            if untold > WARNINGS_PER_KIND {
                let more = untold - WARNINGS_PER_KIND;
                let noun = if more == 1 { "warning" } else { "warnings" };
                to_stderr(format_args!(
                    "{}: warning: {more} more {kind} {noun} not shown ({n} in all)\n",
                    self.tool
                ));
            }
        }
        self.counts.clear();
    }
}

/// `n` and the noun in the right number: "1 run", "3 runs".
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// serde_json's reason without its " at line L column C" suffix (the
/// message names the file and line itself), quoted with `"` rather than
/// backquotes.
pub(crate) fn json_reason(e: &serde_json::Error) -> String {
    let s = e.to_string();
    let s = match s.rfind(" at line ") {
        Some(i) => &s[..i],
        None => &s,
    };
    s.replace('`', "\"")
}

/// A size in bytes as a person reads it: "256 MiB", "1 GiB", "1000 bytes".
pub(crate) fn size_text(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.is_multiple_of(1 << shift) {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} bytes")
}

/// Why a file could not be opened to write (or to keep state in): as
/// [`io_reason`], but a directory asks for a file's name, not for the
/// files in it as an input would.
pub(crate) fn output_reason(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::IsADirectory => "a directory: name the file to write".to_string(),
        io::ErrorKind::FileTooLarge => {
            "file too large: the file-size limit (ulimit -f) was reached".to_string()
        }
        io::ErrorKind::StorageFull => "no space left on the device".to_string(),
        _ => io_reason(e),
    }
}

/// An io error's reason without Rust's "(os error N)" suffix.
pub(crate) fn io_reason(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file".to_string(),
        io::ErrorKind::PermissionDenied => "permission denied".to_string(),
        io::ErrorKind::IsADirectory => {
            "a directory: name the files in it (DIR/*.ndjson)".to_string()
        }
        _ => {
            let s = e.to_string();
            match s.find(" (os error") {
                Some(i) => s[..i].to_string(),
                None => s,
            }
        }
    }
}

/// What becomes of input that cannot be read: skipped with a warning, or,
/// under `--strict`, the end of the run (exit status 2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnBadInput {
    #[default]
    Skip,
    Stop,
}

impl OnBadInput {
    pub fn strict(strict: bool) -> Self {
        if strict {
            OnBadInput::Stop
        } else {
            OnBadInput::Skip
        }
    }

    /// `reason` for not reading what is at `at`: the error `at: reason`
    /// under `Stop`; else a warning of `kind`, `at: reason; skipped`, and
    /// the caller counts what it skipped.
    pub(crate) fn skip(
        self,
        diag: &mut Diag,
        kind: &'static str,
        at: impl fmt::Display,
        reason: impl fmt::Display,
    ) -> anyhow::Result<()> {
        match self {
            OnBadInput::Stop => anyhow::bail!("{at}: {reason}"),
            OnBadInput::Skip => {
                diag.warn(kind, format_args!("{at}: {reason}; skipped"));
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod window_tests {
    use super::*;

    #[test]
    fn a_windowed_cap_counts_again_in_each_window() {
        let mut d = Diag::new("t", false);
        d.cap_per(std::time::Duration::from_millis(50));
        for _ in 0..25 {
            d.warn("k", format_args!("x"));
        }
        let w = d.window.as_ref().unwrap();
        assert_eq!(w.kinds["k"].1, 25);
        std::thread::sleep(std::time::Duration::from_millis(60));
        d.warn("k", format_args!("x"));
        let w = d.window.as_ref().unwrap();
        assert_eq!(w.kinds["k"].1, 1, "a new window opened");
        assert_eq!(d.count("k"), 26);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn warnings_are_counted_past_the_cap() {
        let mut d = Diag::new("t", true);
        for _ in 0..25 {
            d.warn("bad-line", format_args!("x"));
        }
        assert_eq!(d.count("bad-line"), 25);
        assert_eq!(d.count("other"), 0);
    }

    #[test]
    fn directory_given_as_file_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let err = std::fs::File::open(dir.path())
            .and_then(|mut f| f.read(&mut [0u8; 16]))
            .unwrap_err();
        assert!(
            io_reason(&err).starts_with("a directory: name the files in it"),
            "{err}"
        );
    }

    #[test]
    fn io_reason_drops_os_error_suffix() {
        let e = io::Error::from(io::ErrorKind::NotFound);
        assert_eq!(io_reason(&e), "no such file");
    }

    #[test]
    fn size_text_prints_whole_units() {
        assert_eq!(size_text(256 << 20), "256 MiB");
        assert_eq!(size_text(1000), "1000 bytes");
    }
}
