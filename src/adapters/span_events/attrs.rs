//! Span attributes in every dialect (the reference receiver's, OpenTelemetry
//! GenAI, OpenInference, OpenLLMetry, the Vercel AI SDK): the keys, span over
//! resource, and how their values read.

use super::*;

/// Attribute names, most specific first: the reference receiver's, then the
/// OpenTelemetry GenAI conventions', OpenInference's, OpenLLMetry's and the
/// Vercel AI SDK's.
pub(super) mod keys {
    pub(crate) const AGENT: &[&str] = &[
        "agent.id",
        "agent_id",
        "gen_ai.agent.name",
        "gen_ai.agent.id",
        "agent.name",
    ];
    /// Names that stand for the agent when nothing better does.
    pub(crate) const AGENT_FALLBACK: &[&str] = &[
        "graph.node.id",
        "langgraph_node",
        "langgraph.node",
        "metadata.langgraph_node",
        "ai.telemetry.functionId",
    ];
    pub(crate) const RUN: &[&str] = &["run.id", "run_id"];
    pub(crate) const CONVERSATION: &[&str] = &["gen_ai.conversation.id", "session.id"];
    pub(crate) const TOOL: &[&str] = &[
        "action.tool",
        "tool_name",
        "gen_ai.tool.name",
        "tool.name",
        "ai.toolCall.name",
    ];
    pub(crate) const CLASSIFICATION: &[&str] =
        &["failure.classification", "failure_classification"];
    pub(crate) const DIVERGENCE: &[&str] = &["divergence.fields", "divergence_fields"];
    pub(crate) const INPUT: &[&str] = &[
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
    pub(crate) const OUTPUT: &[&str] = &[
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
}

/// A span's or a resource's attributes, found by their flat (dotted) key.
pub(crate) trait AttrSource {
    fn attr(&self, key: &str) -> Option<AttrRef<'_>>;
}

impl AttrSource for Map<String, Value> {
    fn attr(&self, key: &str) -> Option<AttrRef<'_>> {
        self.get(key).map(AttrRef::Json)
    }
}

/// A span's attributes over its resource's.
pub struct Attrs<'a> {
    pub(crate) span: &'a dyn AttrSource,
    pub(crate) resource: &'a dyn AttrSource,
}

impl<'a> Attrs<'a> {
    pub(super) fn get(&self, key: &str) -> Option<AttrRef<'a>> {
        let present = |v: &AttrRef<'_>| !matches!(v, AttrRef::Json(Value::Null));
        self.span
            .attr(key)
            .filter(present)
            .or_else(|| self.resource.attr(key).filter(present))
    }

    /// The first of `keys` whose value is non-empty text (numbers and
    /// booleans as text).
    pub(super) fn text(&self, keys: &[&str]) -> Option<String> {
        keys.iter().find_map(|k| {
            let v = self.get(k)?;
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
    pub(super) fn any_text(&self, keys: &[&str]) -> Option<String> {
        keys.iter().find_map(|k| {
            let v = self.get(k)?;
            Some(match v {
                AttrRef::Json(other) if !other.is_string() => other.to_string(),
                _ => unwrap_json_string(v.as_str()?),
            })
        })
    }

    /// A boolean written as a bool, "true"/"false" or 0/1.
    pub(super) fn flag(&self, key: &str) -> Option<bool> {
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
    pub(super) fn int(&self, key: &str) -> Option<i64> {
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
    pub(super) fn divergence(&self) -> Vec<String> {
        let Some(v) = keys::DIVERGENCE.iter().find_map(|k| self.get(k)) else {
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
    pub(super) fn object(&self, key: &str) -> Option<Value> {
        match self.get(key)? {
            AttrRef::Json(v @ Value::Object(o)) if !o.is_empty() => Some(v.clone()),
            _ => None,
        }
    }

    /// A key inside an attribute that holds a JSON object as text (as
    /// OpenInference's `metadata` holds `langgraph_node`).
    pub(super) fn inside_json(&self, attr: &str, key: &str) -> Option<String> {
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
pub(super) fn unwrap_json_string(text: &str) -> String {
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
