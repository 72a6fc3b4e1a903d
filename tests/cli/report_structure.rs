//! What a team acts on in one report: runs in time order, patterns joined
//! to samples and root causes, a per-agent view, time buckets, and stages
//! that fail closed when the stage before them wrote nothing.

use crate::common;

use common::*;
use serde_json::Value;

fn dated(bin: &str, args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    run_env(
        bin,
        args,
        &[("SOURCE_DATE_EPOCH", EPOCH), ("NO_COLOR", "1")],
        stdin,
    )
}

fn json_report(args: &[&str]) -> Value {
    let mut all = vec!["report", "--format", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = dated("triage", &all, b"");
    assert_eq!(code, 0, "{err}");
    serde_json::from_slice(&out).unwrap()
}

/// (display name, trend) of every pattern, and the batch's run order.
fn trends(report: &Value) -> (Vec<(String, String)>, Value) {
    let patterns = report["patterns"].as_array().unwrap();
    let trends = patterns
        .iter()
        .map(|p| {
            (
                p["display_name"].as_str().unwrap().to_string(),
                p["trend"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (trends, report["batch"]["run_order"].clone())
}

#[test]
fn trend_follows_time_whichever_file_comes_first() {
    let forward = json_report(&["examples/before.ndjson", "examples/monday.ndjson"]);
    let backward = json_report(&["examples/monday.ndjson", "examples/before.ndjson"]);
    assert_eq!(trends(&forward), trends(&backward));
    let (trends, order) = trends(&forward);
    // monday.ndjson's runs are the older ones (April 24th, before.ndjson's
    // the 25th): from them to the later ones the dispatch failures grew.
    assert_eq!(order[0], "seed201", "{order}");
    assert!(
        trends.contains(&(
            "[planner] dispatch_subtask / coordination_failure / retriever_state+task_queue_head"
                .to_string(),
            "increasing".to_string()
        )),
        "{trends:?}"
    );
    let patterns = |r: &Value| r["patterns"].clone();
    assert_eq!(patterns(&forward), patterns(&backward));
}

/// A stage behind one that failed (here triage-explain --narrate with no
/// API key) gets nothing at all on stdin: it exits 2 and says so, rather
/// than mailing "0 runs analyzed … Nothing to report".
#[test]
fn a_stage_with_nothing_on_stdin_fails_closed() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("alerts.json");
    for args in [
        &["triage-parse"][..],
        &["triage-group"],
        &["triage-score"],
        &["triage-render"],
        &["triage-render", "--format", "html"],
        &["triage-explain"],
        &[
            "triage-alert",
            "--dry-run",
            "--state",
            state.to_str().unwrap(),
        ],
        &["triage", "report"],
        &["triage-diff", "examples/before.ndjson", "-"],
    ] {
        for stdin in [&b""[..], b"\n  \n"] {
            let (code, out, err) = dated(args[0], &args[1..], stdin);
            assert_eq!(code, 2, "{args:?}: {err}");
            assert!(
                err.contains("no records on stdin: did the stage before fail?"),
                "{args:?}: {err}"
            );
            assert!(
                !String::from_utf8_lossy(&out).contains("Nothing to report"),
                "{args:?}"
            );
        }
    }
    // The failing pipeline of a cron job, under pipefail.
    let script = "set -o pipefail; triage-parse examples/monday.ndjson | triage-group | triage-score \
| triage-explain --narrate | triage-render";
    let bin = bin_dir();
    let out = std::process::Command::new("bash")
        .args(["-c", script])
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
        )
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("TRIAGE_CONFIG")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        err.contains("triage-render: error: no records on stdin: did the stage before fail?"),
        "{err}"
    );
}

/// A header and no runs is a stage that ran and found nothing: that is
/// still reported, as "Nothing to report".
#[test]
fn a_header_and_no_runs_still_reports_nothing_to_report() {
    let header = ok("triage-parse", &["/dev/null"], b"");
    let grouped = ok("triage-group", &[], &header);
    let scored = ok("triage-score", &[], &grouped);
    for input in [&header, &scored] {
        let (code, out, err) = dated("triage-render", &[], input);
        assert_eq!(code, 0, "{err}");
        assert!(
            String::from_utf8_lossy(&out).contains("Nothing to report: no runs were read."),
            "{}",
            String::from_utf8_lossy(&out)
        );
    }
}

/// The gate's verdict is the last line of stderr; tentative patterns can
/// be kept from tripping it with --min-events; a rise within noise trips
/// nothing.
#[test]
fn the_gate_ends_with_its_verdict_and_min_events_sets_a_floor() {
    let last_line = |err: &str| err.trim_end().lines().last().unwrap_or("").to_string();
    let before_monday = ["examples/before.ndjson", "examples/monday.ndjson"];
    let new_pattern = "[executor] call_external_api / agent_error / no-divergence";
    let mut args = vec!["--fail-on", "new"];
    args.extend(before_monday);
    let (code, _, err) = dated("triage-diff", &args, b"");
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        last_line(&err),
        format!("triage-diff: gate failed: 1 new pattern ({new_pattern})")
    );
    assert!(
        err.contains(&format!(
            "triage-diff: fail-on new: new pattern: {new_pattern} (2 events)"
        )),
        "{err}"
    );
    assert!(!err.contains("warning"), "{err}");
    let mut args = vec!["--fail-on", "new", "--min-events", "5"];
    args.extend(before_monday);
    let (code, _, err) = dated("triage-diff", &args, b"");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        last_line(&err),
        "triage-diff: gate passed (1 below --min-events 5 not judged)"
    );
    // Agent Error went from 0 to 2 events in 3 runs: within noise.
    let mut args = vec!["--fail-on", "regression"];
    args.extend(before_monday);
    let (code, _, err) = dated("triage-diff", &args, b"");
    assert_eq!(code, 0, "{err}");
    assert_eq!(last_line(&err), "triage-diff: gate passed");
    // No gate asked, no verdict line.
    let (code, _, err) = dated("triage-diff", &before_monday, b"");
    assert_eq!(code, 0);
    assert!(!err.contains("gate"), "{err}");
}

/// "top N" in the summary lists N rows, in every format; a comparison's
/// pattern lists follow --top too, and say scores are scaled per batch.
#[test]
fn top_applies_to_every_format() {
    let all = [
        "examples/monday.ndjson",
        "examples/before.ndjson",
        "examples/otlp-shop.jsonl",
    ];
    let mut args = vec!["report", "--top", "2", "--format", "table"];
    args.extend(all);
    let (code, out, err) = dated("triage", &args, b"");
    assert_eq!(code, 0, "{err}");
    let table = String::from_utf8(out).unwrap();
    assert!(table.contains("top 2 worth your attention"), "{table}");
    let patterns = table.split('└').next().unwrap();
    let rows = patterns.lines().filter(|l| l.starts_with("│ ")).count();
    assert_eq!(rows, 1 + 2, "header and two rows: {table}");
    assert!(table.contains("more (raise --top to list them)"), "{table}");
    let mut json_args = vec!["--top", "2"];
    json_args.extend(all);
    assert_eq!(
        json_report(&json_args)["patterns"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let mut csv_args = vec!["report", "--top", "2", "--format", "csv"];
    csv_args.extend(all);
    let csv = dated("triage", &csv_args, b"").1;
    assert_eq!(String::from_utf8(csv).unwrap().lines().count(), 1 + 2);
    // Without --top, JSON has every pattern (triage-alert reads it).
    assert!(json_report(&all)["patterns"].as_array().unwrap().len() > 3);
    let (code, out, err) = dated(
        "triage",
        &[
            "compare",
            "--top",
            "1",
            "examples/before.ndjson",
            "examples/monday.ndjson",
        ],
        b"",
    );
    assert_eq!(code, 0, "{err}");
    let md = String::from_utf8(out).unwrap();
    assert!(
        md.contains("final scores are scaled within each batch"),
        "{md}"
    );
    let persisting = md.split("## Persisting patterns").nth(1).unwrap();
    assert_eq!(persisting.matches("\n| [").count(), 1, "{persisting}");
    assert!(persisting.contains("and 1 more"), "{persisting}");
}

/// `triage report --explain` joins each top pattern to the root causes of
/// its failed runs and its earliest failures; `[links]` turns run ids into
/// links to the tracing tool, in markdown and HTML.
#[test]
fn explain_joins_patterns_to_root_causes_samples_and_links() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("triage.toml");
    std::fs::write(
        &config,
        "[links]\nrun_url = \"https://langfuse.example/trace/{run_id}\"\n\
         span_url = \"https://langfuse.example/trace/{run_id}?observation={span_id}\"\n",
    )
    .unwrap();
    let (code, out, err) = dated(
        "triage",
        &[
            "report",
            "--explain",
            "--unknown-outcome",
            "--top",
            "1",
            "examples/monday.ndjson",
        ],
        b"",
    );
    assert_eq!(code, 0, "{err}");
    let md = String::from_utf8(out).unwrap();
    let first = md.split("## #2").next().unwrap();
    assert!(first.contains("**Root causes of its runs:**"), "{md}");
    assert!(
        first.contains(
            "- run `seed201`: planner at step 1 (coordination_failure, blame: agent): \
the trace labels the failure of step 1 (planner) as coordination_failure"
        ),
        "{md}"
    );
    assert!(first.contains("**Samples:**"), "{md}");
    assert_eq!(first.matches("\n- run `seed20").count(), 3 + 3, "{md}");
    // The same from the pipeline, and with links.
    let c = config.to_str().unwrap();
    let (code, out, err) = dated(
        "triage",
        &[
            "report",
            "--explain",
            "--unknown-outcome",
            "-c",
            c,
            "--top",
            "1",
            "examples/monday.ndjson",
        ],
        b"",
    );
    assert_eq!(code, 0, "{err}");
    let md = String::from_utf8(out).unwrap();
    assert!(
        md.contains("- run [`seed201`](https://langfuse.example/trace/seed201): planner at step 1"),
        "{md}"
    );
    assert!(
        md.contains("- run [`seed201`](https://langfuse.example/trace/seed201?observation=evt-"),
        "{md}"
    );
    let (code, out, err) = dated(
        "triage",
        &[
            "report",
            "--explain",
            "--unknown-outcome",
            "-c",
            c,
            "--format",
            "html",
            "examples/monday.ndjson",
        ],
        b"",
    );
    assert_eq!(code, 0, "{err}");
    let html = String::from_utf8(out).unwrap();
    assert!(
        html.contains("<a href=\"https://langfuse.example/trace/seed201\">seed201</a>"),
        "{html}"
    );
    // triage-render given verdict records beside the patterns does the same.
    let events = ok("triage-parse", &["examples/monday.ndjson"], b"");
    let verdicts = ok(
        "triage-explain",
        &["--verdicts-only", "--unknown-outcome"],
        &events,
    );
    let scored = ok("triage-score", &[], &ok("triage-group", &[], &events));
    let mut both = scored.clone();
    both.extend_from_slice(&verdicts);
    let (code, out, err) = dated("triage-render", &["--top", "1"], &both);
    assert_eq!(code, 0, "{err}");
    let piped = String::from_utf8(out).unwrap();
    assert!(
        piped.contains("- run `seed201`: planner at step 1"),
        "{piped}"
    );
    // Without verdicts, samples still show.
    let (_, out, _) = dated("triage-render", &["--top", "3"], &scored);
    let plain = String::from_utf8(out).unwrap();
    assert_eq!(plain.matches("**Samples:**").count(), 3, "{plain}");
    assert!(!plain.contains("Root causes"), "{plain}");
}

/// A sample with an error message shows it beside its run and step.
#[test]
fn samples_show_the_error_text() {
    let line = |run: &str, turn: u32, ok: bool, msg: &str| {
        format!(
            "{{\"event_id\":\"e{run}{turn}\",\"run_id\":\"{run}\",\"turn\":{turn},\"agent_id\":\"coder\",\
\"timestamp\":\"2026-04-24T10:0{turn}:00+00:00\",\"action_taken\":{{\"tool_name\":\"run_tests\"}},\
\"action_succeeded\":{ok},\"error\":{{\"type\":\"ImportError\",\"message\":\"{msg}\"}},\"failure_classification\":\"agent_error\"}}\n"
        )
    };
    let mut traces = String::new();
    for run in ["r1", "r2"] {
        traces.push_str(&line(run, 0, false, "ImportError: no module named foo"));
        traces.push_str(&line(run, 1, false, "ImportError: no module named foo"));
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("runs.ndjson");
    std::fs::write(&path, traces).unwrap();
    let (code, out, err) = dated("triage", &["report", path.to_str().unwrap()], b"");
    assert_eq!(code, 0, "{err}");
    let md = String::from_utf8(out).unwrap();
    assert!(
        md.contains("- run `r1`, step 0: ImportError: no module named foo"),
        "{md}"
    );
}

/// An alert links the runs of a pattern's earliest failures when
/// `[links] run_url` is set.
#[test]
fn alerts_link_runs_to_the_tracing_tool() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("triage.toml");
    std::fs::write(
        &config,
        "[links]\nrun_url = \"https://phoenix.example/traces/{run_id}\"\n",
    )
    .unwrap();
    let state = dir.path().join("state.json");
    let report = json_report(&["examples/monday.ndjson"]);
    let doc = serde_json::to_vec_pretty(&report).unwrap();
    let (code, out, err) = dated(
        "triage-alert",
        &[
            "--dry-run",
            "--threshold",
            "10",
            "--payload",
            "json",
            "-c",
            config.to_str().unwrap(),
            "--state",
            state.to_str().unwrap(),
        ],
        &doc,
    );
    assert_eq!(code, 0, "{err}");
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("Runs: seed201 (https://phoenix.example/traces/seed201), seed202 (https://phoenix.example/traces/seed202)"),
        "{text}"
    );
}

/// Every report format has the per-agent view (agent × classification:
/// failures, unrecovered, runs affected); --bucket sets the time series'
/// unit.
#[test]
fn per_agent_view_in_every_format_and_time_buckets() {
    let files = ["examples/monday.ndjson", "examples/before.ndjson"];
    let report = |format: &str, extra: &[&str]| {
        let mut args = vec!["report", "--format", format];
        args.extend_from_slice(extra);
        args.extend(files);
        let (code, out, err) = dated("triage", &args, b"");
        assert_eq!(code, 0, "{err}");
        String::from_utf8(out).unwrap()
    };
    let md = report("md", &[]);
    assert!(md.contains("## Per agent"), "{md}");
    // planner's 29 coordination failures hit all 6 runs, none recovered.
    assert!(
        md.contains("| planner | Coordination Failure | 29 | 29 | 6/6 |"),
        "{md}"
    );
    assert!(
        md.contains("| retriever | Information Lag | 12 | 6 | 6/6 |"),
        "{md}"
    );
    let table = report("table", &[]);
    assert!(table.contains("Per agent"), "{table}");
    assert!(
        table.lines().any(|l| l.contains("navigator")
            && l.contains("Environment Constraint")
            && l.contains("3/6")),
        "{table}"
    );
    let html = report("html", &[]);
    assert!(html.contains("<h2>Per agent</h2>"), "{html}");
    assert!(
        html.contains(
            "<tr><td>executor</td><td>Agent Error</td><td>2</td><td>2</td><td>2/6</td></tr>"
        ),
        "{html}"
    );
    let json: Value = serde_json::from_str(&report("json", &[])).unwrap();
    let agents = json["agents"].as_array().unwrap();
    assert_eq!(agents[0]["agent_id"], "planner");
    assert_eq!(agents[0]["failures"], 29);
    assert_eq!(agents[0]["runs_affected"], 6);
    // Time buckets: the two nights 16 hours apart, hour by hour.
    let md = report("md", &["--bucket", "hour"]);
    assert!(md.contains("## Failures per hour"), "{md}");
    assert!(md.contains("| 2026-04-24T20:00:00Z | 19 |"), "{md}");
    assert!(md.contains("| 2026-04-25T03:00:00Z | 0 |"), "{md}");
    assert!(md.contains("| 2026-04-25T12:00:00Z | 27 |"), "{md}");
    let html = report("html", &["--bucket", "hour"]);
    assert!(html.contains("Failures per hour: top patterns"), "{html}");
    let md = report("md", &["--bucket", "day"]);
    assert!(
        md.contains("| 2026-04-24 | 19 |") && md.contains("| 2026-04-25 | 27 |"),
        "{md}"
    );
}

/// The dashboard's first screen is the summary, the top patterns and the
/// per-agent view; charts, samples and root causes open in place, in
/// `<details>`; one file, no script. (tests/browser.rs measures the first
/// screen in Chromium.)
#[test]
fn dashboard_puts_details_behind_details() {
    let (code, out, err) = dated(
        "triage",
        &[
            "report",
            "--explain",
            "--unknown-outcome",
            "--format",
            "html",
            "examples/monday.ndjson",
            "examples/before.ndjson",
        ],
        b"",
    );
    assert_eq!(code, 0, "{err}");
    let html = String::from_utf8(out).unwrap();
    let (first, rest) = html.split_once("<div id=\"fold\"></div>").expect("a fold");
    for part in [
        "6 runs analyzed",
        "<h2>Top patterns</h2>",
        "<h2>Per agent</h2>",
        "href=\"#pattern-1\"",
    ] {
        assert!(first.contains(part), "{part} before the fold");
    }
    for detail in [
        "<svg",
        "<h2>Samples</h2>",
        "Root causes of its runs",
        "Root causes in runs of unknown outcome",
    ] {
        assert!(!first.contains(detail), "{detail} on the first screen");
        let at = rest.find(detail).unwrap_or_else(|| panic!("no {detail}"));
        let before = &rest[..at];
        assert!(
            before.matches("<details").count() > before.matches("</details>").count(),
            "{detail} is not inside <details>"
        );
    }
    assert_eq!(
        rest.matches("<details class=\"card\" id=\"pattern-")
            .count(),
        3
    );
    assert!(!html.to_lowercase().contains("<script"));
    assert!(!html.contains("src=\"http"), "one self-contained file");
}
