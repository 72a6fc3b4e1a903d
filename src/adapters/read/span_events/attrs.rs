//! Span attributes in every dialect (the reference receiver's, OpenTelemetry
//! GenAI, OpenInference, OpenLLMetry, the Vercel AI SDK): the keys, span over
//! resource, and how their values read.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

use crate::adapters::read::spans;

/// Declares [`Key`]: the attributes the span model reads, each with its name.
macro_rules! attribute_keys {
    ($($key:ident = $name:literal,)*) => {
        /// An attribute the span model reads.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(crate) enum Key {
            $($key,)*
        }

        impl Key {
            const ALL: &'static [Key] = &[$(Key::$key,)*];

            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(Key::$key => $name,)*
                }
            }
        }
    };
}

attribute_keys! {
    AgentId = "agent.id",
    AgentIdSnake = "agent_id",
    GenAiAgentName = "gen_ai.agent.name",
    GenAiAgentId = "gen_ai.agent.id",
    AgentName = "agent.name",
    GraphNodeId = "graph.node.id",
    LanggraphNode = "langgraph_node",
    LanggraphNodeDotted = "langgraph.node",
    MetadataLanggraphNode = "metadata.langgraph_node",
    AiTelemetryFunctionId = "ai.telemetry.functionId",
    RunId = "run.id",
    RunIdSnake = "run_id",
    GenAiConversationId = "gen_ai.conversation.id",
    SessionId = "session.id",
    ActionTool = "action.tool",
    ToolNameSnake = "tool_name",
    GenAiToolName = "gen_ai.tool.name",
    ToolName = "tool.name",
    AiToolCallName = "ai.toolCall.name",
    FailureClassification = "failure.classification",
    FailureClassificationSnake = "failure_classification",
    DivergenceFields = "divergence.fields",
    DivergenceFieldsSnake = "divergence_fields",
    InputValue = "input.value",
    GenAiToolCallArguments = "gen_ai.tool.call.arguments",
    GenAiToolArgs = "gen_ai.tool.args",
    AiToolCallArgs = "ai.toolCall.args",
    TraceloopEntityInput = "traceloop.entity.input",
    GenAiInputMessages = "gen_ai.input.messages",
    GenAiPrompt = "gen_ai.prompt",
    GenAiPrompt0Content = "gen_ai.prompt.0.content",
    AiPromptMessages = "ai.prompt.messages",
    AiPrompt = "ai.prompt",
    Input = "input",
    OutputValue = "output.value",
    GenAiToolCallResult = "gen_ai.tool.call.result",
    AiToolCallResult = "ai.toolCall.result",
    TraceloopEntityOutput = "traceloop.entity.output",
    GenAiOutputMessages = "gen_ai.output.messages",
    GenAiOutput = "gen_ai.output",
    GenAiCompletion = "gen_ai.completion",
    GenAiCompletion0Content = "gen_ai.completion.0.content",
    AiResponseText = "ai.response.text",
    AiResponseObject = "ai.response.object",
    Output = "output",
    GenAiOperationName = "gen_ai.operation.name",
    TraceloopSpanKind = "traceloop.span.kind",
    TraceloopEntityName = "traceloop.entity.name",
    OpeninferenceSpanKind = "openinference.span.kind",
    AiOperationId = "ai.operationId",
    LlmRequestType = "llm.request.type",
    ServiceName = "service.name",
    Turn = "turn",
    ActionSucceeded = "action.succeeded",
    ToolInput = "tool_input",
    DivergenceAge = "divergence_age",
    LatencyLlmMs = "latency.llm_ms",
    LatencyToolMs = "latency.tool_ms",
    ErrorType = "error.type",
    Metadata = "metadata",
    MessagingOperation = "messaging.operation",
    MessagingOperationType = "messaging.operation.type",
    MlflowSpanType = "mlflow.spanType",
    MlflowSpanInputs = "mlflow.spanInputs",
    MlflowSpanOutputs = "mlflow.spanOutputs",
    MlflowTraceRequestId = "mlflow.traceRequestId",
}

const KEYS: usize = Key::ALL.len();

/// The key of an attribute name, if the span model reads it.
fn key_of(name: &str) -> Option<Key> {
    static BY_NAME: OnceLock<FxHashMap<&'static str, Key>> = OnceLock::new();
    BY_NAME
        .get_or_init(|| Key::ALL.iter().map(|k| (k.name(), *k)).collect())
        .get(name)
        .copied()
}

/// Whether the span model reads an attribute of this name.
pub(crate) fn is_read(name: &str) -> bool {
    key_of(name).is_some()
}

/// Attribute names, most specific first: the reference receiver's, then the
/// OpenTelemetry GenAI conventions', OpenInference's, OpenLLMetry's and the
/// Vercel AI SDK's.
pub(crate) mod keys {
    use super::Key::{self, *};

    pub(crate) const AGENT: &[Key] = &[
        AgentId,
        AgentIdSnake,
        GenAiAgentName,
        GenAiAgentId,
        AgentName,
    ];
    /// Names that stand for the agent when nothing better does.
    pub(crate) const AGENT_FALLBACK: &[Key] = &[
        GraphNodeId,
        LanggraphNode,
        LanggraphNodeDotted,
        MetadataLanggraphNode,
        AiTelemetryFunctionId,
    ];
    pub(crate) const RUN: &[Key] = &[RunId, RunIdSnake];
    pub(crate) const CONVERSATION: &[Key] = &[GenAiConversationId, SessionId];
    pub(crate) const TOOL: &[Key] = &[
        ActionTool,
        ToolNameSnake,
        GenAiToolName,
        ToolName,
        AiToolCallName,
    ];
    pub(crate) const CLASSIFICATION: &[Key] = &[FailureClassification, FailureClassificationSnake];
    pub(crate) const DIVERGENCE: &[Key] = &[DivergenceFields, DivergenceFieldsSnake];
    pub(crate) const INPUT: &[Key] = &[
        InputValue,
        GenAiToolCallArguments,
        GenAiToolArgs,
        AiToolCallArgs,
        TraceloopEntityInput,
        GenAiInputMessages,
        GenAiPrompt,
        GenAiPrompt0Content,
        AiPromptMessages,
        AiPrompt,
        MlflowSpanInputs,
        Input,
    ];
    pub(crate) const OUTPUT: &[Key] = &[
        OutputValue,
        GenAiToolCallResult,
        AiToolCallResult,
        TraceloopEntityOutput,
        GenAiOutputMessages,
        GenAiOutput,
        GenAiCompletion,
        GenAiCompletion0Content,
        AiResponseText,
        AiResponseObject,
        MlflowSpanOutputs,
        Output,
    ];
}

// ---- attribute lookup: span attributes win over resource attributes ----

/// One attribute's value: text as a request lists it, or any JSON value.
#[derive(Clone, Copy)]
pub(crate) enum AttrRef<'a> {
    Text(&'a str),
    Json(&'a Value),
}

impl<'a> AttrRef<'a> {
    pub(crate) fn as_str(self) -> Option<&'a str> {
        match self {
            AttrRef::Text(s) => Some(s),
            AttrRef::Json(Value::String(s)) => Some(s),
            AttrRef::Json(_) => None,
        }
    }

    fn is_null(self) -> bool {
        matches!(self, AttrRef::Json(Value::Null))
    }
}

/// A span's or a resource's attributes, by their flat (dotted) names.
pub(crate) trait AttrSource {
    /// Each attribute in order; a name given twice counts at its last.
    fn each<'s>(&'s self, f: &mut dyn FnMut(&str, AttrRef<'s>));
}

impl AttrSource for Map<String, Value> {
    fn each<'s>(&'s self, f: &mut dyn FnMut(&str, AttrRef<'s>)) {
        for (k, v) in self {
            f(k, AttrRef::Json(v));
        }
    }
}

/// The attributes the span model reads, a span's over its resource's,
/// found in one pass over each: the model asks for some sixty names, most
/// of them absent, and each question is then an index.
pub struct Attrs<'a> {
    slots: [Option<AttrRef<'a>>; KEYS],
}

/// A resource's attributes the span model reads, indexed once for all of
/// its spans rather than once per span.
pub(crate) struct SharedAttrs<'a> {
    slots: [Option<AttrRef<'a>>; KEYS],
}

impl<'a> SharedAttrs<'a> {
    pub(crate) fn new(resource: &'a dyn AttrSource) -> Self {
        let mut slots: [Option<AttrRef<'a>>; KEYS] = [None; KEYS];
        resource.each(&mut |name, v| {
            if let Some(k) = key_of(name) {
                slots[k as usize] = Some(v);
            }
        });
        // A null counts as absent, on the span and on its resource alike.
        for slot in &mut slots {
            if slot.is_some_and(AttrRef::is_null) {
                *slot = None;
            }
        }
        SharedAttrs { slots }
    }
}

impl<'a> Attrs<'a> {
    pub(crate) fn new(span: &'a dyn AttrSource, resource: &'a dyn AttrSource) -> Self {
        Attrs::over(span, &SharedAttrs::new(resource))
    }

    /// A span's attributes over its resource's: the last value of a name
    /// on the span, unless it is null, else the resource's.
    pub(crate) fn over(span: &'a dyn AttrSource, shared: &SharedAttrs<'a>) -> Self {
        let mut slots = shared.slots;
        span.each(&mut |name, v| {
            if let Some(k) = key_of(name) {
                let k = k as usize;
                slots[k] = if v.is_null() {
                    shared.slots[k]
                } else {
                    Some(v)
                };
            }
        });
        Attrs { slots }
    }

    pub(crate) fn get(&self, key: Key) -> Option<AttrRef<'a>> {
        self.slots[key as usize]
    }

    /// The first of `keys` whose value is non-empty text (numbers and
    /// booleans as text).
    pub(crate) fn text(&self, keys: &[Key]) -> Option<String> {
        keys.iter().find_map(|k| {
            let v = self.get(*k)?;
            match (v.as_str(), v) {
                (Some(s), _) => (!s.trim().is_empty()).then(|| s.to_string()),
                (None, AttrRef::Json(Value::Number(n))) => Some(n.to_string()),
                (None, AttrRef::Json(Value::Bool(b))) => Some(b.to_string()),
                _ => None,
            }
        })
    }

    /// Any value of `keys` as text: strings unwrapped from JSON encoding,
    /// other values as compact JSON.
    pub(crate) fn any_text(&self, keys: &[Key]) -> Option<String> {
        keys.iter().find_map(|k| {
            let v = self.get(*k)?;
            Some(match v {
                AttrRef::Json(other) if !other.is_string() => other.to_string(),
                _ => unwrap_json_string(v.as_str()?),
            })
        })
    }

    /// A boolean written as a bool, "true"/"false" or 0/1.
    pub(crate) fn flag(&self, key: Key) -> Option<bool> {
        let v = self.get(key)?;
        match (v.as_str(), v) {
            (Some(s), _) => bool_from_text(s),
            (None, AttrRef::Json(Value::Bool(b))) => Some(*b),
            (None, AttrRef::Json(Value::Number(n))) => match n.as_f64() {
                Some(0.0) => Some(false),
                Some(1.0) => Some(true),
                _ => None,
            },
            _ => None,
        }
    }

    /// An integer written as a number (without fraction) or as digits.
    pub(crate) fn int(&self, key: Key) -> Option<i64> {
        let v = self.get(key)?;
        match (v.as_str(), v) {
            (Some(s), _) => s.trim().parse().ok(),
            (None, AttrRef::Json(Value::Number(n))) => n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9e18)
                    .map(|f| f as i64)
            }),
            _ => None,
        }
    }

    /// Divergence fields: a list, or comma-separated text.
    pub(crate) fn divergence(&self) -> Vec<String> {
        let Some(v) = keys::DIVERGENCE.iter().find_map(|k| self.get(*k)) else {
            return Vec::new();
        };
        match (v.as_str(), v) {
            (Some(s), _) => spans::split_divergence(s).map(str::to_string).collect(),
            (None, AttrRef::Json(Value::Array(items))) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// A non-empty object.
    pub(crate) fn object(&self, key: Key) -> Option<Value> {
        match self.get(key)? {
            AttrRef::Json(v @ Value::Object(o)) if !o.is_empty() => Some(v.clone()),
            _ => None,
        }
    }

    /// A key inside an attribute that holds a JSON object as text (as
    /// OpenInference's `metadata` holds `langgraph_node`).
    pub(crate) fn inside_json(&self, attr: Key, key: &str) -> Option<String> {
        let text = self.get(attr)?.as_str()?;
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
pub(crate) fn unwrap_json_string(text: &str) -> String {
    let mut text = text.to_string();
    for _ in 0..3 {
        // Only a quoted text can be a JSON string: anything else (an
        // object of tool arguments, plain prose) is not parsed.
        if !text.trim_start().starts_with('"') {
            break;
        }
        match serde_json::from_str::<Value>(text.trim()) {
            Ok(Value::String(inner)) => text = inner,
            _ => break,
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    fn text(a: &Attrs<'_>, key: Key) -> Option<String> {
        a.text(&[key])
    }

    /// A span's value wins over its resource's, and a null counts as
    /// absent on either side; the resource indexed once reads as the
    /// resource indexed per span.
    #[test]
    fn a_span_over_its_resource_the_last_value_wins_and_null_is_absent() {
        let resource = map(serde_json::json!({
            "service.name": "svc",
            "gen_ai.agent.name": "from-resource",
            "gen_ai.operation.name": null,
        }));
        let span = map(serde_json::json!({
            "gen_ai.agent.name": "first",
            "gen_ai.operation.name": "chat",
        }));
        let shared = SharedAttrs::new(&resource);
        let a = Attrs::over(&span, &shared);
        assert_eq!(text(&a, Key::ServiceName).as_deref(), Some("svc"));
        assert_eq!(text(&a, Key::GenAiAgentName).as_deref(), Some("first"));
        assert_eq!(text(&a, Key::GenAiOperationName).as_deref(), Some("chat"));

        // A null on the span falls back to the resource.
        let nulled = map(serde_json::json!({"gen_ai.agent.name": null}));
        let a = Attrs::over(&nulled, &shared);
        assert_eq!(
            text(&a, Key::GenAiAgentName).as_deref(),
            Some("from-resource")
        );
        let b = Attrs::new(&nulled, &resource);
        assert_eq!(
            text(&b, Key::GenAiAgentName).as_deref(),
            Some("from-resource")
        );
        // A null on the resource is no value at all.
        assert_eq!(
            text(
                &Attrs::over(&map(serde_json::json!({})), &shared),
                Key::GenAiOperationName
            ),
            None
        );
    }
}
