//! triage-parse on every format it reads: the bundled examples, the real
//! exports in tests/data, detection, --format, --strict, bad input and a
//! reader that closes the pipe early.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command as Process;

use serde_json::Value;

fn crate_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The real exports the repository carries (tests/data, with their sources).
fn shared_data(rel: &str) -> PathBuf {
    let p = crate_path("tests/data").join(rel);
    assert!(p.exists(), "{} is missing from tests/data", p.display());
    p
}

struct Parsed {
    records: Vec<Value>,
    stderr: String,
}

impl Parsed {
    fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.records.iter().filter(|r| r["kind"] == kind).collect()
    }

    fn events(&self) -> Vec<&Value> {
        self.of_kind("event")
    }

    fn sources(&self) -> Vec<&Value> {
        self.of_kind("source")
    }

    fn failed(&self) -> Vec<&Value> {
        self.events()
            .into_iter()
            .filter(|e| e["action_succeeded"] == false)
            .collect()
    }
}

fn parse(args: &[&str], files: &[&Path]) -> Parsed {
    parse_with_exit(args, files, 0)
}

/// Parses where the exit status is `code`: 2 when nothing at all could be
/// read from an input.
fn parse_with_exit(args: &[&str], files: &[&Path], code: i32) -> Parsed {
    let mut argv = args.to_vec();
    argv.extend(files.iter().map(|f| f.to_str().unwrap()));
    let (exit, stdout, stderr) = common::run("triage-parse", &argv, b"");
    assert_eq!(exit, code, "{stderr}");
    let records = common::records(&stdout);
    Parsed { records, stderr }
}

fn parse_file(path: &Path) -> Parsed {
    parse(&[], &[path])
}

#[test]
fn otlp_example_has_its_failures_in_tree_order() {
    let p = parse_file(&crate_path("examples/otlp-shop.jsonl"));
    assert_eq!(p.records[0]["kind"], "header");
    let src = p.sources();
    assert_eq!(src[0]["format"], "otlp");
    assert_eq!(src[0]["events"], 10);
    assert_eq!(src[0]["runs"], 2);
    assert_eq!(src[0]["skipped"], 0);
    let evs = p.events();
    let agents: Vec<_> = evs
        .iter()
        .take(6)
        .map(|e| e["agent_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        agents,
        [
            "planner", "searcher", "searcher", "cashier", "cashier", "cashier"
        ]
    );
    let failed: Vec<_> = p
        .failed()
        .iter()
        .map(|e| {
            (
                e["action_taken"]["tool_name"].as_str().unwrap(),
                e["failure_source"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        failed,
        [
            ("charge_card", "status"),
            ("chat", "exception"),
            ("lookup_order", "output"),
            ("refund", "error")
        ]
    );
    assert_eq!(
        p.failed()[0]["failure_classification"],
        "environment_constraint"
    );
    assert!(p.stderr.is_empty(), "{}", p.stderr);
}

#[test]
fn otel_example_reads_otlp_status_names() {
    let p = parse_file(&crate_path("examples/otel-spans.json"));
    assert_eq!(p.sources()[0]["format"], "otel");
    let ok: Vec<_> = p
        .events()
        .iter()
        .map(|e| e["action_succeeded"].as_bool().unwrap())
        .collect();
    // STATUS_CODE_OK (the reference reads it as a failure), ERROR, OK, a label, UNSET, 1, 2, 0.
    assert_eq!(ok, [true, false, true, false, true, true, false, true]);
    assert_eq!(
        p.events()[3]["failure_classification"],
        "coordination_failure"
    );
}

#[test]
fn taubench_example_has_runs_and_failed_tool_calls() {
    let p = parse_file(&crate_path("examples/taubench-airline.json"));
    assert_eq!(p.sources()[0]["format"], "taubench");
    let runs: Vec<_> = p
        .of_kind("run")
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(runs, ["succeeded", "failed"]);
    let failed: Vec<_> = p
        .failed()
        .iter()
        .map(|e| e["output"].as_str().unwrap())
        .collect();
    assert_eq!(
        failed,
        [
            "Error: gift card balance is not enough",
            "Error: payment method not found"
        ]
    );
}

#[test]
fn real_vs_copilot_otlp_exports() {
    let dir = shared_data("export-samples/vs-copilot-otlp");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let p = parse(&[], &refs);
    assert!(
        p.sources()
            .iter()
            .all(|s| s["format"] == "otlp" && s["skipped"] == 0)
    );
    let counts: Vec<_> = p
        .sources()
        .iter()
        .map(|s| s["events"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, [4, 4, 3, 5]);
    // Every tool span sits under its invoke_agent span and inherits its agent.
    for e in p.events() {
        assert_eq!(e["agent_id"], "GitHub Copilot");
        let tool = e["span_kind"] == "tool";
        assert_eq!(tool, e["parent_span_id"].is_string(), "{e}");
    }
    assert!(p.stderr.is_empty(), "{}", p.stderr);
}

#[test]
fn real_otlp_specification_example() {
    let p = parse_file(&shared_data("export-samples/otlp-proto-example/trace.json"));
    let e = p.events()[0];
    assert_eq!(p.sources()[0]["format"], "otlp");
    // Hex ids in upper case come out as OTLP/JSON writes them: lower case.
    assert_eq!(e["run_id"], "5b8efff798038103d269b633813fc60c");
    assert_eq!(e["parent_span_id"], "eee19b7ec3c1b173");
    assert_eq!(e["agent_id"], "my.service");
    assert_eq!(e["timestamp"], "2018-12-13T14:51:00Z");
    assert_eq!(e["latency_ms"]["total"], 1000);
}

#[test]
fn real_taubench_airline_trajectories() {
    let p = parse_file(&shared_data("tau-bench/gpt-4o-airline.json"));
    let src = p.sources()[0];
    assert_eq!(src["format"], "taubench");
    assert_eq!(src["runs"], 200);
    assert_eq!(src["skipped"], 0);
    let runs = p.of_kind("run");
    assert_eq!(runs.len(), 200);
    assert_eq!(
        runs.iter().filter(|r| r["outcome"] == "failed").count(),
        116
    );
    assert!(
        runs.iter()
            .all(|r| r["task"].as_str().is_some_and(|t| t.starts_with("You ")))
    );
    // 1,164 tool calls, of which the 73 answered "Error: ..." failed.
    let tools = p
        .events()
        .into_iter()
        .filter(|e| e["span_kind"] == "tool")
        .count();
    assert_eq!(tools, 1164);
    assert_eq!(p.failed().len(), 73);
}

#[test]
fn a_trajectory_file_cut_short_keeps_its_complete_runs() {
    let dir = tempfile::tempdir().unwrap();
    let whole = std::fs::read(shared_data("tau-bench/gpt-4o-airline.json")).unwrap();
    let cut = &whole[..whole.len() * 3 / 5];
    let path = temp_file(&dir, "cut-airline.json", cut);
    // The error is at the end of the cut, on its last line.
    let last_line = 1 + cut.iter().filter(|&&b| b == b'\n').count();
    let p = parse_file(&path);
    let src = p.sources()[0];
    let runs = p.of_kind("run").len();
    assert!((100..200).contains(&runs), "{runs} runs of 200 read");
    assert_eq!(src["runs"], runs);
    assert_eq!(src["skipped"], 1, "the cut run counts as skipped");
    assert!(
        p.stderr.contains(&format!("cut-airline.json:{last_line}:"))
            && p.stderr.contains(&format!(
                "cut short; the {runs} complete items before the cut are read"
            )),
        "{}",
        p.stderr
    );
}

#[test]
fn format_flag_overrides_detection() {
    let p = parse_with_exit(
        &["--format", "otlp"],
        &[&crate_path("examples/otel-spans.json")],
        2,
    );
    let src = p.sources()[0];
    assert_eq!(src["format"], "otlp");
    assert_eq!(src["events"], 0);
    assert_eq!(src["skipped"], 1);
    assert!(
        p.stderr
            .contains("otel-spans.json:1: not an OTLP trace request"),
        "{}",
        p.stderr
    );
}

#[test]
fn detection_by_content_on_stdin() {
    let body = std::fs::read(crate_path("examples/taubench-airline.json")).unwrap();
    let out = common::cmd("triage-parse")
        .write_stdin(body)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains(r#""format":"taubench""#), "{text}");
    assert!(text.contains(r#""run_id":"taubench/task-1/trial-0""#));
}

fn temp_file(dir: &tempfile::TempDir, name: &str, body: &[u8]) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, body).unwrap();
    p
}

/// An OTLP export sent twice (an exporter's retry) counts each span once,
/// and says so.
#[test]
fn spans_sent_twice_are_counted_once() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(crate_path("examples/otlp-shop.jsonl")).unwrap();
    let once = parse_file(&crate_path("examples/otlp-shop.jsonl"));
    let twice = temp_file(&dir, "twice.jsonl", format!("{good}{good}").as_bytes());
    let out = common::cmd("triage-parse").arg(&twice).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let events = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"kind\":\"event\""))
        .count();
    assert_eq!(events, once.events().len());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("spans repeat the trace and span id"),
        "{stderr}"
    );
}

/// A JSON Lines file whose head was cut off mid-line (`tail -c` of a
/// large log) loses that line, with a warning naming it, not the file.
#[test]
fn a_first_line_cut_short_costs_that_line_only() {
    let dir = tempfile::tempdir().unwrap();
    let whole = parse_file(&crate_path("examples/otlp-shop.jsonl"));
    for example in ["examples/otlp-shop.jsonl", "examples/monday.ndjson"] {
        let good = std::fs::read(crate_path(example)).unwrap();
        let first = good.split(|b| *b == b'\n').next().unwrap();
        let rest = &good[first.len()..];
        // Its head cut off (the line's end kept), or its end (the line's
        // start kept: it opens an object that never closes).
        for (name, kept) in [
            ("head.jsonl", &first[first.len() / 2..]),
            ("end.jsonl", &first[..first.len() / 2]),
        ] {
            let cut = temp_file(&dir, name, &[kept, rest].concat());
            let out = common::cmd("triage-parse").arg(&cut).output().unwrap();
            assert_eq!(out.status.code(), Some(0), "{example} {name}");
            let stderr = String::from_utf8(out.stderr).unwrap();
            assert!(
                stderr.contains(&format!("{name}:1: not valid JSON")),
                "{example} {name}: {stderr}"
            );
            assert_eq!(stderr.lines().count(), 1, "{example} {name}: {stderr}");
            let recs = common::records(&out.stdout);
            let events = recs.iter().filter(|r| r["kind"] == "event").count();
            assert!(events > 0, "{example} {name}");
            if example.ends_with("otlp-shop.jsonl") {
                assert!(events < whole.events().len(), "{events}");
            }
        }
    }
}

/// Two different spans under one id (a Zipkin-style shared span: the
/// server half keeps its client's id) are two steps, not a retry: the
/// failed one is not dropped.
#[test]
fn spans_sharing_an_id_are_both_read() {
    let span = |name: &str, start: u64, error: bool| {
        serde_json::json!({
            "traceId": "5b8efff798038103d269b633813fc60c",
            "spanId": "eee19b7ec3c1b174",
            "name": name,
            "startTimeUnixNano": start.to_string(),
            "endTimeUnixNano": (start + 5).to_string(),
            "status": {"code": if error { 2 } else { 1 }},
        })
    };
    let request = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        span("get /orders (client)", 100, false),
        span("get /orders (server)", 102, true),
    ]}]}]});
    let out = common::cmd("triage-parse")
        .write_stdin(request.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let recs = common::records(&out.stdout);
    let events: Vec<_> = recs.iter().filter(|r| r["kind"] == "event").collect();
    assert_eq!(events.len(), 2, "{recs:?}");
    assert!(events.iter().any(|e| e["action_succeeded"] == false));
    assert_ne!(events[0]["event_id"], events[1]["event_id"]);
    assert!(String::from_utf8(out.stderr).unwrap().is_empty());
    // The pair sent twice: each half is counted once.
    let twice = format!("{request}\n{request}\n");
    let out = common::cmd("triage-parse")
        .write_stdin(twice)
        .output()
        .unwrap();
    let recs = common::records(&out.stdout);
    assert_eq!(recs.iter().filter(|r| r["kind"] == "event").count(), 2);
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("2 spans repeat")
    );
}

#[test]
fn strict_stops_at_the_first_bad_input_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(crate_path("examples/otlp-shop.jsonl")).unwrap();
    let bad = temp_file(
        &dir,
        "bad.jsonl",
        format!("{good}{{\"resourceSpans\": [\n").as_bytes(),
    );
    let out = common::cmd("triage-parse")
        .arg("--strict")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("triage-parse: error: "), "{stderr}");
    assert!(stderr.contains("bad.jsonl:4: not valid JSON"), "{stderr}");
}

#[test]
fn bad_input_of_every_format_is_a_warning_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let deep = "[".repeat(100_000);
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("deep.json", deep.clone().into_bytes()),
        ("deep.jsonl", deep.into_bytes()),
        (
            "deep-otlp.json",
            format!("{{\"resourceSpans\":{}", "[".repeat(100_000)).into_bytes(),
        ),
        (
            "cut.json",
            std::fs::read(crate_path("examples/taubench-airline.json")).unwrap()[..900].to_vec(),
        ),
        (
            "cut-spans.json",
            std::fs::read(crate_path("examples/otel-spans.json")).unwrap()[..300].to_vec(),
        ),
        ("latin1.json", b"[{\"span_id\": \"caf\xe9\"}]".to_vec()),
        (
            "latin1-otlp.jsonl",
            b"{\"resourceSpans\": [{\"x\": \"\xe9\"}]}\n".to_vec(),
        ),
    ];
    for (name, body) in cases {
        let path = temp_file(&dir, name, &body);
        let p = parse_with_exit(&[], &[&path], 2);
        let src = p.sources()[0];
        assert_eq!(src["skipped"], 1, "{name}: {src}");
        assert!(
            p.stderr
                .contains(&format!("triage-parse: warning: {}", path.display())),
            "{name}: {}",
            p.stderr
        );
        // One warning, then the error that nothing could be read.
        let lines: Vec<&str> = p.stderr.lines().collect();
        assert_eq!(lines.len(), 2, "{name}: {}", p.stderr);
        assert!(
            lines[1].starts_with("triage-parse: error: nothing could be read from 1 input"),
            "{name}: {}",
            p.stderr
        );
    }
}

#[test]
fn bom_and_crlf_read_like_plain_input() {
    let dir = tempfile::tempdir().unwrap();
    for example in [
        "examples/otlp-shop.jsonl",
        "examples/otel-spans.json",
        "examples/taubench-airline.json",
    ] {
        let plain = std::fs::read_to_string(crate_path(example)).unwrap();
        let dos = format!("\u{feff}{}", plain.replace('\n', "\r\n"));
        let name = Path::new(example).file_name().unwrap().to_str().unwrap();
        let path = temp_file(&dir, name, dos.as_bytes());
        let a = parse_file(&crate_path(example));
        let b = parse_file(&path);
        assert_eq!(a.events().len(), b.events().len(), "{example}");
        assert_eq!(b.sources()[0]["skipped"], 0, "{example}: {}", b.stderr);
        let outcome = |p: &Parsed| {
            p.events()
                .iter()
                .map(|e| e["action_succeeded"].clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(outcome(&a), outcome(&b), "{example}");
    }
}

/// Runs `triage-parse FILE | head -1` and returns (status, stdout, stderr)
/// of the whole pipeline, failing if either side fails.
fn parse_into_head(file: &Path) -> (String, String) {
    let bin = common::bin("triage-parse");
    let script = format!(
        "set -o pipefail; '{}' '{}' | head -1",
        bin.display(),
        file.display()
    );
    let out = Process::new("bash").arg("-c").arg(script).output().unwrap();
    assert!(out.status.success(), "{:?}", out);
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn a_reader_that_closes_the_pipe_is_success() {
    let dir = tempfile::tempdir().unwrap();
    // Distinct events: a line read again would be dropped, not written.
    let big: String = (0..200_000)
        .map(|i| format!(r#"{{"event_id":"e{i}","run_id":"r","turn":1,"agent_id":"a","action_taken":{{"tool_name":"t"}},"action_succeeded":false}}"#) + "\n")
        .collect();
    let ndjson = temp_file(&dir, "big.ndjson", big.as_bytes());
    let (stdout, stderr) = parse_into_head(&ndjson);
    assert!(stdout.starts_with(r#"{"kind":"header""#), "{stdout}");
    assert!(stderr.is_empty(), "{stderr}");

    let request = std::fs::read_to_string(crate_path("examples/otlp-shop.jsonl")).unwrap();
    let otlp = temp_file(&dir, "big.jsonl", request.repeat(5_000).as_bytes());
    let (stdout, stderr) = parse_into_head(&otlp);
    assert!(stdout.starts_with(r#"{"kind":"header""#), "{stdout}");
    // The same request 5,000 times: only the note that its spans repeat.
    assert!(
        stderr.lines().all(|l| l.contains("spans repeat")),
        "{stderr}"
    );
}

#[test]
fn real_sdk_span_dumps_read_as_otel() {
    let dir = shared_data("export-samples/any-agent");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let refs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let p = parse(&[], &refs);
    let counts: Vec<_> = p
        .sources()
        .iter()
        .map(|s| {
            (
                s["format"].as_str().unwrap(),
                s["events"].as_u64().unwrap(),
                s["skipped"].as_u64().unwrap(),
            )
        })
        .collect();
    // AGNO, GOOGLE, LANGCHAIN, LLAMA_INDEX, OPENAI, SMOLAGENTS, TINYAGENT
    let spans = [6, 7, 7, 9, 6, 7, 8];
    assert_eq!(counts, spans.map(|n| ("otel", n, 0)));
    assert!(
        p.events()
            .iter()
            .all(|e| e["timestamp"].is_string() && e["span_id"].is_string())
    );
    assert!(
        p.events()
            .iter()
            .any(|e| e["span_kind"] == "tool" && e["input"].is_string())
    );
}

#[test]
fn real_js_sdk_span_dump_reads_as_otel() {
    let p = parse_file(&shared_data(
        "export-samples/openinference/vercel-ai-sdk-v6-all-spans.json",
    ));
    let src = p.sources()[0];
    assert_eq!(
        (&src["format"], &src["events"], &src["skipped"]),
        (&"otel".into(), &10.into(), &0.into())
    );
    assert_eq!(p.events()[0]["timestamp"], "2026-02-03T15:19:52.242Z");
}

/// Each example's events, exactly: tests/expected/NAME.ndjson holds what
/// triage-parse writes for examples/NAME. After a deliberate change, rewrite
/// them with `UPDATE_GOLDEN=1 cargo test --test cli parse_formats::`
/// (`TRIAGE_BLESS=1` works too).
#[test]
fn examples_parse_to_their_expected_records() {
    for example in [
        "otlp-shop.jsonl",
        "otel-spans.json",
        "taubench-airline.json",
    ] {
        let out = common::cmd("triage-parse")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .arg(format!("examples/{example}"))
            .output()
            .unwrap();
        assert!(out.status.success());
        let stem = Path::new(example).file_stem().unwrap().to_str().unwrap();
        common::assert_golden(format!("tests/expected/{stem}.ndjson"), out.stdout);
    }
}
