//! The meaning of a span, whichever file it came from (OTLP requests, SDK
//! span dumps, Phoenix spans, attribute maps): its attributes read into
//! agent, tool, run and outcome, and the events of its trace in tree order.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::observations::fail_inferred;
use super::spans::{self, StatusCode};
use super::{DecodeSettings, Sink};
use crate::record::{ActionOut, ErrorInfo, EventOut, JsonVal, RunRec, Src};

/// Attribute names, most specific first: the reference receiver's, then the
/// OpenTelemetry GenAI conventions', OpenInference's, OpenLLMetry's and the
/// Vercel AI SDK's.
mod keys {
    pub const AGENT: &[&str] = &[
        "agent.id",
        "agent_id",
        "gen_ai.agent.name",
        "gen_ai.agent.id",
        "agent.name",
    ];
    /// Names that stand for the agent when nothing better does.
    pub const AGENT_FALLBACK: &[&str] = &[
        "graph.node.id",
        "langgraph_node",
        "langgraph.node",
        "metadata.langgraph_node",
        "ai.telemetry.functionId",
    ];
    pub const RUN: &[&str] = &["run.id", "run_id"];
    pub const CONVERSATION: &[&str] = &["gen_ai.conversation.id", "session.id"];
    pub const TOOL: &[&str] = &[
        "action.tool",
        "tool_name",
        "gen_ai.tool.name",
        "tool.name",
        "ai.toolCall.name",
    ];
    pub const CLASSIFICATION: &[&str] = &["failure.classification", "failure_classification"];
    pub const DIVERGENCE: &[&str] = &["divergence.fields", "divergence_fields"];
    pub const INPUT: &[&str] = &[
        "input.value",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.args",
        "ai.toolCall.args",
        "traceloop.entity.input",
        "gen_ai.input.messages",
        "gen_ai.prompt",
        "gen_ai.prompt.0.content",
        "ai.prompt.messages",
        "ai.prompt",
        "input",
    ];
    pub const OUTPUT: &[&str] = &[
        "output.value",
        "gen_ai.tool.call.result",
        "ai.toolCall.result",
        "traceloop.entity.output",
        "gen_ai.output.messages",
        "gen_ai.output",
        "gen_ai.completion",
        "gen_ai.completion.0.content",
        "ai.response.text",
        "ai.response.object",
        "output",
    ];
}

// ---- attribute lookup: span attributes win over resource attributes ----

/// A span's attributes over its resource's, both flat (dotted keys).
pub struct Attrs<'a> {
    pub span: &'a Map<String, Value>,
    pub resource: &'a Map<String, Value>,
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

    /// Any value of `keys` as text: strings unwrapped from JSON encoding,
    /// other values as compact JSON.
    fn any_text(&self, keys: &[&str]) -> Option<String> {
        keys.iter().find_map(|k| match self.get(k)? {
            Value::String(s) => Some(unwrap_json_string(s)),
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

    /// A non-empty object.
    fn object(&self, key: &str) -> Option<Value> {
        self.get(key)
            .filter(|v| v.as_object().is_some_and(|o| !o.is_empty()))
            .cloned()
    }

    /// A key inside an attribute that holds a JSON object as text (as
    /// OpenInference's `metadata` holds `langgraph_node`).
    fn inside_json(&self, attr: &str, key: &str) -> Option<String> {
        let Value::String(text) = self.get(attr)? else {
            return None;
        };
        match json_in_text(text)? {
            Value::Object(o) => match o.get(key)? {
                Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
                _ => None,
            },
            _ => None,
        }
    }
}

pub fn bool_from_text(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// The JSON a text holds, decoding it again while it is a JSON string
/// (exporters encode some attributes twice). None when it is no JSON
/// object or list.
pub fn json_in_text(text: &str) -> Option<Value> {
    let mut value: Value = serde_json::from_str(text.trim()).ok()?;
    for _ in 0..3 {
        match value {
            Value::String(inner) => value = serde_json::from_str(inner.trim()).ok()?,
            Value::Object(_) | Value::Array(_) => return Some(value),
            _ => return None,
        }
    }
    None
}

/// A text that is a JSON string (once or more) read as the text it holds;
/// any other text as it is.
fn unwrap_json_string(text: &str) -> String {
    let mut text = text.to_string();
    for _ in 0..3 {
        match serde_json::from_str::<Value>(text.trim()) {
            Ok(Value::String(inner)) => text = inner,
            _ => break,
        }
    }
    text
}

// ---- one span, decoded and held until its trace is emitted ----

/// What a reader knows of a span outside its attributes.
#[derive(Debug, Default)]
pub struct SpanParts {
    pub trace_id: String,
    pub span_id: String,
    pub parent_id: Option<String>,
    pub name: String,
    pub start: Option<i128>,
    pub end: Option<i128>,
    /// The file shows the span started and never ended.
    pub unended: bool,
    pub status: StatusCode,
    pub status_message: Option<String>,
    /// The first `exception` event's type and message.
    pub exception: Option<(Option<String>, Option<String>)>,
    pub line: Option<u64>,
}

/// What an event needs of a span. Texts are already cut to the configured
/// size.
#[derive(Debug)]
pub struct HeldSpan {
    trace_id: String,
    span_id: String,
    parent_id: Option<String>,
    start: Option<i128>,
    end: Option<i128>,
    name: String,
    agent: Option<String>,
    /// A name for the agent when neither the span nor an ancestor names one.
    agent_fallback: Option<String>,
    service: Option<String>,
    run: Option<String>,
    conversation: Option<String>,
    turn: Option<i64>,
    tool: Option<String>,
    operation: Option<String>,
    kind: &'static str,
    status: StatusCode,
    /// `action.succeeded` as the span states it.
    stated_success: Option<bool>,
    classification: Option<String>,
    divergence: Vec<String>,
    /// Why the span failed (status, error, exception) and the error.
    failure: Option<(&'static str, ErrorInfo)>,
    /// A tool call whose span never ended: it never got its result.
    unanswered: bool,
    input: Option<(String, String)>,
    output: Option<(String, String)>,
    /// `tool_input` and `divergence_age` as the reference's spans give them.
    tool_input: Option<Value>,
    divergence_age: Option<Value>,
    llm_ms: Option<i64>,
    tool_ms: Option<i64>,
    line: Option<u64>,
    /// The file shows the span started and never ended.
    open: bool,
    /// Its position among the input's spans (repeats left out), which
    /// names a span without an id.
    seq: usize,
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

/// The event `span_kind` an OpenLLMetry `traceloop.span.kind` stands for.
fn kind_from_traceloop(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "agent" => "agent",
        "tool" => "tool",
        "workflow" | "task" => "other",
        _ => return None,
    })
}

/// The event `span_kind` a Vercel AI SDK `ai.operationId` stands for.
fn kind_from_vercel(op: &str) -> Option<&'static str> {
    Some(match op {
        "ai.toolCall" => "tool",
        o if o.ends_with(".doGenerate") || o.ends_with(".doStream") => "llm",
        o if o.starts_with("ai.embed") => "retrieval",
        o if o.starts_with("ai.") => "other",
        _ => return None,
    })
}

impl HeldSpan {
    pub fn new(parts: SpanParts, a: &Attrs<'_>, settings: &DecodeSettings) -> Self {
        let operation = a.text(&["gen_ai.operation.name"]);
        let traceloop = a.text(&["traceloop.span.kind"]);
        let entity = a.text(&["traceloop.entity.name"]);
        let named_tool = a.text(keys::TOOL);
        let kind = a
            .text(&["openinference.span.kind"])
            .and_then(|k| spans::kind_from_openinference(&k))
            .or_else(|| operation.as_deref().and_then(spans::kind_from_operation))
            .or_else(|| traceloop.as_deref().and_then(kind_from_traceloop))
            .or_else(|| {
                a.text(&["ai.operationId"])
                    .and_then(|op| kind_from_vercel(&op))
            })
            .or_else(|| a.text(&["llm.request.type"]).map(|_| "llm"))
            .unwrap_or(if named_tool.is_some() {
                "tool"
            } else {
                "other"
            });
        let failure = failure_of(&parts, a);
        let name = parts.name;
        let tool = named_tool.or_else(|| {
            if kind != "tool" {
                return None;
            }
            entity
                .clone()
                .or_else(|| Some(spans::tool_from_span_name(&name).to_string()))
        });
        // An agent span that does not name its agent is named after it
        // ("invoke_agent planner" is the planner).
        let agent = a.text(keys::AGENT).or_else(|| {
            if kind != "agent" {
                return None;
            }
            entity
                .clone()
                .or_else(|| spans::agent_from_span_name(&name).map(str::to_string))
        });
        let agent_fallback = a
            .text(keys::AGENT_FALLBACK)
            .or_else(|| a.inside_json("metadata", "langgraph_node"));
        let cut = |t: String| settings.text(&t);
        HeldSpan {
            trace_id: parts.trace_id,
            span_id: parts.span_id,
            parent_id: parts.parent_id.filter(|p| !p.is_empty()),
            start: parts.start.filter(|n| *n > 0),
            end: parts.end.filter(|n| *n > 0),
            unanswered: kind == "tool" && parts.unended,
            name,
            agent,
            agent_fallback,
            service: a
                .text(&["service.name"])
                .filter(|s| spans::named_service(s).is_some()),
            run: a.text(keys::RUN),
            conversation: a.text(keys::CONVERSATION),
            turn: a.int("turn"),
            tool,
            operation,
            kind,
            status: parts.status,
            stated_success: a.flag("action.succeeded"),
            classification: a.text(keys::CLASSIFICATION).filter(|c| c != "null"),
            divergence: a.divergence(),
            failure,
            input: a.any_text(keys::INPUT).map(cut),
            output: a.any_text(keys::OUTPUT).map(cut),
            tool_input: a.object("tool_input"),
            divergence_age: a.object("divergence_age"),
            llm_ms: a.int("latency.llm_ms"),
            tool_ms: a.int("latency.tool_ms"),
            line: parts.line,
            open: parts.unended,
            seq: 0,
        }
    }

    pub(super) fn trace_id(&self) -> &str {
        &self.trace_id
    }

    pub(super) fn span_id(&self) -> &str {
        &self.span_id
    }

    /// A span without a parent that has ended: the root of a finished trace.
    pub(super) fn is_ended_root(&self) -> bool {
        self.parent_id.is_none() && !self.open
    }

    /// The latest time the span states, in Unix nanoseconds.
    pub(super) fn latest_nanos(&self) -> Option<i128> {
        self.end.or(self.start)
    }

    pub(super) fn set_seq(&mut self, seq: usize) {
        self.seq = seq;
    }
}

/// Why a span failed, strongest evidence first: an ERROR status, an
/// `error.type` attribute, an `exception` event. The error takes its type and
/// message from whichever gives them.
fn failure_of(parts: &SpanParts, a: &Attrs<'_>) -> Option<(&'static str, ErrorInfo)> {
    let error_type = a.text(&["error.type"]);
    let (exception_type, exception_message) = parts.exception.clone().unwrap_or_default();
    // An unrecognised status code stays a failure, as in the reference.
    let source = if matches!(parts.status, StatusCode::Error | StatusCode::Unknown) {
        "status"
    } else if error_type.is_some() {
        "error"
    } else if parts.exception.is_some() {
        "exception"
    } else {
        return None;
    };
    let error = ErrorInfo {
        kind: error_type.or(exception_type),
        message: parts
            .status_message
            .clone()
            .filter(|m| !m.is_empty())
            .or(exception_message),
    };
    Some((source, error))
}

// ---- emitting: traces in first-appearance order, spans in tree pre-order ----

/// What a span takes from its ancestors.
#[derive(Clone, Default)]
pub(super) struct Inherited {
    agent: Option<String>,
    agent_fallback: Option<String>,
    run: Option<String>,
}

/// Ids already given to events, as hashes: the last million or two, so
/// that memory stays bounded on an endless stream of spans.
#[derive(Default)]
struct RecentIds {
    current: HashSet<u64>,
    older: HashSet<u64>,
}

impl RecentIds {
    const GENERATION: usize = 1 << 20;

    fn contains(&self, id: &str) -> bool {
        let h = id_hash(id);
        self.current.contains(&h) || self.older.contains(&h)
    }

    fn insert(&mut self, id: &str) {
        if self.current.len() >= Self::GENERATION {
            self.older = std::mem::take(&mut self.current);
        }
        self.current.insert(id_hash(id));
    }
}

/// A hash of an id, the same in every run.
pub(super) fn id_hash(id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// Turns complete traces into events: what the traces of one input share
/// (the event ids given, the runs seen).
#[derive(Default)]
pub(super) struct Emitter {
    used_ids: RecentIds,
    runs: Runs,
}

impl Emitter {
    /// Emits one trace's spans (in arrival order); `continues` is what a
    /// trace emitted before hands on to spans of it that came late.
    /// Returns what its root hands on.
    pub(super) fn emit_trace(
        &mut self,
        held: Vec<HeldSpan>,
        continues: Option<Inherited>,
        sink: &mut Sink<'_>,
    ) -> anyhow::Result<Option<Inherited>> {
        let members: Vec<usize> = (0..held.len()).collect();
        let order = spans::preorder(&held, &members);
        let mut resolved: HashMap<usize, Inherited> = HashMap::new();
        let mut events = Vec::with_capacity(order.len());
        // Spans whose parent is not in the trace hang under its root.
        let mut root: Option<Inherited> = continues;
        let mut own_root = None;
        for &(i, parent) in &order {
            let span = &held[i];
            let from_parent = match parent {
                Some(p) => resolved.get(&p).cloned(),
                None if span.parent_id.is_some() => root.clone(),
                None => None,
            }
            .unwrap_or_default();
            let mine = Inherited {
                agent: span.agent.clone().or(from_parent.agent),
                agent_fallback: span.agent_fallback.clone().or(from_parent.agent_fallback),
                run: span
                    .run
                    .clone()
                    .or_else(|| span.conversation.clone())
                    .or(from_parent.run),
            };
            events.push(event_of(span, span.seq, &mine, sink, &mut self.used_ids));
            if root.is_none() && span.parent_id.is_none() {
                root = Some(mine.clone());
            }
            if own_root.is_none() && span.parent_id.is_none() {
                own_root = Some(mine.clone());
            }
            resolved.insert(i, mine);
        }
        blame_last_child(&held, &order, &mut events);
        for (ev, (i, _)) in events.iter_mut().zip(&order) {
            // Without a stated turn, a span's turn is its step in the run.
            if held[*i].turn.is_none() {
                ev.turn = sink.next_step(&ev.run_id) as i64;
            }
            self.runs.add(&held[*i], ev);
            sink.emit(ev)?;
        }
        Ok(own_root.or(root))
    }

    /// Writes the run records, once every trace is out.
    pub(super) fn finish(self, sink: &mut Sink<'_>) -> anyhow::Result<()> {
        for run in &self.runs.order {
            sink.emit_run(run)?;
        }
        Ok(())
    }
}

/// Says how many spans repeated the trace and span id of one read before:
/// an exporter that retries a request it thinks timed out sends its spans
/// again, and counted twice they would double the failures.
pub(super) fn warn_repeated(dropped: u64, sink: &mut Sink<'_>) {
    if dropped > 0 {
        let path = sink.path().to_string();
        sink.diag.warn(
            "repeated-span",
            format_args!(
                "{path}: {dropped} spans repeat the trace and span id of one read before \
(an exporter's retry?); each is counted once"
            ),
        );
    }
}

/// The runs of a span file in first-appearance order. The outcome is the
/// verdict a root span's status records (OK: succeeded, ERROR: failed, so a
/// failure the run recovered from does not fail a run its root calls OK);
/// without one, failed when an event failed, else unknown (UNSET is no
/// error recorded, not success). The task is the first root's input.
#[derive(Default)]
struct Runs {
    order: Vec<RunRec>,
    /// Per run: whether an event failed, and the roots' verdict.
    seen: Vec<(bool, Option<bool>)>,
    index: HashMap<String, usize>,
}

impl Runs {
    fn add(&mut self, span: &HeldSpan, ev: &EventOut<'_>) {
        let i = *self.index.entry(ev.run_id.to_string()).or_insert_with(|| {
            self.order.push(RunRec {
                kind: "run".into(),
                run_id: ev.run_id.to_string(),
                outcome: "unknown".to_string(),
                task: None,
                expected: None,
                policy: None,
                src: ev.src.as_ref().map(|s| Src {
                    path: s.path.to_string().into(),
                    line: s.line,
                }),
            });
            self.seen.push((false, None));
            self.order.len() - 1
        });
        let run = &mut self.order[i];
        let (failed, verdict) = &mut self.seen[i];
        let root = span.parent_id.is_none();
        *failed |= !ev.action_succeeded || ev.failure_classification.is_some();
        if root {
            match span.status {
                // A failed root outweighs another root's OK.
                StatusCode::Error => *verdict = Some(false),
                StatusCode::Ok if verdict.is_none() => *verdict = Some(true),
                _ => {}
            }
        }
        run.outcome = match (*verdict, *failed) {
            (Some(true), _) => "succeeded",
            (Some(false), _) | (None, true) => "failed",
            (None, false) => "unknown",
        }
        .to_string();
        if root && run.task.is_none() {
            run.task = span.input.as_ref().map(|(text, _)| text.clone());
        }
    }
}

/// An ERROR span whose children all show no error (UNSET) failed in one of
/// them without saying so: its last child, unless that child's status is
/// OK, is marked failed, inferred and inherited, with the parent's error.
fn blame_last_child(
    held: &[HeldSpan],
    order: &[(usize, Option<usize>)],
    events: &mut [EventOut<'_>],
) {
    let position: HashMap<usize, usize> = order
        .iter()
        .enumerate()
        .map(|(pos, (i, _))| (*i, pos))
        .collect();
    // Whether anything below a span failed, filled children first.
    let mut failed_below = vec![false; events.len()];
    let mut last_child: Vec<Option<usize>> = vec![None; events.len()];
    for pos in (0..order.len()).rev() {
        let Some(parent) = order[pos].1 else { continue };
        let p = position[&parent];
        failed_below[p] |= failed_below[pos] || !events[pos].action_succeeded;
        last_child[p] = Some(last_child[p].map_or(pos, |c: usize| c.max(pos)));
    }
    for pos in 0..order.len() {
        let stated_error = held[order[pos].0].status == StatusCode::Error;
        let Some(child) = last_child[pos] else {
            continue;
        };
        if !stated_error || failed_below[pos] || held[order[child].0].status != StatusCode::Unset {
            continue;
        }
        spans::inherit_failure(events, pos, child);
    }
}

/// The event of one span. `resolved` holds the span's own or inherited agent
/// and run.
fn event_of<'a>(
    span: &'a HeldSpan,
    index: usize,
    resolved: &Inherited,
    sink: &Sink<'_>,
    used_ids: &mut RecentIds,
) -> EventOut<'a> {
    let run_id = resolved
        .run
        .clone()
        .unwrap_or_else(|| span.trace_id.clone());
    let agent_id = resolved
        .agent
        .clone()
        .or_else(|| resolved.agent_fallback.clone())
        .or_else(|| span.service.clone())
        .unwrap_or_else(|| "unknown".to_string());
    let turn = span.turn.unwrap_or_default();
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
            .tool_input
            .clone()
            .or_else(|| {
                let (text, _) = span.input.as_ref().filter(|_| span.kind == "tool")?;
                json_in_text(text).filter(Value::is_object)
            })
            .map(JsonVal::Serde),
    };
    ev.divergence_age = span.divergence_age.clone().map(JsonVal::Serde);
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
        .filter(|e| !succeeded && (e.kind.is_some() || e.message.is_some()));
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
    if span.unanswered && succeeded && span.stated_success.is_none() {
        fail_inferred(
            &mut ev,
            "no_result",
            "the tool call never returned a result",
        );
    }
    sink.settings.infer_failure(&mut ev);
    ev
}

/// Success as the span states it (`action.succeeded`), else from its
/// status, error type and exceptions; and why it counts as a failure, a
/// label first. A labeled span keeps its stated success, as in the
/// reference: the label alone makes it a failure. UNSET is no error
/// recorded: a success with no `failure_source`.
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
fn event_id(span: &HeldSpan, index: usize, used: &mut RecentIds) -> String {
    let id = if span.span_id.is_empty() {
        format!("{}:#{index}", span.trace_id)
    } else if used.contains(&span.span_id) {
        format!("{}:{}", span.trace_id, span.span_id)
    } else {
        span.span_id.clone()
    };
    if used.contains(&id) {
        let unique = format!("{id}#{index}");
        used.insert(&unique);
        return unique;
    }
    used.insert(&id);
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
mod tests;
