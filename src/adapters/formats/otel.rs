//! The `otel` format: spans as JSON, whichever tool wrote them:
//! agent-triage's minimal span list, the OpenTelemetry SDKs' span dumps
//! (Python's `to_json` and console exporter, JS ReadableSpans with the
//! Vercel AI SDK's `ai.*` attributes), Phoenix / OpenInference spans,
//! Jaeger's and MLflow's traces, Zipkin's spans, and bare attribute maps (one span's attributes, no envelope). The input is
//! one value, a list, one value per line, or values one after another
//! (pretty-printed); each value is read by its own shape, OTLP requests
//! too. Traces are emitted in tree order once complete (see `json_lines`).

use std::io::Read;
use std::ops::Range;

use serde_json::{Map, Value};

use crate::adapters::formats::Format;
use crate::adapters::read::lines::{LineFormat, SpanLine};
use crate::adapters::read::shape::Shape;
use crate::adapters::read::span_events::{Attrs, HeldSpan, SpanEvents, SpanParts};
use crate::adapters::read::spans::StatusCode;
use crate::adapters::read::value::{describe, json_values};
use crate::adapters::read::{lines, spans};
use crate::adapters::settings::DecodeSettings;
use crate::adapters::sink::Sink;
use crate::adapters::unreadable::Unreadable;
use crate::plumbing::json_scan::LineScratch;
use crate::timestamp::Timestamp;

mod jaeger;
mod zipkin;

/// Reads one span file from `r` into `sink`: one value per line as the
/// lines come (see `json_lines`), or the whole file when its first value
/// runs over several lines.
pub(crate) fn read(r: impl Read + Send, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let settings = sink.settings.clone();
    let path = sink.path().to_string();
    let from = From {
        path: &path,
        settings: &settings,
    };
    let format = LineFormat {
        one_line: "one line of spans",
        decode: |_: &mut LineScratch, data: &[u8], range: Range<usize>, number: u64| {
            line_spans(&data[range], number, &from)
        },
        whole: |doc: Vec<u8>, sink: &mut Sink<'_>| {
            let doc = crate::adapters::read::document::quote_wide_integers(doc);
            let mut held = Vec::new();
            for (line, value) in json_values(&doc) {
                let mut found = Found::default();
                match value {
                    Ok(value) => spans_of(value, line, &from, &mut found),
                    Err(reason) => found.skipped.push(reason),
                }
                for reason in found.skipped {
                    sink.skip(Some(line), reason)?;
                }
                held.extend(found.spans);
            }
            Ok(held)
        },
    };
    lines::spans(r, sink, format)
}

/// The spans of one line.
fn line_spans(bytes: &[u8], number: u64, from: &From<'_>) -> SpanLine {
    match lines::value_of_line(bytes, None) {
        Ok(value) => {
            let mut found = Found::default();
            spans_of(value, number, from, &mut found);
            SpanLine::Read {
                spans: found.spans,
                skipped: found.skipped,
            }
        }
        Err(reason) => SpanLine::Skip(reason),
    }
}

/// Where spans are read from: spans without an id are named after the
/// file.
struct From<'a> {
    path: &'a str,
    settings: &'a DecodeSettings,
}

/// The spans of one value, and why parts of it were not read.
#[derive(Default)]
struct Found {
    spans: Vec<HeldSpan>,
    skipped: Vec<Unreadable>,
}

/// One top-level value: a span, a list of spans, {"spans"|"data": [...]},
/// an OTLP request or an attribute map.
fn spans_of(value: Value, line: u64, from: &From<'_>, found: &mut Found) {
    let mut object = match value {
        Value::Array(items) => return list_spans(items, "", line, from, found),
        Value::Object(o) => o,
        other => {
            found.skipped.push(Unreadable::shape(format!(
                "expected spans (an object or a list), got {}",
                describe(&other)
            )));
            return;
        }
    };
    if object.contains_key("resourceSpans") || object.contains_key("resource_spans") {
        let request = Value::Object(object);
        let held = &mut found.spans;
        if let Err(reason) =
            crate::adapters::formats::otlp::hold_value(request, Some(line), from.settings, held)
        {
            found.skipped.push(reason);
        }
        return;
    }
    match mlflow_spans(&mut object) {
        Some(Ok(spans)) => return list_spans(spans, "data.spans", line, from, found),
        Some(Err(reason)) => return found.skipped.push(reason),
        None => {}
    }
    if let Some(traces) = jaeger::traces(&mut object) {
        for (i, trace) in traces.into_iter().enumerate() {
            list_spans(trace, &format!("data[{i}].spans"), line, from, found);
        }
        return;
    }
    for key in ["spans", "data"] {
        if let Some(Value::Array(_)) = object.get(key)
            && let Some(Value::Array(items)) = object.remove(key)
        {
            return list_spans(items, key, line, from, found);
        }
    }
    // Spans grouped under names (`{"ai.generateText": [spans], …}`, as a
    // dump by operation writes them): every member a list of objects. An
    // attribute map holds values, never lists of objects only.
    let grouped = !object.is_empty()
        && object.values().all(|v| {
            matches!(v, Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object))
        });
    if grouped {
        for (key, items) in object {
            if let Value::Array(items) = items {
                list_spans(items, &key, line, from, found);
            }
        }
        return;
    }
    match span_of(object, line, from) {
        Ok(span) => found.spans.push(span),
        Err(reason) => found.skipped.push(reason),
    }
}

/// An MLflow trace's spans (`Trace.to_json()`: `{"info", "data":
/// {"spans"}}`); its `info` sums up what the spans say. A trace saved
/// without its spans (`search_traces(include_spans=False)`) has no steps
/// to read: a reason naming it and its state, so that a failed run is not
/// lost in silence.
fn mlflow_spans(object: &mut Map<String, Value>) -> Option<Result<Vec<Value>, Unreadable>> {
    if !matches!(object.get("info"), Some(Value::Object(_))) {
        return None;
    }
    let spans = match object.get_mut("data") {
        Some(Value::Object(data)) => data.remove("spans"),
        _ => return None,
    };
    let Some(Value::Object(info)) = object.get("info") else {
        return None;
    };
    match spans {
        Some(Value::Array(spans)) if !spans.is_empty() => Some(Ok(spans)),
        Some(Value::Array(_)) | Some(Value::Null) | None => {
            let text = |key: &str| info.get(key).and_then(Value::as_str);
            let id = text("trace_id").or(text("request_id")).unwrap_or("?");
            let state = text("state").or(text("status"));
            Some(Err(Unreadable::shape(format!(
                "the MLflow trace {id}{} holds no spans (saved without them?): no run read",
                state.map(|s| format!(" (state {s})")).unwrap_or_default()
            ))))
        }
        Some(other) => Some(Err(Unreadable::shape(format!(
            "an MLflow trace's data.spans is {}, not a list of spans",
            describe(&other)
        )))),
    }
}

fn list_spans(items: Vec<Value>, key: &str, line: u64, from: &From<'_>, found: &mut Found) {
    for (i, item) in items.into_iter().enumerate() {
        let span = match item {
            // A list of MLflow traces (`[t.to_dict() for t in traces]`),
            // or of Jaeger's (`jq .data` of its answer).
            Value::Object(o)
                if (o.contains_key("info") && o.contains_key("data")) || jaeger::is_trace(&o) =>
            {
                spans_of(Value::Object(o), line, from, found);
                continue;
            }
            Value::Object(o) => span_of(o, line, from),
            other => Err(Unreadable::shape(format!(
                "expected a span object, got {}",
                describe(&other)
            ))),
        };
        match span {
            Ok(span) => found.spans.push(span),
            Err(reason) => found.skipped.push(reason.inside(format!("{key}[{i}]"))),
        }
    }
}

/// Keys that hold a span's ids (at its top, in its context, or dotted as
/// Phoenix's table export writes them): an object with one is a span.
pub(super) const SPAN_ID_KEYS: &[&str] = &[
    "span_id",
    "spanId",
    "trace_id",
    "traceId",
    "context",
    "spanContext",
    "_spanContext",
    "context.span_id",
];

/// Attribute-name prefixes of the dialects read: an object of such keys
/// without a span's is one span's attributes.
const ATTRIBUTE_PREFIXES: &[&str] = &[
    "gen_ai.",
    "openinference.",
    "llm.",
    "input.",
    "output.",
    "tool.",
    "traceloop.",
    "ai.",
    "agent.",
    "session.",
];

pub(super) fn is_attribute_key(key: &str) -> bool {
    ATTRIBUTE_PREFIXES.iter().any(|p| key.starts_with(p))
}

fn is_span(o: &Map<String, Value>) -> bool {
    SPAN_ID_KEYS
        .iter()
        .chain(&["parent_id", "name"])
        .any(|k| o.contains_key(*k))
}

/// The held span of one span object, or of an attribute map (named after
/// the file and line, as nothing else names it).
fn span_of(mut o: Map<String, Value>, line: u64, from: &From<'_>) -> Result<HeldSpan, Unreadable> {
    if zipkin::is_span(&o) {
        o = zipkin::span_object(o);
    }
    let settings = from.settings;
    if !is_span(&o) {
        if !o.keys().any(|k| is_attribute_key(k)) {
            return Err(Unreadable::shape(
                "not a span: no span id, trace id, context or name, and no span attributes",
            ));
        }
        let file = std::path::Path::new(from.path).file_name().map_or_else(
            || from.path.to_string(),
            |f| f.to_string_lossy().into_owned(),
        );
        let parts = SpanParts {
            trace_id: format!("{file}:{line}"),
            name: ["gen_ai.operation.name", "openinference.span.kind"]
                .iter()
                .find_map(|k| o.get(*k).and_then(Value::as_str))
                .map_or_else(|| "span".to_string(), str::to_ascii_lowercase),
            line: Some(line),
            ..SpanParts::default()
        };
        let attrs = flat(o);
        let resource = Map::new();
        return Ok(HeldSpan::new(parts, &attrs_of(&attrs, &resource), settings));
    }
    let mut attrs = match o.remove("attributes") {
        Some(Value::Object(a)) => flat(a),
        None | Some(Value::Null) => Map::new(),
        Some(list @ Value::Array(_)) => {
            crate::adapters::formats::otlp::key_values(list).ok_or(Unreadable::mistyped(
                "attributes",
                "an object or OTLP key/value pairs",
                "another list",
            ))?
        }
        Some(other) => {
            return Err(Unreadable::mistyped(
                "attributes",
                "an object",
                describe(&other),
            ));
        }
    };
    // Phoenix's table export writes attributes as top-level dotted keys.
    let dotted: Vec<String> = o
        .keys()
        .filter(|k| k.starts_with("attributes."))
        .cloned()
        .collect();
    for k in dotted {
        if let Some(v) = o.remove(&k) {
            attrs.insert(k["attributes.".len()..].to_string(), v);
        }
    }
    // Phoenix's span_kind is the OpenInference kind.
    if let Some(Value::String(kind)) = o.get("span_kind")
        && spans::kind_from_openinference(kind).is_some()
    {
        attrs
            .entry("openinference.span.kind")
            .or_insert_with(|| Value::String(kind.clone()));
    }
    let resource = match o.get("resource") {
        Some(Value::Object(r)) => match r.get("attributes").or_else(|| r.get("_attributes")) {
            Some(Value::Object(a)) => flat(a.clone()),
            _ => Map::new(),
        },
        _ => Map::new(),
    };
    let parts = parts_of(&o, line);
    Ok(HeldSpan::new(parts, &attrs_of(&attrs, &resource), settings))
}

fn attrs_of<'a>(span: &'a Map<String, Value>, resource: &'a Map<String, Value>) -> Attrs<'a> {
    Attrs::new(span, resource)
}

/// Attributes with nested objects (Phoenix writes `{"llm": {"model_name":
/// …}}`) also under their dotted names; each object stays under its own
/// key too, for attributes that are objects (`tool_input`).
fn flat(attrs: Map<String, Value>) -> Map<String, Value> {
    fn walk(prefix: &str, v: &Value, out: &mut Map<String, Value>) {
        if let Value::Object(o) = v {
            for (k, inner) in o {
                let key = format!("{prefix}.{k}");
                walk(&key, inner, out);
                out.entry(key).or_insert_with(|| inner.clone());
            }
        }
    }
    let mut out = Map::new();
    for (k, v) in &attrs {
        walk(k, v, &mut out);
    }
    for (k, v) in attrs {
        out.insert(k, v);
    }
    out
}

/// What a span object says outside its attributes, in any of the shapes the
/// SDKs and Phoenix write.
fn parts_of(o: &Map<String, Value>, line: u64) -> SpanParts {
    let nested = |outer: &[&str]| {
        outer
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_object))
    };
    // JSON.stringify of a JS SDK span writes its private `_spanContext`.
    let context = nested(&["context", "spanContext", "_spanContext"]);
    let parent = nested(&["parent", "parentSpanContext"]);
    let trace_keys = ["trace_id", "traceId", "context.trace_id"];
    let span_keys = ["span_id", "spanId", "context.span_id"];
    let trace_id = id_in(Some(o), &trace_keys, true)
        .or_else(|| id_in(context, &trace_keys, true))
        .unwrap_or_default();
    let span_id = id_in(Some(o), &span_keys, false)
        .or_else(|| id_in(context, &span_keys, false))
        .unwrap_or_default();
    let parent_id = id_in(
        Some(o),
        &["parent_span_id", "parentSpanId", "parent_id", "parentId"],
        false,
    )
    .or_else(|| id_in(parent, &span_keys, false));
    let start = time_in(
        o,
        &[
            "start_time",
            "startTimeUnixNano",
            "start_time_unix_nano",
            "startTime",
        ],
    );
    let end_keys = [
        "end_time",
        "endTimeUnixNano",
        "end_time_unix_nano",
        "endTime",
    ];
    let end = time_in(o, &end_keys);
    let end_stated_missing = end_keys
        .iter()
        .any(|k| matches!(o.get(*k), Some(Value::Null)));
    let unended = start.is_some()
        && (end_stated_missing
            || ["ended", "_ended"]
                .iter()
                .any(|k| matches!(o.get(*k), Some(Value::Bool(false)))));
    let (status, status_message) = status_in(o);
    SpanParts {
        trace_id,
        span_id,
        parent_id,
        name: o
            .get("name")
            .map(|n| match n {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .unwrap_or_default(),
        start,
        end,
        unended,
        status,
        status_message,
        line: Some(line),
        linked_trace: linked_trace(o),
        events: span_events(o.get("events")),
    }
}

/// What a span's events say (see [`SpanEvents`]); only the events it reads
/// have their attributes looked at.
fn span_events(events: Option<&Value>) -> SpanEvents {
    let mut found = SpanEvents::default();
    for event in events.and_then(Value::as_array).into_iter().flatten() {
        let Some(name) = event.get("name").and_then(Value::as_str) else {
            continue;
        };
        if !SpanEvents::reads(name) {
            continue;
        }
        let attrs = match event.get("attributes") {
            Some(Value::Object(a)) => Some(std::borrow::Cow::Borrowed(a)),
            Some(list @ Value::Array(_)) => {
                crate::adapters::formats::otlp::key_values(list.clone())
                    .map(std::borrow::Cow::Owned)
            }
            _ => None,
        };
        found.note(name, |k| {
            attrs
                .as_deref()
                .and_then(|a| a.get(k))
                .and_then(|v| match v {
                    Value::String(s) => Some(s.clone()),
                    Value::Null => None,
                    other => Some(other.to_string()),
                })
        });
    }
    found
}

/// Microseconds, as Jaeger and Zipkin write span times: an integer, or a
/// float.
fn micros(v: Option<&Value>) -> Option<i128> {
    let v = v?;
    v.as_i64()
        .map(i128::from)
        .or_else(|| v.as_u64().map(i128::from))
        .or_else(|| v.as_f64().filter(|f| f.is_finite()).map(|f| f as i128))
}

/// The trace of a span's first link that names one: the Python SDK writes
/// `{"context": {"trace_id": …}}`, OTLP-like dumps `{"traceId": …}`.
fn linked_trace(o: &Map<String, Value>) -> Option<String> {
    let keys = ["trace_id", "traceId"];
    o.get("links")?
        .as_array()?
        .iter()
        .filter_map(Value::as_object)
        .find_map(|link| {
            id_in(Some(link), &keys, true).or_else(|| {
                let context = ["context", "spanContext", "_spanContext"]
                    .iter()
                    .find_map(|k| link.get(*k).and_then(Value::as_object));
                id_in(context, &keys, true)
            })
        })
}

/// The first id among `keys`: text in any form (see [`spans::normal_id`]),
/// integers (the Python SDK's raw form) in hex.
fn id_in(o: Option<&Map<String, Value>>, keys: &[&str], trace: bool) -> Option<String> {
    let v = keys
        .iter()
        .find_map(|k| o?.get(*k).filter(|v| !v.is_null()))?;
    let id = match v {
        Value::String(s) => spans::normal_id(s),
        Value::Number(n) => spans::int_id(u128::from(n.as_u64()?), trace),
        _ => return None,
    };
    (!id.is_empty()).then_some(id)
}

/// A span time in Unix nanoseconds: nanoseconds (number or digits), [seconds,
/// nanoseconds] (the JS SDK), epoch seconds or milliseconds, or a date-time.
/// A time that reads as none of these is no time.
fn time_in(o: &Map<String, Value>, keys: &[&str]) -> Option<i128> {
    let v = keys
        .iter()
        .find_map(|k| o.get(*k).filter(|v| !v.is_null()))?;
    // Past 1e17 a number can only be nanoseconds (1e17 ms is year 3 million).
    const NANOS_FROM: i128 = 100_000_000_000_000_000;
    let nanos = match v {
        Value::Array(parts) => {
            return match parts.as_slice() {
                [secs, nanos] => {
                    Some(i128::from(secs.as_i64()?) * 1_000_000_000 + i128::from(nanos.as_i64()?))
                }
                _ => None,
            };
        }
        Value::Number(n) => n.as_u64().map(i128::from),
        Value::String(s) => spans::nanos_from_text(s),
        _ => None,
    };
    match nanos {
        Some(n) if n >= NANOS_FROM => Some(n),
        _ => {
            let ts = match v {
                Value::Number(n) => Timestamp::from_epoch_number(n.as_f64()?),
                Value::String(s) => Timestamp::parse(s),
                _ => None,
            }?;
            Some(ts.0)
        }
    }
}

/// The status code (absent or null: unset) and its message: `status` as an
/// object (`code` or `status_code`, `message` or `description`) or a bare
/// code, or Phoenix's top-level `status_code` and `status_message`.
fn status_in(o: &Map<String, Value>) -> (StatusCode, Option<String>) {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let (code, message) = match o.get("status") {
        Some(Value::Object(s)) => (
            s.get("code").or_else(|| s.get("status_code")),
            text(s.get("message").or_else(|| s.get("description"))),
        ),
        Some(Value::Null) | None => (
            o.get("status_code").or_else(|| o.get("statusCode")),
            text(o.get("status_message").or_else(|| o.get("statusMessage"))),
        ),
        Some(code) => (Some(code), None),
    };
    let code = match code {
        None | Some(Value::Null) => StatusCode::Unset,
        Some(Value::String(s)) => StatusCode::from_name(s),
        Some(Value::Number(n)) => n
            .as_f64()
            .map_or(StatusCode::Unknown, StatusCode::from_number),
        Some(Value::Bool(b)) => StatusCode::from_number(f64::from(u8::from(*b))),
        Some(_) => StatusCode::Unknown,
    };
    (code, message.filter(|m| !m.is_empty()))
}

/// The `otel` row of the format table.
pub(crate) const FORMAT: Format = Format {
    name: "otel",
    help: "Spans as JSON: OpenTelemetry SDK dumps (Python, JS, Vercel AI SDK), Phoenix/OpenInference spans, Jaeger, Zipkin and MLflow traces, attribute maps, agent-triage's span list.",
    claims: Some(claims),
    read: |r, _, sink| read(r, sink),
};

/// Spans as JSON: a list of them, {"spans": [...]}, Phoenix's
/// {"data": [...], "next_cursor": …}, one span object, or one span's
/// attributes without an envelope.
fn claims(shape: &Shape<'_>) -> bool {
    if shape.is_mlflow_trace() || (shape.has("traceID") && shape.has("spans")) {
        return true;
    }
    if !shape.top_is_list
        && (shape.has("spans")
            || (shape.has("data") && (shape.has("next_cursor") || shape.mentions("\"spanID\""))))
    {
        return true;
    }
    SPAN_ID_KEYS.iter().any(|k| shape.has(k))
        || (!shape.top_is_list && shape.keys.iter().any(|k| is_attribute_key(k)))
}

#[cfg(test)]
mod tests {

    use crate::adapters::records_of;
    use serde_json::{Value, json};

    /// The events of a span file, and its source record.
    fn read(name: &str, input: &str) -> (Vec<Value>, Value) {
        let mut recs = records_of(
            crate::adapters::formats::otel::FORMAT,
            name,
            input.as_bytes(),
        );
        let source = recs.pop().unwrap();
        recs.retain(|r| r["kind"] == "event");
        (recs, source)
    }

    fn field<'a>(evs: &'a [Value], name: &str) -> Vec<&'a Value> {
        evs.iter().map(|e| &e[name]).collect()
    }

    #[test]
    fn reads_the_reference_example_span() {
        let (evs, _) = read(
            "t.json",
            r#"[{"span_id":"sp-0002","trace_id":"otel-trace-A","name":"dispatch_subtask","status":{"code":"ERROR"},
                "attributes":{"agent.id":"planner","turn":3,"failure_classification":"coordination_failure","divergence_fields":["retriever_state"]}}]"#,
        );
        let ev = &evs[0];
        assert_eq!(ev["run_id"], "otel-trace-A");
        assert_eq!(ev["agent_id"], "planner");
        assert_eq!(ev["turn"], 3);
        assert_eq!(ev["action_taken"]["tool_name"], "dispatch_subtask");
        assert_eq!(ev["action_succeeded"], false);
        assert_eq!(ev["failure_classification"], "coordination_failure");
        assert_eq!(ev["failure_source"], "label");
        assert_eq!(ev["divergence_fields"], json!(["retriever_state"]));
    }

    /// The root span's status is the run's verdict: a tool failure the
    /// agent recovered from under an OK root stays a failure event, and
    /// the run succeeded; an ERROR root fails it; without one, a failure
    /// no retry of the same tool settled.
    #[test]
    fn the_root_span_status_is_the_run_outcome() {
        for (root, then, outcome) in [
            (r#""OK""#, "search", "succeeded"),
            (r#""ERROR""#, "search", "failed"),
            (r#""UNSET""#, "search", "unknown"),
            (r#""UNSET""#, "answer", "failed"),
        ] {
            let input = format!(
                r#"[{{"span_id":"r","trace_id":"t","name":"agent","status":{{"code":{root}}}}},
                    {{"span_id":"a","parent_id":"r","trace_id":"t","name":"search","status":{{"code":"ERROR"}}}},
                    {{"span_id":"b","parent_id":"r","trace_id":"t","name":"{then}","status":{{"code":"OK"}}}}]"#
            );
            let recs = records_of(
                crate::adapters::formats::otel::FORMAT,
                "t.json",
                input.as_bytes(),
            );
            let evs: Vec<_> = recs.iter().filter(|r| r["kind"] == "event").collect();
            assert_eq!(evs[1]["action_succeeded"], false, "{root}");
            let run = recs.iter().find(|r| r["kind"] == "run").unwrap();
            assert_eq!(run["outcome"], outcome, "{root}");
        }
    }

    #[test]
    fn status_names_are_read_as_otlp_defines_them() {
        for (code, ok) in [
            (r#""STATUS_CODE_OK""#, true),
            (r#""UNSET""#, true),
            ("0", true),
            ("1", true),
            ("null", true),
            (r#""STATUS_CODE_ERROR""#, false),
            (r#""ERROR""#, false),
            ("2", false),
            (r#""bogus""#, false),
        ] {
            let (evs, _) = read(
                "t.json",
                &format!(
                    r#"{{"span_id":"s","trace_id":"t","name":"n","status":{{"code":{code}}}}}"#
                ),
            );
            assert_eq!(evs[0]["action_succeeded"], ok, "{code}");
            assert_eq!(
                evs[0]["failure_source"].as_str(),
                (!ok).then_some("status"),
                "{code}"
            );
        }
    }

    #[test]
    fn python_sdk_spans_with_integer_ids_come_out_parent_first() {
        // The child comes first in the file, as any-agent writes them.
        let (evs, source) = read(
            "t.json",
            r#"{"spans": [
              {"name": "execute_tool get_time", "context": {"trace_id": 39712373237291850001929057769826244787, "span_id": 255},
               "parent": {"trace_id": 39712373237291850001929057769826244787, "span_id": 16},
               "start_time": 1758026595108941000, "end_time": 1758026595208941000,
               "status": {"status_code": "unset", "description": null},
               "attributes": {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_time",
                              "gen_ai.tool.args": "{\"tz\": \"UTC\"}", "gen_ai.output": "Error: no clock"}},
              {"name": "invoke_agent [helper]", "context": {"trace_id": 39712373237291850001929057769826244787, "span_id": 16},
               "parent": null, "start_time": 1758026594777382000, "end_time": 1758026595308941000,
               "status": {"status_code": "ok"},
               "attributes": {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"}}]}"#,
        );
        assert_eq!(source["skipped"], 0);
        assert_eq!(
            field(&evs, "span_id"),
            ["0000000000000010", "00000000000000ff"]
        );
        assert_eq!(
            field(&evs, "run_id"),
            ["1de0532b350588ff152b1edf6bf358b3"; 2]
        );
        assert_eq!(field(&evs, "agent_id"), ["helper", "helper"]);
        let tool = &evs[1];
        assert_eq!(tool["parent_span_id"], "0000000000000010");
        assert_eq!(
            tool["action_taken"],
            json!({"tool_name": "get_time", "tool_input": {"tz": "UTC"}})
        );
        assert_eq!(tool["action_succeeded"], false);
        assert_eq!(tool["failure_source"], "output");
        assert_eq!(tool["failure_inferred"], true);
        assert_eq!(tool["timestamp"], "2025-09-16T12:43:15.108941Z");
    }

    #[test]
    fn framing_one_value_lines_and_concatenated_pretty_values() {
        let span = |id: &str, start: u64| json!({"name": "n", "context": {"trace_id": "0xabc", "span_id": id}, "start_time": start});
        let pretty = format!(
            "{}\n{}\n",
            serde_json::to_string_pretty(&span("0x2", 2)).unwrap(),
            serde_json::to_string_pretty(&span("0x1", 1)).unwrap()
        );
        let (evs, source) = read("t.json", &pretty);
        assert_eq!(source["skipped"], 0);
        assert_eq!(
            field(&evs, "span_id"),
            ["0000000000000001", "0000000000000002"]
        );
        assert_eq!(evs[0]["src"]["line"], 9);
        let lines = format!("[{}]\n[{}]\n", span("0x3", 3), span("0x4", 4));
        let (evs, _) = read("t.jsonl", &lines);
        assert_eq!(evs.len(), 2);
        let broken = format!("{}\nnot json\n{}\n", span("0x5", 5), span("0x6", 6));
        let (evs, source) = read("t.jsonl", &broken);
        assert_eq!((evs.len(), &source["skipped"]), (2, &json!(1)));
    }

    #[test]
    fn spans_grouped_under_operation_names_are_each_a_span() {
        let span = |id: &str, name: &str| {
            serde_json::json!({"name": name, "context": {"trace_id": "t1", "span_id": id},
                               "parent_id": null, "start_time": "2025-01-01T00:00:00Z",
                               "attributes": {"ai.operationId": name}})
        };
        let doc = serde_json::json!({
            "ai.generateText": [span("a", "ai.generateText"), span("b", "ai.generateText")],
            "ai.toolCall": [span("c", "ai.toolCall")],
        });
        let recs = records_of(super::FORMAT, "dump.json", doc.to_string().as_bytes());
        let events = recs.iter().filter(|r| r["kind"] == "event").count();
        assert_eq!(events, 3);
    }

    /// A console dump's span whose content is in GenAI message events.
    #[test]
    fn genai_message_events_give_input_and_output() {
        let span = json!({"name": "chat", "context": {"trace_id": "0x1", "span_id": "0x2"},
        "attributes": {"gen_ai.operation.name": "chat"},
        "events": [
            {"name": "gen_ai.user.message", "attributes": {"content": "[{\"text\": \"Is BA117 late?\"}]"}},
            {"name": "gen_ai.tool.message", "attributes": {"content": "{\"status\": \"delayed\"}"}},
            {"name": "gen_ai.choice", "attributes": {"message": {"text": "Yes, by an hour."}}}
        ]});
        let (evs, _) = read("t.json", &span.to_string());
        assert_eq!(evs[0]["input"], r#"{"status": "delayed"}"#);
        assert_eq!(evs[0]["output"], r#"{"text":"Yes, by an hour."}"#);
    }

    #[test]
    fn an_attribute_map_is_one_span() {
        let (evs, source) = read(
            "tool.json",
            r#"{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                "input": "{\"city\": \"New York\"}", "output": "{\"status\": \"success\"}"}"#,
        );
        assert_eq!(source["skipped"], 0);
        assert_eq!(evs.len(), 1);
        assert_eq!(evs[0]["run_id"], "tool.json:1");
        assert_eq!(evs[0]["action_taken"]["tool_name"], "get_weather");
        assert_eq!(
            evs[0]["action_taken"]["tool_input"],
            json!({"city": "New York"})
        );
        assert_eq!(evs[0]["span_kind"], "tool");
        let (evs, source) = read("x.json", r#"{"colour": "blue"}"#);
        assert!(evs.is_empty());
        assert_eq!(source["skipped"], 1);
    }

    #[test]
    fn agents_from_langgraph_nodes_and_ancestors() {
        let (evs, _) = read(
            "t.jsonl",
            concat!(
                r#"{"name": "LangGraph", "context": {"trace_id": "t", "span_id": "r"}, "service.name": "x"}"#,
                "\n",
                r#"{"name": "ChatOpenAI", "context": {"trace_id": "t", "span_id": "c"}, "parent_id": "r", "span_kind": "LLM","#,
                r#" "attributes": {"metadata": "{\"langgraph_node\": \"planner\"}"}}"#,
                "\n",
                r#"{"name": "search", "context": {"trace_id": "t", "span_id": "s"}, "parent_id": "c", "span_kind": "TOOL"}"#,
                "\n",
                r#"{"name": "invoke_agent critic", "context": {"trace_id": "t", "span_id": "a"}, "parent_id": "r","#,
                r#" "attributes": {"gen_ai.operation.name": "invoke_agent"}}"#,
                "\n",
            ),
        );
        assert_eq!(field(&evs, "span_id"), ["r", "c", "s", "a"]);
        assert_eq!(
            field(&evs, "agent_id"),
            ["unknown", "planner", "planner", "critic"]
        );
        assert_eq!(evs[2]["action_taken"]["tool_name"], "search");
    }

    #[test]
    fn spans_copied_out_of_otlp_requests() {
        let (evs, source) = read(
            "t.json",
            r#"[{"traceId": "5B8EFFF798038103D269B633813FC60C", "spanId": "EEE19B7EC3C1B174", "name": "execute_tool fetch",
                 "startTimeUnixNano": "1544712660000000000", "status": {"code": "STATUS_CODE_ERROR"},
                 "attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "fetch"}},
                                {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}}],
                 "events": [{"name": "exception", "attributes": [
                     {"key": "exception.type", "value": {"stringValue": "ConnectionError"}},
                     {"key": "exception.message", "value": {"stringValue": "connection refused"}}]}]}]"#,
        );
        assert_eq!(source["skipped"], 0);
        let ev = &evs[0];
        assert_eq!(ev["run_id"], "5b8efff798038103d269b633813fc60c");
        assert_eq!(ev["action_taken"]["tool_name"], "fetch");
        assert_eq!(ev["timestamp"], "2018-12-13T14:51:00Z");
        assert_eq!(
            ev["error"],
            json!({"type": "ConnectionError", "message": "connection refused"})
        );
    }

    #[test]
    fn js_spans_as_json_stringify_writes_them() {
        let (evs, _) = read(
            "t.json",
            r#"[{"name": "ai.toolCall", "_spanContext": {"traceId": "4f1d3c2b1a0918273645546372819aab", "spanId": "c0ffee0000000009"},
                 "parentSpanId": "c0ffee0000000001", "startTime": [1770131995, 0], "endTime": [0, 0], "_ended": false,
                 "attributes": {"ai.operationId": "ai.toolCall", "ai.toolCall.name": "lookup"},
                 "resource": {"_attributes": {"service.name": "travel"}}}]"#,
        );
        let ev = &evs[0];
        assert_eq!(ev["span_id"], "c0ffee0000000009");
        assert_eq!(ev["parent_span_id"], "c0ffee0000000001");
        assert_eq!(ev["agent_id"], "travel");
        assert_eq!(ev["action_taken"]["tool_name"], "lookup");
        assert_eq!(ev["failure_source"], "no_result");
        assert_eq!(ev["failure_inferred"], true);
    }

    #[test]
    fn an_otlp_request_among_spans_is_read_as_one() {
        let (evs, source) = read(
            "t.jsonl",
            concat!(
                r#"{"name": "a", "context": {"trace_id": "t1", "span_id": "s1"}}"#,
                "\n",
                r#"{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t2", "spanId": "s2", "name": "b"}]}]}]}"#,
                "\n",
            ),
        );
        assert_eq!(source["skipped"], 0);
        assert_eq!(field(&evs, "run_id"), ["t1", "t2"]);
    }

    #[test]
    fn bad_spans_are_reasons_not_panics() {
        let (evs, source) = read("t.json", r#"[1, {"name": "n", "attributes": [1]}, "x"]"#);
        assert!(evs.is_empty());
        assert_eq!(source["skipped"], 3);
        let (_, source) = read("t.json", "3");
        assert_eq!(source["skipped"], 1);
    }

    /// One Jaeger span: tags, references, logs and the process.
    fn jaeger_span(
        trace: &str,
        id: &str,
        refs: Value,
        name: &str,
        tags: Value,
        logs: Value,
    ) -> Value {
        let tag_list: Vec<Value> = tags
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| json!({"key": k, "type": "string", "value": v}))
            .collect();
        json!({"traceID": trace, "spanID": id, "operationName": name, "references": refs,
               "startTime": 1_700_000_000_000_000i64 + id.len() as i64, "duration": 1500,
               "tags": tag_list, "logs": logs, "processID": "p1", "warnings": null})
    }

    #[test]
    fn a_jaeger_query_answer_reads_as_its_spans() {
        // What Jaeger's query API answers (and the UI's JSON download
        // saves): tags as attributes, the process as the resource, the
        // parent a CHILD_OF reference, a reference to another trace a link.
        let exception = json!([{"timestamp": 1_700_000_000_000_100i64, "fields": [
            {"key": "event", "type": "string", "value": "exception"},
            {"key": "exception.type", "type": "string", "value": "KeyError"},
            {"key": "exception.message", "type": "string", "value": "'A-17'"}]}]);
        let first = json!({"traceID": "aa", "processes": {"p1": {"serviceName": "desk", "tags": []}},
        "spans": [
            jaeger_span("aa", "01", json!([]), "invoke_agent clerk",
                json!({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "clerk"}), json!([])),
            jaeger_span("aa", "02", json!([{"refType": "CHILD_OF", "traceID": "aa", "spanID": "01"}]),
                "execute_tool lookup_order",
                json!({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_order",
                       "otel.status_code": "ERROR", "otel.status_description": "KeyError: 'A-17'"}),
                exception),
        ]});
        let second = json!({"traceID": "bb", "processes": {"p1": {"serviceName": "desk", "tags": []}},
            "spans": [jaeger_span("bb", "03", json!([{"refType": "FOLLOWS_FROM", "traceID": "aa", "spanID": "01"}]),
                "invoke_agent reviewer",
                json!({"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "reviewer"}), json!([]))]});
        let answer =
            json!({"data": [first, second], "total": 0, "limit": 0, "offset": 0, "errors": null});
        let text = serde_json::to_string_pretty(&answer).unwrap();
        let shape = crate::adapters::read::shape::Shape::of(text.as_bytes());
        assert!(super::claims(&shape));
        let (evs, source) = read("trace.json", &text);
        assert_eq!(source["skipped"], 0);
        assert_eq!(field(&evs, "agent_id"), ["clerk", "clerk", "reviewer"]);
        // The reviewer's turn links to the clerk's trace, but no delivery
        // does: a trace of its own.
        assert_eq!(field(&evs, "run_id"), ["aa", "aa", "bb"]);
        assert_eq!(evs[1]["action_taken"]["tool_name"], "lookup_order");
        assert_eq!(evs[1]["action_succeeded"], false);
        assert_eq!(evs[1]["error"]["message"], "KeyError: 'A-17'");
        assert_eq!(evs[1]["parent_span_id"], "01");
        assert_eq!(evs[1]["latency_ms"]["total"], 1);
    }
}
