//! One module per binary: its clap `Args` and `run`.

pub mod explain;
pub mod parse;
