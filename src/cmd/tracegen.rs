//! triage-gen: deterministic agent-triage-schema traces for benchmarks and
//! load tests.

use clap::Parser;

use crate::cli::{self, CommonArgs, Diag, Tool};
use crate::tracegen::{GenSpec, generate};

/// Write deterministic agent-triage-schema NDJSON traces: N events over R
/// runs and A agents, with failure streaks, recoveries, divergence fields
/// and, with --messy, the mess real files have.
#[derive(Parser, Debug)]
#[command(
    name = "triage-gen",
    version,
    // It reads no input, so there is nothing to be strict about.
    mut_arg("strict", |a| a.hide(true))
)]
pub struct Args {
    /// Number of events.
    #[arg(long, short = 'n', default_value_t = 10_000)]
    pub events: u64,
    /// Number of runs.
    #[arg(long, short = 'r', default_value_t = 100, value_parser = crate::cli::positive::<u64>)]
    pub runs: u64,
    /// Number of agents (at most 8).
    #[arg(long, short = 'a', default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=8))]
    pub agents: u32,
    /// Seed: the same seed gives the same file.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Share of agent turns that start a failure streak, from 0 to 1.
    #[arg(long, default_value_t = 0.08, value_parser = crate::cli::share, allow_hyphen_values = true)]
    pub failure_rate: f64,
    /// Lax values, unknown labels, unreadable lines, shuffled and interleaved runs.
    #[arg(long)]
    pub messy: bool,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl Tool for Args {
    const NAME: &'static str = "triage-gen";
    const MAN_SECTIONS: &'static [(&'static str, &'static str)] = &[(
        "EXAMPLES",
        "triage-gen -n 1000000 -r 1000 > big.ndjson\n\ntriage-gen -n 100000 -r 1 > one-run.ndjson\n\n\
triage-gen --messy --seed 7 | triage-parse | triage-group | triage-score",
    )];

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn run(self, _diag: &mut Diag) -> anyhow::Result<u8> {
        let spec = GenSpec {
            events: self.events,
            runs: self.runs,
            agents: self.agents,
            seed: self.seed,
            failure_rate: self.failure_rate,
            messy: self.messy,
        };
        let mut out = crate::outfile::stdout(1 << 20);
        generate(&spec, &mut out)?;
        std::io::Write::flush(&mut out)?;
        Ok(cli::EXIT_OK)
    }
}
