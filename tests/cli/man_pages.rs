//! Man pages and completions a person can rely on: the trace formats listed
//! from the code's own list, SEE ALSO on every page naming only files
//! `make install` installs, `triage <TAB>` offering every command, and a
//! reader that leaves early (`--generate man | head -1`) causing no panic.

use crate::common;

use std::path::PathBuf;
use std::process::Stdio;

use clap::ValueEnum;
use triage::adapters::Format;

const BINARIES: [&str; 10] = [
    "triage",
    "triage-parse",
    "triage-group",
    "triage-score",
    "triage-render",
    "triage-diff",
    "triage-explain",
    "triage-alert",
    "triage-recv",
    "triage-gen",
];

/// The subcommands `triage` answers to.
const TRIAGE_COMMANDS: [&str; 11] = [
    "parse", "group", "score", "render", "diff", "explain", "alert", "recv", "gen", "report",
    "compare",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn generated(bin: &str, what: &str) -> String {
    String::from_utf8(common::ok(bin, &["--generate", what], b"")).unwrap()
}

/// A section of a roff page, from its `.SH` line to the next.
fn section(man: &str, title: &str) -> Option<String> {
    let start = man.find(&format!(".SH \"{title}\"\n"))?;
    let rest = &man[start + 4..];
    Some(rest[..rest.find("\n.SH ").unwrap_or(rest.len())].to_string())
}

fn formats() -> Vec<String> {
    Format::value_variants()
        .iter()
        .filter(|f| **f != Format::named("auto").unwrap())
        .map(|f| f.to_possible_value().unwrap().get_name().to_string())
        .collect()
}

#[test]
fn pages_of_tools_that_read_traces_list_every_format() {
    assert!(formats().len() >= 9, "{:?}", formats());
    for bin in ["triage-parse", "triage", "triage-diff"] {
        let man = generated(bin, "man");
        let listed = section(&man, "FORMATS").unwrap_or_else(|| panic!("{bin}: no FORMATS"));
        for name in formats() {
            assert!(
                listed.contains(&format!("\n{name}: ")),
                "{bin}: FORMATS does not list {name}:\n{listed}"
            );
        }
        assert!(
            listed.contains("With auto,"),
            "{bin}: FORMATS does not say how auto decides"
        );
    }
}

#[test]
fn every_page_has_see_also_with_the_other_tools_and_the_documentation() {
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.push("README.md".to_string());
    for bin in BINARIES {
        let man = generated(bin, "man");
        let see_also = section(&man, "SEE ALSO").unwrap_or_else(|| panic!("{bin}: no SEE ALSO"));
        for other in BINARIES.iter().filter(|b| **b != bin) {
            let page = format!("\\fB{}\\fR(1)", other.replace('-', "\\-"));
            assert!(see_also.contains(&page), "{bin}: SEE ALSO lacks {other}(1)");
        }
        assert!(
            !see_also.contains(&format!("\\fB{}\\fR(1)", bin.replace('-', "\\-"))),
            "{bin}: SEE ALSO names the page itself"
        );
        for doc in &docs {
            assert!(
                see_also.contains(doc.as_str()),
                "{bin}: SEE ALSO lacks {doc}"
            );
        }
        assert!(see_also.contains("share/doc/triage"), "{bin}: {see_also}");
    }
}

/// The documents a page sends the reader to: words ending in .md.
fn files_named(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || ",;:()\"'`".contains(c))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| w.ends_with(".md"))
        .map(str::to_string)
        .collect()
}

#[test]
fn pages_name_only_files_make_install_installs() {
    let dest = tempfile::tempdir().unwrap();
    let out = std::process::Command::new("make")
        .args(["-s", "install-docs", "PREFIX=/usr"])
        .arg(format!("DESTDIR={}", dest.path().display()))
        .current_dir(root())
        .output()
        .expect("make runs");
    assert!(
        out.status.success(),
        "make install-docs: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc_dir = dest.path().join("usr/share/doc/triage");
    let mut named = 0;
    for bin in BINARIES {
        for file in files_named(&generated(bin, "man")) {
            assert!(
                doc_dir.join(&file).is_file(),
                "{bin}(1) names {file}, which make install does not install"
            );
            named += 1;
        }
    }
    assert!(named >= BINARIES.len() * 8, "only {named} files named");
    assert_eq!(
        files_named("see docs/records.md (x), README.md; not docs/ or b.rs"),
        ["docs/records.md", "README.md"]
    );
}

/// Runs bash completion for the words of a command line, the last one
/// being completed; returns what bash would offer.
fn bash_complete(words: &[&str]) -> Vec<String> {
    let script = generated("triage", "bash");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("triage.bash");
    std::fs::write(&file, script).unwrap();
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let cword = words.len() - 1;
    let prev = if cword > 0 { words[cword - 1] } else { "" };
    let run = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={cword}; _triage triage '{}' '{prev}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        file.display(),
        quoted.join(" "),
        words[cword],
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &run])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn triage_tab_completes_every_command_in_bash() {
    let offered = bash_complete(&["triage", ""]);
    for name in TRIAGE_COMMANDS {
        assert!(
            offered.iter().any(|o| o == name),
            "triage <TAB> does not offer {name}: {offered:?}"
        );
    }
    assert_eq!(bash_complete(&["triage", "exp"]), ["explain"]);
    // A tool's own flags, through triage.
    assert_eq!(
        bash_complete(&["triage", "parse", "--max-t"]),
        ["--max-text"]
    );
    assert!(bash_complete(&["triage", "help", ""]).contains(&"render".to_string()));
}

#[test]
fn triage_completes_every_command_in_zsh_and_fish() {
    let zsh = generated("triage", "zsh");
    let fish = generated("triage", "fish");
    for name in TRIAGE_COMMANDS {
        assert!(zsh.contains(&format!("\n'{name}:")), "zsh: no {name}");
        assert!(
            fish.contains(&format!("__fish_triage_needs_command\" -f -a \"{name}\"")),
            "fish: no {name}"
        );
    }
}

#[test]
fn triage_help_names_every_command() {
    let out = common::cmd("triage").arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let words: Vec<&str> = help.split(|c: char| !c.is_alphanumeric()).collect();
    for name in TRIAGE_COMMANDS {
        assert!(words.contains(&name), "triage --help does not name {name}");
    }
}

/// Runs `bin --generate what` writing to a pipe nobody reads.
fn generate_into_closed_pipe(bin: &str, what: &str) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = std::process::Command::new(common::bin(bin))
        .args(["--generate", what])
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_pipe_is_no_panic_for_man_pages_or_completions() {
    for bin in BINARIES {
        for what in ["man", "bash", "zsh", "fish"] {
            let (code, stderr) = generate_into_closed_pipe(bin, what);
            assert_eq!(
                (code, stderr.as_str()),
                (Some(0), ""),
                "{bin} --generate {what} into a closed pipe"
            );
        }
    }
}

#[test]
fn man_page_piped_to_head_prints_its_first_line_quietly() {
    let bin = common::bin("triage-parse");
    let out = std::process::Command::new("bash")
        .args([
            "-o",
            "pipefail",
            "-c",
            &format!("'{}' --generate man | head -1", bin.display()),
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), 1);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}
