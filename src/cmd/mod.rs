//! One module per binary: its clap `Args` and `run`.

pub mod parse;
pub mod render;
