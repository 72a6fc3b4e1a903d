//! One module per binary: its clap `Args` and `run`.

pub mod tracegen;
pub mod group;
pub mod parse;
pub mod score;
