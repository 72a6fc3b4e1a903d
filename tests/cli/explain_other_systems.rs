//! triage-explain end to end on systems it was not developed on: a
//! customer-service agent under a written policy (τ-bench, τ²-bench) and a
//! coding agent (mini-SWE-agent), read by triage-parse's own readers.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(rel)
}

/// `triage-parse --format FORMAT FILE | triage-explain --verdicts-only`.
fn verdicts(format: &str, file: &Path) -> Vec<Value> {
    let file = file.to_str().unwrap();
    let parsed = common::ok("triage-parse", &["--format", format, file], b"");
    let out = common::ok("triage-explain", &["--verdicts-only"], &parsed);
    common::records(&out)
        .into_iter()
        .filter(|r| r["kind"] == "verdict")
        .collect()
}

fn detector(v: &Value) -> &str {
    v["candidates"][0]["detector"].as_str().unwrap_or("")
}

#[test]
fn a_coding_agent_that_submits_without_changing_anything_is_the_verdict() {
    // The harness refused a reply holding dozens of commands, took the
    // next one, and that one submitted an empty patch: the submission, not
    // the refusal the agent got past, is what failed the run.
    let v = verdicts(
        "coding-agent",
        &data("tracesir/coding/django__django-11885.json"),
    );
    assert_eq!(v.len(), 1);
    assert_eq!(detector(&v[0]), "empty_submission");
    assert_eq!(
        (v[0]["agent_id"].as_str(), v[0]["step"].as_u64()),
        (Some("assistant"), Some(2))
    );
    assert!(
        v[0]["evidence"][0]
            .as_str()
            .unwrap()
            .contains("changed no file"),
        "{}",
        v[0]
    );
    assert_eq!(v[0]["system"], "coding agent");
    // Refused five times before the empty submission: the refusals were
    // never got past, so the first is the verdict.
    let v = verdicts(
        "coding-agent",
        &data("tracesir/coding/sympy__sympy-16766.json"),
    );
    assert_eq!(v[0]["category"], "malformed_output", "{}", v[0]);
}

#[test]
fn handing_the_user_over_unasked_is_giving_up() {
    let v = verdicts(
        "openai-chat",
        &data("tracesir/function-calling/tau2-2700f68340c642b7a337ddb032149d86.json"),
    );
    assert_eq!(v.len(), 1);
    assert_eq!(detector(&v[0]), "unrequested_handoff");
    assert_eq!(v[0]["category"], "premature_termination");
    assert_eq!(v[0]["blame"], "agent");
}

/// The first irreversible call (or the message proposing it, where the
/// user said yes) was the decisive step in about a third of the hand-read
/// tool-use runs it fires on: the verdict abstains, names the call, at the
/// rate measured, below one half.
#[test]
fn the_first_irreversible_call_locates_at_its_measured_rate_on_tau_bench() {
    let v = verdicts("taubench", &data("tau-bench/gpt-4o-airline.json"));
    assert_eq!(v.len(), 116, "one verdict per failed run");
    let located: Vec<&Value> = v
        .iter()
        .filter(|v| detector(v) == "point_of_no_return")
        .collect();
    assert!(!located.is_empty());
    for l in &located {
        assert_eq!(l["category"], "unknown", "{l}");
        assert_eq!(l["system"], "tool use with a user", "{l}");
        let p = l["confidence"].as_f64().unwrap();
        assert!((0.2..0.5).contains(&p), "{l}");
        assert!(
            l["evidence"].to_string().contains("cannot be undone"),
            "{l}"
        );
    }
    // The first action after the task, never the decisive step on these
    // runs, abstains at a confidence that says so.
    for a in v.iter().filter(|v| detector(v) == "first_action") {
        assert_eq!(a["category"], "unknown", "{a}");
        assert!(a["confidence"].as_f64().unwrap() < 0.2, "{a}");
    }
}

/// A multi-agent chat far longer than any labelled one (60 steps where the
/// Who&When runs have at most 10) is unlike every set of its kind: its
/// verdict is capped and says by what.
#[test]
fn a_run_shaped_unlike_every_set_of_its_kind_is_capped_and_says_why() {
    let agents = ["Planner", "Coder", "Checker"];
    let mut lines = vec![
        r#"{"kind":"run","run_id":"long","outcome":"failed","reason":"wrong_answer","task":"How many stops are on the line?"}"#
            .to_string(),
    ];
    for turn in 0..60 {
        let agent = agents[turn % 3];
        let text = if turn == 7 {
            "Let's simulate the data: assume there are 12 stops on the line.".to_string()
        } else {
            format!("Step {turn}: we go on with the plan and check the line again.")
        };
        lines.push(
            serde_json::json!({"kind":"event","event_id":format!("long:{turn}"),"run_id":"long",
                "turn":turn,"agent_id":agent,"action_taken":{"tool_name":"message"},
                "action_succeeded":true,"span_kind":"message","output":text})
            .to_string(),
        );
    }
    let input = lines.join("\n") + "\n";
    let out = common::ok("triage-explain", &["--verdicts-only"], input.as_bytes());
    let v: Vec<Value> = common::records(&out)
        .into_iter()
        .filter(|r| r["kind"] == "verdict")
        .collect();
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["system"], "multi-agent chat", "{}", v[0]);
    assert_eq!(v[0]["profile"]["steps"], 60, "{}", v[0]);
    let evidence = v[0]["evidence"].to_string();
    assert!(
        evidence.contains("unlike every set of that kind (steps 60 where who-and-when-ag has"),
        "{evidence}"
    );
    assert!(v[0]["confidence"].as_f64().unwrap() < 0.5, "{}", v[0]);
}
