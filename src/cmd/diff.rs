//! triage-diff: two batches in, `change` records out, and an exit status
//! CI can gate on.

use clap::Parser;

use crate::cli::{CommonArgs, SidesArgs, Tool, TraceFormatArg};
use crate::plumbing::diag::Diag;
use crate::plumbing::framing::RecordWriter;
use crate::record::Header;

/// Compare two batches (before and after a prompt change, a model upgrade,
/// an architecture change): summary metrics, per-classification changes and
/// new, resolved and persisting patterns, as `change` records.
#[derive(Parser, Debug)]
#[command(name = "triage-diff", version)]
pub struct Args {
    #[command(flatten)]
    pub sides: SidesArgs,
    #[command(flatten)]
    pub input: TraceFormatArg,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl Tool for Args {
    const NAME: &'static str = "triage-diff";
    const READS_TRACES: bool = true;
    const MAN_SECTIONS: &'static [(&'static str, &'static str)] = &[
        (
            "LABELS",
            "Counts change as \"up N%\" or \"down N%\" (rounded half to even), \"new\", \"resolved\" or \"stable\", \
with \"(tentative)\" when the larger side has fewer than 5 occurrences. Recovery latency changes read \
\"+x.x turns (a -> b)\", \"stable (g turns)\", \"new (...)\" or \"no recoveries (was ...)\".",
        ),
        (
            "EXAMPLES",
            "triage-diff before.ndjson after.ndjson | triage-render\n\n\
triage-diff --fail-on regression --tolerance 10 nightly/2026-04-24 nightly/2026-04-25 > changes.ndjson || echo worse\n\n\
triage-parse new/*.jsonl | triage-diff baseline.ndjson -",
        ),
    ];

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn run(self, diag: &mut Diag) -> anyhow::Result<u8> {
        let (changes, _) = self
            .sides
            .run(self.input.format, self.common.on_bad_input(), diag)?;
        let mut out = RecordWriter::stdout(self.common.line_buffered);
        out.record(&Header::for_tool(Self::NAME))?;
        for c in &changes {
            out.record(c)?;
        }
        out.flush()?;
        Ok(self.sides.gate(&changes, diag))
    }
}
