//! The documentation holds: every binary answers --help and --version, its
//! committed man page and completions match what its clap definition generates
//! (`make man completions`), and the shell examples of README.md and docs/ run.
//!
//! Examples: a fenced `sh` block runs in bash (`set -e -o pipefail`) in a
//! scratch directory holding `examples/`, `tests/` and `triage.example.toml`,
//! with the built binaries first on PATH, and must exit 0. In a fenced
//! `console` block each `$ ` line runs the same way and its stdout must be the
//! lines below it. A block right after a `<!-- not run: REASON -->` line is
//! skipped: it needs the reader's own data, the network, a webhook or a model.

use crate::common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn binaries() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("src/bin")
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".rs").map(str::to_string)
        })
        .filter(|n| n.starts_with("triage"))
        .collect();
    names.sort();
    names
}

fn generated(bin: &str, what: &str) -> String {
    String::from_utf8(common::ok(bin, &["--generate", what], b"")).unwrap()
}

#[test]
fn help_and_version_work_for_every_binary() {
    for bin in binaries() {
        let out = common::cmd(&bin).arg("--help").output().unwrap();
        assert!(out.status.success(), "{bin} --help");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Usage:"),
            "{bin} --help"
        );
        let out = common::cmd(&bin).arg("--version").output().unwrap();
        assert!(
            String::from_utf8_lossy(&out.stdout).starts_with(&format!("{bin} ")),
            "{bin} --version"
        );
    }
    for sub in ["report", "compare"] {
        let out = common::cmd("triage")
            .args([sub, "--version"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.starts_with(&format!("triage-{sub} ")),
            "triage {sub} --version: {text}"
        );
    }
}

#[test]
fn man_pages_and_completions_are_current() {
    let mut stale = Vec::new();
    let mut diffs = Vec::new();
    for bin in binaries() {
        for (what, path) in [
            ("man", format!("man/{bin}.1")),
            ("bash", format!("completions/bash/{bin}")),
            ("zsh", format!("completions/zsh/_{bin}")),
            ("fish", format!("completions/fish/{bin}.fish")),
        ] {
            let committed = std::fs::read_to_string(Path::new(&path)).unwrap_or_default();
            let generated = generated(&bin, what);
            if committed != generated {
                let diff = common::line_diff(&committed, &generated);
                diffs.push(format!("{path} (-committed +generated):\n{diff}"));
                stale.push(path);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale or missing (run `make man completions`): {stale:?}\n{}",
        diffs.join("\n")
    );
}

#[test]
fn man_pages_document_exit_status_records_and_examples() {
    for bin in binaries() {
        let man = generated(&bin, "man");
        for section in ["EXIT STATUS", "RECORDS", "EXAMPLES"] {
            assert!(
                man.contains(&format!(".SH \"{section}\"")),
                "{bin}: no {section}"
            );
        }
    }
}

#[test]
fn triage_man_page_lists_the_flags_of_report_and_compare() {
    let man = generated("triage", "man");
    let section = |title: &str| {
        let start = man
            .find(&format!(".SH \"{title}\""))
            .unwrap_or_else(|| panic!("no {title} section"));
        let rest = &man[start + 4..];
        rest[..rest.find(".SH ").unwrap_or(rest.len())].to_string()
    };
    let report = section("TRIAGE REPORT");
    for flag in [
        "\\-\\-ai\\-analysis",
        "\\-\\-top",
        "\\-\\-refresh",
        "\\-\\-input\\-format",
    ] {
        assert!(report.contains(flag), "report: no {flag}");
    }
    let compare = section("TRIAGE COMPARE");
    for flag in [
        "\\-\\-fail\\-on",
        "\\-\\-tolerance",
        "\\-\\-format",
        "BEFORE",
    ] {
        assert!(compare.contains(flag), "compare: no {flag}");
    }
    // --top caps the comparison's pattern lists, and --min-events the gate.
    for flag in ["\\-\\-top", "\\-\\-min\\-events"] {
        assert!(compare.contains(flag), "compare: no {flag}");
    }
}

/// The repository's root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The repository's files: what git tracks, or every file outside target/
/// and .git/ where there is no git (an unpacked tarball).
fn repository_files() -> Vec<PathBuf> {
    let git = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root())
        .output();
    if let Ok(out) = git
        && out.status.success()
        && !out.stdout.is_empty()
    {
        return out
            .stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
            .collect();
    }
    let mut files = Vec::new();
    let mut dirs = vec![PathBuf::new()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(root().join(&dir)).unwrap() {
            let entry = entry.unwrap();
            let rel = dir.join(entry.file_name());
            let name = entry.file_name();
            if entry.file_type().unwrap().is_dir() {
                if !["target", ".git", "bench-out"].contains(&name.to_str().unwrap_or("")) {
                    dirs.push(rel);
                }
            } else {
                files.push(rel);
            }
        }
    }
    files
}

#[test]
fn no_file_refers_to_a_shared_directory_beside_the_clone() {
    // Spelled in two pieces so that this file does not match itself.
    let needle = format!("{}/{}", "..", "shared");
    let offenders: Vec<String> = repository_files()
        .into_iter()
        .filter(|p| p != Path::new(".ci/run"))
        .filter(|p| {
            std::fs::read(root().join(p))
                .is_ok_and(|bytes| memchr::memmem::find(&bytes, needle.as_bytes()).is_some())
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        offenders.is_empty(),
        "a user's clone has no {needle}; these files refer to it: {offenders:?}"
    );
}

#[test]
fn readme_is_a_page_not_a_manual() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; reference material belongs in docs/"
    );
    for doc in [
        "formats",
        "records",
        "scoring",
        "explain",
        "alerts-and-receiver",
        "scale",
        "performance",
    ] {
        let link = format!("(docs/{doc}.md)");
        assert!(readme.contains(&link), "README.md does not link {link}");
        assert!(
            root().join(format!("docs/{doc}.md")).is_file(),
            "no docs/{doc}.md"
        );
    }
}

/// README.md and every page of docs/.
fn documentation() -> Vec<(String, String)> {
    let mut pages = vec![("README.md".to_string(), read(&root().join("README.md")))];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    for path in docs {
        let name = format!("docs/{}", path.file_name().unwrap().to_string_lossy());
        pages.push((name, read(&path)));
    }
    pages
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn no_page_speaks_of_how_the_project_was_made() {
    let ordinals = [
        "first",
        "second",
        "third",
        "fourth",
        "fifth",
        "sixth",
        "seventh",
        "eighth",
        "ninth",
        "tenth",
        "eleventh",
        "twelfth",
        "thirteenth",
        "fourteenth",
        "fifteenth",
        "this",
        "last",
        "previous",
        "next",
        "earlier",
    ];
    let mut found = Vec::new();
    for (name, text) in documentation() {
        let lower = text.to_lowercase().replace('\n', " ");
        for word in ordinals {
            if lower.contains(&format!("{word} session")) {
                found.push(format!("{name}: \"{word} session\""));
            }
        }
        let words: Vec<&str> = lower.split_whitespace().collect();
        for pair in words.windows(2) {
            let number = pair[1].trim_start_matches('#');
            if pair[0] == "issue" && number.starts_with(|c: char| c.is_ascii_digit()) {
                found.push(format!("{name}: \"issue {number}\""));
            }
        }
        if lower.contains("tried and dropped") {
            found.push(format!("{name}: \"tried and dropped\""));
        }
    }
    assert!(
        found.is_empty(),
        "history belongs in commit messages: {found:?}"
    );
}

/// A fenced shell block of a page: where it starts, its kind and its text.
struct Example {
    page: String,
    line: usize,
    kind: String,
    text: String,
    skip: bool,
}

fn examples(page: &str, text: &str) -> Vec<Example> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(info) = lines[i].strip_prefix("```") else {
            i += 1;
            continue;
        };
        let kind = info.trim().to_string();
        let start = i;
        let mut body = Vec::new();
        i += 1;
        while i < lines.len() && !lines[i].starts_with("```") {
            body.push(lines[i]);
            i += 1;
        }
        i += 1;
        let before = lines[..start].iter().rev().find(|l| !l.trim().is_empty());
        let marker = before.and_then(|l| l.trim().strip_prefix("<!-- not run:"));
        if let Some(reason) = marker {
            let reason = reason.trim_end_matches("-->").trim();
            assert!(
                !reason.is_empty(),
                "{page}:{}: `not run` gives no reason",
                start
            );
        }
        out.push(Example {
            page: page.to_string(),
            line: start + 1,
            kind,
            text: body.join("\n") + "\n",
            skip: marker.is_some(),
        });
    }
    out
}

/// A scratch directory where examples run as they would in a clone.
fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["examples", "tests", "triage.example.toml"] {
        std::os::unix::fs::symlink(root().join(name), dir.path().join(name)).unwrap();
    }
    dir
}

/// Runs `script` in bash in `dir`; returns (success, stdout, stderr).
fn run_shell(dir: &Path, script: &str) -> (bool, String, String) {
    let bin = common::bin_dir();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = std::process::Command::new("bash")
        .args(["-e", "-o", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", dir)
        .env("XDG_STATE_HOME", dir.join(".state"))
        .env("XDG_CACHE_HOME", dir.join(".cache"))
        .env("SOURCE_DATE_EPOCH", "1777000000")
        .env_remove("COLUMNS")
        .env_remove("TRIAGE_CONFIG")
        .env_remove("TRIAGE_WEBHOOK_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).unwrap();
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        stderr.read_to_string(&mut s).unwrap();
        s
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (out, mut err) = (out.join().unwrap(), err.join().unwrap());
    if status.is_none() {
        err.push_str("\n(killed after 60 s)");
    }
    (status.is_some_and(|s| s.success()), out, err)
}

#[test]
fn shell_examples_in_the_documentation_run() {
    let mut failures = Vec::new();
    let mut ran = 0;
    for (page, text) in documentation() {
        for ex in examples(&page, &text) {
            let at = format!("{}:{}", ex.page, ex.line);
            match ex.kind.as_str() {
                "sh" | "console" if ex.skip => continue,
                "sh" => {
                    let dir = scratch();
                    let (ok, _, err) = run_shell(dir.path(), &ex.text);
                    if !ok {
                        failures.push(format!("{at}: failed:\n{}\n{err}", ex.text));
                    }
                    ran += 1;
                }
                "console" => {
                    let dir = scratch();
                    for (command, expected) in console_commands(&ex.text) {
                        let (ok, out, err) = run_shell(dir.path(), &command);
                        if !ok {
                            failures.push(format!("{at}: `{command}` failed: {err}"));
                        } else if out.trim_end() != expected.trim_end() {
                            let diff = common::line_diff(expected.trim_end(), out.trim_end());
                            failures.push(format!(
                                "{at}: `{command}` printed other lines than the page shows \
                                 (-page +printed):\n{diff}"
                            ));
                        }
                        ran += 1;
                    }
                }
                "bash" | "shell" | "zsh" | "shell-session" => failures.push(format!(
                    "{at}: a `{}` block; write `sh` (run) or `console` (run, output checked)",
                    ex.kind
                )),
                _ => {}
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        ran >= 5,
        "only {ran} examples ran; the pages should show runnable ones"
    );
}

/// The `$ ` commands of a console block, each with the output shown below it.
fn console_commands(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(command) = line.strip_prefix("$ ") {
            out.push((command.to_string(), String::new()));
        } else if let Some((_, expected)) = out.last_mut() {
            expected.push_str(line);
            expected.push('\n');
        } else {
            panic!("console block output before any `$ ` command: {line}");
        }
    }
    out
}

#[test]
fn console_blocks_split_into_commands_and_their_output() {
    let got = console_commands("$ a\none\ntwo\n$ b\n$ c\nthree\n");
    let want = [("a", "one\ntwo\n"), ("b", ""), ("c", "three\n")];
    assert_eq!(got.len(), want.len());
    for ((c, o), (wc, wo)) in got.iter().zip(want) {
        assert_eq!((c.as_str(), o.as_str()), (wc, wo));
    }
    let page = "text\n\n<!-- not run: needs a webhook -->\n```sh\nx\n```\n\n```sh\ny\n```\n";
    let ex = examples("p.md", page);
    assert_eq!(ex.len(), 2);
    assert!(ex[0].skip && !ex[1].skip);
    assert_eq!((ex[1].text.as_str(), ex[1].line), ("y\n", 8));
}
