//! Golden tests: triage-render's output for the reference's Monday example
//! (examples/monday.ndjson through the real parse, group and score), in
//! every format, byte for byte. `UPDATE_GOLDEN=1 cargo test --test cli
//! render_golden::` rewrites the golden files after a deliberate change.

use crate::common;

use std::path::Path;

use common::{assert_golden, changes_before_monday, fixture, ok, render, scored_monday};

fn check_golden(format: &str, file: &str) {
    check_golden_of(scored_monday(), format, file);
}

fn check_golden_of(input: Vec<u8>, format: &str, file: &str) {
    let out = render()
        .args(["--format", format])
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_golden(Path::new("tests/golden").join(file), out.stdout);
}

#[test]
fn markdown_matches_golden() {
    check_golden("md", "monday.md");
}

#[test]
fn json_matches_golden() {
    check_golden("json", "monday.json");
}

#[test]
fn csv_matches_golden() {
    check_golden("csv", "monday.csv");
}

#[test]
fn html_matches_golden() {
    check_golden("html", "monday.html");
}

#[test]
fn table_matches_golden() {
    check_golden("table", "monday.txt");
}

/// The Monday example with what `triage-explain --narrate` adds to its top
/// two patterns (the third has none), and a trace text with markup in one.
fn narrated_monday() -> Vec<u8> {
    let text = String::from_utf8(scored_monday()).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let mut rec: serde_json::Value = serde_json::from_str(line).unwrap();
        let narrative = match rec["rank"].as_u64() {
            Some(1) => Some((
                "The planner dispatched 11 subtasks while its view of the retriever and the task queue was stale, \
                 and none recovered within 3 turns.\nEvery sample shows <retriever_state> older than the queue head.",
                "Make dispatch_subtask re-read task_queue_head and refuse to dispatch when the retriever's index is older.",
            )),
            Some(2) => Some((
                "call_external_api failed twice in 2 of 3 runs with no retry.",
                "Retry call_external_api once with backoff | log the status.",
            )),
            _ => None,
        };
        if let Some((n, f)) = narrative {
            rec["narrative"] = serde_json::json!(n);
            rec["fix"] = serde_json::json!(f);
            rec["narrative_model"] = serde_json::json!("claude-haiku-4-5");
        }
        out.push_str(&rec.to_string());
        out.push('\n');
    }
    out.into_bytes()
}

#[test]
fn a_narrated_report_matches_golden_in_every_format() {
    for (format, ext) in [
        ("md", "md"),
        ("html", "html"),
        ("table", "txt"),
        ("csv", "csv"),
    ] {
        check_golden_of(narrated_monday(), format, &format!("monday-narrated.{ext}"));
    }
}

#[test]
fn comparison_matches_golden_in_every_format() {
    for (format, ext) in [
        ("md", "md"),
        ("json", "json"),
        ("csv", "csv"),
        ("html", "html"),
        ("table", "txt"),
    ] {
        check_golden_of(
            changes_before_monday(),
            format,
            &format!("compare-before-monday.{ext}"),
        );
    }
}

/// The comparison report says what the reference's published one says:
/// each of its table rows and list items, word for word (ours may add
/// headlines the reference missed, such as unrecovered changes).
#[test]
fn comparison_has_the_reference_reports_rows() {
    let reference = std::fs::read_to_string(fixture("reference-compare-before-after.md")).unwrap();
    let out = render()
        .write_stdin(changes_before_monday())
        .output()
        .unwrap();
    let ours = String::from_utf8(out.stdout).unwrap();
    let mut checked = 0;
    for line in reference.lines() {
        let row = line.starts_with("| ") && !line.starts_with("| Metric");
        let row = row && !line.starts_with("| Classification") && !line.starts_with("| Pattern");
        if row || line.starts_with("- ") {
            assert!(ours.contains(line), "missing: {line}\n--- ours ---\n{ours}");
            checked += 1;
        }
    }
    assert_eq!(checked, 22);
}

/// The numbers in a metrics row: "11 event(s) across 3 run(s)" → [11, 3].
fn numbers(s: &str) -> Vec<String> {
    s.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .map(|t| t.trim_matches('.'))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// A pattern section of a report: heading, category and (metric, numbers).
type Section = (String, String, Vec<(String, Vec<String>)>);

fn sections(md: &str) -> Vec<Section> {
    md.split("\n## #")
        .skip(1)
        // A section ends where the next heading (the per-agent view) starts.
        .map(|sec| sec.split("\n## ").next().unwrap())
        .map(|sec| {
            let heading = sec.lines().next().unwrap().to_string();
            let category = sec
                .lines()
                .find_map(|l| l.strip_prefix("**Category:** "))
                .unwrap()
                .to_string();
            let metrics = sec
                .lines()
                .filter(|l| l.starts_with("| ") && !l.starts_with("| Metric"))
                .map(|l| {
                    let cells: Vec<&str> = l.split('|').map(str::trim).collect();
                    (cells[1].to_string(), numbers(cells[2]))
                })
                .collect();
            (heading, category, metrics)
        })
        .collect()
}

/// Our markdown report on a reference example has the same patterns, in
/// the same order, with the same numbers as the reference's published one.
fn check_reference_numbers(scored: Vec<u8>, reference: &str, patterns: usize) {
    let reference = std::fs::read_to_string(fixture(reference)).unwrap();
    let out = render().write_stdin(scored).output().unwrap();
    let ours = String::from_utf8(out.stdout).unwrap();
    let (want, got) = (sections(&reference), sections(&ours));
    assert_eq!(want.len(), patterns);
    assert_eq!(got, want);
    let generated = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("Generated: "))
            .map(str::to_string)
    };
    assert_eq!(generated(&ours), generated(&reference));
}

#[test]
fn markdown_has_the_reference_reports_numbers() {
    check_reference_numbers(scored_monday(), "reference-monday-report.md", 3);
}

#[test]
fn markdown_has_the_reference_reports_numbers_on_seed42() {
    let path = fixture("seed42.ndjson");
    let events = ok("triage-parse", &[path.to_str().unwrap()], b"");
    let scored = ok("triage-score", &[], &ok("triage-group", &[], &events));
    check_reference_numbers(scored, "reference-seed42-report.md", 3);
}

/// `triage report` renders in-process: a report built from the scored
/// records as values gives the same markdown as the binary.
#[test]
fn in_process_render_equals_the_binary() {
    use triage::record::{Batch, Pattern, RunRec};
    use triage::render::{self, RenderOptions, Report};
    use triage::timestamp::Timestamp;

    let scored = scored_monday();
    let mut batch = None;
    let mut patterns = Vec::new();
    let mut runs = Vec::new();
    for line in String::from_utf8(scored.clone()).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        match v["kind"].as_str() {
            Some("batch") => batch = Some(serde_json::from_value::<Batch>(v).unwrap()),
            Some("run") => runs.push(serde_json::from_value::<RunRec>(v).unwrap()),
            Some("pattern") => patterns.push(serde_json::from_value::<Pattern>(v).unwrap()),
            _ => {}
        }
    }
    let report = Report::from_scored(batch.unwrap(), runs, patterns);
    let opts = RenderOptions {
        generated: Timestamp::from_unix_nanos(
            common::EPOCH.parse::<i128>().unwrap() * 1_000_000_000,
        ),
        ..RenderOptions::default()
    };
    let mut ours = Vec::new();
    render::render(&report, &opts, &mut ours).unwrap();
    let binary = render().write_stdin(scored).output().unwrap().stdout;
    let (ours, binary) = (
        String::from_utf8(ours).unwrap(),
        String::from_utf8(binary).unwrap(),
    );
    assert!(
        ours == binary,
        "in-process (-) and binary (+) differ:\n{}",
        common::line_diff(&ours, &binary)
    );
}
