//! Parse, group and score in one process, with the same results as the
//! four-stage pipeline: inputs are trace files or any stage's records.

use std::io;

use crate::adapters::{self, DecodeSettings, Format, Peeked, Sink};
use crate::config::Config;
use crate::explain::{self, batch::RunBatch};
use crate::group::Grouper;
use crate::plumbing::diag::{Diag, OnBadInput};
use crate::plumbing::input::Input;
use crate::record::{Batch, Kind, Pattern, RunRec, SourceRec, Verdict};
use crate::score::score;
use crate::stream::{Kindless, Record, looks_like_records, read_records_from};

/// What one side of an analysis gives: the scored batch and patterns, and
/// the records of other kinds (findings, verdicts, …) for the renderer.
pub(crate) struct Analysis {
    pub batch: Batch,
    /// One per run, in the batch's run order.
    pub runs: Vec<RunRec>,
    pub patterns: Vec<Pattern>,
    pub other: Vec<Vec<u8>>,
}

/// How to read and score.
pub struct AnalyzeOptions {
    pub format: Format,
    pub config: Config,
    pub on_bad: OnBadInput,
    pub buffer_events: usize,
    pub text_limit: usize,
    /// `--max-document`: the largest whole-document input read.
    pub document_limit: u64,
}

impl AnalyzeOptions {
    pub(crate) fn new(config: Config) -> Self {
        AnalyzeOptions {
            format: Format::AUTO,
            config,
            on_bad: OnBadInput::Skip,
            buffer_events: crate::group::DEFAULT_BUFFER_EVENTS,
            text_limit: 2000,
            document_limit: adapters::DEFAULT_MAX_DOCUMENT,
        }
    }
}

/// Parses (when the inputs are trace files), groups and scores `inputs`,
/// with the results of triage-parse | triage-group | triage-score. Parsed
/// events go to the grouper without a round trip through JSON.
pub(crate) fn analyze(
    inputs: &[Input],
    opts: &AnalyzeOptions,
    diag: &mut Diag,
) -> anyhow::Result<Analysis> {
    let mut grouper = Grouper::with_buffer(opts.config.scoring.recovery_window, opts.buffer_events);
    let mut other = Vec::new();
    let peeked: Vec<Peeked> = inputs
        .iter()
        .map(adapters::peek)
        .collect::<anyhow::Result<_>>()?;
    let records: Vec<bool> = peeked
        .iter()
        .map(|(head, _)| looks_like_records(head))
        .collect();
    let skipped = if records.iter().all(|r| *r) {
        let mut skipped = 0;
        for (input, (head, rest)) in inputs.iter().zip(peeked) {
            let reader = io::Read::chain(io::Cursor::new(head), rest);
            skipped += feed(
                &input.name(),
                reader,
                &mut grouper,
                &mut other,
                opts.on_bad,
                diag,
            )?;
        }
        skipped
    } else if let Some(r) = records.iter().position(|r| *r) {
        let t = records
            .iter()
            .position(|r| !*r)
            .expect("not all are records");
        anyhow::bail!(
            "the inputs mix trace files ({}) and triage records ({}); give one kind at a time",
            inputs[t].name(),
            inputs[r].name()
        );
    } else {
        parse_and_feed(inputs, peeked, opts, &mut grouper, &mut other, diag)?
    };
    let (mut batch, runs, mut patterns) = grouper.finish();
    batch.skipped += skipped;
    batch.recovery_window = Some(opts.config.scoring.recovery_window);
    score(&batch, &mut patterns, &opts.config.scoring);
    Ok(Analysis {
        batch,
        runs,
        patterns,
        other,
    })
}

fn parse_and_feed(
    inputs: &[Input],
    peeked: Vec<Peeked>,
    opts: &AnalyzeOptions,
    grouper: &mut Grouper,
    other: &mut Vec<Vec<u8>>,
    diag: &mut Diag,
) -> anyhow::Result<u64> {
    let mut sink = Sink::in_process(grouper, other, diag, opts.on_bad, decode_settings(opts));
    for (input, (head, rest)) in inputs.iter().zip(peeked) {
        adapters::read_peeked(input, head, rest, opts.format, &mut sink)?;
    }
    // Skipped lines are counted in the source records the grouper received.
    Ok(0)
}

/// Feeds one stream of records to the grouper: events, sources and (as
/// partials) batches and patterns; other kinds are kept.
fn feed(
    path: &str,
    reader: impl io::Read + Send + 'static,
    grouper: &mut Grouper,
    other: &mut Vec<Vec<u8>>,
    on_bad: OnBadInput,
    diag: &mut Diag,
) -> anyhow::Result<u64> {
    read_records_from(
        path,
        reader,
        None,
        diag,
        on_bad,
        Kindless::TRACE_FILE,
        |rec, loc, diag| {
            match rec {
                Record::Header(_) => {}
                Record::Event { event, at, .. } => {
                    if let Some(w) = grouper.add_event_at(event, *at) {
                        diag.warn("out-of-order", format_args!("{loc}: {w}"));
                    }
                }
                Record::Other {
                    kind: Some(Kind::Source),
                    line,
                } => grouper.add_source(parse_record::<SourceRec>(line, loc)?),
                Record::Other {
                    kind: Some(Kind::Batch),
                    line,
                } => grouper.add_batch(&parse_record(line, loc)?),
                Record::Other {
                    kind: Some(Kind::Pattern),
                    line,
                } => grouper.add_pattern(&parse_record(line, loc)?),
                Record::Other {
                    kind: Some(Kind::Run),
                    line,
                } => match serde_json::from_slice::<RunRec>(line) {
                    Ok(run) => grouper.add_run(&run),
                    Err(e) => {
                        on_bad.skip(diag, "bad-record", loc, format!("bad run record: {e}"))?
                    }
                },
                Record::Other { line, .. } | Record::Untyped(line) => other.push(line.to_vec()),
            }
            Ok(())
        },
    )
}

fn parse_record<T: serde::de::DeserializeOwned>(
    line: &[u8],
    loc: &crate::stream::Location<'_>,
) -> anyhow::Result<T> {
    serde_json::from_slice(line).map_err(|e| anyhow::anyhow!("{loc}: bad record: {e}"))
}

/// The verdicts of the failed runs of `inputs` (trace files, or
/// triage-parse's event and run records): what `triage-parse FILES |
/// triage-explain --verdicts-only` writes, for `triage report --explain`.
/// The report's own read has already warned of what does not read.
pub(crate) fn verdicts(
    inputs: &[Input],
    opts: &AnalyzeOptions,
    scope: explain::VerdictScope,
    diag: &Diag,
) -> anyhow::Result<Vec<Verdict>> {
    let mut runs = RunBatch::default();
    let mut quiet = Diag::new(diag.tool(), true);
    for input in inputs {
        let (head, rest) = adapters::peek(input)?;
        if looks_like_records(&head) {
            let reader = io::Read::chain(io::Cursor::new(head), rest);
            read_records_from(
                &input.name(),
                reader,
                None,
                &mut quiet,
                OnBadInput::Skip,
                Kindless::Passed,
                |rec, _, _| {
                    // A record that does not read is left out.
                    let _ = runs.add_record(rec);
                    Ok(())
                },
            )?;
        } else {
            let mut other = Vec::new();
            let mut sink = Sink::in_process(
                &mut runs,
                &mut other,
                &mut quiet,
                opts.on_bad,
                decode_settings(opts),
            );
            adapters::read_peeked(input, head, rest, opts.format, &mut sink)?;
        }
    }
    Ok(runs
        .into_views()
        .filter_map(|run| explain::explain(&run, scope).verdict)
        .collect())
}

/// What the readers are told, from the options.
fn decode_settings(opts: &AnalyzeOptions) -> DecodeSettings {
    DecodeSettings {
        text_limit: opts.text_limit,
        document_limit: opts.document_limit,
        classifier: crate::classify::Classifier::new(&opts.config.classify),
        ..DecodeSettings::default()
    }
}
