//! triage-explain: `event` and `run` records in, `finding` and `verdict`
//! records out, one verdict per failed run; with `--narrate`, scored
//! `pattern` records in and out with an LLM's narrative and fix.

use std::io::Write;
use std::path::PathBuf;

use clap::Parser;
use serde_json::{Map, Value};

use crate::cli::{self, CommonArgs, ConfigArg, LlmArgs, Tool, report_usage};
use crate::explain::{self, Explanation, batch::RunBatch, view::RunView};
use crate::llm::Client;
use crate::plumbing::diag::{Diag, OnBadInput};
use crate::plumbing::framing::RecordWriter;
use crate::plumbing::input;
use crate::plumbing::input::Input;
use crate::record::{Header, Kind, Pattern, RecordError, json_reason};
use crate::stream::{self, Kindless, Record};

/// Trace each failed run back to the agent and step that caused it: run the
/// detectors over every run's events, write what they found as `finding`
/// records and one `verdict` per failed run with the top 3 candidates.
/// With --narrate, add an LLM's root-cause narrative and one fix to the
/// top scored patterns; with --judge, let an LLM re-rank each verdict's
/// candidates.
#[derive(Parser, Debug)]
#[command(name = "triage-explain", version)]
#[command(mut_arg("config", |a| a.help("Configuration file (its [llm] section)")))]
pub struct Args {
    /// Event and run records (triage-parse output), or scored pattern
    /// records (triage-score output) with --narrate; none or `-` reads stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Write only the verdicts, not the findings behind them (headers and
    /// passed-through records still come first).
    #[arg(long)]
    pub verdicts_only: bool,
    /// Add an LLM's root-cause narrative and one concrete fix to each of the
    /// top N scored pattern records (fields narrative, fix, narrative_model).
    #[arg(long)]
    pub narrate: bool,
    /// With --narrate: the patterns narrated, the top N by rank.
    #[arg(long, short = 'n', value_name = "N", default_value_t = 3, requires = "narrate",
          value_parser = crate::cli::positive::<u64>)]
    pub top: u64,
    /// Let an LLM re-rank the top 3 candidates of each failed run's verdict;
    /// the verdict follows its pick and notes its reason (field judge).
    #[arg(long)]
    pub judge: bool,
    /// Like --judge, but show the LLM the whole run (cut to about 12,000
    /// tokens) with the detectors' findings as hints, and let it name any
    /// step; a step the run lacks, or an agent that did not act there, is
    /// refused with a warning and the rules' verdict stands.
    #[arg(long, conflicts_with = "judge")]
    pub judge_run: bool,
    /// Hide verdicts whose confidence (a calibrated probability of naming
    /// the right agent and step) is below P, from 0 to 1; their findings
    /// are still written, and stderr says how many were hidden.
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = crate::cli::share)]
    pub min_confidence: f64,
    /// Also give a verdict to each run whose outcome no record states but
    /// that has a failing step (a span dump, events without a run record);
    /// those verdicts carry `"outcome":"unknown"` and reports list them
    /// apart from the failed runs'. Without it such runs get findings only.
    #[arg(long)]
    pub unknown_outcome: bool,
    /// Print every detector, its name and what it looks for, one a line
    /// (tab-separated), and exit.
    #[arg(long)]
    pub list_detectors: bool,
    #[command(flatten)]
    pub config: ConfigArg,
    #[command(flatten)]
    pub llm: LlmArgs,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl Tool for Args {
    const NAME: &'static str = "triage-explain";
    const MAN_SECTIONS: &'static [(&'static str, &'static str)] = &[
        (
            "DETECTORS",
            "Each detector is a small function over one run; docs/explain.md (see SEE ALSO) lists them. \
Symptoms (what visibly failed) are walked back along data flow (values of one step reused verbatim by a later one, \
a tool reply and the step that asked for it, parent and child spans) to the earliest suspect they reach.",
        ),
        (
            "EXAMPLES",
            "triage-parse --format whowhen run.json | triage-explain\n\n\
triage-parse traces/*.jsonl | triage-explain --verdicts-only | jq -r 'select(.kind==\"verdict\") | [.run_id, .agent_id, .step, .category] | @tsv'\n\n\
triage-parse runs/*.ndjson | triage-group | triage-score | triage-explain --narrate | triage-render\n\n\
triage-parse run.json | OPENAI_BASE_URL=http://127.0.0.1:8080/v1 triage-explain --judge --model qwen2.5-7b",
        ),
        (
            "LLM",
            "--narrate and --judge send data to the LLM provider: for --narrate, each narrated pattern's numbers \
and up to 5 sample events (run id, turn, step, and their error message or output, at most 300 characters); for --judge, each failed run's task, \
an outline of its steps (160 characters each) and its candidates' evidence and text (1,200 characters each); \
for --judge-run, each failed run's task, every step's text cut to an even share of 48,000 characters, and the findings. \
Trace text is sent as delimited data the model is told never to follow. Requests are retried on 429 and 5xx \
with exponential backoff (or the server's Retry-After); a refused key is an error. Token usage and prompt-cache \
reads are printed on stderr.",
        ),
        (
            "ENVIRONMENT",
            "ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL: the Anthropic provider's key and base URL (default https://api.anthropic.com).\n\n\
OPENAI_API_KEY, OPENAI_BASE_URL: an OpenAI-compatible provider's key (optional for a local server) and base URL \
(default https://api.openai.com/v1).\n\n\
TRIAGE_CONFIG: the configuration file, as --config.",
        ),
    ];

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn run(self, diag: &mut Diag) -> anyhow::Result<u8> {
        if self.list_detectors {
            let mut out = std::io::stdout().lock();
            for d in explain::detectors::DETECTORS {
                writeln!(out, "{}\t{}", d.name, d.about)?;
            }
            out.flush()?;
            return Ok(cli::EXIT_OK);
        }
        self.llm.refuse_unused(
            self.narrate || self.judge || self.judge_run,
            "--narrate or --judge",
        )?;
        let config = self.config.load()?;
        let judging = self.judge || self.judge_run;
        let client = match (self.narrate, judging) {
            (false, false) => None,
            (true, _) => Some(self.llm.client(&config.llm, "--narrate")?),
            (false, true) => Some(self.llm.client(&config.llm, "--judge")?),
        };
        let inputs = input::inputs(&self.files, diag)?;
        let stdout = crate::plumbing::outfile::stdout(256 * 1024);
        let mut out = RecordWriter::new(
            Box::new(stdout) as Box<dyn Write>,
            self.common.line_buffered,
        );
        out.record(&Header::for_tool(Self::NAME))?;
        let mut read = Gathered {
            keep_patterns: self.narrate,
            ..Gathered::default()
        };
        read_inputs(
            &inputs,
            &mut read,
            &mut out,
            diag,
            self.common.on_bad_input(),
        )?;
        input::refuse_empty_stdin(&inputs)?;
        let mut patterns = std::mem::take(&mut read.patterns);
        if let Some(client) = client.as_ref().filter(|_| self.narrate) {
            narrate_top(client, &mut patterns, self.top, diag)?;
        }
        for (fields, _) in &patterns {
            out.record(fields)?;
        }
        let scope = if self.judge_run {
            crate::judge::Scope::Run
        } else {
            crate::judge::Scope::Candidates
        };
        let judge = client.as_ref().filter(|_| judging).map(|c| (c, scope));
        let shown = Shown {
            verdicts_only: self.verdicts_only,
            min_confidence: self.min_confidence,
            scope: if self.unknown_outcome {
                explain::VerdictScope::AlsoUnknownOutcome
            } else {
                explain::VerdictScope::Failed
            },
        };
        let hidden = explain_runs(read.runs, judge, shown, &mut out, diag)?;
        if hidden > 0 {
            diag.note(format_args!(
                "{hidden} verdicts below --min-confidence {} hidden",
                self.min_confidence
            ));
        }
        out.flush()?;
        if let Some(client) = &client {
            report_usage(client, diag);
        }
        Ok(cli::EXIT_OK)
    }
}

/// Which of the records explaining a run are written.
#[derive(Clone, Copy)]
struct Shown {
    verdicts_only: bool,
    min_confidence: f64,
    scope: explain::VerdictScope,
}

/// Explains every run and writes its findings and verdict; with a judge,
/// once it has seen every verdict (its requests run side by side).
/// Returns how many verdicts were hidden under the minimum confidence.
fn explain_runs(
    runs: RunBatch,
    judge: Option<(&Client, crate::judge::Scope)>,
    shown: Shown,
    out: &mut RecordWriter<Box<dyn Write>>,
    diag: &mut Diag,
) -> anyhow::Result<usize> {
    let mut hidden = 0;
    let mut write =
        |e: &Explanation, out: &mut RecordWriter<Box<dyn Write>>| -> std::io::Result<()> {
            if !shown.verdicts_only {
                for f in &e.findings {
                    out.record(f)?;
                }
            }
            match &e.verdict {
                Some(v) if v.confidence >= shown.min_confidence => out.record(v),
                Some(_) => {
                    hidden += 1;
                    Ok(())
                }
                None => Ok(()),
            }
        };
    let Some((client, scope)) = judge else {
        for run in runs.into_views() {
            write(&explain::explain(&run, shown.scope), out)?;
        }
        return Ok(hidden);
    };
    let mut explained: Vec<(RunView, Explanation)> = runs
        .into_views()
        .map(|run| {
            let e = explain::explain(&run, shown.scope);
            (run, e)
        })
        .collect();
    crate::judge::judge_all(client, &mut explained, scope, diag)?;
    for (_, e) in &explained {
        write(e, out)?;
    }
    Ok(hidden)
}

/// Narrates the top `top` of the scored patterns read, in place.
fn narrate_top(
    client: &Client,
    patterns: &mut [(Map<String, Value>, Pattern)],
    top: u64,
    diag: &mut Diag,
) -> anyhow::Result<()> {
    if patterns.is_empty() {
        diag.warn(
            "no-patterns",
            format_args!(
                "--narrate: no pattern records in the input (pipe triage-score output in)"
            ),
        );
        return Ok(());
    }
    let mut ranked: Vec<usize> = (0..patterns.len())
        .filter(|&i| patterns[i].1.score.is_some())
        .collect();
    if ranked.is_empty() {
        anyhow::bail!(
            "--narrate: the pattern records are not scored: pipe them through triage-score first"
        );
    }
    ranked.sort_by_key(|&i| patterns[i].1.score.as_ref().map_or(u64::MAX, |s| s.rank));
    ranked.truncate(usize::try_from(top).unwrap_or(usize::MAX));
    let chosen: Vec<&Pattern> = ranked.iter().map(|&i| &patterns[i].1).collect();
    let narratives = crate::narrate::narrate(client, &chosen, diag)?;
    for (i, n) in ranked.into_iter().zip(narratives) {
        if let Some(n) = n {
            n.insert_into(&mut patterns[i].0, client.model());
        }
    }
    Ok(())
}

/// What triage-explain read: the runs to explain and (for --narrate) the
/// pattern records, each as read and as typed.
#[derive(Default)]
struct Gathered {
    runs: RunBatch,
    keep_patterns: bool,
    patterns: Vec<(Map<String, Value>, Pattern)>,
}

impl Gathered {
    /// Keeps a pattern record as read and as typed (for --narrate).
    fn add_pattern(&mut self, line: &[u8]) -> Result<(), RecordError> {
        let fields: Map<String, Value> =
            serde_json::from_slice(line).map_err(|e| unreadable(line, &e))?;
        let typed = Pattern::from_line(line)?;
        self.patterns.push((fields, typed));
        Ok(())
    }
}

/// Reads the inputs: events and runs (and patterns, for --narrate) are
/// kept, headers checked and passed through, every other kind passed
/// through unchanged. A line with no `kind` is read as a trace event.
fn read_inputs(
    inputs: &[Input],
    read: &mut Gathered,
    out: &mut RecordWriter<Box<dyn Write>>,
    diag: &mut Diag,
    on_bad: OnBadInput,
) -> anyhow::Result<()> {
    stream::read_records(
        inputs,
        diag,
        on_bad,
        Kindless::Passed,
        |rec, loc, diag| match take(rec, read, out)? {
            Ok(()) => Ok(()),
            Err(reason) => on_bad.skip(diag, "bad-record", loc, reason),
        },
    )?;
    Ok(())
}

fn unreadable(line: &[u8], e: &serde_json::Error) -> RecordError {
    RecordError::Unreadable(json_reason(line, e))
}

/// Keeps what explain reads of one record and passes the rest on to
/// `out`. The inner error says why a record does not read.
fn take(
    rec: &Record<'_>,
    read: &mut Gathered,
    out: &mut RecordWriter<Box<dyn Write>>,
) -> std::io::Result<Result<(), RecordError>> {
    if let Some(taken) = read.runs.add_record(rec) {
        return Ok(taken);
    }
    Ok(match rec {
        Record::Other {
            kind: Some(Kind::Pattern),
            line,
        } if read.keep_patterns => read.add_pattern(line),
        Record::Header(line) | Record::Other { line, .. } => return out.raw_line(line).map(Ok),
        Record::Event { .. } | Record::Untyped(_) => Ok(()),
    })
}
