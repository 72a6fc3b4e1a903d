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

use std::process::ExitCode;

use crate::cli::{self, Tool};

/// Entry point of binary `T`: the shared shell of [`cli::main`], told the
/// names of its sibling binaries.
pub fn main<T: Tool>() -> ExitCode {
    cli::main::<T>(&binaries())
}

/// The tools `triage X` runs: X (`parse` for triage-parse) and the tool's
/// command line.
pub fn tools() -> Vec<(&'static str, clap::Command)> {
    fn tool<T: Tool>() -> (&'static str, clap::Command) {
        let x = T::NAME.strip_prefix("triage-").unwrap_or(T::NAME);
        (x, T::command())
    }
    vec![
        tool::<parse::Args>(),
        tool::<group::Args>(),
        tool::<score::Args>(),
        tool::<render::Args>(),
        tool::<diff::Args>(),
        tool::<explain::Args>(),
        tool::<alert::Args>(),
        tool::<recv::Args>(),
        tool::<tracegen::Args>(),
    ]
}

/// Every binary's name: `triage` and the tools.
pub fn binaries() -> Vec<String> {
    std::iter::once(triage::Args::NAME.to_string())
        .chain(tools().into_iter().map(|(x, _)| format!("triage-{x}")))
        .collect()
}
