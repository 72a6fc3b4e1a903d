//! triage-parse, report and explain on AutoGen AgentChat runs generated
//! with the real library (tests/data/autogen: scripted models, offline):
//! a TaskResult, run_stream's lines and a saved team each read as one run,
//! a limit that ended a run fails it in the library's words, a code
//! executor's reply is the output of the code it ran, and explain blames
//! the agent whose code or instruction failed, without a claim on a kind
//! of system no labelled set covers.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/autogen")
        .join(name)
}

const ALL: [&str; 6] = [
    "magentic-one-wrong-page.json",
    "magentic-one-max-rounds.ndjson",
    "round-robin-code-error.json",
    "swarm-refund.json",
    "swarm-refund.state.json",
    "code-agent-retry.ndjson",
];

fn paths(names: &[&str]) -> Vec<String> {
    names
        .iter()
        .map(|n| sample(n).to_str().unwrap().to_string())
        .collect()
}

fn parse(names: &[&str]) -> Vec<Value> {
    let paths = paths(names);
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let (code, out, err) = common::run("triage-parse", &args, b"");
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "warnings: {err}");
    common::records(&out)
}

fn run_of<'a>(recs: &'a [Value], id: &str) -> &'a Value {
    recs.iter()
        .find(|r| r["kind"] == "run" && r["run_id"] == id)
        .unwrap_or_else(|| panic!("no run {id}"))
}

fn steps<'a>(recs: &'a [Value], id: &str) -> Vec<(&'a str, &'a str, bool)> {
    recs.iter()
        .filter(|r| r["kind"] == "event" && r["run_id"] == id)
        .map(|r| {
            (
                r["agent_id"].as_str().unwrap(),
                r["action_taken"]["tool_name"].as_str().unwrap(),
                r["action_succeeded"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn each_dump_is_one_run_and_only_a_limit_decides_its_outcome() {
    let recs = parse(&ALL);
    let sources: Vec<&Value> = recs.iter().filter(|r| r["kind"] == "source").collect();
    assert_eq!(sources.len(), 6);
    assert!(
        sources
            .iter()
            .all(|s| s["format"] == "autogen" && s["skipped"] == 0 && s["runs"] == 1),
        "{sources:#?}"
    );
    let rounds = run_of(&recs, "magentic-one-max-rounds");
    assert_eq!(
        (&rounds["outcome"], &rounds["reason"], &rounds["message"]),
        (
            &"failed".into(),
            &"timeout".into(),
            &"Max rounds reached.".into()
        )
    );
    let messages = run_of(&recs, "round-robin-code-error");
    assert_eq!(messages["reason"], "timeout");
    assert!(
        messages["message"]
            .as_str()
            .unwrap()
            .starts_with("Maximum number of messages 4 reached")
    );
    // The orchestrator satisfied itself, the refunds agent said TERMINATE,
    // the code agent answered: their own word, not a verdict.
    for id in [
        "magentic-one-wrong-page",
        "swarm-refund",
        "swarm-refund.state",
        "code-agent-retry",
    ] {
        assert_eq!(run_of(&recs, id)["outcome"], "unknown", "{id}");
    }
    assert_eq!(
        run_of(&recs, "swarm-refund")["task"],
        "Please refund my booking BK-204."
    );
}

#[test]
fn a_streamed_run_is_read_once_and_its_steps_keep_the_lines_they_were_streamed_on() {
    let recs = parse(&["magentic-one-max-rounds.ndjson"]);
    let visits: Vec<&Value> = recs
        .iter()
        .filter(|r| r["action_taken"]["tool_name"] == "visit_page")
        .collect();
    assert_eq!(
        visits.len(),
        3,
        "the TaskResult repeats the streamed messages"
    );
    assert!(visits.iter().all(|v| v["action_succeeded"] == false));
    // Lines 5, 10 and 15 hold the calls; 6, 11 and 16 their results.
    let lines: Vec<u64> = visits
        .iter()
        .map(|v| v["src"]["line"].as_u64().unwrap())
        .collect();
    assert!(lines.iter().all(|l| *l < 19), "{lines:?}");
}

#[test]
fn a_saved_team_reads_as_the_run_it_saved() {
    let recs = parse(&["swarm-refund.json", "swarm-refund.state.json"]);
    let result = steps(&recs, "swarm-refund");
    assert_eq!(result, steps(&recs, "swarm-refund.state"));
    assert_eq!(
        result,
        [
            ("user", "message", true),
            ("travel_agent", "transfer_to_refunds", true),
            ("travel_agent", "message", true),
            ("refunds", "refund_flight", true),
            ("refunds", "message", true),
        ]
    );
}

#[test]
fn code_an_agent_generated_and_ran_is_a_step_its_exit_code_deciding() {
    let recs = parse(&["code-agent-retry.ndjson", "round-robin-code-error.json"]);
    let ran: Vec<bool> = steps(&recs, "code-agent-retry")
        .into_iter()
        .filter(|s| s.1 == "code_execution")
        .map(|s| s.2)
        .collect();
    assert_eq!(ran, [false, true], "division by zero, then the fix");
    let executor = recs.iter().find(|r| r["agent_id"] == "executor").unwrap();
    assert_eq!(executor["action_taken"]["tool_name"], "code_execution");
    assert!(
        executor["input"].as_str().unwrap().contains("totals.json"),
        "the code it ran is the coder's block: {executor}"
    );
}

#[test]
fn the_report_counts_the_runs_a_limit_stopped() {
    let paths = paths(&ALL);
    let mut args = vec!["report"];
    args.extend(paths.iter().map(String::as_str));
    let (code, out, err) = common::run("triage", &args, b"");
    assert_eq!(code, 0, "{err}");
    let report = String::from_utf8(out).unwrap();
    assert!(!report.contains("All clear"), "{report}");
    assert!(report.contains("2 of 6 runs failed"), "{report}");
    assert!(report.contains("4 with no known outcome"), "{report}");
}

#[test]
fn explain_blames_the_coder_and_the_orchestrator_s_address_without_a_claim() {
    let paths = paths(&ALL);
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let (_, parsed, _) = common::run("triage-parse", &args, b"");
    let (code, out, err) = common::run("triage-explain", &[], &parsed);
    assert_eq!(code, 0, "{err}");
    let verdicts: Vec<Value> = common::records(&out)
        .into_iter()
        .filter(|r| r["kind"] == "verdict")
        .collect();
    let of = |id: &str| verdicts.iter().find(|v| v["run_id"] == id).unwrap();
    assert_eq!(verdicts.len(), 2, "one per failed run: {verdicts:#?}");
    // The executor ran what the coder wrote: the coder's call was wrong.
    let code_error = of("round-robin-code-error");
    assert_eq!(
        (&code_error["agent_id"], &code_error["step"]),
        (&"coder".into(), &1.into())
    );
    // The orchestrator sent the surfer to an address nothing gave it.
    let rounds = of("magentic-one-max-rounds");
    assert_eq!(rounds["agent_id"], "MagenticOneOrchestrator");
    assert_eq!(rounds["system"], "web browsing");
    assert!(
        verdicts
            .iter()
            .all(|v| v["confidence"].as_f64().unwrap() < 0.5),
        "no labelled set of these systems: {verdicts:#?}"
    );
}

#[test]
fn older_releases_read_as_the_newest_and_a_dump_that_lost_its_messages_is_an_error() {
    // 0.4.5 writes no ids: the closing TaskResult is matched to the
    // streamed messages by what they say, and the run is read once.
    let recs = parse(&[
        "magentic-one-max-rounds.ndjson",
        "v0.4.5-magentic-one-max-rounds.ndjson",
        "v0.5.7-magentic-one-max-rounds.ndjson",
        "swarm-refund.state.json",
        "v0.4.5-swarm-refund.state.json",
    ]);
    let newest = steps(&recs, "magentic-one-max-rounds");
    assert_eq!(newest.len(), 9);
    for id in [
        "v0.4.5-magentic-one-max-rounds",
        "v0.5.7-magentic-one-max-rounds",
    ] {
        assert_eq!(steps(&recs, id), newest, "{id}");
        assert_eq!(run_of(&recs, id)["message"], "Max rounds reached.", "{id}");
    }
    assert_eq!(
        steps(&recs, "v0.4.5-swarm-refund.state"),
        steps(&recs, "swarm-refund.state")
    );
    // 0.5.7's TaskResult.model_dump_json() keeps of each message only its
    // source: nothing to read, and the user is told how to save it.
    let hollow = sample("v0.5.7-round-robin-code-error.json");
    let (code, _, err) = common::run("triage-parse", &[hollow.to_str().unwrap()], b"");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no type or content") && err.contains("model_dump_json()"),
        "{err}"
    );
}

#[test]
fn a_message_type_it_does_not_know_is_counted_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("result.json");
    let doc = serde_json::json!({"stop_reason": null, "messages": [
        {"id": "1", "source": "user", "models_usage": null, "type": "TextMessage", "content": "go"},
        {"id": "2", "source": "a", "models_usage": null, "type": "NewKindOfEvent", "content": "?"}]});
    std::fs::write(&path, doc.to_string()).unwrap();
    let (code, out, err) = common::run("triage-parse", &[path.to_str().unwrap()], b"");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("NewKindOfEvent") && err.contains("does not read"),
        "{err}"
    );
    assert_eq!(
        common::records(&out)
            .iter()
            .filter(|r| r["kind"] == "event")
            .count(),
        1
    );
}

/// The OpenTelemetry traces of two team runs, as the SDK's console
/// exporter and as one OTLP/JSON request: AutoGen's runtime starts a trace
/// per message it delivers, linked to the sender's.
#[test]
fn a_teams_traces_linked_by_its_runtime_read_as_one_run_each() {
    let mut seen = Vec::new();
    for name in ["otel-two-runs.console.jsonl", "otel-two-runs.otlp.json"] {
        let path = sample(name);
        let (code, out, err) = common::run("triage-parse", &[path.to_str().unwrap()], b"");
        assert_eq!(code, 0, "{err}");
        // The deliveries and agent creations are counted, not steps.
        assert!(
            err.contains("100 spans of the runtime's plumbing"),
            "{name}: {err}"
        );
        let recs = common::records(&out);
        let runs: Vec<&Value> = recs.iter().filter(|r| r["kind"] == "run").collect();
        assert_eq!(
            runs.len(),
            2,
            "{name}: one run per team.run(), not per trace"
        );
        let (failed, other) = (runs[0], runs[1]);
        assert_eq!(failed["outcome"], "failed", "{name}");
        assert_eq!(other["outcome"], "unknown", "{name}");
        let id = failed["run_id"].as_str().unwrap();
        assert_eq!(
            steps(&recs, id),
            [
                ("clerk", "invoke_agent", true),
                ("clerk", "lookup_order", false),
                ("reviewer", "invoke_agent", true),
                ("clerk", "invoke_agent", true),
            ],
            "{name}"
        );
        let error = recs
            .iter()
            .find(|r| r["kind"] == "event" && r["action_succeeded"] == false)
            .map(|r| r["error"]["message"].as_str().unwrap().to_string());
        assert_eq!(error.as_deref(), Some("KeyError: 'A-17'"));
        let other_steps = steps(&recs, other["run_id"].as_str().unwrap());
        assert_eq!(other_steps.len(), 4, "{name}");
        assert!(other_steps.iter().all(|s| s.2), "{name}");
        seen.push((id.to_string(), other["run_id"].clone()));
    }
    assert_eq!(seen[0], seen[1], "both exports name the runs alike");
    // Zipkin keeps no links: the traces stay runs, and stderr says why.
    let path = sample("otel-two-runs.zipkin.json");
    let (code, out, err) = common::run("triage-parse", &[path.to_str().unwrap()], b"");
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("so each trace is a run"), "{err}");
    let runs = common::records(&out)
        .into_iter()
        .filter(|r| r["kind"] == "run")
        .count();
    assert_eq!(runs, 6);
}

/// An input whose every span is runtime plumbing has no step to read: an
/// error saying so, not an empty success.
#[test]
fn spans_of_nothing_but_plumbing_are_nothing_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spans.json");
    let span = serde_json::json!({"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331",
        "name": "autogen process clerk", "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000000000500000",
        "attributes": [{"key": "messaging.operation", "value": {"stringValue": "process"}}]});
    let request = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]});
    std::fs::write(&path, request.to_string()).unwrap();
    let (code, _, err) = common::run("triage-parse", &[path.to_str().unwrap()], b"");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("runtime's plumbing") && err.contains("nothing could be read"),
        "{err}"
    );
}
