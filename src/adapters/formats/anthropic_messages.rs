//! The `anthropic-messages` format: chat transcripts whose messages carry
//! Anthropic's tool blocks, read by [`transcript`](super::transcript)
//! (the blocks by `read::message::anthropic`).

use crate::adapters::formats::Format;
use crate::adapters::formats::transcript;
use crate::adapters::read::shape::Shape;

/// The `anthropic-messages` row of the format table.
pub(crate) const FORMAT: Format = Format {
    name: "anthropic-messages",
    help: "Anthropic Messages transcripts: `tool_use`/`tool_result` blocks.",
    claims: Some(claims),
    read: |r, _, sink| transcript::read(r, sink),
};

/// A chat transcript whose messages carry Anthropic's tool blocks
/// (`"type": "tool_use"` or `"tool_result"`, in any spacing).
fn claims(shape: &Shape<'_>) -> bool {
    let head = shape.head;
    let blocks = ["\"tool_use\"", "\"tool_result\""].iter().any(|block| {
        memchr::memmem::find_iter(head, block.as_bytes()).any(|at| {
            let before = head[..at].trim_ascii_end();
            before.ends_with(b":")
                && before[..before.len() - 1]
                    .trim_ascii_end()
                    .ends_with(b"\"type\"")
        })
    });
    blocks && transcript::is_transcript(shape)
}
