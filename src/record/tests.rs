//! Tests of `record`.

use super::*;

#[test]
fn json_reason_names_the_field_and_a_syntax_errors_column() {
    let reason = |line: &str| {
        let e = serde_json::from_str::<Pattern>(line).unwrap_err();
        json_reason(line.as_bytes(), &e)
    };
    assert_eq!(
        reason(r#"{"kind":"pattern","frequency":"x","pattern_id":"p"}"#),
        "frequency: invalid type: string \"x\", expected a non-negative integer"
    );
    let nested = reason(r#"{"kind":"pattern","pattern_id":"p","run_counts":{"r":"x"}}"#);
    assert!(nested.starts_with("run_counts: "), "{nested}");
    assert!(reason(r#"{"kind":"pattern"}"#).starts_with("missing field \"pattern_id\""));
    assert_eq!(
        reason(r#"{"kind":"pat"#),
        "not valid JSON: EOF while parsing a string at column 12"
    );
}

#[test]
fn field_lists_name_what_a_scored_pattern_writes() {
    let pattern: Pattern = serde_json::from_str(
        r#"{"kind":"pattern","pattern_id":"p","display_name":"d","agent_id":"a",
        "tool_name":"t","failure_classification":"c","divergence_fields":[],"frequency":1,
        "recovered":0,"tail_unrecovered":1,"recovery_latencies":{},"run_counts":{"r":1},
        "samples":[],"frequency_score":1.0,"severity_score":1.0,"recovery_rate":0.0,
        "final_score":1.0,"confidence":0.5,"confidence_label":"low",
        "median_recovery_latency":null,"runs_seen":1,"runs_total":1,"trend":"new","rank":1}"#,
    )
    .unwrap();
    let written = serde_json::to_value(&pattern).unwrap();
    let written: Vec<&str> = written
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    let listed: Vec<&str> = Pattern::FIELDS.into_iter().chain(Scores::FIELDS).collect();
    assert_eq!(written, listed);
    assert!(pattern.writes("rank"));
    let unscored = Pattern {
        score: None,
        ..pattern
    };
    assert!(unscored.writes("run_counts") && !unscored.writes("rank"));
}

#[test]
fn run_counts_keep_their_order_both_ways() {
    let rc = RunCounts(vec![("z".into(), 2), ("a".into(), 1)]);
    let s = serde_json::to_string(&rc).unwrap();
    assert_eq!(s, r#"{"z":2,"a":1}"#);
    let back: RunCounts = serde_json::from_str(&s).unwrap();
    assert_eq!(back, rc);
}

#[test]
fn event_out_omits_unknowns() {
    let e = EventOut::new("e1", "r1", 3, "planner", "search", false);
    let s = serde_json::to_string(&e).unwrap();
    assert_eq!(
        s,
        r#"{"kind":"event","event_id":"e1","run_id":"r1","turn":3,"agent_id":"planner","action_taken":{"tool_name":"search"},"action_succeeded":false}"#
    );
}

#[test]
fn classification_null_spellings_mean_none() {
    for (raw, want) in [
        (r#"null"#, None),
        (r#""""#, None),
        (r#""null""#, None),
        (r#""agent_error""#, Some("agent_error")),
    ] {
        let line = format!(
            r#"{{"event_id":"e","run_id":"r","turn":1,"agent_id":"a","action_taken":{{"tool_name":"t"}},"action_succeeded":true,"failure_classification":{raw}}}"#
        );
        let v: EventView = serde_json::from_str(&line).unwrap();
        assert_eq!(v.classification(), want);
        assert_eq!(v.is_failure(), want.is_some());
    }
}

#[test]
fn a_digest_is_the_sha256_of_the_text_in_lowercase_hex() {
    assert_eq!(
        text_digest("abc"),
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(
        text_digest(""),
        "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
}
