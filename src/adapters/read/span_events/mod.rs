//! The meaning of a span, whichever file it came from (OTLP requests, SDK
//! span dumps, Phoenix spans, attribute maps): its attributes read into
//! agent, tool, run and outcome, and the events of its trace in tree order.

use serde_json::Value;

use crate::adapters::read::spans;
use crate::adapters::read::spans::{StatusCode, id_hash};
use crate::adapters::settings::DecodeSettings;
use crate::record::{ErrorInfo, FailureSource};

mod attrs;
mod emit;

use attrs::keys;

pub(crate) use attrs::{AttrRef, AttrSource, Key, SharedAttrs, is_read};
pub use attrs::{Attrs, bool_from_text, json_in_text};
pub(crate) use emit::{Carried, Emitter, warn_repeated};

// ---- one span, decoded and held until its trace is emitted ----

/// What a reader knows of a span outside its attributes.
#[derive(Debug, Default)]
pub(crate) struct SpanParts {
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
    pub line: Option<u64>,
    /// The trace of the span's first link: a message-passing runtime
    /// starts a trace per message it delivers, linked to the sender's.
    pub linked_trace: Option<String>,
    pub events: SpanEvents,
}

/// What a span's events say: its first `exception` event's type and
/// message, and what its GenAI message events said (for a span that
/// records its content as events rather than attributes).
#[derive(Debug, Default)]
pub(crate) struct SpanEvents {
    pub exception: Option<(Option<String>, Option<String>)>,
    pub said: Said,
}

impl SpanEvents {
    /// Whether an event of this name says anything read here.
    pub(crate) fn reads(event: &str) -> bool {
        event == "exception" || event.starts_with("gen_ai.")
    }

    /// Takes one event in, by its name and its attributes' texts.
    pub(crate) fn note(&mut self, event: &str, text: impl Fn(&str) -> Option<String>) {
        if event != "exception" {
            self.said.note(event, text);
        } else if self.exception.is_none() {
            self.exception = Some((text("exception.type"), text("exception.message")));
        }
    }
}

/// The text of a JSON list of text blocks, if `content` is one.
fn blocks_text(content: &str) -> Option<String> {
    if !content.trim_start().starts_with('[') {
        return None;
    }
    let blocks: Vec<Value> = serde_json::from_str(content).ok()?;
    let texts: Option<Vec<&str>> = blocks
        .iter()
        .map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    texts.filter(|t| !t.is_empty()).map(|t| t.join("\n"))
}

/// The content a span's GenAI message events carry (`gen_ai.user.message`,
/// `gen_ai.tool.message`… and `gen_ai.choice`, as the semantic conventions
/// before 1.37 put it and Strands Agents or OpenTelemetry's own OpenAI
/// instrumentation still write it): the newest message in, the choice out.
#[derive(Debug, Default)]
pub(crate) struct Said {
    pub input: Option<String>,
    pub output: Option<String>,
}

impl Said {
    /// Takes one event in, by its name and its attributes' texts. A content
    /// of text blocks only (`[{"text": "…"}]`, Bedrock's shape) is its text.
    pub(crate) fn note(&mut self, event: &str, text: impl Fn(&str) -> Option<String>) {
        let text = |key: &str| text(key).map(|t| blocks_text(&t).unwrap_or(t));
        match event {
            "gen_ai.choice" if self.output.is_none() => {
                self.output = text("message").or_else(|| text("content"));
            }
            "gen_ai.user.message"
            | "gen_ai.system.message"
            | "gen_ai.assistant.message"
            | "gen_ai.tool.message" => {
                if let Some(content) = text("content") {
                    self.input = Some(content);
                }
            }
            _ => {}
        }
    }
}

/// A span held until its trace is emitted: boxed where it is decoded, so
/// that the trace window and the emitter move a pointer, not six hundred
/// bytes, each time it changes hands (a trace's growing list of spans was
/// a tenth of the emitting thread's time in copies).
#[derive(Debug)]
pub(crate) struct HeldSpan(Box<SpanFields>);

impl std::ops::Deref for HeldSpan {
    type Target = SpanFields;
    fn deref(&self) -> &SpanFields {
        &self.0
    }
}

impl std::ops::DerefMut for HeldSpan {
    fn deref_mut(&mut self) -> &mut SpanFields {
        &mut self.0
    }
}

/// What an event needs of a span. Texts are already cut to the configured
/// size.
#[derive(Debug)]
pub(crate) struct SpanFields {
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
    failure: Option<(FailureSource, ErrorInfo)>,
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
    /// [`id_hash`] of its span id, found where spans decode in parallel.
    span_hash: u64,
    linked_trace: Option<String>,
    /// Runtime plumbing, not an agent's step: a message delivered
    /// (`messaging.operation`, or `.type` as semantic conventions 1.26
    /// name it, and nothing of an agent, a tool or a model) or an agent
    /// created, that did not fail.
    plumbing: bool,
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

/// The event `span_kind` an MLflow `mlflow.spanType` stands for: its
/// types are OpenInference's, and a chat model's call is a model call.
fn kind_from_mlflow(kind: &str) -> Option<&'static str> {
    match kind {
        "CHAT_MODEL" => Some("llm"),
        "PARSER" | "MEMORY" => Some("other"),
        other => spans::kind_from_openinference(other),
    }
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
    pub(crate) fn new(mut parts: SpanParts, a: &Attrs<'_>, settings: &DecodeSettings) -> Self {
        let said = std::mem::take(&mut parts.events.said);
        let operation = a.text(&[Key::GenAiOperationName]);
        let traceloop = a.text(&[Key::TraceloopSpanKind]);
        let entity = a.text(&[Key::TraceloopEntityName]);
        let named_tool = a.text(keys::TOOL);
        let kind = a
            .text(&[Key::OpeninferenceSpanKind])
            .and_then(|k| spans::kind_from_openinference(&k))
            .or_else(|| operation.as_deref().and_then(spans::kind_from_operation))
            .or_else(|| traceloop.as_deref().and_then(kind_from_traceloop))
            .or_else(|| {
                a.text(&[Key::AiOperationId])
                    .and_then(|op| kind_from_vercel(&op))
            })
            .or_else(|| a.text(&[Key::LlmRequestType]).map(|_| "llm"))
            .or_else(|| {
                a.any_text(&[Key::MlflowSpanType])
                    .and_then(|t| kind_from_mlflow(&t))
            })
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
        // An agent span that does not name its agent is named by the graph
        // node it is (OpenInference's `graph.node.id`: CrewAI's agent role,
        // on a span named "Weather Reporter._execute_core"), else after
        // itself ("invoke_agent planner" is the planner).
        let agent = a.text(keys::AGENT).or_else(|| {
            if kind != "agent" {
                return None;
            }
            entity
                .clone()
                .or_else(|| a.text(&[Key::GraphNodeId]))
                .or_else(|| spans::agent_from_span_name(&name).map(str::to_string))
        });
        let agent_fallback = a
            .text(keys::AGENT_FALLBACK)
            .or_else(|| a.inside_json(Key::Metadata, "langgraph_node"));
        let cut = |t: String| settings.text(&t);
        let span_hash = id_hash(&parts.span_id);
        let plumbing = failure.is_none()
            && (operation.as_deref() == Some("create_agent")
                || ((a.get(Key::MessagingOperation).is_some()
                    || a.get(Key::MessagingOperationType).is_some())
                    && kind == "other"
                    && tool.is_none()
                    && agent.is_none()
                    && operation.is_none()));
        let linked_trace = parts.linked_trace.filter(|t| *t != parts.trace_id);
        HeldSpan(Box::new(SpanFields {
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
                .text(&[Key::ServiceName])
                .filter(|s| spans::named_service(s).is_some()),
            // MLflow writes its trace id JSON-encoded on every span.
            run: a
                .text(keys::RUN)
                .or_else(|| a.any_text(&[Key::MlflowTraceRequestId])),
            conversation: a.text(keys::CONVERSATION),
            turn: a.int(Key::Turn),
            tool,
            operation,
            kind,
            status: parts.status,
            stated_success: a.flag(Key::ActionSucceeded),
            classification: a.text(keys::CLASSIFICATION).filter(|c| c != "null"),
            divergence: a.divergence(),
            failure,
            input: a.any_text(keys::INPUT).or(said.input).map(cut),
            output: a.any_text(keys::OUTPUT).or(said.output).map(cut),
            tool_input: a.object(Key::ToolInput),
            divergence_age: a.object(Key::DivergenceAge),
            llm_ms: a.int(Key::LatencyLlmMs),
            tool_ms: a.int(Key::LatencyToolMs),
            line: parts.line,
            open: parts.unended,
            seq: 0,
            span_hash,
            linked_trace,
            plumbing,
        }))
    }

    pub(crate) fn trace_id(&self) -> &str {
        &self.trace_id
    }

    pub(crate) fn span_id(&self) -> &str {
        &self.span_id
    }

    pub(crate) fn span_hash(&self) -> u64 {
        self.span_hash
    }

    /// What tells a span sent twice from another that shares its id (a
    /// Zipkin-style shared span, the server half of a client's): its name
    /// and start.
    pub(crate) fn identity(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        self.name.hash(&mut h);
        self.start.hash(&mut h);
        h.finish()
    }

    /// A span without a parent that has ended: the root of a finished trace.
    pub(crate) fn is_ended_root(&self) -> bool {
        self.parent_id.is_none() && !self.open
    }

    /// The latest time the span states, in Unix nanoseconds.
    pub(crate) fn latest_nanos(&self) -> Option<i128> {
        self.end.or(self.start)
    }

    /// The trace this span's trace continues: the first link of a root.
    pub(crate) fn continues_trace(&self) -> Option<&str> {
        self.linked_trace
            .as_deref()
            .filter(|_| self.parent_id.is_none())
    }

    /// Runtime plumbing (a message delivered, an agent created), read for
    /// the links it carries and not emitted as a step.
    pub(crate) fn is_plumbing(&self) -> bool {
        self.plumbing
    }

    pub(crate) fn set_seq(&mut self, seq: usize) {
        self.seq = seq;
    }
}

/// Why a span failed, strongest evidence first: an ERROR status, an
/// `error.type` attribute, an `exception` event. The error takes its type and
/// message from whichever gives them.
fn failure_of(parts: &SpanParts, a: &Attrs<'_>) -> Option<(FailureSource, ErrorInfo)> {
    let error_type = a.text(&[Key::ErrorType]);
    let exception = &parts.events.exception;
    let (exception_type, exception_message) = exception.clone().unwrap_or_default();
    // An unrecognised status code stays a failure, as in the reference.
    let source = if matches!(parts.status, StatusCode::Error | StatusCode::Unknown) {
        FailureSource::Status
    } else if error_type.is_some() {
        FailureSource::Error
    } else if exception.is_some() {
        FailureSource::Exception
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

#[cfg(test)]
mod tests;
