//! A chat message as the transcript readers need it, whatever dialect
//! (OpenAI chat, Anthropic messages) wrote it.

pub(crate) mod anthropic;
pub(crate) mod openai;

use serde_json::Value;

/// One message, in any dialect, as the events need it.
#[derive(Debug, Default)]
pub(crate) struct Message {
    /// `user`, `assistant`, `tool`, `system`…
    pub role: String,
    /// The speaker's own name, where a multi-agent log gives one.
    pub name: Option<String>,
    pub parts: Vec<Part>,
    pub reasoning: Option<String>,
    pub timestamp: Option<i128>,
    pub usage: Option<Value>,
    /// What the message held that no dialect here reads (a block or item
    /// type), for the reader to count.
    pub unread: Vec<String>,
}

/// What a message says: words, a tool call, or a tool's result.
#[derive(Debug)]
pub(crate) enum Part {
    Text(String),
    Call {
        id: Option<String>,
        name: String,
        args: Option<Value>,
    },
    Result {
        /// The id of the call it answers; without one it answers by position.
        id: Option<String>,
        /// The tool's name, where the result says it.
        name: Option<String>,
        content: Option<String>,
        is_error: bool,
    },
}
