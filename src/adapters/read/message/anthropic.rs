//! Content blocks of Anthropic's Messages API: `tool_use` (a call, with its
//! `id`, `name` and `input`), `tool_result` (its answer by `tool_use_id`,
//! failed when `is_error`), `thinking`; the server-tool and MCP variants of
//! the same shapes too. The messages around them are read as
//! [`super::openai`] reads any role message.

use serde_json::Value;

use super::{Message, Part};
use crate::adapters::read::value::{str_of, text_of};

/// Adds what one content block says to `msg`; blocks with nothing to say
/// as a step (images, documents, citations) add nothing.
pub(crate) fn content_block(b: &Value, msg: &mut Message) {
    let kind = b.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "tool_use" | "server_tool_use" | "mcp_tool_use" => msg.parts.push(Part::Call {
            id: str_of(b.get("id")),
            name: str_of(b.get("name")).unwrap_or_else(|| "tool".to_string()),
            args: b.get("input").cloned(),
        }),
        "tool_result" | "mcp_tool_result" => msg.parts.push(Part::Result {
            id: str_of(b.get("tool_use_id")),
            name: None,
            content: b.get("content").and_then(text_of),
            is_error: b.get("is_error").and_then(Value::as_bool) == Some(true),
        }),
        // Server tools answer in a block named for the tool, e.g.
        // `web_search_tool_result`, whose error is a content of that type.
        k if k.ends_with("_tool_result") => {
            let content = b.get("content");
            let is_error = content
                .and_then(|c| c.get("type"))
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("_error"));
            msg.parts.push(Part::Result {
                id: str_of(b.get("tool_use_id")),
                name: None,
                content: content.and_then(text_of),
                is_error,
            });
        }
        "thinking" => {
            if let Some(t) = str_of(b.get("thinking")) {
                msg.reasoning = Some(match msg.reasoning.take() {
                    Some(before) => format!("{before}\n{t}"),
                    None => t,
                });
            }
        }
        // Blocks known to say nothing a step is made of.
        "image" | "document" | "redacted_thinking" | "citations" | "search_result"
        | "container_upload" | "input_image" | "input_file" | "input_audio" | "image_url" => {}
        kind => msg
            .unread
            .push(format!("a content block of type \"{kind}\"")),
    }
}
