//! The `otel` format: agent-triage 0.1.0's minimal span JSON (a list of
//! spans, or {"spans": [...]}) read with its attribute names, one event per
//! span in file order.

use std::borrow::Cow;
use std::io::Read;

use simd_json::prelude::*;
use simd_json::{BorrowedValue as Value, StaticNode};

use super::lax::{as_str, describe, lax_int, lax_timestamp, python_str, strict_str};
use super::spans::{self, StatusCode};
use super::{DecodeSettings, Sink};
use crate::record::{ActionOut, ErrorInfo, EventOut, JsonVal};

type Object<'v> = simd_json::borrowed::Object<'v>;

// The reference's attribute names (adapters.py), first match wins.
const RUN_ID_KEYS: &[&str] = &["run.id", "run_id"];
// Past the reference's names, the GenAI conventions' and OpenInference's
// fill in what the reference would leave empty.
const AGENT_ID_KEYS: &[&str] = &[
    "agent.id",
    "agent_id",
    "gen_ai.agent.name",
    "gen_ai.agent.id",
    "agent.name",
];
const TOOL_NAME_KEYS: &[&str] = &["action.tool", "tool_name", "gen_ai.tool.name", "tool.name"];
const INPUT_KEYS: &[&str] = &[
    "input.value",
    "gen_ai.tool.args",
    "gen_ai.tool.call.arguments",
];
const OUTPUT_KEYS: &[&str] = &["output.value", "gen_ai.tool.call.result", "gen_ai.output"];
const CLASSIFICATION_KEYS: &[&str] = &["failure.classification", "failure_classification"];

/// Reads one span document from `r` into `sink`.
pub fn read(r: impl Read, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let mut data = super::read_document(r, sink)?;
    let doc = match super::parse_document(&mut data) {
        Ok(doc) => doc,
        Err((line, reason)) => return sink.skip(line, &reason),
    };
    let spans = match span_list(&doc) {
        Ok(spans) => spans,
        Err(reason) => return sink.skip(None, &reason),
    };
    for (i, span) in spans.iter().enumerate() {
        match event_from(span, &sink.settings) {
            Ok(mut ev) => {
                sink.settings.infer_failure(&mut ev);
                sink.emit(&ev)?;
            }
            Err(reason) => sink.skip(None, &format!("spans[{i}]: {reason}"))?,
        }
    }
    Ok(())
}

fn span_list<'v>(doc: &'v Value<'v>) -> Result<&'v [Value<'v>], String> {
    const SHAPE: &str = "expected a list of spans or {\"spans\": [...]}";
    match doc {
        Value::Array(spans) => Ok(spans),
        Value::Object(o) => match o.get("spans") {
            Some(Value::Array(spans)) => Ok(spans),
            Some(other) => Err(format!("spans: {SHAPE}, got {}", describe(other))),
            None => Err(format!("{SHAPE}, got an object without \"spans\"")),
        },
        other => Err(format!("{SHAPE}, got {}", describe(other))),
    }
}

/// Python's truthiness, which the reference's `a or b` fallbacks rely on.
fn truthy(v: &Value<'_>) -> bool {
    match v {
        Value::Static(StaticNode::Null) | Value::Static(StaticNode::Bool(false)) => false,
        Value::Static(StaticNode::I64(n)) => *n != 0,
        Value::Static(StaticNode::U64(n)) => *n != 0,
        Value::Static(StaticNode::F64(f)) => *f != 0.0,
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        _ => true,
    }
}

/// `str(v)` of the reference, borrowed when `v` is a string.
fn text_of<'v>(v: &'v Value<'v>) -> Cow<'v, str> {
    match v {
        Value::String(s) => Cow::Borrowed(s.as_ref()),
        other => Cow::Owned(python_str(other)),
    }
}

/// The first truthy value among `keys` of `obj`.
fn first_truthy<'v>(obj: Option<&'v Object<'v>>, keys: &[&str]) -> Option<&'v Value<'v>> {
    let obj = obj?;
    keys.iter().filter_map(|k| obj.get(*k)).find(|v| truthy(v))
}

/// Builds the event of one span as the reference does, with our fixes:
/// OTLP status names are read correctly and bad values are reported, not
/// crashed on. Spans as the OpenTelemetry SDKs serialize them (ids under
/// `context` and `parent`, `status.status_code`) are read too.
fn event_from<'v>(span: &'v Value<'v>, settings: &DecodeSettings) -> Result<EventOut<'v>, String> {
    let Value::Object(span) = span else {
        return Err(format!("expected a span object, got {}", describe(span)));
    };
    let attrs: Option<&Object<'v>> = match span.get("attributes") {
        Some(Value::Object(o)) => Some(o),
        Some(v) if truthy(v) => {
            return Err(format!(
                "attributes: expected an object, got {}",
                describe(v)
            ));
        }
        _ => None,
    };
    let attr = |k: &str| attrs.and_then(|a| a.get(k));
    let top = Some(&**span);

    // The Python SDK writes `context` and `parent`, the JS SDK `spanContext`
    // and `parentSpanContext`.
    let context = span
        .get("context")
        .or_else(|| span.get("spanContext"))
        .and_then(as_object);
    let parent = span
        .get("parent")
        .or_else(|| span.get("parentSpanContext"))
        .and_then(as_object);
    let run_id = first_truthy(attrs, RUN_ID_KEYS)
        .map(text_of)
        .or_else(|| id_of(top, context, &["trace_id", "traceId"]))
        .unwrap_or(Cow::Borrowed(""));
    let agent_id = first_truthy(attrs, AGENT_ID_KEYS).map_or(Cow::Borrowed(""), text_of);
    let tool_name = first_truthy(attrs, TOOL_NAME_KEYS)
        .or_else(|| span.get("name"))
        .map_or(Cow::Borrowed(""), text_of);
    let turn = attr("turn").map_or(Ok(0), |v| lax_int(v, "turn"))?;
    let (status, error) = status_of(span.get("status"));
    // The reference counts only "OK", "UNSET", 0 and 1 as success, so a
    // span with "STATUS_CODE_OK" (the OTLP enum name) became a failure.
    // We read the names as OTLP defines them; anything unrecognised stays
    // a failure as in the reference.
    let succeeded = matches!(status, StatusCode::Ok | StatusCode::Unset);
    let failure_classification = first_truthy(attrs, CLASSIFICATION_KEYS)
        .map(text_of)
        .filter(|c| c != "null");
    let failure_source = if failure_classification.is_some() {
        Some("label")
    } else if !succeeded {
        Some("status")
    } else {
        None
    };
    let span_id = id_of(top, context, &["span_id", "spanId"]);
    let parent_span_id = id_of(top, None, &["parent_span_id", "parentSpanId", "parent_id"])
        .or_else(|| id_of(None, parent, &["span_id", "spanId"]));
    let mut ev = EventOut {
        kind: "event",
        event_id: span_id.clone().unwrap_or(Cow::Borrowed("")),
        run_id,
        turn,
        agent_id,
        action_taken: ActionOut {
            tool_name,
            tool_input: optional_object(attr("tool_input"), "tool_input")?,
        },
        action_succeeded: succeeded,
        timestamp: start_time(span),
        failure_classification,
        failure_source,
        divergence_fields: divergence(attrs)?,
        divergence_age: optional_object(attr("divergence_age"), "divergence_age")?,
        span_id,
        parent_span_id,
        span_kind: span_kind(attrs),
        error: (!succeeded).then_some(error).flatten(),
        ..Default::default()
    };
    if let Some(text) = first_truthy(attrs, INPUT_KEYS) {
        (ev.input, ev.input_digest) = cut(text, settings);
    }
    if let Some(text) = first_truthy(attrs, OUTPUT_KEYS) {
        (ev.output, ev.output_digest) = cut(text, settings);
    }
    Ok(ev)
}

fn as_object<'v>(v: &'v Value<'v>) -> Option<&'v Object<'v>> {
    match v {
        Value::Object(o) => Some(o),
        _ => None,
    }
}

/// An id from the span itself or, as the SDKs write it, from its context.
/// Integer ids (the SDKs' raw form) are written in hex, as OTLP writes them.
fn id_of<'v>(
    top: Option<&'v Object<'v>>,
    context: Option<&'v Object<'v>>,
    keys: &[&str],
) -> Option<Cow<'v, str>> {
    let v = first_truthy(top, keys).or_else(|| first_truthy(context, keys))?;
    Some(match v {
        Value::Static(StaticNode::U64(n)) => Cow::Owned(format!("{n:016x}")),
        Value::Static(StaticNode::I64(n)) if *n >= 0 => Cow::Owned(format!("{n:016x}")),
        other => text_of(other),
    })
}

/// A text attribute cut to the configured size with the whole's digest;
/// other values as compact JSON.
fn cut(v: &Value<'_>, settings: &DecodeSettings) -> (Option<String>, Option<String>) {
    let (text, digest) = match v {
        Value::String(s) => settings.text(s),
        other => settings.text(&other.encode()),
    };
    (Some(text), Some(digest))
}

/// The status code (absent or null: unset) and, when a message is given,
/// the error it describes. A bare string status is read as the code.
fn status_of(status: Option<&Value<'_>>) -> (StatusCode, Option<ErrorInfo>) {
    let (code, message) = match status {
        Some(Value::Object(o)) => (
            o.get("code").or_else(|| o.get("status_code")),
            o.get("message")
                .or_else(|| o.get("description"))
                .and_then(as_str),
        ),
        Some(code) => (Some(code), None),
        None => (None, None),
    };
    let code = match code {
        None | Some(Value::Static(StaticNode::Null)) => StatusCode::Unset,
        Some(Value::String(s)) => StatusCode::from_name(s),
        Some(Value::Static(StaticNode::Bool(b))) => {
            StatusCode::from_number(f64::from(u8::from(*b)))
        }
        Some(Value::Static(StaticNode::I64(n))) => StatusCode::from_number(*n as f64),
        Some(Value::Static(StaticNode::U64(n))) => StatusCode::from_number(*n as f64),
        Some(Value::Static(StaticNode::F64(f))) => StatusCode::from_number(*f),
        Some(_) => StatusCode::Unknown,
    };
    let error = message.filter(|m| !m.is_empty()).map(|m| ErrorInfo {
        kind: None,
        message: Some(m.to_string()),
    });
    (code, error)
}

/// `divergence_fields` as a list, or `divergence.fields` (the receiver's
/// name) as a list or comma-separated text.
fn divergence<'v>(attrs: Option<&'v Object<'v>>) -> Result<Vec<Cow<'v, str>>, String> {
    let Some((name, value)) = ["divergence_fields", "divergence.fields"]
        .iter()
        .find_map(|k| {
            attrs
                .and_then(|a| a.get(*k))
                .filter(|v| truthy(v))
                .map(|v| (*k, v))
        })
    else {
        return Ok(Vec::new());
    };
    match value {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| strict_str(v, &format!("{name}[{i}]")))
            .collect(),
        Value::String(s) => Ok(spans::split_divergence(s).map(Cow::Borrowed).collect()),
        other => Err(format!("{name}: expected a list, got {}", describe(other))),
    }
}

fn optional_object<'v>(
    v: Option<&'v Value<'v>>,
    name: &str,
) -> Result<Option<JsonVal<'v>>, String> {
    match v {
        Some(v @ Value::Object(o)) if !o.is_empty() => Ok(Some(JsonVal::Simd(v))),
        Some(v) if truthy(v) => Err(format!("{name}: expected an object, got {}", describe(v))),
        _ => Ok(None),
    }
}

/// The span's start, where the file gives one: nanoseconds (number or
/// digits, as OTLP and the Python SDK write them), [seconds, nanoseconds]
/// (the JS SDK), epoch seconds or milliseconds, or a date-time. A start that reads as none of these is left out rather
/// than costing the span (the reference does not read it at all).
fn start_time(span: &Object<'_>) -> Option<String> {
    let v = [
        "start_time",
        "startTimeUnixNano",
        "start_time_unix_nano",
        "startTime",
    ]
    .iter()
    .find_map(|k| span.get(*k).filter(|v| truthy(v)))?;
    // Past 1e17 a number can only be nanoseconds (1e17 ms is year 3 million).
    const NANOS_FROM: i128 = 100_000_000_000_000_000;
    let nanos = match v {
        Value::Static(StaticNode::U64(n)) => Some(i128::from(*n)),
        Value::Static(StaticNode::I64(n)) => Some(i128::from(*n)),
        Value::String(s) => spans::nanos_from_text(s),
        Value::Array(parts) => match parts.as_slice() {
            [secs, nanos] => {
                Some(i128::from(secs.as_i64()?) * 1_000_000_000 + i128::from(nanos.as_i64()?))
            }
            _ => None,
        },
        _ => None,
    };
    if let Value::Array(_) = v {
        return nanos.and_then(spans::timestamp_from_nanos);
    }
    match nanos {
        Some(n) if n >= NANOS_FROM => spans::timestamp_from_nanos(n),
        _ => lax_timestamp(v).ok().map(|t| t.to_string()),
    }
}

fn span_kind(attrs: Option<&Object<'_>>) -> Option<&'static str> {
    let attr = |k: &str| attrs.and_then(|a| a.get(k)).and_then(as_str);
    attr("openinference.span.kind")
        .and_then(spans::kind_from_openinference)
        .or_else(|| attr("gen_ai.operation.name").and_then(spans::kind_from_operation))
        .or_else(|| first_truthy(attrs, TOOL_NAME_KEYS).map(|_| "tool"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The event of one span as JSON, without the sink's step.
    fn event(span: &str) -> Result<serde_json::Value, String> {
        let mut bytes = span.as_bytes().to_vec();
        let v = simd_json::to_borrowed_value(&mut bytes).unwrap();
        let ev = event_from(&v, &DecodeSettings::default())?;
        Ok(serde_json::to_value(&ev).unwrap())
    }

    #[test]
    fn reads_the_reference_example_span() {
        let got = event(
            r#"{"span_id":"sp-0002","trace_id":"otel-trace-A","name":"dispatch_subtask","status":{"code":"ERROR"},
                "attributes":{"agent.id":"planner","turn":3,"failure_classification":"coordination_failure","divergence_fields":["retriever_state"]}}"#,
        )
        .unwrap();
        assert_eq!(
            got,
            serde_json::json!({"kind":"event","event_id":"sp-0002","run_id":"otel-trace-A","turn":3,"agent_id":"planner",
                "action_taken":{"tool_name":"dispatch_subtask"},"action_succeeded":false,
                "failure_classification":"coordination_failure","failure_source":"label",
                "divergence_fields":["retriever_state"],"span_id":"sp-0002"})
        );
    }

    #[test]
    fn status_names_are_read_as_otlp_defines_them() {
        // The reference reads "STATUS_CODE_OK" as a failure; we do not.
        for (code, ok) in [
            (r#""STATUS_CODE_OK""#, true),
            (r#""OK""#, true),
            (r#""UNSET""#, true),
            ("0", true),
            ("1", true),
            ("null", true),
            (r#""STATUS_CODE_ERROR""#, false),
            (r#""ERROR""#, false),
            ("2", false),
            (r#""bogus""#, false),
        ] {
            let got = event(&format!(
                r#"{{"span_id":"s","trace_id":"t","name":"n","status":{{"code":{code}}}}}"#
            ))
            .unwrap();
            assert_eq!(got["action_succeeded"], ok, "{code}");
            assert_eq!(
                got["failure_source"].as_str(),
                (!ok).then_some("status"),
                "{code}"
            );
        }
        let got = event(r#"{"span_id":"s","name":"n"}"#).unwrap();
        assert_eq!(got["action_succeeded"], true);
    }

    #[test]
    fn attribute_names_and_fallbacks() {
        let got = event(
            r#"{"spanId":"s1","traceId":"t1","name":"span-name","parentSpanId":"p",
                "status":{"code":"STATUS_CODE_ERROR","message":"rate limit exceeded"},
                "attributes":{"run.id":"r9","agent_id":"coder","tool_name":"search","turn":"4",
                "failure.classification":"","divergence.fields":"a, b","tool_input":{"q":1}}}"#,
        )
        .unwrap();
        assert_eq!(got["run_id"], "r9");
        assert_eq!(got["agent_id"], "coder");
        assert_eq!(
            got["action_taken"],
            serde_json::json!({"tool_name":"search","tool_input":{"q":1}})
        );
        assert_eq!(got["turn"], 4);
        assert_eq!(got["divergence_fields"], serde_json::json!(["a", "b"]));
        assert_eq!(got["parent_span_id"], "p");
        assert_eq!(got["span_kind"], "tool");
        assert_eq!(got["error"]["message"], "rate limit exceeded");
        assert!(got.get("failure_classification").is_none());
    }

    #[test]
    fn sdk_serialized_spans() {
        let got = event(
            r#"{"name": "execute_tool get_time", "context": {"trace_id": 7, "span_id": 255},
                "parent": {"trace_id": 7, "span_id": 16}, "status": {"status_code": "error", "description": "boom"},
                "attributes": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_time",
                               "gen_ai.tool.args": "{}", "gen_ai.output": "Error: no clock"}}"#,
        )
        .unwrap();
        assert_eq!(got["span_id"], "00000000000000ff");
        assert_eq!(got["parent_span_id"], "0000000000000010");
        assert_eq!(got["run_id"], "0000000000000007");
        assert_eq!(got["action_taken"]["tool_name"], "get_time");
        assert_eq!(got["span_kind"], "tool");
        assert_eq!(got["action_succeeded"], false);
        assert_eq!(got["error"]["message"], "boom");
        assert_eq!(got["input"], "{}");
        assert_eq!(got["output"], "Error: no clock");
        let got = event(r#"{"name": "ai.generateText", "spanContext": {"traceId": "t1", "spanId": "s1"},
                             "parentSpanContext": {"spanId": "p1"}, "startTime": [1770131992, 241000000], "status": {"code": 0}}"#)
        .unwrap();
        assert_eq!(
            (&got["run_id"], &got["span_id"], &got["parent_span_id"]),
            (&"t1".into(), &"s1".into(), &"p1".into())
        );
        assert_eq!(got["timestamp"], "2026-02-03T15:19:52.241Z");
        let got = event(r#"{"name": "invoke_agent", "status": {"status_code": "unset"}, "attributes": {"gen_ai.agent.name": "helper"}}"#).unwrap();
        assert_eq!(got["agent_id"], "helper");
        assert_eq!(got["action_succeeded"], true);
    }

    #[test]
    fn start_time_becomes_the_timestamp() {
        let got = event(r#"{"span_id":"s","name":"n","startTimeUnixNano":"1544712660000000000"}"#)
            .unwrap();
        assert_eq!(got["timestamp"], "2018-12-13T14:51:00Z");
        let got = event(r#"{"span_id":"s","name":"n","start_time":"2026-04-25T10:00:00+02:00"}"#)
            .unwrap();
        assert_eq!(got["timestamp"], "2026-04-25T08:00:00Z");
        let got = event(r#"{"span_id":"s","name":"n","start_time":"soon"}"#).unwrap();
        assert!(got.get("timestamp").is_none());
        let got = event(r#"{"span_id":"s","name":"n","start_time":1758026594777382000}"#).unwrap();
        assert_eq!(got["timestamp"], "2025-09-16T12:43:14.777382Z");
    }

    #[test]
    fn bad_spans_are_reasons_not_panics() {
        assert!(
            event(r#"[1]"#)
                .unwrap_err()
                .contains("expected a span object")
        );
        assert!(
            event(r#"{"attributes":[1]}"#)
                .unwrap_err()
                .contains("attributes")
        );
        assert!(
            event(r#"{"attributes":{"turn":null}}"#)
                .unwrap_err()
                .contains("turn")
        );
        assert!(
            event(r#"{"attributes":{"turn":"x"}}"#)
                .unwrap_err()
                .contains("turn")
        );
        assert!(
            event(r#"{"attributes":{"divergence_fields":[1]}}"#)
                .unwrap_err()
                .contains("divergence_fields[0]")
        );
        assert!(
            event(r#"{"attributes":{"tool_input":"x"}}"#)
                .unwrap_err()
                .contains("tool_input")
        );
    }

    #[test]
    fn span_list_shapes() {
        let mut list = br#"[{"span_id":"a"}]"#.to_vec();
        let v = simd_json::to_borrowed_value(&mut list).unwrap();
        assert_eq!(span_list(&v).unwrap().len(), 1);
        let mut wrapped = br#"{"spans":[]}"#.to_vec();
        let v = simd_json::to_borrowed_value(&mut wrapped).unwrap();
        assert_eq!(span_list(&v).unwrap().len(), 0);
        let mut other = br#"{"x":1}"#.to_vec();
        let v = simd_json::to_borrowed_value(&mut other).unwrap();
        assert!(span_list(&v).is_err());
    }
}
