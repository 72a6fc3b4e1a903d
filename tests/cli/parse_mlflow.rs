//! triage-parse on MLflow traces generated with the real library
//! (tests/data/mlflow): a trace saved whole, as the tracking store keeps
//! its spans and in a list of traces reads as the same run.

use crate::common;

use serde_json::Value;

fn read(name: &str) -> Vec<Value> {
    let path = format!("{}/tests/data/mlflow/{name}", env!("CARGO_MANIFEST_DIR"));
    let (code, out, err) = common::run("triage-parse", &[&path], b"");
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "{name}: {err}");
    common::records(&out)
}

/// One step as (agent, tool, kind, succeeded, input).
type Step = (String, String, String, bool, String);

/// A run's steps, and its run record.
fn run(recs: &[Value], id: &str) -> (Vec<Step>, Value) {
    let steps = recs
        .iter()
        .filter(|r| r["kind"] == "event" && r["run_id"] == id)
        .map(|r| {
            (
                r["agent_id"].as_str().unwrap().to_string(),
                r["action_taken"]["tool_name"].as_str().unwrap().to_string(),
                r["span_kind"].as_str().unwrap().to_string(),
                r["action_succeeded"].as_bool().unwrap(),
                r["input"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let record = recs
        .iter()
        .find(|r| r["kind"] == "run" && r["run_id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no run {id}"));
    (steps, record)
}

#[test]
fn a_trace_reads_alike_whole_as_stored_and_in_a_list() {
    let whole = read("refund-agent.trace.json");
    let id = whole.iter().find(|r| r["kind"] == "run").unwrap()["run_id"]
        .as_str()
        .unwrap()
        .to_string();
    // The MLflow trace id, which the UI and the API name it by.
    assert!(id.starts_with("tr-"), "{id}");
    let (steps, record) = run(&whole, &id);
    let kinds: Vec<(&str, &str, bool)> = steps
        .iter()
        .map(|s| (s.1.as_str(), s.2.as_str(), s.3))
        .collect();
    assert_eq!(
        kinds,
        [
            ("ChatModel", "llm", true),
            ("lookup_order", "tool", false),
            ("ChatModel", "llm", true),
            // The agent gave up as it ended, after its steps: no step of
            // its own recovered from that.
            ("refund_agent", "agent", false),
        ]
    );
    assert!(steps.iter().all(|s| s.0 == "refund_agent"));
    // The tool's arguments, JSON-encoded in mlflow.spanInputs, read back.
    assert_eq!(steps[1].4, r#"{"order_id": "A-17"}"#);
    assert_eq!(record["outcome"], "failed");
    assert!(
        record["task"]
            .as_str()
            .unwrap()
            .contains("Refund order A-17"),
        "{record}"
    );
    for other in ["refund-agent.traces.json", "two-runs.json"] {
        let recs = read(other);
        assert_eq!(run(&recs, &id).0, steps, "{other}");
    }
    let listed = read("two-runs.json");
    let runs: Vec<&Value> = listed.iter().filter(|r| r["kind"] == "run").collect();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["outcome"], "succeeded");
}

#[test]
fn an_agent_that_gave_up_after_its_steps_is_not_recovered_by_them() {
    let path = format!(
        "{}/tests/data/mlflow/refund-agent.trace.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let parsed = common::ok("triage-parse", &[&path], b"");
    let grouped = common::records(&common::ok("triage-group", &[], &parsed));
    let gave_up = grouped
        .iter()
        .find(|r| r["kind"] == "pattern" && r["tool_name"] == "refund_agent")
        .expect("the agent's own failure is a pattern");
    // It failed as its span ended, after the model calls below it: no
    // later step of the agent's own could recover from it.
    assert_eq!(gave_up["recovered"], 0, "{gave_up}");
}

#[test]
fn a_trace_saved_without_its_spans_is_named_not_lost() {
    let path = format!(
        "{}/tests/data/mlflow/two-runs.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut traces: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    // As `search_traces(include_spans=False)` leaves the failed one.
    traces[1]["data"]["spans"] = serde_json::json!([]);
    let input = serde_json::to_vec(&traces).unwrap();
    let (code, out, err) = common::run("triage-parse", &["--format", "otel"], &input);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "the MLflow trace tr-bc6159bf6e1e75353aad8e60ee3c037f (state ERROR) holds no spans"
        ),
        "{err}"
    );
    let recs = common::records(&out);
    assert_eq!(recs.iter().filter(|r| r["kind"] == "run").count(), 1);
    // The run that was read succeeded; the report does not call that an
    // all clear while a trace went unread.
    let (_, report, _) = common::run("triage", &["report", "--input-format", "otel"], &input);
    let report = String::from_utf8(report).unwrap();
    assert!(!report.contains("All clear"), "{report}");
    assert!(
        report.contains("1 input line could not be read"),
        "{report}"
    );
}
