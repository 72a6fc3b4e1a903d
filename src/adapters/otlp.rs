//! The `otlp` format: OTLP/HTTP JSON trace requests (resourceSpans →
//! scopeSpans → spans), one per file or one per line as the Collector's file
//! exporter writes them. Spans are held until the end of the input, then
//! each trace is emitted in pre-order of its span tree.

use std::collections::{HashMap, HashSet};
use std::io::Read;

use rayon::prelude::*;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::spans::{self, StatusCode};
use super::{DecodeSettings, Sink};
use crate::ndjson::ChunkReader;
use crate::record::{ActionOut, ErrorInfo, EventOut, JsonVal, Src};

/// Attribute names, most specific first: the reference receiver's, then the
/// OpenTelemetry GenAI conventions', then OpenInference's.
mod keys {
    pub const AGENT: &[&str] = &[
        "agent.id",
        "agent_id",
        "gen_ai.agent.name",
        "gen_ai.agent.id",
        "agent.name",
    ];
    pub const RUN: &[&str] = &["run.id", "run_id"];
    pub const CONVERSATION: &[&str] = &["gen_ai.conversation.id", "session.id"];
    pub const TOOL: &[&str] = &["action.tool", "tool_name", "gen_ai.tool.name", "tool.name"];
    pub const CLASSIFICATION: &[&str] = &["failure.classification", "failure_classification"];
    pub const DIVERGENCE: &[&str] = &["divergence.fields", "divergence_fields"];
    pub const INPUT: &[&str] = &[
        "input.value",
        "gen_ai.tool.call.arguments",
        "gen_ai.input.messages",
        "gen_ai.prompt",
    ];
    pub const OUTPUT: &[&str] = &[
        "output.value",
        "gen_ai.tool.call.result",
        "gen_ai.output.messages",
        "gen_ai.completion",
    ];
}

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
                Value::String(s) => bool_from_text(&s).map_or(Value::String(s), Value::Bool),
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

fn attributes(list: Option<Vec<KeyValue>>) -> Map<String, Value> {
    list.unwrap_or_default()
        .into_iter()
        .map(|kv| (kv.key, kv.value.map_or(Value::Null, AnyValue::into_json)))
        .collect()
}

fn bool_from_text(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
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

// ---- attribute lookup: span attributes win over resource attributes ----

/// A span's attributes over its resource's.
struct Attrs<'a> {
    span: &'a Map<String, Value>,
    resource: &'a Map<String, Value>,
}

impl<'a> Attrs<'a> {
    fn get(&self, key: &str) -> Option<&'a Value> {
        let present = |v: &&Value| !v.is_null();
        self.span
            .get(key)
            .filter(present)
            .or_else(|| self.resource.get(key).filter(present))
    }

    /// The first of `keys` whose value is non-empty text (numbers and
    /// booleans as text).
    fn text(&self, keys: &[&str]) -> Option<String> {
        keys.iter().find_map(|k| match self.get(k)? {
            Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        })
    }

    /// Any value of `keys` as text: strings as they are, other values as
    /// compact JSON.
    fn any_text(&self, keys: &[&str]) -> Option<String> {
        keys.iter().find_map(|k| match self.get(k)? {
            Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        })
    }

    /// A boolean written as a bool, "true"/"false" or 0/1.
    fn flag(&self, key: &str) -> Option<bool> {
        match self.get(key)? {
            Value::Bool(b) => Some(*b),
            Value::String(s) => bool_from_text(s),
            Value::Number(n) => match n.as_f64() {
                Some(0.0) => Some(false),
                Some(1.0) => Some(true),
                _ => None,
            },
            _ => None,
        }
    }

    /// An integer written as a number (without fraction) or as digits.
    fn int(&self, key: &str) -> Option<i64> {
        match self.get(key)? {
            Value::Number(n) => n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9e18)
                    .map(|f| f as i64)
            }),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// Divergence fields: a list, or comma-separated text.
    fn divergence(&self) -> Vec<String> {
        let Some(v) = keys::DIVERGENCE.iter().find_map(|k| self.get(k)) else {
            return Vec::new();
        };
        match v {
            Value::String(s) => spans::split_divergence(s).map(str::to_string).collect(),
            Value::Array(items) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        }
    }
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

// ---- one span, decoded and held until its trace is emitted ----

/// What an event needs of a span, taken out of the request so the request
/// itself is not held. Texts are already cut to the configured size.
#[derive(Debug)]
struct HeldSpan {
    trace_id: String,
    span_id: String,
    parent_id: Option<String>,
    start: Option<i128>,
    end: Option<i128>,
    name: String,
    agent: Option<String>,
    service: Option<String>,
    run: Option<String>,
    conversation: Option<String>,
    turn: Option<i64>,
    tool: Option<String>,
    operation: Option<String>,
    kind: &'static str,
    /// `action.succeeded` as the span states it.
    stated_success: Option<bool>,
    classification: Option<String>,
    divergence: Vec<String>,
    /// Why the span failed (status, error, exception) and the error.
    failure: Option<(&'static str, ErrorInfo)>,
    input: Option<(String, String)>,
    output: Option<(String, String)>,
    llm_ms: Option<i64>,
    tool_ms: Option<i64>,
    line: Option<u64>,
}

impl HeldSpan {
    fn from_wire(
        span: WireSpan,
        resource: &Map<String, Value>,
        line: Option<u64>,
        settings: &DecodeSettings,
    ) -> Self {
        let span_attrs = attributes(span.attributes);
        let a = Attrs {
            span: &span_attrs,
            resource,
        };
        let operation = a.text(&["gen_ai.operation.name"]);
        let tool = a.text(keys::TOOL);
        let kind = a
            .text(&["openinference.span.kind"])
            .and_then(|k| spans::kind_from_openinference(&k))
            .or_else(|| operation.as_deref().and_then(spans::kind_from_operation))
            .unwrap_or(if tool.is_some() { "tool" } else { "other" });
        let cut = |t: String| settings.text(&t);
        // An agent span that does not name its agent is named after it
        // ("invoke_agent planner" is the planner).
        let agent = a.text(keys::AGENT).or_else(|| {
            let name = span.name.as_deref().filter(|_| kind == "agent")?;
            spans::agent_from_span_name(name).map(str::to_string)
        });
        HeldSpan {
            trace_id: span.trace_id.unwrap_or_default(),
            span_id: span.span_id.unwrap_or_default(),
            parent_id: span.parent_span_id.filter(|p| !p.is_empty()),
            start: nanos_of(span.start.as_ref()).filter(|n| *n > 0),
            end: nanos_of(span.end.as_ref()).filter(|n| *n > 0),
            name: span.name.unwrap_or_default(),
            agent,
            service: a.text(&["service.name"]),
            run: a.text(keys::RUN),
            conversation: a.text(keys::CONVERSATION),
            turn: a.int("turn"),
            tool,
            operation,
            kind,
            stated_success: a.flag("action.succeeded"),
            classification: a.text(keys::CLASSIFICATION).filter(|c| c != "null"),
            divergence: a.divergence(),
            failure: failure_of(span.status, &a, span.events),
            input: a.any_text(keys::INPUT).map(cut),
            output: a.any_text(keys::OUTPUT).map(cut),
            llm_ms: a.int("latency.llm_ms"),
            tool_ms: a.int("latency.tool_ms"),
            line,
        }
    }
}

/// Why a span failed, strongest evidence first: an ERROR status, an
/// `error.type` attribute, an `exception` event. The error takes its type and
/// message from whichever gives them.
fn failure_of(
    status: Option<WireStatus>,
    a: &Attrs<'_>,
    events: Option<Vec<WireEvent>>,
) -> Option<(&'static str, ErrorInfo)> {
    let (code, status_message) = status.map_or((StatusCode::Unset, None), |s| {
        (status_code_of(s.code.as_ref()), s.message)
    });
    let error_type = a.text(&["error.type"]);
    let exception = events
        .unwrap_or_default()
        .into_iter()
        .find(|e| e.name.as_deref() == Some("exception"))
        .map(|e| attributes(e.attributes));
    let exception_text = |k: &str| {
        exception
            .as_ref()
            .and_then(|x| x.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let source = if code == StatusCode::Error {
        "status"
    } else if error_type.is_some() {
        "error"
    } else if exception.is_some() {
        "exception"
    } else {
        return None;
    };
    let error = ErrorInfo {
        kind: error_type.or_else(|| exception_text("exception.type")),
        message: status_message
            .filter(|m| !m.is_empty())
            .or_else(|| exception_text("exception.message")),
    };
    Some((source, error))
}

// ---- reading: one request per line, or one request per file ----

/// Reads OTLP requests from `r` into `sink`; emits every trace at the end.
pub fn read(r: impl Read, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let mut held = Vec::new();
    let mut reader = ChunkReader::new(r);
    let path = sink.path().to_string();
    let next = |reader: &mut ChunkReader<_>| {
        reader
            .next_chunk()
            .map_err(|e| anyhow::anyhow!("{path}: {}", crate::cli::io_reason(&e)))
    };
    // None until the first line shows whether requests are one per line or
    // one document across lines.
    let mut document: Option<Option<Vec<u8>>> = None;
    while let Some(mut chunk) = next(&mut reader)? {
        if document.is_none() {
            document = first_line_state(&mut chunk);
        }
        if let Some(Some(doc)) = document.as_mut() {
            doc.extend_from_slice(&chunk.data);
            continue;
        }
        // Requests decode in parallel; their spans are held in input order.
        let lines: Vec<_> = chunk.lines().collect();
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
                Ok(spans) => held.extend(spans),
                Err(reason) => sink.skip(Some(line.number), &reason)?,
            }
        }
    }
    if let Some(Some(doc)) = document {
        read_document(&doc, sink, &mut held)?;
    }
    emit_traces(held, sink)
}

/// After the chunk holding the first non-blank line: `Some(None)` for one
/// request per line, `Some(Some(buffer))` when the first request runs over
/// more lines (a pretty-printed file). `None` while only blank lines came.
fn first_line_state(chunk: &mut crate::ndjson::Chunk) -> Option<Option<Vec<u8>>> {
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

fn decode_request(bytes: &[u8]) -> Result<ExportRequest, String> {
    if std::str::from_utf8(bytes).is_err() {
        return Err("not valid UTF-8".to_string());
    }
    checked(serde_json::from_slice::<ExportRequest>(bytes))
}

/// A decoded request, or why it is none: not JSON, or JSON of another shape.
fn checked(decoded: serde_json::Result<ExportRequest>) -> Result<ExportRequest, String> {
    let req = decoded.map_err(|e| {
        let why = super::without_position(&e);
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
                held.push(HeldSpan::from_wire(span, &resource, line, settings));
            }
        }
    }
}

// ---- emitting: traces in first-appearance order, spans in tree pre-order ----

/// What a span takes from its ancestors.
#[derive(Clone, Default)]
struct Inherited {
    agent: Option<String>,
    run: Option<String>,
}

impl spans::TreeNode for HeldSpan {
    fn node_id(&self) -> &str {
        &self.span_id
    }
    fn parent_id(&self) -> Option<&str> {
        self.parent_id.as_deref()
    }
    fn start_nanos(&self) -> Option<i128> {
        self.start
    }
}

fn emit_traces(held: Vec<HeldSpan>, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let mut used_ids = HashSet::new();
    for members in spans::group_in_order(held.iter().map(|s| s.trace_id.as_str())) {
        for (i, inherited) in preorder(&held, &members) {
            let ev = event_of(&held[i], i, &inherited, sink, &mut used_ids);
            sink.emit(&ev)?;
        }
    }
    Ok(())
}

/// The spans of one trace (indices into `held`) in pre-order of the span
/// tree, each with what it inherits from its ancestors.
fn preorder(held: &[HeldSpan], members: &[usize]) -> Vec<(usize, Inherited)> {
    let mut resolved: HashMap<usize, Inherited> = HashMap::new();
    let mut out = Vec::with_capacity(members.len());
    for (i, parent) in spans::preorder(held, members) {
        let inherited = parent
            .and_then(|p| resolved.get(&p))
            .cloned()
            .unwrap_or_default();
        let span = &held[i];
        let mine = Inherited {
            agent: span.agent.clone().or(inherited.agent),
            run: span
                .run
                .clone()
                .or_else(|| span.conversation.clone())
                .or(inherited.run),
        };
        resolved.insert(i, mine.clone());
        out.push((i, mine));
    }
    out
}

/// The event of one span. `resolved` holds the span's own or inherited agent
/// and run.
fn event_of<'a>(
    span: &'a HeldSpan,
    index: usize,
    resolved: &Inherited,
    sink: &Sink<'_>,
    used_ids: &mut HashSet<String>,
) -> EventOut<'a> {
    let run_id = resolved
        .run
        .clone()
        .unwrap_or_else(|| span.trace_id.clone());
    let agent_id = resolved
        .agent
        .clone()
        .or_else(|| span.service.clone())
        .unwrap_or_else(|| "unknown".to_string());
    let turn = span.turn.unwrap_or_else(|| sink.next_step(&run_id) as i64);
    let tool_name = span
        .tool
        .as_deref()
        .or(span.operation.as_deref().filter(|_| span.kind != "tool"))
        .unwrap_or(&span.name);
    let (succeeded, failure_source) = outcome(span);
    let mut ev = EventOut::new(
        event_id(span, index, used_ids),
        run_id,
        turn,
        agent_id,
        tool_name,
        succeeded,
    );
    ev.action_taken = ActionOut {
        tool_name: tool_name.into(),
        tool_input: span
            .input
            .as_ref()
            .filter(|_| span.kind == "tool")
            .and_then(|(text, _)| serde_json::from_str::<Value>(text).ok())
            .filter(Value::is_object)
            .map(JsonVal::Serde),
    };
    ev.timestamp = span.start.and_then(spans::timestamp_from_nanos);
    ev.failure_classification = span.classification.as_deref().map(Into::into);
    ev.failure_source = failure_source;
    ev.divergence_fields = span.divergence.iter().map(|d| d.as_str().into()).collect();
    ev.latency_ms = latency(span).map(JsonVal::Serde);
    ev.span_id = (!span.span_id.is_empty()).then(|| span.span_id.as_str().into());
    ev.parent_span_id = span.parent_id.as_deref().map(Into::into);
    ev.span_kind = Some(span.kind);
    ev.error = span
        .failure
        .as_ref()
        .map(|(_, e)| e.clone())
        .filter(|_| !succeeded);
    if let Some((text, digest)) = &span.input {
        ev.input = Some(text.clone());
        ev.input_digest = Some(digest.clone());
    }
    if let Some((text, digest)) = &span.output {
        ev.output = Some(text.clone());
        ev.output_digest = Some(digest.clone());
    }
    ev.src = span.line.map(|line| Src {
        path: sink.path().to_string().into(),
        line,
    });
    sink.settings.infer_failure(&mut ev);
    ev
}

/// Success as the span states it (`action.succeeded`), else from its
/// status, error type and exceptions; and why it counts as a failure, a
/// label first. A labeled span keeps its stated success, as in the
/// reference: the label alone makes it a failure.
fn outcome(span: &HeldSpan) -> (bool, Option<&'static str>) {
    let marked = span.failure.as_ref().map(|(source, _)| *source);
    let succeeded = span.stated_success.unwrap_or(marked.is_none());
    let source = if span.classification.is_some() {
        Some("label")
    } else if succeeded {
        None
    } else if span.stated_success == Some(false) {
        Some("status")
    } else {
        marked
    };
    (succeeded, source)
}

/// The span id, unless an earlier span of the input had it (then trace and
/// span id); a span without one is named by its trace and position.
fn event_id(span: &HeldSpan, index: usize, used: &mut HashSet<String>) -> String {
    let id = if span.span_id.is_empty() {
        format!("{}:#{index}", span.trace_id)
    } else if used.contains(&span.span_id) {
        format!("{}:{}", span.trace_id, span.span_id)
    } else {
        span.span_id.clone()
    };
    if used.contains(&id) {
        let unique = format!("{id}#{index}");
        used.insert(unique.clone());
        return unique;
    }
    used.insert(id.clone());
    id
}

fn latency(span: &HeldSpan) -> Option<Value> {
    let total = match (span.start, span.end) {
        (Some(s), Some(e)) if e >= s => Some(((e - s) / 1_000_000) as i64),
        _ => None,
    };
    if total.is_none() && span.llm_ms.is_none() && span.tool_ms.is_none() {
        return None;
    }
    let mut m = Map::new();
    for (k, v) in [
        ("llm", span.llm_ms),
        ("tool", span.tool_ms),
        ("total", total),
    ] {
        if let Some(v) = v {
            m.insert(k.to_string(), Value::from(v));
        }
    }
    Some(Value::Object(m))
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
        let input = format!(
            "{good}\r\nnot json\n{{\"foo\":1}}\n[1]\n\u{fffd}\n{{\"resourceSpans\":[{{\"scopeSpans\":[{{\"spans\":[{{\"name\":7}}]}}]}}]}}\n{good}"
        );
        let mut bytes = input.into_bytes();
        let bad = bytes.iter().position(|b| *b == 0xEF).unwrap();
        bytes[bad] = 0xFF; // invalid UTF-8 on its own line
        let mut recs = super::super::records_of(super::super::Format::Otlp, "t.jsonl", &bytes);
        let source = recs.pop().unwrap();
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
