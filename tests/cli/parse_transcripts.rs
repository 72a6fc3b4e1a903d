//! triage-parse on chat transcripts (`openai-chat`, `anthropic-messages`):
//! the real TraceSIR function-calling runs, fixtures from real files, and
//! the outcome and failures each one must give.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

fn crate_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
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

    fn failed(&self) -> Vec<&Value> {
        self.events()
            .into_iter()
            .filter(|e| e["action_succeeded"] == false)
            .collect()
    }
}

fn parse(args: &[&str], files: &[&Path]) -> Parsed {
    let mut argv = args.to_vec();
    argv.extend(files.iter().map(|f| f.to_str().unwrap()));
    let (code, stdout, stderr) = common::run("triage-parse", &argv, b"");
    assert_eq!(code, 0, "exit {code}: {stderr}");
    let records = common::records(&stdout);
    Parsed { records, stderr }
}

fn tracesir_function_calling() -> Vec<PathBuf> {
    let dir = crate_path("tests/data/tracesir/function-calling");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 50, "{} is incomplete", dir.display());
    files
}

/// Every TraceSIR τ²-bench conversation reads as one openai-chat run, with
/// no warning, failed as its `gold_score` 0 says; each tool call (the
/// agent's and the simulated user's) is one event answered by its reply,
/// and exactly the replies that are errors fail their call.
#[test]
fn every_tracesir_function_calling_run_reads_whole_with_its_verdict() {
    for file in tracesir_function_calling() {
        let doc: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let messages = doc["messages"].as_array().unwrap();
        let calls = messages
            .iter()
            .filter_map(|m| m["tool_calls"].as_array())
            .map(Vec::len)
            .sum::<usize>();
        let errors = messages
            .iter()
            .filter(|m| m["role"] == "tool")
            .filter(|m| {
                m["content"]
                    .as_str()
                    .is_some_and(|c| c.starts_with("Error"))
            })
            .count();

        let p = parse(&[], &[&file]);
        let name = file.file_name().unwrap().to_string_lossy();
        assert!(p.stderr.is_empty(), "{name}: {}", p.stderr);
        let src = p.of_kind("source")[0];
        assert_eq!(src["format"], "openai-chat", "{name}");
        assert_eq!(
            (src["skipped"].as_u64(), src["runs"].as_u64()),
            (Some(0), Some(1))
        );
        let runs = p.of_kind("run");
        assert_eq!(runs[0]["run_id"], doc["oid"], "{name}");
        assert_eq!(runs[0]["outcome"], "failed", "{name}");
        assert_eq!(runs[0]["task"], doc["task"], "{name}");
        let tools: Vec<&Value> = p
            .events()
            .into_iter()
            .filter(|e| e["span_kind"] == "tool")
            .collect();
        assert_eq!(tools.len(), calls, "{name}");
        assert!(
            tools.iter().all(|e| e["output"].is_string()),
            "{name}: a call without its reply"
        );
        assert_eq!(p.failed().len(), errors, "{name}");
    }
}

fn transcript(name: &str) -> PathBuf {
    crate_path("tests/data/transcripts").join(name)
}

/// (tool, succeeded) of each tool event of `run`, in order.
fn tool_steps<'a>(p: &'a Parsed, run: &str) -> Vec<(&'a str, bool)> {
    p.events()
        .into_iter()
        .filter(|e| e["run_id"] == run && e["span_kind"] == "tool")
        .map(|e| {
            (
                e["action_taken"]["tool_name"].as_str().unwrap(),
                e["action_succeeded"] == true,
            )
        })
        .collect()
}

fn outcome<'a>(p: &'a Parsed, run: &str) -> &'a Value {
    &p.of_kind("run")
        .into_iter()
        .find(|r| r["run_id"] == run)
        .unwrap_or_else(|| panic!("no run {run}"))["outcome"]
}

/// A run its harness scored a success keeps the failed call it recovered
/// from as a failure event, and stays a success.
#[test]
fn a_recovered_failure_is_an_event_but_the_verdict_decides_the_run() {
    let p = parse(&[], &[&transcript("openai-chat-recovered.json")]);
    assert!(p.stderr.is_empty(), "{}", p.stderr);
    let steps = tool_steps(&p, "chat-refund-recovered");
    assert_eq!(steps, [("refund_order", false), ("refund_order", true)]);
    assert_eq!(outcome(&p, "chat-refund-recovered"), "succeeded");
    let failed = p.failed();
    assert!(
        failed[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exceeds the order total"),
        "{}",
        failed[0]
    );
}

/// Conversations one per line: each is a run whose scores by name give its
/// outcome; a tool that raised (its reply a Python traceback) fails its
/// step, and the error is the exception, not the traceback's first line.
#[test]
fn runs_one_per_line_with_their_scores_and_tracebacks() {
    let p = parse(&[], &[&transcript("openai-chat-runs.jsonl")]);
    assert!(p.stderr.is_empty(), "{}", p.stderr);
    assert_eq!(
        tool_steps(&p, "chat-refund-in-transit"),
        [
            ("lookup_order", true),
            ("read_policy", false),
            ("refund_order", false)
        ]
    );
    assert_eq!(outcome(&p, "chat-refund-in-transit"), "failed");
    assert_eq!(outcome(&p, "chat-where-is-my-order"), "succeeded");
    let errors: Vec<&str> = p
        .failed()
        .iter()
        .map(|e| e["error"]["message"].as_str().unwrap())
        .collect();
    assert!(errors[0].starts_with("FileNotFoundError:"), "{errors:?}");
    assert!(
        errors[1].starts_with("ValueError: order A-101 is in_transit"),
        "{errors:?}"
    );
}

/// Responses API items: calls and their outputs paired by `call_id`, an
/// error object as output fails the call, reasoning goes with the step.
#[test]
fn responses_items_pair_by_call_id() {
    let p = parse(&[], &[&transcript("openai-responses-items.json")]);
    assert!(p.stderr.is_empty(), "{}", p.stderr);
    assert_eq!(p.of_kind("source")[0]["format"], "openai-chat");
    let run = "openai-responses-items";
    assert_eq!(
        tool_steps(&p, run),
        [("lookup_order", false), ("lookup_order", true)]
    );
    let events = p.events();
    let first_call = events.iter().find(|e| e["span_kind"] == "tool").unwrap();
    assert_eq!(
        first_call["action_taken"]["tool_input"]["order_id"],
        "A-999"
    );
    assert_eq!(
        first_call["message_context"]["reasoning"],
        "Look the order up first."
    );
    assert_eq!(
        events.last().unwrap()["output"],
        "A-999 does not exist; A-100 was delivered."
    );
    // Nothing records a verdict, and the run ended on a success.
    assert_eq!(outcome(&p, run), "unknown");
}

/// Anthropic Messages: `tool_use` blocks answered by `tool_result` blocks
/// with the same id; `is_error` fails the call with the tool's message.
#[test]
fn anthropic_tool_results_pair_by_id_and_is_error_fails_the_call() {
    let p = parse(&[], &[&transcript("anthropic-messages-refused.json")]);
    assert!(p.stderr.is_empty(), "{}", p.stderr);
    assert_eq!(p.of_kind("source")[0]["format"], "anthropic-messages");
    let run = "anthropic-messages-refused";
    assert_eq!(
        tool_steps(&p, run),
        [("lookup_order", true), ("refund_order", false)]
    );
    let failed = p.failed();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["failure_source"], "error");
    assert!(
        failed[0]["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("ValueError: order A-101 is in_transit")
    );
    // The lookup's output is its text, and thinking goes with its step.
    let lookup = p
        .events()
        .into_iter()
        .find(|e| e["action_taken"]["tool_name"] == "lookup_order")
        .unwrap();
    assert!(lookup["output"].as_str().unwrap().contains("in_transit"));
    assert_eq!(
        lookup["message_context"]["reasoning"],
        "Check the order before refunding."
    );
}

/// An object of named transcripts is read value by value: each case is a
/// run named by the file and its key, in its own dialect, with the file's
/// line numbers.
#[test]
fn named_cases_are_read_value_by_value() {
    let p = parse(&[], &[&transcript("named-cases.json")]);
    assert!(p.stderr.is_empty(), "{}", p.stderr);
    let sources = p.of_kind("source");
    let formats: Vec<(&str, &str)> = sources
        .iter()
        .map(|s| {
            let path = s["path"].as_str().unwrap();
            (
                &path[path.find('#').unwrap() + 1..],
                s["format"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        formats,
        [
            ("refund_recovered", "openai-chat"),
            ("where_is_my_order", "openai-chat"),
            ("refund_refused", "anthropic-messages")
        ]
    );
    assert_eq!(
        tool_steps(&p, "named-cases#refund_refused"),
        [("lookup_order", true), ("refund_order", false)]
    );
    let text = std::fs::read_to_string(transcript("named-cases.json")).unwrap();
    let line_of = |needle: &str| 1 + text[..text.find(needle).unwrap()].matches('\n').count();
    let refund = p
        .failed()
        .into_iter()
        .find(|e| e["run_id"] == "named-cases#refund_refused")
        .unwrap();
    assert_eq!(refund["src"]["line"], line_of("\"refund_refused\":"));
}

/// A valid JSON document no format reads is one message naming its keys,
/// not a warning per line; nothing read from it fails the command with
/// exit 2, once the other inputs are read.
#[test]
fn an_unclaimed_document_is_named_once_and_fails_the_command_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        "{\n  \"model\": \"gpt-4o\",\n  \"temperature\": 0,\n  \"tools\": [\n    \"lookup\"\n  ]\n}\n",
    )
    .unwrap();
    let good = transcript("openai-chat-recovered.json");
    let out = common::cmd("triage-parse")
        .arg(&config)
        .arg(&good)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let c = config.display();
    assert_eq!(
        stderr,
        format!(
            "triage-parse: warning: {c}: a JSON document no format reads (top-level keys: model, temperature, tools); use --format to name its format; skipped\n\
             triage-parse: error: nothing could be read from 1 input: {c}\n"
        )
    );
    // The other input was read whole.
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains(r#""run_id":"chat-refund-recovered","outcome":"succeeded""#),
        "{stdout}"
    );
}

/// The same from a pipe: a pretty-printed document is one message, while
/// lines are still reported line by line as they arrive.
#[test]
fn an_unclaimed_document_on_stdin_is_named_once() {
    let out = common::cmd("triage-parse")
        .write_stdin("{\n  \"a\": 1,\n  \"b\": [2]\n}\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with(
            "triage-parse: warning: <stdin>: a JSON document no format reads (top-level keys: a, b)"
        ),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
}

/// What a transcript holds that no dialect reads is named once per kind,
/// with a count, and the rest is read.
#[test]
fn unknown_blocks_and_items_are_counted_not_dropped_in_silence() {
    let doc = serde_json::json!({"messages": [
        {"role": "user", "content": [{"type": "text", "text": "look"},
                                     {"type": "hologram", "data": "…"}]},
        {"role": "assistant", "content": [{"type": "hologram", "data": "…"},
                                          {"type": "text", "text": "seen"}]},
        {"type": "teleport_call", "call_id": "t1"},
    ]});
    let (code, out, err) = common::run("triage-parse", &["-"], doc.to_string().as_bytes());
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("2 × a content block of type \"hologram\""),
        "{err}"
    );
    let events = common::of_kind(&common::records(&out), "event").len();
    assert!(events >= 2, "{events}");
}
