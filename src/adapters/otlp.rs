//! The `otlp` format: OTLP/HTTP JSON trace requests (resourceSpans →
//! scopeSpans → spans), one per file or one per line as the Collector's file
//! exporter writes them. Request lines stream: each trace is emitted in
//! pre-order of its span tree once it is complete (see `trace_window`); a
//! file of one request is read whole.

use std::io::Read;

use rayon::prelude::*;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::span_events::{self, Attrs, HeldSpan, SpanParts};
use super::spans::{self, StatusCode};
use super::trace_window::TraceWindow;
use super::{DecodeSettings, Sink};
use crate::io::ndjson::ChunkReader;

// ---- the wire shapes (camelCase as the spec writes them, snake_case too) ----

#[derive(Deserialize)]
struct ExportRequest {
    #[serde(rename = "resourceSpans", alias = "resource_spans", default)]
    resource_spans: Option<Vec<ResourceSpans>>,
}

#[derive(Deserialize)]
struct ResourceSpans {
    #[serde(default)]
    resource: Option<Resource>,
    #[serde(
        rename = "scopeSpans",
        alias = "scope_spans",
        alias = "instrumentationLibrarySpans",
        alias = "instrumentation_library_spans",
        default
    )]
    scope_spans: Option<Vec<ScopeSpans>>,
}

#[derive(Deserialize)]
struct Resource {
    #[serde(default)]
    attributes: Option<Vec<KeyValue>>,
}

#[derive(Deserialize)]
struct ScopeSpans {
    #[serde(default)]
    spans: Option<Vec<WireSpan>>,
}

#[derive(Deserialize)]
struct WireSpan {
    #[serde(rename = "traceId", alias = "trace_id", default)]
    trace_id: Option<String>,
    #[serde(rename = "spanId", alias = "span_id", default)]
    span_id: Option<String>,
    #[serde(rename = "parentSpanId", alias = "parent_span_id", default)]
    parent_span_id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(rename = "startTimeUnixNano", alias = "start_time_unix_nano", default)]
    start: Option<Value>,
    #[serde(rename = "endTimeUnixNano", alias = "end_time_unix_nano", default)]
    end: Option<Value>,
    #[serde(default)]
    attributes: Option<Vec<KeyValue>>,
    #[serde(default)]
    events: Option<Vec<WireEvent>>,
    #[serde(default)]
    status: Option<WireStatus>,
}

#[derive(Deserialize)]
struct WireEvent {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    attributes: Option<Vec<KeyValue>>,
}

#[derive(Deserialize)]
struct WireStatus {
    #[serde(default)]
    code: Option<Value>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize)]
struct KeyValue {
    key: String,
    #[serde(default)]
    value: Option<AnyValue>,
}

/// OTLP's AnyValue: exactly one of its fields is set.
#[derive(Deserialize, Default)]
struct AnyValue {
    #[serde(rename = "stringValue", alias = "string_value", default)]
    string: Option<String>,
    #[serde(rename = "boolValue", alias = "bool_value", default)]
    boolean: Option<Value>,
    #[serde(rename = "intValue", alias = "int_value", default)]
    int: Option<Value>,
    #[serde(rename = "doubleValue", alias = "double_value", default)]
    double: Option<Value>,
    #[serde(rename = "arrayValue", alias = "array_value", default)]
    array: Option<ValueList>,
    #[serde(rename = "kvlistValue", alias = "kvlist_value", default)]
    kvlist: Option<KeyValueList>,
    #[serde(rename = "bytesValue", alias = "bytes_value", default)]
    bytes: Option<String>,
}

#[derive(Deserialize)]
struct ValueList {
    #[serde(default)]
    values: Option<Vec<AnyValue>>,
}

#[derive(Deserialize)]
struct KeyValueList {
    #[serde(default)]
    values: Option<Vec<KeyValue>>,
}

impl AnyValue {
    /// The plain JSON value: int64 text becomes a number, bytes stay base64
    /// text, a key/value list becomes an object.
    fn into_json(self) -> Value {
        if let Some(s) = self.string {
            return Value::String(s);
        }
        if let Some(b) = self.boolean {
            return match b {
                Value::String(s) => {
                    span_events::bool_from_text(&s).map_or(Value::String(s), Value::Bool)
                }
                other => other,
            };
        }
        if let Some(n) = self.int.or(self.double) {
            return match n {
                Value::String(s) => number_from_text(&s).unwrap_or(Value::String(s)),
                other => other,
            };
        }
        if let Some(list) = self.array {
            return Value::Array(
                list.values
                    .unwrap_or_default()
                    .into_iter()
                    .map(AnyValue::into_json)
                    .collect(),
            );
        }
        if let Some(kv) = self.kvlist {
            return Value::Object(attributes(kv.values));
        }
        self.bytes.map_or(Value::Null, Value::String)
    }
}

/// OTLP key/value attributes met outside a request (spans copied out of
/// one) as a plain map; None when `v` is no such list.
pub(super) fn key_values(v: Value) -> Option<Map<String, Value>> {
    serde_json::from_value::<Vec<KeyValue>>(v)
        .ok()
        .map(|list| attributes(Some(list)))
}

fn attributes(list: Option<Vec<KeyValue>>) -> Map<String, Value> {
    list.unwrap_or_default()
        .into_iter()
        .map(|kv| (kv.key, kv.value.map_or(Value::Null, AnyValue::into_json)))
        .collect()
}

fn number_from_text(s: &str) -> Option<Value> {
    let t = s.trim();
    if let Ok(n) = t.parse::<i64>() {
        return Some(Value::from(n));
    }
    if let Ok(n) = t.parse::<u64>() {
        return Some(Value::from(n));
    }
    t.parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map(Value::Number)
}

fn nanos_of(v: Option<&Value>) -> Option<i128> {
    match v? {
        Value::Number(n) => n
            .as_u64()
            .map(i128::from)
            .or_else(|| n.as_f64().map(|f| f as i128)),
        Value::String(s) => spans::nanos_from_text(s),
        _ => None,
    }
}

fn status_code_of(v: Option<&Value>) -> StatusCode {
    match v {
        None | Some(Value::Null) => StatusCode::Unset,
        Some(Value::String(s)) => StatusCode::from_name(s),
        Some(Value::Number(n)) => n
            .as_f64()
            .map_or(StatusCode::Unknown, StatusCode::from_number),
        Some(_) => StatusCode::Unknown,
    }
}

// ---- one span, as the shared span model reads it ----

fn held_span(
    span: WireSpan,
    resource: &Map<String, Value>,
    line: Option<u64>,
    settings: &DecodeSettings,
) -> HeldSpan {
    let span_attrs = attributes(span.attributes);
    let exception = span
        .events
        .unwrap_or_default()
        .into_iter()
        .find(|e| e.name.as_deref() == Some("exception"))
        .map(|e| {
            let x = attributes(e.attributes);
            let text = |k: &str| x.get(k).and_then(Value::as_str).map(str::to_string);
            (text("exception.type"), text("exception.message"))
        });
    let (status, status_message) = span.status.map_or((StatusCode::Unset, None), |s| {
        (status_code_of(s.code.as_ref()), s.message)
    });
    let start = nanos_of(span.start.as_ref());
    let end = nanos_of(span.end.as_ref());
    let parts = SpanParts {
        trace_id: span
            .trace_id
            .as_deref()
            .map(spans::normal_id)
            .unwrap_or_default(),
        span_id: span
            .span_id
            .as_deref()
            .map(spans::normal_id)
            .unwrap_or_default(),
        parent_id: span.parent_span_id.as_deref().map(spans::normal_id),
        name: span.name.unwrap_or_default(),
        unended: start.is_some_and(|s| s > 0) && end.is_some_and(|e| e == 0),
        start,
        end,
        status,
        status_message,
        exception,
        line,
    };
    let a = Attrs {
        span: &span_attrs,
        resource,
    };
    HeldSpan::new(parts, &a, settings)
}

// ---- reading: one request per line, or one request per file ----

/// Reads OTLP requests from `r` into `sink`, emitting each trace once it
/// is complete.
pub fn read(r: impl Read, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let mut window = TraceWindow::new(sink.settings.trace_window);
    let limit = sink.settings.document_limit;
    let mut reader = ChunkReader::new(r).max_line(limit);
    let path = sink.path().to_string();
    let next = |reader: &mut ChunkReader<_>| {
        reader.next_chunk().map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => anyhow::anyhow!(
                "{path}: {e}, the most --max-document lets one OTLP request take; raise \
                 --max-document"
            ),
            _ => anyhow::anyhow!("{path}: {}", crate::io::diag::io_reason(&e)),
        })
    };
    // None until the first line shows whether requests are one per line or
    // one document across lines.
    let mut document: Option<Option<Vec<u8>>> = None;
    while let Some(mut chunk) = next(&mut reader)? {
        sink.repaired(chunk.repaired);
        if document.is_none() {
            document = first_line_state(&mut chunk);
        }
        if let Some(Some(doc)) = document.as_mut() {
            if (doc.len() + chunk.data.len()) as u64 > limit {
                return Err(super::too_large(&path, limit));
            }
            doc.extend_from_slice(&chunk.data);
            continue;
        }
        // Requests decode in parallel; their spans are held in input order.
        let lines: Vec<_> = chunk.lines().collect();
        if let Some(long) = lines.iter().find(|l| l.bytes.len() as u64 > limit) {
            return Err(super::too_large(&format!("{path}:{}", long.number), limit));
        }
        let settings = &sink.settings;
        let decoded: Vec<_> = lines
            .par_iter()
            .map(|line| {
                let mut spans = Vec::new();
                let req = decode_request(line.bytes)?;
                hold(req, Some(line.number), settings, &mut spans);
                Ok::<_, String>(spans)
            })
            .collect();
        for (line, spans) in lines.iter().zip(decoded) {
            match spans {
                Ok(spans) => {
                    for span in spans {
                        window.push(span, sink)?;
                    }
                }
                Err(reason) => sink.skip(Some(line.number), &reason)?,
            }
        }
    }
    if let Some(Some(doc)) = document {
        let mut held = Vec::new();
        read_document(&doc, sink, &mut held)?;
        for span in held {
            window.push(span, sink)?;
        }
    }
    window.finish(sink)
}

/// After the chunk holding the first non-blank line: `Some(None)` for one
/// request per line, `Some(Some(buffer))` when the first request runs over
/// more lines (a pretty-printed file). `None` while only blank lines came.
fn first_line_state(chunk: &mut crate::io::ndjson::Chunk) -> Option<Option<Vec<u8>>> {
    let first = chunk.lines().next()?;
    let incomplete = matches!(
        serde_json::from_slice::<serde::de::IgnoredAny>(first.bytes),
        Err(e) if e.is_eof()
    );
    Some(incomplete.then(Vec::new))
}

/// Reads requests written as JSON documents one after another.
fn read_document(doc: &[u8], sink: &mut Sink<'_>, held: &mut Vec<HeldSpan>) -> anyhow::Result<()> {
    if let Err(e) = std::str::from_utf8(doc) {
        let line = 1 + memchr::memchr_iter(b'\n', &doc[..e.valid_up_to()]).count() as u64;
        return sink.skip(Some(line), "not valid UTF-8");
    }
    let mut stream = serde_json::Deserializer::from_slice(doc).into_iter::<ExportRequest>();
    let line_at = |offset: usize| 1 + memchr::memchr_iter(b'\n', &doc[..offset]).count() as u64;
    loop {
        let start = stream.byte_offset();
        let line = line_at(start + leading_space(&doc[start..]));
        let Some(decoded) = stream.next() else {
            return Ok(());
        };
        let failed = decoded.is_err();
        let line = match &decoded {
            Err(e) if e.line() > 0 => e.line() as u64,
            _ => line,
        };
        match checked(decoded) {
            Ok(req) => hold(req, Some(line), &sink.settings, held),
            Err(reason) => sink.skip(Some(line), &reason)?,
        }
        if failed {
            return Ok(()); // the stream cannot go on past broken JSON
        }
    }
}

fn leading_space(bytes: &[u8]) -> usize {
    bytes.iter().take_while(|b| b.is_ascii_whitespace()).count()
}

/// Reads one line as [`read`] reads a line of its input: the number of
/// `resourceSpans` the request holds, or why the line would be skipped.
/// A receiver checks each request with it before acknowledging it.
pub fn check_line(bytes: &[u8]) -> Result<usize, String> {
    let req = decode_request(bytes)?;
    Ok(req.resource_spans.map_or(0, |r| r.len()))
}

fn decode_request(bytes: &[u8]) -> Result<ExportRequest, String> {
    if std::str::from_utf8(bytes).is_err() {
        return Err("not valid UTF-8".to_string());
    }
    checked(serde_json::from_slice::<ExportRequest>(bytes))
}

/// A decoded request, or why it is none: not JSON, or JSON of another shape.
fn checked(decoded: serde_json::Result<ExportRequest>) -> Result<ExportRequest, String> {
    let req = decoded.map_err(|e| {
        let why = crate::io::diag::json_reason(&e);
        match e.classify() {
            serde_json::error::Category::Data => format!("not an OTLP trace request: {why}"),
            _ => format!("not valid JSON: {why}"),
        }
    })?;
    if req.resource_spans.is_none() {
        return Err("not an OTLP trace request: no \"resourceSpans\"".to_string());
    }
    Ok(req)
}

/// Holds the spans of an OTLP request met inside another span file.
pub(super) fn hold_value(
    value: Value,
    line: Option<u64>,
    settings: &DecodeSettings,
    held: &mut Vec<HeldSpan>,
) -> Result<(), String> {
    let req = checked(serde_json::from_value(value))?;
    hold(req, line, settings, held);
    Ok(())
}

fn hold(
    req: ExportRequest,
    line: Option<u64>,
    settings: &DecodeSettings,
    held: &mut Vec<HeldSpan>,
) {
    for rs in req.resource_spans.unwrap_or_default() {
        let resource = attributes(rs.resource.and_then(|r| r.attributes));
        for scope in rs.scope_spans.unwrap_or_default() {
            for span in scope.spans.unwrap_or_default() {
                held.push(held_span(span, &resource, line, settings));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn kv(key: &str, value: Value) -> Value {
        let any = match value {
            Value::String(s) => json!({"stringValue": s}),
            Value::Bool(b) => json!({"boolValue": b}),
            Value::Number(n) if n.is_i64() => json!({"intValue": n.to_string()}),
            Value::Number(n) => json!({"doubleValue": n}),
            other => other,
        };
        json!({"key": key, "value": any})
    }

    /// A span in camelCase OTLP/JSON with string attributes.
    fn span(
        trace: &str,
        id: &str,
        parent: &str,
        start: u64,
        name: &str,
        attrs: &[(&str, Value)],
    ) -> Value {
        json!({"traceId": trace, "spanId": id, "parentSpanId": parent, "name": name,
               "startTimeUnixNano": start.to_string(), "endTimeUnixNano": (start + 2_000_000).to_string(),
               "attributes": attrs.iter().map(|(k, v)| kv(k, v.clone())).collect::<Vec<_>>()})
    }

    fn request(resource: &[(&str, Value)], spans: Vec<Value>) -> String {
        json!({"resourceSpans": [{"resource": {"attributes": resource.iter().map(|(k, v)| kv(k, v.clone())).collect::<Vec<_>>()},
               "scopeSpans": [{"scope": {}, "spans": spans}]}]})
        .to_string()
    }

    fn events(input: &str) -> (Vec<Value>, Value) {
        let mut recs =
            super::super::records_of(super::super::Format::Otlp, "t.jsonl", input.as_bytes());
        let source = recs.pop().unwrap();
        recs.retain(|r| r["kind"] == "event");
        (recs, source)
    }

    fn field<'a>(evs: &'a [Value], name: &str) -> Vec<&'a Value> {
        evs.iter().map(|e| &e[name]).collect()
    }

    #[test]
    fn spans_come_out_in_tree_preorder_with_inherited_agents() {
        // Exported as a collector does: children before their parents,
        // later siblings first, across two lines.
        let line1 = request(
            &[("service.name", json!("shop"))],
            vec![
                span(
                    "t1",
                    "c2",
                    "root",
                    30,
                    "execute_tool pay",
                    &[
                        ("gen_ai.tool.name", json!("pay")),
                        ("gen_ai.operation.name", json!("execute_tool")),
                    ],
                ),
                span(
                    "t1",
                    "g1",
                    "c1",
                    15,
                    "chat gpt",
                    &[("gen_ai.operation.name", json!("chat"))],
                ),
            ],
        );
        let line2 = request(
            &[("service.name", json!("shop"))],
            vec![
                span(
                    "t1",
                    "c1",
                    "root",
                    10,
                    "invoke_agent searcher",
                    &[
                        ("gen_ai.agent.name", json!("searcher")),
                        ("gen_ai.operation.name", json!("invoke_agent")),
                    ],
                ),
                span(
                    "t1",
                    "root",
                    "",
                    5,
                    "invoke_agent planner",
                    &[
                        ("gen_ai.agent.name", json!("planner")),
                        ("gen_ai.conversation.id", json!("conv-1")),
                    ],
                ),
            ],
        );
        let (evs, source) = events(&format!("{line1}\n{line2}\n"));
        assert_eq!(field(&evs, "span_id"), ["root", "c1", "g1", "c2"]);
        assert_eq!(
            field(&evs, "agent_id"),
            ["planner", "searcher", "searcher", "planner"]
        );
        assert_eq!(field(&evs, "run_id"), ["conv-1"; 4]);
        assert_eq!(field(&evs, "turn"), [0, 1, 2, 3]);
        assert_eq!(field(&evs, "step"), [0, 1, 2, 3]);
        assert_eq!(field(&evs, "span_kind"), ["other", "agent", "llm", "tool"]);
        let tools: Vec<_> = evs
            .iter()
            .map(|e| &e["action_taken"]["tool_name"])
            .collect();
        assert_eq!(
            tools,
            ["invoke_agent planner", "invoke_agent", "chat", "pay"]
        );
        assert_eq!(evs[0]["timestamp"], "1970-01-01T00:00:00.000000005Z");
        assert_eq!(evs[3]["src"]["line"], 1);
        assert_eq!(source["events"], 4);
        assert_eq!(source["skipped"], 0);
    }

    #[test]
    fn agent_spans_without_an_agent_name_are_named_after_the_span() {
        let (evs, _) = events(&request(
            &[],
            vec![
                span(
                    "t",
                    "a",
                    "",
                    1,
                    "invoke_agent reviewer",
                    &[("gen_ai.operation.name", json!("invoke_agent"))],
                ),
                span(
                    "t",
                    "b",
                    "a",
                    2,
                    "Critic",
                    &[("openinference.span.kind", json!("AGENT"))],
                ),
                span(
                    "t",
                    "c",
                    "b",
                    3,
                    "lookup",
                    &[
                        ("openinference.span.kind", json!("TOOL")),
                        ("tool.name", json!("lookup")),
                    ],
                ),
            ],
        ));
        assert_eq!(field(&evs, "agent_id"), ["reviewer", "Critic", "Critic"]);
    }

    #[test]
    fn run_id_prefers_run_then_conversation_then_trace() {
        let (evs, _) = events(&request(
            &[],
            vec![
                span(
                    "t1",
                    "a",
                    "",
                    1,
                    "x",
                    &[("run.id", json!("r-1")), ("session.id", json!("s"))],
                ),
                span("t2", "b", "", 2, "x", &[("session.id", json!("s-2"))]),
                span("t3", "c", "", 3, "x", &[]),
            ],
        ));
        assert_eq!(field(&evs, "run_id"), ["r-1", "s-2", "t3"]);
        assert_eq!(field(&evs, "agent_id"), ["unknown"; 3]);
    }

    #[test]
    fn reference_receiver_attributes() {
        let (evs, _) = events(&request(
            &[("agent.id", json!("resource-agent")), ("turn", json!(9))],
            vec![
                span(
                    "t",
                    "a",
                    "",
                    1,
                    "n",
                    &[
                        ("agent.id", json!("coder")),
                        ("run.id", json!("r")),
                        ("turn", json!(4)),
                        ("action.tool", json!("edit")),
                        ("action.succeeded", json!("false")),
                        ("divergence.fields", json!("plan, files")),
                    ],
                ),
                span(
                    "t",
                    "b",
                    "",
                    2,
                    "n",
                    &[
                        ("action.succeeded", json!(true)),
                        ("failure.classification", json!("agent_error")),
                    ],
                ),
            ],
        ));
        assert_eq!(evs[0]["agent_id"], "coder");
        assert_eq!(evs[0]["turn"], 4);
        assert_eq!(evs[0]["action_taken"]["tool_name"], "edit");
        assert_eq!(evs[0]["action_succeeded"], false);
        assert_eq!(evs[0]["failure_source"], "status");
        assert_eq!(evs[0]["divergence_fields"], json!(["plan", "files"]));
        // Resource attributes fill in what the span does not say.
        assert_eq!(evs[1]["agent_id"], "resource-agent");
        assert_eq!(evs[1]["turn"], 9);
        assert_eq!(evs[1]["action_succeeded"], true);
        assert_eq!(evs[1]["failure_classification"], "agent_error");
        assert_eq!(evs[1]["failure_source"], "label");
    }

    #[test]
    fn status_error_type_and_exceptions_mark_failure() {
        let mut failed = span("t", "s", "", 1, "call", &[]);
        failed["status"] = json!({"code": "STATUS_CODE_ERROR", "message": "upstream timed out"});
        let typed = span(
            "t",
            "e",
            "",
            2,
            "call",
            &[("error.type", json!("RateLimitError"))],
        );
        let mut thrown = span("t", "x", "", 3, "call", &[]);
        thrown["events"] = json!([{"name": "exception", "attributes": [
            {"key": "exception.type", "value": {"stringValue": "KeyError"}},
            {"key": "exception.message", "value": {"stringValue": "unknown tool 'serch'"}}]}]);
        let mut ok = span("t", "o", "", 4, "call", &[]);
        ok["status"] = json!({"code": 1});
        let soft = span(
            "t",
            "f",
            "",
            5,
            "execute_tool",
            &[
                ("tool.name", json!("grep")),
                ("output.value", json!("Error: no such file")),
            ],
        );
        let (evs, _) = events(&request(&[], vec![failed, typed, thrown, ok, soft]));
        assert_eq!(
            field(&evs, "action_succeeded"),
            [false, false, false, true, false]
        );
        assert_eq!(
            field(&evs, "failure_source"),
            [
                &json!("status"),
                &json!("error"),
                &json!("exception"),
                &Value::Null,
                &json!("output")
            ]
        );
        assert_eq!(evs[0]["error"], json!({"message": "upstream timed out"}));
        assert_eq!(evs[0]["failure_classification"], "environment_constraint");
        assert_eq!(evs[0]["failure_cause"], "timeout");
        assert_eq!(evs[1]["error"], json!({"type": "RateLimitError"}));
        assert_eq!(evs[1]["failure_cause"], "rate_limit");
        assert_eq!(
            evs[2]["error"],
            json!({"type": "KeyError", "message": "unknown tool 'serch'"})
        );
        assert_eq!(evs[2]["failure_cause"], "unknown_tool");
        assert!(evs[3].get("error").is_none());
        assert_eq!(evs[4]["span_kind"], "tool");
    }

    #[test]
    fn snake_case_numbers_and_enum_names() {
        let line = json!({"resource_spans": [{"scope_spans": [{"spans": [{
            "trace_id": "t", "span_id": "s", "parent_span_id": null, "name": "n", "kind": "SPAN_KIND_INTERNAL",
            "start_time_unix_nano": 1_544_712_660_000_000_000u64, "status": {"code": 2},
            "attributes": [{"key": "turn", "value": {"int_value": 3}},
                           {"key": "openinference.span.kind", "value": {"string_value": "RETRIEVER"}},
                           {"key": "agent.name", "value": {"string_value": "finder"}}]}]}]}]});
        let (evs, _) = events(&line.to_string());
        assert_eq!(evs[0]["turn"], 3);
        assert_eq!(evs[0]["span_kind"], "retrieval");
        assert_eq!(evs[0]["agent_id"], "finder");
        assert_eq!(evs[0]["action_succeeded"], false);
        assert_eq!(evs[0]["timestamp"], "2018-12-13T14:51:00Z");
    }

    #[test]
    fn any_values_of_every_type() {
        let any: AnyValue = serde_json::from_value(json!({"kvlistValue": {"values": [
            {"key": "s", "value": {"stringValue": "x"}},
            {"key": "i", "value": {"intValue": "-12"}},
            {"key": "d", "value": {"doubleValue": 1.5}},
            {"key": "b", "value": {"boolValue": "true"}},
            {"key": "y", "value": {"bytesValue": "AAE="}},
            {"key": "a", "value": {"arrayValue": {"values": [{"intValue": 1}, {"stringValue": "two"}]}}},
            {"key": "n", "value": {}}]}}))
        .unwrap();
        assert_eq!(
            any.into_json(),
            json!({"s": "x", "i": -12, "d": 1.5, "b": true, "y": "AAE=", "a": [1, "two"], "n": null})
        );
    }

    #[test]
    fn one_pretty_printed_request_per_file() {
        let pretty = serde_json::to_string_pretty(
            &serde_json::from_str::<Value>(&request(
                &[],
                vec![
                    span("t", "a", "", 1, "first", &[]),
                    span("t", "b", "a", 2, "second", &[]),
                ],
            ))
            .unwrap(),
        )
        .unwrap();
        let (evs, source) = events(&format!("\u{feff}\n{pretty}\n"));
        assert_eq!(field(&evs, "span_id"), ["a", "b"]);
        assert_eq!(evs[0]["src"]["line"], 2);
        assert_eq!(source["skipped"], 0);
        let (evs, source) = events(&pretty[..pretty.len() / 2]);
        assert!(evs.is_empty());
        assert_eq!(source["skipped"], 1);
    }

    #[test]
    fn bad_lines_are_skipped_and_counted() {
        let good = request(&[], vec![span("t", "a", "", 1, "n", &[])]);
        let other = request(&[], vec![span("t", "b", "", 2, "n", &[])]);
        let input = format!(
            "{good}\r\nnot json\n{{\"foo\":1}}\n[1]\n\u{fffd}\n{{\"resourceSpans\":[{{\"scopeSpans\":[{{\"spans\":[{{\"name\":7}}]}}]}}]}}\n{other}"
        );
        let mut bytes = input.into_bytes();
        let bad = bytes.iter().position(|b| *b == 0xEF).unwrap();
        bytes[bad] = 0xFF; // invalid UTF-8 on its own line
        let mut recs = super::super::records_of(super::super::Format::Otlp, "t.jsonl", &bytes);
        let source = recs.pop().unwrap();
        recs.retain(|r| r["kind"] == "event");
        let evs = recs;
        assert_eq!(evs.len(), 2);
        assert_eq!(source["skipped"], 5);
    }

    #[test]
    fn parent_cycles_and_missing_parents_still_emit_every_span() {
        let (evs, _) = events(&request(
            &[],
            vec![
                span("t", "a", "b", 1, "n", &[]),
                span("t", "b", "a", 2, "n", &[]),
                span("t", "c", "gone", 3, "n", &[]),
                span("t", "d", "d", 0, "n", &[]),
            ],
        ));
        let mut ids: Vec<_> = evs.iter().map(|e| e["span_id"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), 4);
        ids.sort();
        assert_eq!(ids, ["a", "b", "c", "d"]);
    }

    #[test]
    fn event_ids_never_collide() {
        let (evs, _) = events(&request(
            &[],
            vec![
                span("t1", "s", "", 1, "n", &[]),
                span("t2", "s", "", 2, "n", &[]),
                json!({"traceId": "t3", "name": "no id"}),
            ],
        ));
        assert_eq!(field(&evs, "event_id"), ["s", "t2:s", "t3:#2"]);
    }
}
