//! One module per binary: its clap `Args` and `run`.

pub mod alert;
pub mod diff;
pub mod explain;
pub mod group;
pub mod parse;
pub mod recv;
pub mod render;
pub mod score;
pub mod tracegen;
pub mod triage;
