//! triage-group: `event` records in, one `batch` and the `pattern` records
//! out; with `--merge`, partial batches and patterns of shards combined.

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;

use crate::cli::{self, CommonArgs, ConfigArg, Tool};
use crate::group::{DEFAULT_BUFFER_EVENTS, Grouper};
use crate::plumbing::diag::Diag;
use crate::plumbing::framing::RecordWriter;
use crate::plumbing::input;
use crate::record::{Batch, Header, Kind, Pattern, RunRec, SourceRec};
use crate::stream::{Kindless, Record, read_records};

/// Cluster failure events into incident patterns (agent, tool,
/// classification, divergence fields) and follow each failure to the
/// agent's next success. Writes a `batch` record, one `run` record per run
/// (its outcome, why, task and trial, and its failure events) and one
/// `pattern` record per signature in first-appearance order; other kinds
/// pass through.
#[derive(Parser, Debug)]
#[command(name = "triage-group", version)]
#[command(mut_arg("config", |a| a.help("Configuration file ([scoring] recovery_window sets what `recovered` counts)")))]
pub struct Args {
    /// Record files (triage-parse output, or with --merge shard outputs); none or `-` reads stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Combine partial `batch` and `pattern` records of shards into the result one pass would give.
    #[arg(long)]
    pub merge: bool,
    #[command(flatten)]
    pub config: ConfigArg,
    /// Events held for exact recovery in any order before assuming each run's events come in turn order.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BUFFER_EVENTS)]
    pub buffer_events: usize,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl Tool for Args {
    const NAME: &'static str = "triage-group";
    const MAN_SECTIONS: &'static [(&'static str, &'static str)] = &[
        (
            "MEMORY",
            "Up to --buffer-events events are held so that recovery is exact whatever the order of the lines. \
Past that, memory grows with the patterns and the (run, agent) timelines that wait for a success, not with the \
events, and each run's events are expected in turn order; a run that breaks that order is named in a warning.",
        ),
        (
            "EXAMPLES",
            "triage-parse runs/*.ndjson | triage-group | triage-score\n\n\
ls shards/*.ndjson | parallel 'triage-parse {} | triage-group > {.}.partial'; triage-group --merge shards/*.partial | triage-score",
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
        let mut grouper = Grouper::with_buffer(config.scoring.recovery_window, self.buffer_events)
            .keeping_open_timelines();
        let merge = self.merge;
        let on_bad = self.common.on_bad_input();
        let skipped = read_records(
            &inputs,
            diag,
            on_bad,
            Kindless::TRACE_FILE,
            |rec, loc, diag| {
                match rec {
                    Record::Header(line) => out.raw_line(line)?,
                    Record::Event { event, at, .. } => {
                        if let Some(w) = grouper.add_event_at(event, *at) {
                            diag.warn(
                            "out-of-order",
                            format_args!(
                                "{loc}: {w} (it came after the first {} events: sort by run and turn, or raise --buffer-events)",
                                self.buffer_events
                            ),
                        );
                        }
                    }
                    Record::Other {
                        kind: Some(Kind::Source),
                        line,
                    } => {
                        let s: SourceRec = serde_json::from_slice(line)
                            .with_context(|| format!("{loc}: bad source record"))?;
                        grouper.add_source(s);
                    }
                    Record::Other {
                        kind: Some(Kind::Run),
                        line,
                    } => match serde_json::from_slice::<RunRec>(line) {
                        Ok(r) => grouper.add_run(&r),
                        Err(e) => {
                            on_bad.skip(diag, "bad-record", loc, format!("bad run record: {e}"))?
                        }
                    },
                    Record::Other {
                        kind: Some(Kind::Batch),
                        line,
                    } if merge => {
                        let b: Batch = serde_json::from_slice(line)
                            .with_context(|| format!("{loc}: bad batch record"))?;
                        grouper.add_batch(&b);
                    }
                    Record::Other {
                        kind: Some(Kind::Pattern),
                        line,
                    } if merge => {
                        let p = Pattern::from_line(line)
                            .with_context(|| format!("{loc}: bad pattern record"))?;
                        grouper.add_pattern(&p);
                    }
                    Record::Other {
                        kind: Some(kind @ (Kind::Batch | Kind::Pattern)),
                        ..
                    } => anyhow::bail!(
                        "{loc}: a {kind} record: this input is grouped already; \
pass it to triage-score, or combine shards with `triage-group --merge`"
                    ),
                    Record::Other { line, .. } | Record::Untyped(line) => out.raw_line(line)?,
                }
                Ok(())
            },
        )?;
        input::refuse_empty_stdin(&inputs)?;
        let (mut batch, runs, patterns) = grouper.finish_lazily();
        batch.skipped += skipped;
        out.record(&batch)?;
        for r in &runs {
            out.record(r)?;
        }
        for p in patterns {
            out.record(&p)?;
        }
        out.flush()?;
        Ok(cli::EXIT_OK)
    }
}
