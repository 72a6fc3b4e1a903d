//! The reading strategies the formats share, each named for what it reads:
//! a whole document (`document`), JSON values line by line in parallel
//! (`lines`), span lines held until their trace is complete
//! (`trace_window`); and what they read into: the span model
//! (`span_events`, `spans`), the tree emitter (`tree`), chat messages
//! (`message`), an executor's reply to code (`code_reply`), and the value
//! helpers (`value`, `lax`, `pruned_value`, `shape`).

pub(crate) mod code_reply;
pub(crate) mod document;
pub(crate) mod lax;
pub(crate) mod lines;
pub(crate) mod message;
pub(crate) mod pruned_value;
pub(crate) mod shape;
pub(crate) mod span_events;
pub(crate) mod spans;

pub(crate) mod trace_window;
pub(crate) mod tree;
pub(crate) mod value;
