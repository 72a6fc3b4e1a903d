//! triage: rank the failure patterns of multi-agent LLM systems from their
//! traces. A library with thin binaries that exchange NDJSON records.

pub mod adapters;
pub(crate) mod alert;
pub(crate) mod classify;
pub(crate) mod cli;
pub mod cmd;
pub mod config;
pub(crate) mod diff;
pub(crate) mod explain;
pub mod group;
pub(crate) mod http_retry;
pub(crate) mod judge;
pub(crate) mod llm;
pub(crate) mod narrate;
pub(crate) mod outcomes;
pub(crate) mod pipeline;
pub mod plumbing;
pub mod record;
pub mod recv;
pub mod render;
pub mod score;
pub mod stream;
pub mod timestamp;
pub(crate) mod tracegen;
