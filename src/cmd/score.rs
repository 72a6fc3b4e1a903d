//! triage-score: `batch` and `pattern` records in, scored and ranked out.

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use rayon::prelude::*;

use crate::cli::{self, CommonArgs, ConfigArg, Tool};
use crate::plumbing::diag::{Diag, OnBadInput};
use crate::plumbing::framing::RecordWriter;
use crate::plumbing::input;
use crate::record::{Batch, Header, Kind, Pattern, RecordError};
use crate::score::score;
use crate::stream::{Kindless, Record, read_records};

/// Score each pattern (frequency, severity by classification, the
/// no-recovery multiplier, confidence, recovery latency, tail risk, trend)
/// and write them ranked by final score, highest first.
#[derive(Parser, Debug)]
#[command(name = "triage-score", version)]
#[command(mut_arg("config", |a| a.help("Configuration file: [scoring] recovery_window, no_recovery_multiplier, frequency_weight, severity_weight and [scoring.weights]")))]
pub struct Args {
    /// triage-group output; none or `-` reads stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub config: ConfigArg,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl Tool for Args {
    const NAME: &'static str = "triage-score";
    const MAN_SECTIONS: &'static [(&'static str, &'static str)] = &[
        (
            "SCORING",
            "frequency_score = 10 * frequency / highest frequency. severity_score = weight(classification) * 10, \
times no_recovery_multiplier (1.5) when no failure recovered within recovery_window (3) turns. \
final_score = 0.4 * frequency_score + 0.6 * severity_score. confidence = min(1, frequency / 5): high from 0.8, \
medium from 0.4. Trend compares the last 3 runs with the 3 before (split in half below 6 runs; \
\"insufficient data\" below 3).",
        ),
        (
            "EXAMPLES",
            "triage-parse runs/*.ndjson | triage-group | triage-score | jq 'select(.kind==\"pattern\") | .final_score'\n\n\
triage-group --merge shards/*.partial | triage-score --config triage.toml",
        ),
    ];

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn run(self, diag: &mut Diag) -> anyhow::Result<u8> {
        let config = self.config.load()?;
        let inputs = input::inputs(&self.files, diag)?;
        let mut out = RecordWriter::stdout(self.common.line_buffered);
        out.record(&Header::for_tool(Self::NAME))?;
        let mut batch: Option<Batch> = None;
        let mut patterns: Vec<Pattern> = Vec::new();
        // Run records follow the batch out, as triage-group wrote them.
        let mut runs: Vec<Vec<u8>> = Vec::new();
        let mut pending = PendingPatterns {
            on_bad: self.common.on_bad_input(),
            ..PendingPatterns::default()
        };
        let on_bad = self.common.on_bad_input();
        let skipped = read_records(
            &inputs,
            diag,
            on_bad,
            Kindless::TRACE_FILE,
            |rec, loc, diag| {
                match rec {
                    Record::Header(line) => out.raw_line(line)?,
                    Record::Other {
                        kind: Some(Kind::Batch),
                        line,
                    } => {
                        // Errors in input order: a bad pattern line before this.
                        pending.decode_into(&mut patterns, diag)?;
                        if batch.is_some() {
                            anyhow::bail!(
                                "{loc}: a second batch record; combine shards with `triage-group --merge` first"
                            );
                        }
                        batch = Some(
                            serde_json::from_slice(line)
                                .with_context(|| format!("{loc}: bad batch record"))?,
                        );
                    }
                    Record::Other {
                        kind: Some(Kind::Pattern),
                        line,
                    } => pending.push(loc.to_string(), line, &mut patterns, diag)?,
                    Record::Other {
                        kind: Some(Kind::Run),
                        line,
                    } => runs.push(line.to_vec()),
                    Record::Other { line, .. } | Record::Untyped(line) => out.raw_line(line)?,
                    Record::Event { .. } => {
                        pending.decode_into(&mut patterns, diag)?;
                        anyhow::bail!(
                            "{loc}: an event record; group events with triage-group first"
                        )
                    }
                }
                Ok(())
            },
        )?;
        pending.decode_into(&mut patterns, diag)?;
        input::refuse_empty_stdin(&inputs)?;
        // No records at all is an empty batch, as triage-group writes for
        // no events; patterns without their batch cannot be scored.
        let mut batch = match batch {
            Some(batch) => batch,
            None if patterns.is_empty() => Batch::default(),
            None => anyhow::bail!(
                "pattern records but no batch record in the input: score reads triage-group output"
            ),
        };
        batch.skipped += skipped + pending.skipped;
        // What a merge needed; a scored batch is merged no more.
        batch.open_timelines = Vec::new();
        batch.recovery_window = Some(config.scoring.recovery_window);
        let recounted = score(&batch, &mut patterns, &config.scoring);
        if recounted > 0 {
            let window = config.scoring.recovery_window;
            diag.warn(
                "recovery-window",
                format_args!(
                    "{recounted} of {} patterns were grouped with another recovery window than this \
one ({window}); their \"recovered\" is recounted with {window} (give triage-group and triage-score \
the same --config)",
                    patterns.len()
                ),
            );
        }
        out.record(&batch)?;
        for line in &runs {
            out.raw_line(line)?;
        }
        for p in &patterns {
            out.record(p)?;
        }
        out.flush()?;
        Ok(cli::EXIT_OK)
    }
}

/// Pattern lines waiting to be decoded, a batch at a time on the pool, in
/// input order: decoding each pattern's `run_counts` one after another on
/// the reading thread was most of triage-score's time at the end of a
/// pipeline (7.8-9.5 ms of its 16-22 ms after triage-group's output ended).
#[derive(Default)]
struct PendingPatterns {
    /// Each line with where it was read, for the warning.
    lines: Vec<(String, Vec<u8>)>,
    bytes: usize,
    /// A pattern that does not read is an error rather than skipped.
    on_bad: OnBadInput,
    /// Patterns skipped as unreadable.
    skipped: u64,
}

impl PendingPatterns {
    /// Lines decoded together: a batch is decoded while the next arrives.
    const BATCH_BYTES: usize = 256 * 1024;

    fn push(
        &mut self,
        loc: String,
        line: &[u8],
        into: &mut Vec<Pattern>,
        diag: &mut Diag,
    ) -> anyhow::Result<()> {
        self.bytes += line.len();
        self.lines.push((loc, line.to_vec()));
        if self.bytes >= Self::BATCH_BYTES {
            self.decode_into(into, diag)?;
        }
        Ok(())
    }

    /// Decodes the waiting lines in parallel onto `into`. A line that does
    /// not read is skipped with a warning, or is the error under --strict.
    fn decode_into(&mut self, into: &mut Vec<Pattern>, diag: &mut Diag) -> anyhow::Result<()> {
        let decoded: Vec<Result<Pattern, RecordError>> = self
            .lines
            .par_iter()
            .map(|(_, line)| Pattern::from_line(line))
            .collect();
        for ((loc, _), pattern) in self.lines.iter().zip(decoded) {
            match pattern {
                Ok(p) => into.push(p),
                Err(reason) => {
                    let reason = format!("bad pattern record: {reason}");
                    self.on_bad.skip(diag, "bad-record", loc, reason)?;
                    self.skipped += 1;
                }
            }
        }
        self.lines.clear();
        self.bytes = 0;
        Ok(())
    }
}
