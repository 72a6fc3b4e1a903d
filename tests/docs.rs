//! Every binary answers --help and --version, and its committed man page and
//! completions match what its clap definition generates (`make man completions`).

use std::path::Path;

use assert_cmd::Command;

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
    let out = Command::cargo_bin(bin)
        .unwrap()
        .args(["--generate", what])
        .output()
        .unwrap();
    assert!(out.status.success(), "{bin} --generate {what} failed");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn help_and_version_work_for_every_binary() {
    for bin in binaries() {
        let out = Command::cargo_bin(&bin)
            .unwrap()
            .arg("--help")
            .output()
            .unwrap();
        assert!(out.status.success(), "{bin} --help");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Usage:"),
            "{bin} --help"
        );
        let out = Command::cargo_bin(&bin)
            .unwrap()
            .arg("--version")
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&out.stdout).starts_with(&format!("{bin} ")),
            "{bin} --version"
        );
    }
    for sub in ["report", "compare"] {
        let out = Command::cargo_bin("triage")
            .unwrap()
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
    for bin in binaries() {
        for (what, path) in [
            ("man", format!("man/{bin}.1")),
            ("bash", format!("completions/bash/{bin}")),
            ("zsh", format!("completions/zsh/_{bin}")),
            ("fish", format!("completions/fish/{bin}.fish")),
        ] {
            let committed = std::fs::read_to_string(Path::new(&path)).unwrap_or_default();
            if committed != generated(&bin, what) {
                stale.push(path);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale or missing (run `make man completions`): {stale:?}"
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
    assert!(
        !compare.contains("\\-\\-top"),
        "compare has no patterns to count"
    );
}
