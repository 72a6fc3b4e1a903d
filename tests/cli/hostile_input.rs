//! Input built to hurt: lone surrogate escapes read by every reader and
//! stage without a panic and with one warning per file, documents past
//! `--max-document` refused with the flag named, and `--max-text` holding
//! for NDJSON texts too.

use crate::common;

use std::path::Path;

use common::{of_kind, ok, records, run};
use serde_json::Value;

/// An agent-triage TraceEvent line; `run` and `class` are JSON text.
fn event_line(id: u32, run: &str, class: &str, succeeded: bool) -> String {
    format!(
        r#"{{"event_id":"e{id}","run_id":{run},"turn":{id},"agent_id":"planner","action_taken":{{"tool_name":"search","tool_input":{{}}}},"action_succeeded":{succeeded},"failure_classification":{class},"timestamp":"2026-04-24T20:0{id}:00Z"}}"#
    )
}

/// A file of three events whose second line has lone surrogates in its
/// run id and classification.
fn surrogate_file(dir: &Path) -> std::path::PathBuf {
    let text = [
        event_line(1, r#""r1""#, "null", true),
        event_line(2, r#""\ud800""#, r#""tool_\udfffmisuse""#, false),
        event_line(3, r#""r1""#, r#""bad_\ud83d\ude00pair""#, false),
    ]
    .join("\n");
    let path = dir.join("lone.ndjson");
    std::fs::write(&path, text + "\n").unwrap();
    path
}

const WARNING: &str = "lone.ndjson:2: lone UTF-16 surrogate escape";

#[test]
fn a_lone_surrogate_is_replaced_and_warned_of_once_by_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let file = surrogate_file(dir.path());
    let f = file.to_str().unwrap();

    let (code, out, err) = run("triage-parse", &["--strict", f], b"");
    assert_eq!(code, 0, "{err}");
    assert_eq!(err.matches("lone UTF-16 surrogate").count(), 1, "{err}");
    assert!(err.contains(WARNING), "{err}");
    let recs = records(&out);
    let events = of_kind(&recs, "event");
    assert_eq!(events.len(), 3, "no line is lost");
    assert_eq!(events[1]["run_id"], "\u{FFFD}");
    assert_eq!(events[1]["failure_classification"], "tool_\u{FFFD}misuse");
    assert_eq!(
        events[2]["failure_classification"], "bad_\u{1F600}pair",
        "a proper pair is kept"
    );

    // The stages downstream read what triage-parse wrote without a word.
    let (code, grouped, err) = run("triage-group", &[], &out);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("warning"), "{err}");
    let classes: Vec<Value> = of_kind(&records(&grouped), "pattern")
        .iter()
        .map(|p| p["failure_classification"].clone())
        .collect();
    assert!(
        classes.contains(&Value::from("tool_\u{FFFD}misuse")),
        "{classes:?}"
    );

    for args in [
        vec!["report", "--format", "json", f],
        vec!["compare", "--format", "json", f, f],
    ] {
        let (code, _, err) = run("triage", &args, b"");
        assert_eq!(code, 0, "triage {args:?}: {err}");
        assert!(err.contains(WARNING), "triage {args:?}: {err}");
    }
    let (code, _, err) = run("triage-diff", &[f, f], b"");
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(WARNING), "{err}");
}

#[test]
fn a_stage_reading_records_with_lone_surrogates_warns_and_reads_them() {
    let events = ok(
        "triage-parse",
        &["-"],
        event_line(1, r#""r""#, "null", false).as_bytes(),
    );
    // Records a tool other than triage-parse wrote, as Python does.
    let text = String::from_utf8(events)
        .unwrap()
        .replace("\"run_id\":\"r\"", "\"run_id\":\"r\\udc00\"");
    let (code, out, err) = run("triage-group", &[], text.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("<stdin>:2: lone UTF-16 surrogate escape"),
        "{err}"
    );
    let batch = of_kind(&records(&out), "batch")[0].clone();
    assert_eq!(batch["runs_total"], 1, "{batch}");
    assert_eq!(batch["run_order"][0], "r\u{FFFD}", "{batch}");
    // triage-render refuses ungrouped events, but reads them first.
    for (stage, ok) in [("triage-explain", true), ("triage-render", false)] {
        let (code, _, err) = run(stage, &[], text.as_bytes());
        assert_eq!(code == 0, ok, "{stage}: {err}");
        assert_ne!(code, 101, "{stage} panicked: {err}");
        assert!(
            err.contains("<stdin>:2: lone UTF-16 surrogate escape"),
            "{stage}: {err}"
        );
    }
}

#[test]
fn documents_past_max_document_are_refused_naming_the_file_and_flag() {
    let dir = tempfile::tempdir().unwrap();
    // A span list of some 300 KiB, a valid document.
    let spans: Vec<String> = (0..2000)
        .map(|i| {
            format!(
                r#"{{"name":"llm","context":{{"trace_id":"t1","span_id":"s{i}"}},"attributes":{{"agent.id":"a","input.value":"{}"}}}}"#,
                "x".repeat(100)
            )
        })
        .collect();
    let list = format!("[{}]", spans.join(",\n"));
    let big = dir.path().join("big-spans.json");
    std::fs::write(&big, &list).unwrap();
    let f = big.to_str().unwrap();
    for format in ["otel", "auto", "langfuse", "atif", "whowhen", "taubench"] {
        let (code, out, err) = run(
            "triage-parse",
            &["-f", format, "--max-document", "64K", f],
            b"",
        );
        assert_eq!(code, 2, "-f {format}: {err}");
        assert!(err.contains("big-spans.json"), "-f {format}: {err}");
        assert!(err.contains("--max-document"), "-f {format}: {err}");
        assert!(err.contains("64 KiB"), "-f {format}: {err}");
        assert_eq!(of_kind(&records(&out), "event").len(), 0);
    }
    // Under the limit, the same file reads.
    let out = ok(
        "triage-parse",
        &["-f", "otel", "--max-document", "1M", f],
        b"",
    );
    assert_eq!(of_kind(&records(&out), "event").len(), 2000);
    // OTLP requests, one document across lines or one per line.
    let request = r#"{"resourceSpans":[{"scopeSpans":[{"spans":[]}]}]}"#;
    let pretty = format!(
        "{{\n\"resourceSpans\": [{}]\n}}\n",
        vec!["{}"; 40_000].join(",\n")
    );
    let per_line = format!(
        "{}\n",
        request.replace("[]", &format!("[{}]", vec!["{}"; 40_000].join(",")))
    );
    for (name, text) in [("pretty.json", pretty), ("lines.jsonl", per_line)] {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        let (code, _, err) = run(
            "triage-parse",
            &[
                "-f",
                "otlp",
                "--max-document",
                "64K",
                path.to_str().unwrap(),
            ],
            b"",
        );
        assert_eq!(code, 2, "{name}: {err}");
        assert!(
            err.contains(name) && err.contains("--max-document"),
            "{name}: {err}"
        );
    }
    // triage report holds the limit too.
    let (code, _, err) = run("triage", &["report", "--max-document", "64K", f], b"");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--max-document"), "{err}");
}

/// Span and observation lines stream: the limit holds each line, not the
/// file. Formats that keep what they read to the end hold the whole input
/// to it.
#[test]
fn span_and_observation_lines_stream_past_max_document_and_held_formats_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let spans: String = (0..2000)
        .map(|i| {
            format!(
                "{{\"name\":\"llm\",\"context\":{{\"trace_id\":\"t{}\",\"span_id\":\"s{i}\"}},\"attributes\":{{\"agent.id\":\"a\",\"input.value\":\"{}\"}}}}\n",
                i / 10,
                "x".repeat(100)
            )
        })
        .collect();
    let path = dir.path().join("spans.jsonl");
    std::fs::write(&path, &spans).unwrap();
    let f = path.to_str().unwrap();
    let out = ok(
        "triage-parse",
        &["-f", "otel", "--max-document", "64K", f],
        b"",
    );
    assert_eq!(of_kind(&records(&out), "event").len(), 2000);
    let observations: String = (0..2000)
        .map(|i| {
            format!(
                "{{\"id\":\"o{i}\",\"trace_id\":\"t{}\",\"type\":\"SPAN\",\"name\":\"step\",\"input\":\"{}\"}}\n",
                i / 10,
                "x".repeat(100)
            )
        })
        .collect();
    let path = dir.path().join("observations.jsonl");
    std::fs::write(&path, &observations).unwrap();
    let f = path.to_str().unwrap();
    for format in ["langfuse", "langsmith"] {
        let out = ok(
            "triage-parse",
            &["-f", format, "--max-document", "64K", f],
            b"",
        );
        assert_eq!(of_kind(&records(&out), "event").len(), 2000, "{format}");
    }
    let (code, _, err) = run(
        "triage-parse",
        &["-f", "managed-agent", "--max-document", "64K", f],
        b"",
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("observations.jsonl") && err.contains("--max-document"),
        "{err}"
    );
}

#[test]
fn an_endless_document_stops_at_the_limit() {
    // /dev/zero never ends: the read must stop at the limit, not at memory.
    if !Path::new("/dev/zero").exists() {
        return;
    }
    let (code, _, err) = run(
        "triage-parse",
        &["-f", "otel", "--max-document", "8M", "/dev/zero"],
        b"",
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/dev/zero") && err.contains("8 MiB"), "{err}");
}

#[test]
fn max_text_cuts_ndjson_inputs_and_outputs_and_keeps_their_digest() {
    let long = "é".repeat(5000);
    let line = format!(
        r#"{{"event_id":"e","run_id":"r","turn":0,"agent_id":"a","action_taken":{{"tool_name":"t"}},"action_succeeded":false,"input":"{long}","output":"short \u00e9 output"}}"#
    );
    let out = ok("triage-parse", &["--max-text", "101"], line.as_bytes());
    let recs = records(&out);
    let ev = of_kind(&recs, "event")[0];
    let input = ev["input"].as_str().unwrap();
    assert!(input.len() <= 101 + '…'.len_utf8(), "{}", input.len());
    assert!(input.ends_with('…') && input.starts_with("éé"), "{input}");
    let whole = triage::record::text_digest(&long);
    assert_eq!(ev["input_digest"], whole.as_str());
    assert_eq!(ev["output"], "short é output", "a short text is left whole");
    assert!(ev.get("output_digest").is_none());

    // Through triage report, the cut output is what a failure's sample shows.
    let out_line = line
        .replace("\"input\"", "\"other\"")
        .replace("short \\u00e9 output", &"y".repeat(300));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.ndjson");
    std::fs::write(&path, out_line).unwrap();
    let out = ok(
        "triage-parse",
        &["--max-text", "50", path.to_str().unwrap()],
        b"",
    );
    let recs = records(&out);
    let ev = of_kind(&recs, "event")[0];
    assert_eq!(ev["output"], format!("{}…", "y".repeat(50)).as_str());
    assert!(ev["output_digest"].as_str().unwrap().starts_with("sha256:"));
}

/// Control characters a terminal acts on (C0, C1 such as U+009B, which
/// starts an escape sequence) and bidi controls, put into every text field
/// of the events: no output format of triage-render shows one raw, in any
/// column.
#[test]
fn no_control_or_bidi_character_reaches_any_output_column() {
    let poison = "\u{9b}31m\u{1b}[2J\u{202e}\u{2066}\u{200f}\u{7}";
    let events = ok("triage-parse", &["examples/monday.ndjson"], b"");
    let mut poisoned = Vec::new();
    for line in String::from_utf8(events).unwrap().lines() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        if v["kind"] == "event" {
            for key in ["agent_id", "run_id", "output", "input"] {
                if let Some(s) = v[key].as_str() {
                    v[key] = Value::from(format!("{s}{poison}"));
                }
            }
            v["action_taken"]["tool_name"] = Value::from(format!("tool{poison}"));
            if v["error"].is_object() {
                v["error"]["message"] = Value::from(format!("boom{poison}"));
                v["error"]["type"] = Value::from(format!("Err{poison}"));
            }
            if v["classification"].is_string() {
                v["classification"] = Value::from(format!("class{poison}"));
            }
        }
        poisoned.extend_from_slice(v.to_string().as_bytes());
        poisoned.push(b'\n');
    }
    let scored = ok("triage-score", &[], &ok("triage-group", &[], &poisoned));
    let explained = ok("triage-explain", &["--unknown-outcome"], &poisoned);
    let mut patterns: Vec<Value> = records(&scored);
    for p in patterns.iter_mut().filter(|p| p["kind"] == "pattern") {
        for key in ["trend", "confidence_label"] {
            p[key] = Value::from(format!("x{poison}"));
        }
    }
    let mut all: Vec<u8> = patterns
        .iter()
        .flat_map(|p| (p.to_string() + "\n").into_bytes())
        .collect();
    all.extend_from_slice(&explained);
    let raw = |c: char| {
        (c.is_control() && c != '\n' && c != '\r' && c != '\t')
            || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}')
    };
    for format in ["table", "md", "html", "csv", "json"] {
        let out = ok("triage-render", &["--format", format, "--top", "50"], &all);
        let text = String::from_utf8(out).unwrap();
        let found: Vec<char> = text.chars().filter(|&c| raw(c)).collect();
        assert!(found.is_empty(), "{format}: {found:?}");
        assert!(text.contains("x") && !text.is_empty(), "{format}");
    }
}

/// An event line read again (a retried export) is counted once, with a
/// warning, in triage-parse and in triage report; an event that keeps its
/// id but says something else is another event.
#[test]
fn a_repeated_ndjson_event_is_dropped_with_a_warning() {
    let monday = std::fs::read_to_string("examples/monday.ndjson").unwrap();
    let first: Vec<&str> = monday.lines().take(3).collect();
    let mut input = monday.clone();
    for l in &first {
        input.push_str(l);
        input.push('\n');
    }
    // The same id, other content: kept.
    let mut changed: Value = serde_json::from_str(first[0]).unwrap();
    changed["turn"] = Value::from(999);
    input.push_str(&format!("{changed}\n"));
    let (code, out, err) = run("triage-parse", &[], input.as_bytes());
    assert_eq!(code, 0, "{err}");
    let plain = ok("triage-parse", &["examples/monday.ndjson"], b"");
    assert_eq!(
        of_kind(&records(&out), "event").len(),
        of_kind(&records(&plain), "event").len() + 1
    );
    assert!(err.contains("3 events repeat the line"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let twice = dir.path().join("twice.ndjson");
    std::fs::write(&twice, format!("{monday}{monday}")).unwrap();
    let (code, doubled, err) = run(
        "triage",
        &["report", "--format", "json", twice.to_str().unwrap()],
        b"",
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("events repeat the line"), "{err}");
    let once = ok(
        "triage",
        &["report", "--format", "json", "examples/monday.ndjson"],
        b"",
    );
    let frequency = |out: &[u8]| -> Vec<u64> {
        let v: Value = serde_json::from_slice(out).unwrap();
        v["patterns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["frequency"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(frequency(&doubled), frequency(&once));
}

/// `--max-text` cuts an error message and a tool input as it cuts inputs
/// and outputs, keeping the digest of each whole, in every reader's path:
/// the NDJSON reader's own writer and the span readers' records.
#[test]
fn max_text_cuts_error_messages_and_tool_inputs_keeping_their_digests() {
    let message = "x".repeat(2_000_000);
    let line = serde_json::json!({"event_id": "e1", "run_id": "r", "turn": 1, "agent_id": "a",
        "action_taken": {"tool_name": "t", "tool_input": {"q": "y".repeat(300_000)}},
        "action_succeeded": false, "error": {"type": "Boom", "message": message}});
    let otlp = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": "0102030405060708090a0b0c0d0e0f10", "spanId": "0102030405060708", "name": "call",
        "startTimeUnixNano": "1777000000000000000", "endTimeUnixNano": "1777000001000000000",
        "attributes": [{"key": "agent.id", "value": {"stringValue": "a"}}],
        "status": {"code": 2, "message": message}}]}]}]});
    for (format, input) in [("ndjson", line), ("otlp", otlp)] {
        let out = ok(
            "triage-parse",
            &["--format", format, "--max-text", "100"],
            format!("{input}\n").as_bytes(),
        );
        assert!(out.len() < 5_000, "{format}: {} bytes", out.len());
        let recs = records(&out);
        let ev = of_kind(&recs, "event")[0];
        let kept = ev["error"]["message"].as_str().unwrap();
        assert!(
            kept.len() <= 100 + '…'.len_utf8() && kept.ends_with('…'),
            "{format}: {kept}"
        );
        let digest = ev["error_digest"].as_str().unwrap();
        assert!(digest.starts_with("sha256:"), "{format}: {ev}");
        if format == "ndjson" {
            assert!(
                ev["action_taken"]["tool_input"]
                    .as_str()
                    .unwrap()
                    .ends_with('…')
            );
            assert!(
                ev["tool_input_digest"]
                    .as_str()
                    .unwrap()
                    .starts_with("sha256:")
            );
        }
        // What comes after reads the cut event: explain's verdict is small.
        let explained = ok("triage-explain", &["--verdicts-only"], &out);
        assert!(
            explained.len() < 20_000,
            "{format}: {} bytes",
            explained.len()
        );
    }
}

/// An empty file is an empty batch, not an error, but never a silent one:
/// triage-parse names it in a warning, whichever format it was asked for.
#[test]
fn an_empty_file_is_read_with_a_warning_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("run.traj.json");
    std::fs::write(&empty, "\n  \n").unwrap();
    let name = empty.to_str().unwrap();
    for args in [vec![name], vec!["-f", "coding-agent", name]] {
        let (code, out, err) = run("triage-parse", &args, b"");
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains(&format!("{name}: empty, nothing to read")),
            "{err}"
        );
        let recs = records(&out);
        assert_eq!(of_kind(&recs, "source")[0]["events"], 0);
    }
    // A document whose lists are empty, or a byte order mark alone, is
    // named too.
    for (file, body) in [
        ("spans.json", "{\"resourceSpans\": []}".as_bytes()),
        (
            "trace.json",
            b"{\"traceID\": \"1\", \"spans\": [], \"processes\": {}}",
        ),
        ("bom.json", b"\xEF\xBB\xBF\n"),
    ] {
        let path = dir.path().join(file);
        std::fs::write(&path, body).unwrap();
        let name = path.to_str().unwrap();
        let (code, _, err) = run("triage-parse", &[name], b"");
        assert_eq!(code, 0, "{err}");
        assert!(err.contains(&format!("{name}: ")), "{err}");
        assert!(err.contains("nothing to read"), "{err}");
    }
    // A run and its outcome with no step recorded is something read.
    let path = dir.path().join("errored.json");
    std::fs::write(
        &path,
        r#"{"run_id": "r", "status": "ERROR", "messages": []}"#,
    )
    .unwrap();
    let (code, out, err) = run("triage-parse", &[path.to_str().unwrap()], b"");
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{err}");
    assert_eq!(of_kind(&records(&out), "run")[0]["outcome"], "failed");
}

/// A stage given nothing but lines it cannot read fails, naming the input,
/// rather than succeed on nothing; one bad line among good ones is skipped
/// with a warning.
#[test]
fn a_stage_that_could_read_nothing_fails_naming_its_input() {
    for stage in [
        "triage-group",
        "triage-score",
        "triage-explain",
        "triage-render",
    ] {
        let (code, _, err) = run(stage, &[], b"hello world\nnot json either\n");
        assert_eq!(code, 2, "{stage}: {err}");
        assert!(
            err.contains("nothing could be read from 1 input: <stdin>"),
            "{stage}: {err}"
        );
    }
    let events = ok("triage-parse", &["examples/monday.ndjson"], b"");
    let mut mixed = b"hello world\n".to_vec();
    mixed.extend_from_slice(&events);
    let (code, _, err) = run("triage-group", &[], &mixed);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("<stdin>:1: not valid JSON"), "{err}");
}
