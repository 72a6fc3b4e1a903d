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

    /// The probe of a live input's unread bytes: stdin, where the system
    /// can tell. Files are read in whole chunks.
    pub(crate) fn waiting(&self) -> Option<super::waiting::Waiting> {
        match self {
            Input::Stdin => super::waiting::Waiting::stdin(),
            Input::File(_) => None,
        }
    }

    /// Opens the input for reading, naming the file in the error; a gzip
    /// or zstd input reads as the text it holds.
    pub(crate) fn open(&self) -> anyhow::Result<Box<dyn Read + Send>> {
        let raw: Box<dyn Read + Send> = match self {
            Input::Stdin => {
                super::framing::enlarge_pipe(&io::stdin());
                Box::new(NoticingStdin(io::stdin()))
            }
            Input::File(p) => Box::new(
                std::fs::File::open(p)
                    .map_err(|e| anyhow::anyhow!("{}: {}", self.name(), io_reason(&e)))?,
            ),
        };
        super::decompress::transparent(raw)
            .map_err(|e| anyhow::anyhow!("{}: {}", self.name(), io_reason(&e)))
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
    let mut expanded = Vec::with_capacity(files.len());
    for f in files {
        if f.is_dir() {
            expanded.extend(trace_files_in(f, diag)?);
        } else {
            expanded.push(f.clone());
        }
    }
    warn_repeated(&expanded, diag);
    resolve_inputs(&expanded)
}

/// What a trace file is called, compressed or not.
const TRACE_EXTENSIONS: &[&str] = &["json", "jsonl", "ndjson", "traj", "eval"];

fn is_trace_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let name = name
        .strip_suffix(".gz")
        .or_else(|| name.strip_suffix(".zst"))
        .unwrap_or(name);
    Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| TRACE_EXTENSIONS.contains(&e))
}

/// The trace files under `dir`, recursively, in the order of their paths
/// (so a run reads the same files in the same order every time); hidden
/// files and folders are passed over, other files named in a warning.
pub(crate) fn trace_files_in(dir: &Path, diag: &mut Diag) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let mut left = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let entries = std::fs::read_dir(&d)
            .map_err(|e| anyhow::anyhow!("{}: {}", d.display(), io_reason(&e)))?;
        for entry in entries {
            let entry = entry.map_err(|e| anyhow::anyhow!("{}: {}", d.display(), io_reason(&e)))?;
            let path = entry.path();
            if entry.file_name().to_string_lossy().starts_with('.') {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
            } else if is_trace_file(&path) {
                files.push(path);
            } else {
                left.push(path);
            }
        }
    }
    files.sort();
    left.sort();
    if !left.is_empty() {
        let names: Vec<String> = left
            .iter()
            .take(3)
            .map(|p| p.display().to_string())
            .collect();
        let more = left.len().saturating_sub(names.len());
        diag.warn(
            "not-read",
            format_args!(
                "{}: read its .json, .jsonl, .ndjson, .traj and .eval files (also as .gz or .zst); left out {}{}",
                dir.display(),
                names.join(", "),
                if more > 0 { format!(" and {more} more") } else { String::new() }
            ),
        );
    }
    if files.is_empty() {
        anyhow::bail!(
            "{}: no trace files (.json, .jsonl, .ndjson, .traj, .eval, compressed or not) in it",
            dir.display()
        );
    }
    Ok(files)
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
    fn a_directory_reads_its_trace_files_recursively_in_path_order() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("b/c")).unwrap();
        std::fs::create_dir_all(d.join(".cache")).unwrap();
        for f in [
            "z.jsonl",
            "b/c/a.json.gz",
            "b/run.traj",
            "a.ndjson.zst",
            "notes.txt",
            ".cache/x.json",
        ] {
            std::fs::write(d.join(f), "{}").unwrap();
        }
        let mut diag = Diag::new("t", true);
        let files = trace_files_in(d, &mut diag).unwrap();
        let rel: Vec<String> = files
            .iter()
            .map(|p| p.strip_prefix(d).unwrap().display().to_string())
            .collect();
        assert_eq!(
            rel,
            ["a.ndjson.zst", "b/c/a.json.gz", "b/run.traj", "z.jsonl"]
        );
        assert_eq!(diag.count("not-read"), 1);
        let empty = tempfile::tempdir().unwrap();
        assert!(trace_files_in(empty.path(), &mut diag).is_err());
    }

    #[test]
    fn dash_is_stdin() {
        let i = Input::File(PathBuf::from("a.ndjson"));
        assert_eq!(i.name(), "a.ndjson");
        assert_eq!(Input::Stdin.name(), "<stdin>");
    }
}
