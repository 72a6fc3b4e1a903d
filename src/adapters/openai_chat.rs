//! Messages as OpenAI's APIs write them: Chat Completions messages
//! (`tool_calls` with `function.name/arguments`, `role: tool` replies with
//! `tool_call_id`, `reasoning_content`, the older `function_call`) and
//! Responses API items (`message`, `function_call`, `function_call_output`,
//! `reasoning`). Content blocks of Anthropic's API are read by
//! [`super::anthropic_messages`], so a log that mixes them reads whole.

use serde_json::Value;

use super::anthropic_messages;
use super::observations::{nanos_of, str_of, text_of};
use super::transcript::{Message, Part};

/// Whether `v` is a message or a Responses item, rather than an envelope.
pub fn is_message(v: &Value) -> bool {
    let role = v.get("role").is_some_and(Value::is_string);
    let item = v
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| ITEMS.contains(&t));
    role || item
}

/// The Responses API item types read as steps.
const ITEMS: &[&str] = &[
    "message",
    "function_call",
    "function_call_output",
    "reasoning",
];

/// Decodes one message or item; `None` when `v` is neither.
pub fn message(v: &Value) -> Option<Message> {
    if !is_message(v) {
        return None;
    }
    let mut msg = Message {
        role: str_of(v.get("role")).unwrap_or_else(|| "assistant".to_string()),
        timestamp: ["timestamp", "created_at", "created"]
            .iter()
            .find_map(|k| nanos_of(v.get(*k))),
        usage: v.get("usage").filter(|u| u.is_object()).cloned(),
        ..Message::default()
    };
    match v.get("type").and_then(Value::as_str) {
        Some("function_call") => {
            msg.parts.push(Part::Call {
                id: str_of(v.get("call_id")).or_else(|| str_of(v.get("id"))),
                name: str_of(v.get("name")).unwrap_or_else(|| "tool".to_string()),
                args: v.get("arguments").cloned(),
            });
            return Some(msg);
        }
        Some("function_call_output") => {
            msg.role = "tool".to_string();
            msg.parts.push(Part::Result {
                id: str_of(v.get("call_id")),
                name: None,
                content: v.get("output").and_then(text_of),
                is_error: false,
            });
            return Some(msg);
        }
        Some("reasoning") => {
            msg.reasoning = reasoning_item(v);
            return Some(msg);
        }
        _ => {}
    }
    if msg.role == "tool" || msg.role == "function" {
        // A tool's reply: it answers its call, whatever else it says.
        msg.parts.push(Part::Result {
            id: str_of(v.get("tool_call_id")),
            name: str_of(v.get("name")),
            content: v.get("content").and_then(content_text),
            is_error: false,
        });
        return Some(msg);
    }
    msg.name = str_of(v.get("name"));
    match v.get("content") {
        Some(Value::Array(blocks)) => {
            for b in blocks {
                content_block(b, &mut msg);
            }
        }
        Some(c) => msg.parts.extend(text_of(c).map(Part::Text)),
        None => {}
    }
    for call in v
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let function = call.get("function").unwrap_or(call);
        msg.parts.push(Part::Call {
            id: str_of(call.get("id")),
            name: str_of(function.get("name"))
                .or_else(|| str_of(call.get("name")))
                .unwrap_or_else(|| "tool".to_string()),
            args: function.get("arguments").cloned(),
        });
    }
    if let Some(f) = v.get("function_call").filter(|f| f.is_object()) {
        msg.parts.push(Part::Call {
            id: None,
            name: str_of(f.get("name")).unwrap_or_else(|| "tool".to_string()),
            args: f.get("arguments").cloned(),
        });
    }
    let reasoning = ["reasoning_content", "reasoning"]
        .iter()
        .find_map(|k| v.get(*k).and_then(text_of));
    msg.reasoning = match (msg.reasoning.take(), reasoning) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
    };
    Some(msg)
}

/// One block of a content list: text in any of its spellings, or a block
/// of Anthropic's (a tool use, a tool result, thinking).
fn content_block(b: &Value, msg: &mut Message) {
    let kind = b.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "text" | "input_text" | "output_text" => {
            msg.parts.extend(str_of(b.get("text")).map(Part::Text));
        }
        "refusal" => msg.parts.extend(str_of(b.get("refusal")).map(Part::Text)),
        _ => anthropic_messages::content_block(b, msg),
    }
}

/// The text of a tool reply: a string or a list of text parts.
fn content_text(v: &Value) -> Option<String> {
    match v {
        Value::Array(parts) => {
            let texts: Vec<String> = parts
                .iter()
                .filter_map(|p| str_of(p.get("text")).or_else(|| str_of(Some(p))))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        // A reply's text is kept as written, JSON or not.
        Value::String(s) => Some(s.clone()).filter(|s| !s.trim().is_empty()),
        other => text_of(other),
    }
}

/// The summary (or content) texts of a Responses reasoning item.
fn reasoning_item(v: &Value) -> Option<String> {
    let texts: Vec<String> = ["summary", "content"]
        .iter()
        .filter_map(|k| v.get(*k).and_then(Value::as_array))
        .flatten()
        .filter_map(|p| str_of(p.get("text")))
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}
