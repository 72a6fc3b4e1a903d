//! triage-gen: deterministic agent-triage-schema traces for benchmarks and
//! load tests.

use clap::Parser;

use crate::cli::{self, CommonArgs, Tool};
use crate::plumbing::diag::Diag;
use crate::tracegen::{GenFormat, GenSpec, generate};

/// Write deterministic agent traces: N events over R runs and A agents,
/// with failure streaks, recoveries, divergence fields and, with --messy,
/// the mess real files have. As agent-triage-schema NDJSON, or with
/// --format otlp the same events as OTLP/JSON spans, one export request a
/// line as a Collector's file exporter writes them (for load tests of a
/// trace pipeline).
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
    /// What to write: agent-triage NDJSON, or OTLP/JSON trace requests.
    #[arg(long, value_enum, default_value = "ndjson")]
    pub format: OutFormat,
    /// Spans per OTLP request line (with --format otlp).
    #[arg(long, default_value_t = 50, value_parser = crate::cli::positive::<usize>)]
    pub spans_per_request: usize,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// The output formats of triage-gen.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutFormat {
    Ndjson,
    Otlp,
}

impl Tool for Args {
    const NAME: &'static str = "triage-gen";
    const MAN_SECTIONS: &'static [(&'static str, &'static str)] = &[(
        "EXAMPLES",
        "triage-gen -n 1000000 -r 1000 > big.ndjson\n\ntriage-gen -n 100000 -r 1 > one-run.ndjson\n\n\
triage-gen --messy --seed 7 | triage-parse | triage-group | triage-score\n\n\
triage-gen --format otlp -n 200000 -r 200 > spans.jsonl",
    )];

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn run(self, _diag: &mut Diag) -> anyhow::Result<u8> {
        if self.messy && self.format == OutFormat::Otlp {
            anyhow::bail!(
                "--messy writes lax NDJSON values and unreadable lines; --format otlp writes well-formed spans only"
            );
        }
        let spec = GenSpec {
            events: self.events,
            runs: self.runs,
            agents: self.agents,
            seed: self.seed,
            failure_rate: self.failure_rate,
            messy: self.messy,
            format: match self.format {
                OutFormat::Ndjson => GenFormat::Ndjson,
                OutFormat::Otlp => GenFormat::Otlp,
            },
            spans_per_request: self.spans_per_request,
        };
        let mut out = crate::plumbing::outfile::stdout(1 << 20);
        generate(&spec, &mut out)?;
        std::io::Write::flush(&mut out)?;
        Ok(cli::EXIT_OK)
    }
}
