//! The `triage` command: report equals the four-stage pipeline, compare
//! renders triage-diff and gates like it, `triage X` runs triage-X.

use crate::common;

use common::*;

fn with_date(bin: &str, args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    run_env(bin, args, &[("SOURCE_DATE_EPOCH", "1777000000")], stdin)
}

#[test]
fn report_equals_the_four_stage_pipeline_in_every_format() {
    let traces = ok(
        "triage-gen",
        &["-n", "5000", "-r", "12", "--messy", "--seed", "4"],
        b"",
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("runs.ndjson");
    std::fs::write(&file, &traces).unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    // Files whose runs state their outcomes (with failed runs that no step
    // explains, and tasks of several trials) and one whose runs do not.
    let inputs = [
        file.to_str().unwrap().to_string(),
        format!("{root}/tests/data/tau-bench/gpt-4o-airline.json"),
        format!("{root}/tests/data/inspect-ai/arithmetic.json"),
        format!("{root}/examples/otlp-shop.jsonl"),
    ];
    for f in &inputs {
        let scored = scored(f);
        assert!(
            String::from_utf8_lossy(&scored).contains("\"kind\":\"run\""),
            "{f}"
        );
        for format in ["md", "table", "json", "csv", "html"] {
            let (code, one, _) = with_date(
                "triage",
                &["report", "-q", "--format", format, "--top", "5", f],
                b"",
            );
            assert_eq!(code, 0);
            let (_, four, _) = with_date(
                "triage-render",
                &["--format", format, "--top", "5"],
                &scored,
            );
            assert_eq!(
                String::from_utf8_lossy(&one),
                String::from_utf8_lossy(&four),
                "{f}: {format}"
            );
        }
    }
}

#[test]
fn report_reads_the_reference_muscle_memory() {
    let (code, out, _) = with_date(
        "triage",
        &["report", "examples/monday.ndjson", "--top", "2"],
        b"",
    );
    assert_eq!(code, 0);
    let md = String::from_utf8(out).unwrap();
    assert!(md.contains("## #2 - [executor] call_external_api"));
    assert!(!md.contains("## #3"));
    assert!(md.contains("**13.00**"));
}

#[test]
fn compare_renders_and_gates() {
    let (code, out, err) = with_date(
        "triage",
        &[
            "compare",
            "--fail-on",
            "new",
            "examples/before.ndjson",
            "examples/monday.ndjson",
        ],
        b"",
    );
    assert_eq!(code, 1, "{err}");
    let md = String::from_utf8(out).unwrap();
    assert!(
        md.contains("| Failure events | 27 | 19 | down 30% |"),
        "{md}"
    );
    assert!(md.contains("| Mean final score | 7.10 | 8.40 | +1.30 |"));
    assert!(err.contains("new pattern: [executor] call_external_api"));
}

#[test]
fn triage_x_runs_triage_x() {
    let (code, out, _) = run("triage", &["parse", "examples/monday.ndjson"], b"");
    assert_eq!(code, 0);
    assert_eq!(of_kind(&records(&out), "event").len(), 28);
    let (code, _, err) = run("triage", &["frobnicate"], b"");
    assert_eq!(code, 2);
    assert!(err.contains("not a triage command"), "{err}");
}

/// `triage help X` shows the help of X, a tool run through `triage` as
/// much as report or compare; `triage` alone says a command is missing.
#[test]
fn help_covers_every_command() {
    let help = |args: &[&str]| {
        let (code, out, err) = run("triage", args, b"");
        assert_eq!(code, 0, "triage {args:?}: {err}");
        String::from_utf8(out).unwrap()
    };
    assert!(help(&["help", "parse"]).contains("Usage: triage-parse"));
    assert!(help(&["help", "diff"]).contains("--fail-on"));
    assert!(help(&["help", "report"]).contains("Usage: triage report"));
    let own = help(&["help"]);
    assert_eq!(own, help(&["--help"]));
    assert!(own.contains("triage help X shows the help of X"), "{own}");
    let (code, _, err) = run("triage", &["help", "frobnicate"], b"");
    assert_eq!(code, 2);
    assert!(err.contains("not a triage command"), "{err}");
    let (code, _, err) = run("triage", &[], b"");
    assert_eq!(code, 2);
    assert!(err.starts_with("triage: error: no command given"), "{err}");
}

/// A side read from a directory of many files names the first ten and
/// counts the rest, as the other reports' source lines do.
#[test]
fn compare_names_ten_sources_a_side_and_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let text = String::from_utf8(ok("triage-gen", &["-n", "1200", "-r", "12"], b"")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    for (i, part) in lines.chunks(100).enumerate() {
        std::fs::write(
            dir.path().join(format!("part-{i:02}.ndjson")),
            part.join("\n") + "\n",
        )
        .unwrap();
    }
    let d = dir.path().to_str().unwrap();
    let (code, out, err) = with_date("triage", &["compare", d, d], b"");
    assert_eq!(code, 0, "{err}");
    let md = String::from_utf8(out).unwrap();
    let before = md.lines().find(|l| l.starts_with("**Before:**")).unwrap();
    assert!(
        before.contains("part-09.ndjson and 2 more (12 runs, 1200 events)"),
        "{before}"
    );
    assert!(!before.contains("part-10"), "{before}");
}

#[test]
fn compare_as_csv_is_one_table_of_pattern_changes() {
    let (code, out, err) = run(
        "triage",
        &[
            "compare",
            "-f",
            "csv",
            "examples/before.ndjson",
            "examples/monday.ndjson",
        ],
        b"",
    );
    assert_eq!(code, 0, "{err}");
    let text = String::from_utf8(out).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header[..3], ["scope", "status", "pattern_id"]);
    assert!(header.contains(&"frequency.after") && header.contains(&"final_score_after"));
    assert!(
        !header.contains(&"headlines"),
        "no summary columns: {header:?}"
    );
    let rows: Vec<&str> = lines.collect();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r.starts_with("pattern,")), "{text}");
    assert!(!err.contains("leaves out"), "{err}");
}
