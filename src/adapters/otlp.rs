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
pub(crate) fn read(r: impl Read, sink: &mut Sink<'_>) -> anyhow::Result<()> {
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
mod tests;
