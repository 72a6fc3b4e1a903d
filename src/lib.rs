//! triage: rank the failure patterns of multi-agent LLM systems from their
//! traces. A library with thin binaries that exchange NDJSON records.

pub mod adapters;
pub mod alert;
pub mod classify;
pub mod cli;
pub mod cmd;
pub mod config;
pub mod diff;
pub mod explain;
pub mod group;
pub mod http_retry;
pub mod io;
pub mod judge;
pub mod llm;
pub mod narrate;
pub mod pipeline;
pub mod record;
pub mod recv;
pub mod render;
pub mod score;
pub mod stream;
pub mod timestamp;
pub mod tracegen;
