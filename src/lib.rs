//! triage: rank the failure patterns of multi-agent LLM systems from their
//! traces. A library with thin binaries that exchange NDJSON records.

pub mod adapters;
pub mod classify;
pub mod cmd;
pub mod config;
pub mod explain;
pub mod cli;
pub mod ndjson;
pub mod record;
pub mod timestamp;
