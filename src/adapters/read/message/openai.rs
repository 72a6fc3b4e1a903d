//! Messages as OpenAI's APIs write them: Chat Completions messages
//! (`tool_calls` with `function.name/arguments`, `role: tool` replies with
//! `tool_call_id`, `reasoning_content`, the older `function_call`) and
//! Responses API items (`message`, `function_call`, `function_call_output`,
//! `reasoning`). Content blocks of Anthropic's API are read by
//! [`super::anthropic`], so a log that mixes them reads whole.

use serde_json::Value;

use super::{Message, Part, anthropic};
use crate::adapters::read::value::{nanos_of, str_of, text_of};

/// Whether `v` is a message or a Responses item, rather than an envelope.
pub(crate) fn is_message(v: &Value) -> bool {
    let role = v.get("role").is_some_and(Value::is_string);
    let item = v
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| ITEMS.contains(&t) || t.ends_with("_call") || t.ends_with("_call_output"));
    role || item
}

/// The Responses API item types besides tool calls and their outputs
/// (`*_call`, `*_call_output`): `message`, `reasoning` and the approvals of
/// hosted tools' calls are read, the others are bookkeeping that is no step.
const ITEMS: &[&str] = &[
    "message",
    "reasoning",
    "mcp_list_tools",
    "mcp_approval_request",
    "mcp_approval_response",
    "item_reference",
    "compaction",
];

/// Calls whose result comes back as an item of its own (`*_call_output`);
/// the hosted tools' calls (web search, file search, code interpreter,
/// MCP…) carry their result, or their error, in the call item itself.
const ANSWERED_APART: &[&str] = &[
    "function_call",
    "custom_tool_call",
    "computer_call",
    "local_shell_call",
    "shell_call",
    "apply_patch_call",
];

/// Whether a chat message carries tool calls.
fn has_calls(v: &Value) -> bool {
    v.get("tool_calls")
        .and_then(Value::as_array)
        .is_some_and(|calls| !calls.is_empty())
}

/// Decodes one message or item; `None` when `v` is neither.
pub(crate) fn message(v: &Value) -> Option<Message> {
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
        Some(t) if t.ends_with("_call_output") => {
            msg.role = "tool".to_string();
            msg.parts.push(Part::Result {
                id: str_of(v.get("call_id")),
                name: None,
                content: v.get("output").and_then(text_of),
                is_error: v.get("status").and_then(Value::as_str) == Some("failed"),
            });
            return Some(msg);
        }
        Some(t) if t.ends_with("_call") => {
            call_item(t, v, &mut msg);
            return Some(msg);
        }
        Some("reasoning") => {
            msg.reasoning = reasoning_item(v);
            return Some(msg);
        }
        // A hosted tool's call that waits for a person's approval: a call,
        // answered by the approval's response (a rejection fails it).
        Some("mcp_approval_request") => {
            msg.parts.push(Part::Call {
                id: str_of(v.get("id")),
                name: str_of(v.get("name")).unwrap_or_else(|| "tool".to_string()),
                args: v.get("arguments").cloned(),
            });
            return Some(msg);
        }
        Some("mcp_approval_response") => {
            let approved = v.get("approve").and_then(Value::as_bool) != Some(false);
            msg.role = "tool".to_string();
            msg.parts.push(Part::Result {
                id: str_of(v.get("approval_request_id")),
                name: None,
                content: str_of(v.get("reason")).or_else(|| {
                    Some(
                        if approved {
                            "approved"
                        } else {
                            "rejected by the approver"
                        }
                        .to_string(),
                    )
                }),
                is_error: !approved,
            });
            return Some(msg);
        }
        Some(t) if t != "message" && msg.role == "assistant" && v.get("role").is_none() => {
            // Bookkeeping items say no step; others are counted as unread.
            if !matches!(
                t,
                "item_reference" | "compaction" | "compaction_summary" | "mcp_list_tools"
            ) {
                msg.unread.push(format!("an item of type \"{t}\""));
            }
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
            // A reply flagged as an error (Agno's `tool_call_error`, an
            // `is_error` as Anthropic's results carry).
            is_error: ["is_error", "tool_call_error"]
                .iter()
                .any(|k| v.get(*k) == Some(&Value::Bool(true))),
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
        // AG2 writes a call's empty content as Python's "None".
        Some(Value::String(c)) if c == "None" && has_calls(v) => {}
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

/// A Responses tool call item (`function_call`, `web_search_call`,
/// `mcp_call`…): the call, and the result a hosted tool's item carries.
fn call_item(kind: &str, v: &Value, msg: &mut Message) {
    let id = str_of(v.get("call_id")).or_else(|| str_of(v.get("id")));
    let name = str_of(v.get("name")).unwrap_or_else(|| kind.trim_end_matches("_call").to_string());
    let args = ["arguments", "input", "action", "code", "queries"]
        .iter()
        .find_map(|k| v.get(*k))
        .cloned();
    msg.parts.push(Part::Call {
        id: id.clone(),
        name,
        args,
    });
    if ANSWERED_APART.contains(&kind) {
        return;
    }
    let error = v.get("error").filter(|e| !e.is_null());
    let failed = error.is_some()
        || matches!(
            v.get("status").and_then(Value::as_str),
            Some("failed" | "incomplete")
        );
    let content = error
        .or_else(|| {
            ["output", "outputs", "results", "result"]
                .iter()
                .find_map(|k| v.get(*k))
        })
        .filter(|c| !c.is_null())
        .and_then(text_of)
        .or_else(|| str_of(v.get("status")));
    msg.parts.push(Part::Result {
        id,
        name: None,
        content,
        is_error: failed,
    });
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
        _ => anthropic::content_block(b, msg),
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
