//! Tests of `ndjson`.

use super::event::*;
use super::*;

fn parse(json: &str) -> Result<String, String> {
    let top = TopLevel::scan(json, &[], &mut LineScratch::default()).map_err(|e| e.to_string())?;
    let ev = TraceEvent::read(&top).map_err(|e| e.to_string())?;
    let mut buf = Vec::new();
    ev.write_json(&mut buf, ",\"src\":{\"path\":\"t.ndjson\",\"line\":", 1);
    buf.push(b'}');
    let text = String::from_utf8(buf).unwrap();
    serde_json::from_str::<serde_json::Value>(&text).expect("the event is valid JSON");
    Ok(text)
}

#[test]
fn every_top_field_has_its_own_slot() {
    for (i, name) in TOP_FIELDS.iter().enumerate() {
        assert_eq!(field_slot(name), Some(i), "{name}");
        assert_eq!(Top::ALL[i] as usize, i, "{name}");
    }
    assert!(field_index("turns").is_none());
    for (field, name) in [
        (Top::Kind, "kind"),
        (Top::ActionTaken, "action_taken"),
        (Top::Timestamp, "timestamp"),
        (Top::Error, "error"),
        (Top::Output, "output"),
    ] {
        assert_eq!(TOP_FIELDS[field as usize], name);
    }
}

const BASE: &str = r#""event_id":"e","run_id":"r","agent_id":"a","action_taken":{"tool_name":"t"}"#;

fn with(extra: &str) -> Result<String, String> {
    parse(&format!("{{{BASE},{extra}}}"))
}

#[test]
fn lax_turn_values_match_the_reference() {
    for (raw, want) in [
        ("\"3\"", 3),
        ("2.0", 2),
        ("true", 1),
        ("\" 3\"", 3),
        ("\"3.0\"", 3),
        ("\"+3\"", 3),
        ("\"3_000\"", 3000),
        ("-1", -1),
    ] {
        let got = with(&format!("\"turn\":{raw},\"action_succeeded\":true")).unwrap();
        assert!(got.contains(&format!("\"turn\":{want},")), "{raw}: {got}");
    }
    for raw in [
        "2.5", "\"1e2\"", "null", "\"0x10\"", "\"\"", "[1]", "\"3.5\"", "\"1__0\"",
    ] {
        assert!(
            with(&format!("\"turn\":{raw},\"action_succeeded\":true")).is_err(),
            "{raw}"
        );
    }
}

#[test]
fn lax_success_values_match_the_reference() {
    for (raw, want) in [
        ("true", true),
        ("\"yes\"", true),
        ("\"no\"", false),
        ("\"TRUE\"", true),
        ("0", false),
        ("1", true),
        ("1.0", true),
        ("\"f\"", false),
        ("\"off\"", false),
    ] {
        let got = with(&format!("\"turn\":1,\"action_succeeded\":{raw}")).unwrap();
        assert!(
            got.contains(&format!("\"action_succeeded\":{want}")),
            "{raw}: {got}"
        );
    }
    for raw in ["2", "null", "\"\"", "\" true\"", "\"maybe\""] {
        assert!(
            with(&format!("\"turn\":1,\"action_succeeded\":{raw}")).is_err(),
            "{raw}"
        );
    }
}

#[test]
fn null_classification_spellings_mean_none() {
    for raw in ["null", "\"\"", "\"null\""] {
        let got = with(&format!(
            "\"turn\":1,\"action_succeeded\":true,\"failure_classification\":{raw}"
        ))
        .unwrap();
        assert!(!got.contains("failure_classification"), "{raw}: {got}");
    }
    let got = with("\"turn\":1,\"action_succeeded\":true,\"failure_classification\":true").unwrap();
    assert!(got.contains("\"failure_classification\":\"True\""), "{got}");
}

#[test]
fn rejects_what_the_reference_rejects() {
    assert_eq!(
        parse(r#"{"event_id":"e","turn":1,"agent_id":"a","action_taken":{"tool_name":"t"},"action_succeeded":true}"#).unwrap_err(),
        "missing field \"run_id\""
    );
    assert!(parse(r#"{"event_id":1,"run_id":"r","turn":1,"agent_id":"a","action_taken":{"tool_name":"t"},"action_succeeded":true}"#).is_err());
    assert!(with("\"turn\":1,\"action_succeeded\":true,\"divergence_fields\":null").is_err());
    assert!(with("\"turn\":1,\"action_succeeded\":true,\"divergence_fields\":[1]").is_err());
    assert!(with("\"turn\":1,\"action_succeeded\":true,\"latency_ms\":5").is_err());
    assert!(with("\"turn\":1,\"action_succeeded\":true,\"latency_ms\":{\"llm\":1.5}").is_err());
    assert!(with("\"turn\":1,\"action_succeeded\":true,\"timestamp\":\"garbage\"").is_err());
    assert!(with("\"turn\":1,\"action_succeeded\":true,\"message_context\":[]").is_err());
    assert!(with("\"turn\":1,\"action_succeeded\":true,\"divergence_age\":{\"x\":1.5}").is_err());
    assert!(parse(r#"{"event_id":"e","run_id":"r","turn":1,"agent_id":"a","action_taken":{"tool_name":null},"action_succeeded":true}"#).is_err());
}

/// Empty objects mean what their absence means to the reference (its
/// defaults are empty), so they are not written: a tenth of the record
/// bytes of a typical trace, which every later stage would read.
#[test]
fn empty_objects_are_left_out() {
    let got = parse(r#"{"event_id":"e","run_id":"r","agent_id":"a","turn":1,"action_succeeded":true,"action_taken":{"tool_name":"t","tool_input":{ }},"divergence_age":{},"message_context":{},"divergence_fields":[]}"#).unwrap();
    assert!(
        got.contains(r#""action_taken":{"tool_name":"t"},"#),
        "{got}"
    );
    for name in [
        "tool_input",
        "divergence_age",
        "message_context",
        "divergence_fields",
    ] {
        assert!(!got.contains(name), "{name} in {got}");
    }
    let got = parse(r#"{"event_id":"e","run_id":"r","agent_id":"a","turn":1,"action_succeeded":true,"action_taken":{"tool_name":"t"},"divergence_age":{"plan":2}}"#).unwrap();
    assert!(got.contains(r#""divergence_age":{"plan":2}"#), "{got}");
}

#[test]
fn the_last_of_duplicate_members_is_read() {
    let ok = "\"turn\":1,\"action_succeeded\":true";
    for extra in [
        r#""latency_ms":{"llm":1.5},"latency_ms":{"llm":1}"#,
        r#""latency_ms":{"llm":1.5,"llm":2}"#,
        r#""usage":[],"usage":{"input_tokens":"3"}"#,
        r#""divergence_age":{"x":"a"},"divergence_age":{}"#,
    ] {
        assert!(with(&format!("{ok},{extra}")).is_ok(), "{extra}");
    }
    for extra in [
        r#""latency_ms":{"llm":1},"latency_ms":{"llm":1.5}"#,
        r#""latency_ms":{"llm":2,"llm":1.5}"#,
        r#""usage":{"input_tokens":"x"}"#,
        r#""divergence_age":{"x":1,"y":[1]}"#,
    ] {
        assert!(with(&format!("{ok},{extra}")).is_err(), "{extra}");
    }
    let got = parse(r#"{"event_id":"e","run_id":"r","agent_id":"a","turn":1,"action_succeeded":true,"action_taken":{"tool_name":1,"tool_name":"t2"},"action_taken":{"tool_input":{"q":1},"tool_name":"t3"}}"#).unwrap();
    assert!(
        got.contains(r#""action_taken":{"tool_name":"t3","tool_input":{"q":1}}"#),
        "{got}"
    );
    let got = with(&format!(
        "{ok},\"latency_ms\":{{\"llm\":\" 7\",\"other\":\"x\"}},\"error\":{{\"type\":\"E\",\"message\":\"m\"}}"
    ))
    .unwrap();
    assert!(
        got.contains(r#""latency_ms":{"llm":" 7","other":"x"}"#),
        "{got}"
    );
    assert!(
        got.contains(r#""error":{"type":"E","message":"m"}"#),
        "{got}"
    );
}

#[test]
fn failure_source_says_why() {
    let got = with("\"turn\":1,\"action_succeeded\":false").unwrap();
    assert!(got.contains("\"failure_source\":\"status\""), "{got}");
    let got =
        with("\"turn\":1,\"action_succeeded\":true,\"failure_classification\":\"agent_error\"")
            .unwrap();
    assert!(got.contains("\"failure_source\":\"label\""), "{got}");
}
