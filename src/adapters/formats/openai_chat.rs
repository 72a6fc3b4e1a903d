//! The `openai-chat` format: OpenAI chat transcripts, read by
//! [`transcript`](super::transcript) with the messages of OpenAI's APIs
//! (`read::message::openai`).

use crate::adapters::formats::Format;
use crate::adapters::formats::transcript;

/// The `openai-chat` row of the format table.
pub(crate) const FORMAT: Format = Format {
    name: "openai-chat",
    help: "OpenAI chat transcripts: `{\"messages\": [...]}` or a list of messages (Chat Completions or Responses items), per file or per line.",
    claims: Some(transcript::is_transcript),
    read: |r, _, sink| transcript::read(r, sink),
};
