//! Where a tool reads from: FILE arguments resolved to files or stdin,
//! opened with errors that name them, and the check that a stage behind a
//! failed one does not report on nothing.

use std::io::{self, IsTerminal, Read};
use std::path::{Path, PathBuf};

use super::diag::{Diag, io_reason};

/// Where one input comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Stdin,
    File(PathBuf),
}

impl Input {
    /// The name used in messages and `source` records.
    pub(crate) fn name(&self) -> String {
        match self {
            Input::Stdin => "<stdin>".to_string(),
            Input::File(p) => p.display().to_string(),
        }
    }

    pub(crate) fn path(&self) -> Option<&Path> {
        match self {
            Input::Stdin => None,
            Input::File(p) => Some(p),
        }
    }

    /// The probe of a live input's unread bytes: stdin, where the system
    /// can tell. Files are read in whole chunks.
    pub(crate) fn waiting(&self) -> Option<super::waiting::Waiting> {
        match self {
            Input::Stdin => super::waiting::Waiting::stdin(),
            Input::File(_) => None,
        }
    }

    /// Opens the input for reading, naming the file in the error.
    pub(crate) fn open(&self) -> anyhow::Result<Box<dyn Read + Send>> {
        match self {
            Input::Stdin => {
                super::ndjson::enlarge_pipe(&io::stdin());
                Ok(Box::new(NoticingStdin(io::stdin())))
            }
            Input::File(p) => {
                let f = std::fs::File::open(p)
                    .map_err(|e| anyhow::anyhow!("{}: {}", p.display(), io_reason(&e)))?;
                Ok(Box::new(f))
            }
        }
    }
}

/// Whether anything but white space came in on stdin.
static STDIN_HAD_TEXT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Stdin, noting whether anything but white space came in.
struct NoticingStdin(io::Stdin);

impl Read for NoticingStdin {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.0.read(buf)?;
        if buf[..n].iter().any(|b| !b.is_ascii_whitespace()) {
            STDIN_HAD_TEXT.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(n)
    }
}

/// Fails closed: a stage whose only input is stdin and that read nothing
/// there (not even a header) sits behind a stage that failed or wrote
/// nothing, and a report of that would read as "nothing to report". Call
/// once the inputs are read.
pub(crate) fn refuse_empty_stdin(inputs: &[Input]) -> anyhow::Result<()> {
    let only_stdin = !inputs.is_empty() && inputs.iter().all(|i| *i == Input::Stdin);
    if only_stdin && !STDIN_HAD_TEXT.load(std::sync::atomic::Ordering::Relaxed) {
        anyhow::bail!("no records on stdin: did the stage before fail?");
    }
    Ok(())
}

/// Resolves FILE arguments: none or `-` is stdin. A terminal on stdin with no
/// FILE is a usage error rather than a silent wait. A file named twice is
/// read twice, as `cat` would, with a warning: its events would count twice.
pub(crate) fn inputs(files: &[PathBuf], diag: &mut Diag) -> anyhow::Result<Vec<Input>> {
    warn_repeated(files, diag);
    resolve_inputs(files)
}

/// [`inputs`] without the warning, for one input.
pub(crate) fn resolve_inputs(files: &[PathBuf]) -> anyhow::Result<Vec<Input>> {
    let list: Vec<Input> = if files.is_empty() {
        vec![Input::Stdin]
    } else {
        files
            .iter()
            .map(|f| {
                if f.as_os_str() == "-" {
                    Input::Stdin
                } else {
                    Input::File(f.clone())
                }
            })
            .collect()
    };
    if list.contains(&Input::Stdin) && io::stdin().is_terminal() {
        anyhow::bail!("no input: name a FILE or pipe records into stdin (see --help)");
    }
    Ok(list)
}

/// Warns once for each file named more than once, however it is spelled
/// (`a.ndjson`, `./a.ndjson`, a link to it).
fn warn_repeated(files: &[PathBuf], diag: &mut Diag) {
    let mut seen = std::collections::HashSet::new();
    let mut warned = std::collections::HashSet::new();
    for f in files.iter().filter(|f| f.as_os_str() != "-") {
        let key = std::fs::canonicalize(f).unwrap_or_else(|_| f.clone());
        if !seen.insert(key.clone()) && warned.insert(key) {
            diag.warn(
                "repeated-input",
                format_args!(
                    "{} is named more than once: it is read each time, and its events count each time",
                    f.display()
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dash_is_stdin() {
        let i = Input::File(PathBuf::from("a.ndjson"));
        assert_eq!(i.name(), "a.ndjson");
        assert_eq!(Input::Stdin.name(), "<stdin>");
    }
}
