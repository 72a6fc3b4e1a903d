//! The `otlp` format: OTLP/HTTP JSON trace requests (resourceSpans →
//! scopeSpans → spans), one per file or one per line as the Collector's file
//! exporter writes them. Request lines stream: each trace is emitted in
//! pre-order of its span tree once it is complete (see `trace_window`); a
//! file of one request is read whole.

use std::borrow::Cow;
use std::io::Read;
use std::ops::Range;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::span_events::{self, AttrRef, AttrSource, Attrs, HeldSpan, SpanParts};
use super::spans::{self, StatusCode};
use super::trace_window::TraceWindow;
use super::{DecodeSettings, Sink};
use crate::io::decode_ahead::{Consumer, Decoder, decode_ahead};
use crate::io::json_scan::LineScratch;
use crate::io::ndjson::ChunkReader;

// ---- the wire shapes (camelCase as the spec writes them, snake_case too) ----
// Texts borrow from the request where they hold no escapes: a request's
// keys and values were each an allocation, the largest cost of reading it.

#[derive(Deserialize)]
struct ExportRequest<'a> {
    #[serde(rename = "resourceSpans", alias = "resource_spans", default, borrow)]
    resource_spans: Option<Vec<ResourceSpans<'a>>>,
}

#[derive(Deserialize)]
struct ResourceSpans<'a> {
    #[serde(default, borrow)]
    resource: Option<Resource<'a>>,
    #[serde(
        rename = "scopeSpans",
        alias = "scope_spans",
        alias = "instrumentationLibrarySpans",
        alias = "instrumentation_library_spans",
        default,
        borrow
    )]
    scope_spans: Option<Vec<ScopeSpans<'a>>>,
}

#[derive(Deserialize)]
struct Resource<'a> {
    #[serde(default, borrow)]
    attributes: Option<Vec<KeyValue<'a>>>,
}

#[derive(Deserialize)]
struct ScopeSpans<'a> {
    #[serde(default, borrow)]
    spans: Option<Vec<WireSpan<'a>>>,
}

#[derive(Deserialize)]
struct WireSpan<'a> {
    #[serde(rename = "traceId", alias = "trace_id", default, borrow)]
    trace_id: Option<Cow<'a, str>>,
    #[serde(rename = "spanId", alias = "span_id", default, borrow)]
    span_id: Option<Cow<'a, str>>,
    #[serde(rename = "parentSpanId", alias = "parent_span_id", default, borrow)]
    parent_span_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(
        rename = "startTimeUnixNano",
        alias = "start_time_unix_nano",
        default,
        borrow
    )]
    start: Option<Scalar<'a>>,
    #[serde(
        rename = "endTimeUnixNano",
        alias = "end_time_unix_nano",
        default,
        borrow
    )]
    end: Option<Scalar<'a>>,
    #[serde(default, borrow)]
    attributes: Option<Vec<KeyValue<'a>>>,
    #[serde(default, borrow)]
    events: Option<Vec<WireEvent<'a>>>,
    #[serde(default, borrow)]
    status: Option<WireStatus<'a>>,
}

#[derive(Deserialize)]
struct WireEvent<'a> {
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    attributes: Option<Vec<KeyValue<'a>>>,
}

#[derive(Deserialize)]
struct WireStatus<'a> {
    #[serde(default, borrow)]
    code: Option<Scalar<'a>>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize)]
struct KeyValue<'a> {
    #[serde(borrow)]
    key: Cow<'a, str>,
    #[serde(default, borrow)]
    value: Option<AnyValue<'a>>,
}

/// OTLP's AnyValue: exactly one of its fields is set.
#[derive(Deserialize, Default)]
struct AnyValue<'a> {
    #[serde(rename = "stringValue", alias = "string_value", default, borrow)]
    string: Option<Cow<'a, str>>,
    #[serde(rename = "boolValue", alias = "bool_value", default, borrow)]
    boolean: Option<Scalar<'a>>,
    #[serde(rename = "intValue", alias = "int_value", default, borrow)]
    int: Option<Scalar<'a>>,
    #[serde(rename = "doubleValue", alias = "double_value", default, borrow)]
    double: Option<Scalar<'a>>,
    #[serde(rename = "arrayValue", alias = "array_value", default, borrow)]
    array: Option<ValueList<'a>>,
    #[serde(rename = "kvlistValue", alias = "kvlist_value", default, borrow)]
    kvlist: Option<KeyValueList<'a>>,
    #[serde(rename = "bytesValue", alias = "bytes_value", default, borrow)]
    bytes: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ValueList<'a> {
    #[serde(default, borrow)]
    values: Option<Vec<AnyValue<'a>>>,
}

#[derive(Deserialize)]
struct KeyValueList<'a> {
    #[serde(default, borrow)]
    values: Option<Vec<KeyValue<'a>>>,
}

/// A JSON scalar as a request writes numbers and flags: as themselves or
/// as text (int64s are text in OTLP/JSON). Anything else is kept as JSON.
enum Scalar<'a> {
    Text(Cow<'a, str>),
    Json(Value),
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor(std::marker::PhantomData))
    }
}

struct ScalarVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> serde::de::Visitor<'de> for ScalarVisitor<'a> {
    type Value = Scalar<'a>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Text(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Text(Cow::Owned(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Text(Cow::Owned(v)))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Json(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Json(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Json(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Json(Value::from(v)))
    }
    fn visit_unit<E>(self) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Json(Value::Null))
    }
    fn visit_none<E>(self) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Json(Value::Null))
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Scalar<'a>, D::Error> {
        Scalar::deserialize(d)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Scalar<'a>, A::Error> {
        Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq)).map(Scalar::Json)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Scalar<'a>, A::Error> {
        Value::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Scalar::Json)
    }
}

/// An attribute's value as the span model reads it.
enum AttrValue<'a> {
    Text(Cow<'a, str>),
    Json(Value),
}

impl AttrValue<'_> {
    fn into_json(self) -> Value {
        match self {
            AttrValue::Text(s) => Value::String(s.into_owned()),
            AttrValue::Json(v) => v,
        }
    }
}

impl<'a> AnyValue<'a> {
    /// The value: int64 text becomes a number, bytes stay base64 text, a
    /// key/value list becomes an object. One field is set; were there more,
    /// the first in this order counts.
    fn into_attr(self) -> AttrValue<'a> {
        if let Some(s) = self.string {
            return AttrValue::Text(s);
        }
        if let Some(b) = self.boolean {
            return bool_attr(b);
        }
        if let Some(n) = self.int.or(self.double) {
            return number_attr(n);
        }
        if let Some(list) = self.array {
            return array_attr(list);
        }
        if let Some(kv) = self.kvlist {
            return kvlist_attr(kv);
        }
        self.bytes
            .map_or(AttrValue::Json(Value::Null), AttrValue::Text)
    }

    fn into_json(self) -> Value {
        self.into_attr().into_json()
    }
}

fn bool_attr(b: Scalar<'_>) -> AttrValue<'_> {
    match b {
        Scalar::Text(s) => match span_events::bool_from_text(&s) {
            Some(b) => AttrValue::Json(Value::Bool(b)),
            None => AttrValue::Text(s),
        },
        Scalar::Json(other) => AttrValue::Json(other),
    }
}

fn number_attr(n: Scalar<'_>) -> AttrValue<'_> {
    match n {
        Scalar::Text(s) => match number_from_text(&s) {
            Some(n) => AttrValue::Json(n),
            None => AttrValue::Text(s),
        },
        Scalar::Json(other) => AttrValue::Json(other),
    }
}

fn array_attr(list: ValueList<'_>) -> AttrValue<'_> {
    AttrValue::Json(Value::Array(
        list.values
            .unwrap_or_default()
            .into_iter()
            .map(AnyValue::into_json)
            .collect(),
    ))
}

fn kvlist_attr(kv: KeyValueList<'_>) -> AttrValue<'_> {
    AttrValue::Json(Value::Object(attributes(kv.values).into_map()))
}

/// Attributes as a request lists them.
struct AttrList<'a> {
    items: Vec<Attr<'a>>,
}

type Attr<'a> = (Cow<'a, str>, AttrValue<'a>);

impl<'a> AttrList<'a> {
    fn new(items: Vec<Attr<'a>>) -> Self {
        AttrList { items }
    }

    fn into_map(self) -> Map<String, Value> {
        self.items
            .into_iter()
            .map(|(k, v)| (k.into_owned(), v.into_json()))
            .collect()
    }

    /// The text of the last attribute named `key`.
    fn text(&self, key: &str) -> Option<String> {
        let (_, v) = self.items.iter().rev().find(|(k, _)| k == key)?;
        attr_ref(v).as_str().map(str::to_string)
    }
}

fn attr_ref<'s>(v: &'s AttrValue<'_>) -> AttrRef<'s> {
    match v {
        AttrValue::Text(s) => AttrRef::Text(s),
        AttrValue::Json(v) => AttrRef::Json(v),
    }
}

impl AttrSource for AttrList<'_> {
    fn each<'s>(&'s self, f: &mut dyn FnMut(&str, AttrRef<'s>)) {
        for (k, v) in &self.items {
            f(k, attr_ref(v));
        }
    }
}

/// OTLP key/value attributes met outside a request (spans copied out of
/// one) as a plain map; None when `v` is no such list.
pub(super) fn key_values(v: Value) -> Option<Map<String, Value>> {
    Vec::<KeyValue<'static>>::deserialize(v)
        .ok()
        .map(|list| attributes(Some(list)).into_map())
}

fn attributes(list: Option<Vec<KeyValue<'_>>>) -> AttrList<'_> {
    AttrList::new(
        list.unwrap_or_default()
            .into_iter()
            .map(|kv| {
                let v = kv
                    .value
                    .map_or(AttrValue::Json(Value::Null), AnyValue::into_attr);
                (kv.key, v)
            })
            .collect(),
    )
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

fn nanos_of(v: Option<&Scalar<'_>>) -> Option<i128> {
    match v? {
        Scalar::Json(Value::Number(n)) => n
            .as_u64()
            .map(i128::from)
            .or_else(|| n.as_f64().map(|f| f as i128)),
        Scalar::Text(s) => spans::nanos_from_text(s),
        Scalar::Json(_) => None,
    }
}

fn status_code_of(v: Option<&Scalar<'_>>) -> StatusCode {
    match v {
        None | Some(Scalar::Json(Value::Null)) => StatusCode::Unset,
        Some(Scalar::Text(s)) => StatusCode::from_name(s),
        Some(Scalar::Json(Value::Number(n))) => n
            .as_f64()
            .map_or(StatusCode::Unknown, StatusCode::from_number),
        Some(Scalar::Json(_)) => StatusCode::Unknown,
    }
}

// ---- one span, as the shared span model reads it ----

/// The type and message of a span's first `exception` event.
type Exception = (Option<String>, Option<String>);

fn exception_of(events: Option<Vec<WireEvent<'_>>>) -> Option<Exception> {
    events
        .unwrap_or_default()
        .into_iter()
        .find(|e| e.name.as_deref() == Some("exception"))
        .map(|e| exception_in(&attributes(e.attributes)))
}

fn exception_in(attrs: &AttrList<'_>) -> Exception {
    (
        attrs.text("exception.type"),
        attrs.text("exception.message"),
    )
}

/// The span model's span. Its attributes and exception are read apart from
/// `span` (whose `attributes` and `events` are not read).
fn held_span(
    span: WireSpan<'_>,
    span_attrs: &AttrList<'_>,
    exception: Option<Exception>,
    resource: &AttrList<'_>,
    line: Option<u64>,
    settings: &DecodeSettings,
) -> HeldSpan {
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
        name: span.name.map(Cow::into_owned).unwrap_or_default(),
        unended: start.is_some_and(|s| s > 0) && end.is_some_and(|e| e == 0),
        start,
        end,
        status,
        status_message,
        exception,
        line,
    };
    let a = Attrs::new(span_attrs, resource);
    HeldSpan::new(parts, &a, settings)
}

// ---- reading: one request per line, or one request per file ----

/// Reads OTLP requests from `r` into `sink`, emitting each trace once it
/// is complete. Request lines decode in parallel, ahead of the traces
/// being emitted.
pub(crate) fn read(r: impl Read, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let limit = sink.settings.document_limit;
    let mut reader = ChunkReader::new(r).max_line(limit);
    let path = sink.path().to_string();
    let read_error = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::InvalidData => anyhow::anyhow!(
            "{path}: {e}, the most --max-document lets one OTLP request take; raise \
             --max-document"
        ),
        _ => anyhow::anyhow!("{path}: {}", crate::io::diag::io_reason(&e)),
    };
    // The first line shows whether requests are one per line or one
    // document across lines.
    let first = loop {
        let Some(mut chunk) = reader.next_chunk().map_err(read_error)? else {
            return Ok(());
        };
        match first_line_state(&mut chunk) {
            None => reader.recycle(chunk),
            Some(Some(doc)) => return read_pretty(reader, chunk, doc, sink, read_error),
            Some(None) => break chunk.into_scannable(),
        }
    };
    let settings = sink.settings.clone();
    let decoder = Decoder {
        lines_per_task: 1,
        scratch: LineScratch::default,
        decode: |scratch: &mut LineScratch, data: &[u8], lines: &[(u64, Range<usize>)]| {
            lines
                .iter()
                .map(|(number, range)| {
                    let decoded = if range.len() as u64 > limit {
                        RequestLine::TooLarge
                    } else {
                        request_line(data, range.clone(), *number, &settings, scratch)
                    };
                    (*number, decoded)
                })
                .collect::<Vec<_>>()
        },
    };
    let mut emitter = WindowFeed {
        window: TraceWindow::new(sink.settings.trace_window),
        sink,
        path: &path,
        limit,
        read_error: &read_error,
    };
    decode_ahead(&mut reader, Some(first), &decoder, &mut emitter)?;
    emitter.window.finish(emitter.sink)
}

/// Reads the request at `range` of a chunk's `data` (made ready to be
/// scanned in place): with the scanner, or with serde when the scanner
/// declines it.
fn request_line(
    data: &[u8],
    range: Range<usize>,
    number: u64,
    settings: &DecodeSettings,
    scratch: &mut LineScratch,
) -> RequestLine {
    let bytes = &data[range.clone()];
    // Exporters batch tens to hundreds of spans a request.
    let mut spans = Vec::with_capacity(64);
    if let Ok(line) = simdutf8::basic::from_utf8(bytes)
        && scan::hold_line(
            line,
            &data[range.start..],
            scratch,
            number,
            settings,
            &mut spans,
        )
        .is_ok()
    {
        return RequestLine::Spans(spans);
    }
    match decode_request(bytes) {
        Ok(req) => {
            hold(req, Some(number), settings, &mut spans);
            RequestLine::Spans(spans)
        }
        Err(reason) => RequestLine::Skip(reason),
    }
}

/// What one request line became.
enum RequestLine {
    Spans(Vec<HeldSpan>),
    Skip(String),
    TooLarge,
}

/// Feeds decoded request lines' spans to the trace window, in input order.
struct WindowFeed<'f, 's, E> {
    window: TraceWindow,
    sink: &'f mut Sink<'s>,
    path: &'f str,
    limit: u64,
    read_error: &'f E,
}

impl<E: Fn(std::io::Error) -> anyhow::Error> Consumer<Vec<(u64, RequestLine)>>
    for WindowFeed<'_, '_, E>
{
    type Error = anyhow::Error;

    fn repaired(&mut self, repaired: crate::io::surrogates::Repaired) {
        self.sink.repaired(repaired);
    }

    fn hand_over(&mut self, tasks: Vec<Vec<(u64, RequestLine)>>) -> anyhow::Result<()> {
        for (number, line) in tasks.into_iter().flatten() {
            match line {
                RequestLine::Spans(spans) => {
                    for span in spans {
                        self.window.push(span, self.sink)?;
                    }
                }
                RequestLine::Skip(reason) => self.sink.skip(Some(number), &reason)?,
                RequestLine::TooLarge => {
                    return Err(super::too_large(
                        &format!("{}:{number}", self.path),
                        self.limit,
                    ));
                }
            }
        }
        Ok(())
    }

    fn caught_up(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    fn read_error(&self, e: std::io::Error) -> anyhow::Error {
        (self.read_error)(e)
    }
}

/// Reads a file whose first request runs over more lines than one: the
/// whole file, as requests one after another.
fn read_pretty<R: Read>(
    mut reader: ChunkReader<R>,
    first: crate::io::ndjson::Chunk,
    mut doc: Vec<u8>,
    sink: &mut Sink<'_>,
    read_error: impl Fn(std::io::Error) -> anyhow::Error,
) -> anyhow::Result<()> {
    let limit = sink.settings.document_limit;
    let path = sink.path().to_string();
    let mut chunk = Some(first);
    while let Some(c) = chunk {
        sink.repaired(c.repaired);
        if (doc.len() + c.data.len()) as u64 > limit {
            return Err(super::too_large(&path, limit));
        }
        doc.extend_from_slice(&c.data);
        reader.recycle(c);
        chunk = reader.next_chunk().map_err(&read_error)?;
    }
    let mut window = TraceWindow::new(sink.settings.trace_window);
    let mut held = Vec::new();
    read_document(&doc, sink, &mut held)?;
    for span in held {
        window.push(span, sink)?;
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

fn decode_request(bytes: &[u8]) -> Result<ExportRequest<'_>, String> {
    if simdutf8::basic::from_utf8(bytes).is_err() {
        return Err("not valid UTF-8".to_string());
    }
    checked(serde_json::from_slice::<ExportRequest>(bytes))
}

/// A decoded request, or why it is none: not JSON, or JSON of another shape.
fn checked<'a>(
    decoded: serde_json::Result<ExportRequest<'a>>,
) -> Result<ExportRequest<'a>, String> {
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
    let req = checked(ExportRequest::deserialize(value))?;
    hold(req, line, settings, held);
    Ok(())
}

fn hold(
    req: ExportRequest<'_>,
    line: Option<u64>,
    settings: &DecodeSettings,
    held: &mut Vec<HeldSpan>,
) {
    for rs in req.resource_spans.unwrap_or_default() {
        let resource = attributes(rs.resource.and_then(|r| r.attributes));
        for scope in rs.scope_spans.unwrap_or_default() {
            for span in scope.spans.unwrap_or_default() {
                let mut span = span;
                let span_attrs = attributes(span.attributes.take());
                let exception = exception_of(span.events.take());
                held.push(held_span(
                    span,
                    &span_attrs,
                    exception,
                    &resource,
                    line,
                    settings,
                ));
            }
        }
    }
}

mod scan;

#[cfg(test)]
mod tests;
