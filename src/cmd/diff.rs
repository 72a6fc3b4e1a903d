//! triage-diff: two batches in, `change` records out, and an exit status
//! CI can gate on.

use std::path::{Path, PathBuf};

use clap::Parser;

use crate::adapters::Format;
use crate::cli::{self, CommonArgs, ConfigArg, Tool, TraceFormatArg};
use crate::diff::{FailOn, GateOptions, compare, failing};
use crate::io::diag::{Diag, OnBadInput};
use crate::io::input::Input;
use crate::io::ndjson::RecordWriter;
use crate::io::{diag, input};
use crate::pipeline::{Analysis, AnalyzeOptions, analyze};
use crate::record::{Change, ChangeScope, Header};

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

/// The two batches, the gates and the configuration: what triage-diff and
/// `triage compare` share.
#[derive(clap::Args, Debug)]
#[command(mut_arg("config", |a| a.help("Configuration file ([scoring] as triage-score reads it)")))]
pub struct SidesArgs {
    /// The earlier batch: a trace file, a directory of them, or any stage's records; `-` is stdin.
    #[arg(value_name = "BEFORE")]
    pub before: PathBuf,
    /// The later batch, likewise.
    #[arg(value_name = "AFTER")]
    pub after: PathBuf,
    /// Exit 1 when this holds: `new` (a new pattern), `regression` (more failure or unrecovered
    /// events per run in any classification, beyond noise at --alpha), `score>=X` (a pattern after
    /// scores at least X; scores are scaled to each batch, so `regression` does not compare them),
    /// `pass-rate` (the pass rate fell, beyond noise at --alpha) or `pass-rate<X` (the pass rate
    /// after is below X, as 0.8 or 80%). Repeatable.
    #[arg(long, value_name = "COND")]
    pub fail_on: Vec<FailOn>,
    /// Percent a rate per run may grow before `regression` holds.
    #[arg(long, value_name = "PCT", default_value_t = 0.0)]
    pub tolerance: f64,
    /// The significance a rise (`regression`) or a drop (`pass-rate`) must reach: the chance of a
    /// change at least as large if nothing had changed.
    #[arg(long, value_name = "P", default_value_t = 0.05, value_parser = alpha)]
    pub alpha: f64,
    /// A classification or pattern with fewer events than N on both sides cannot trip a gate
    /// (the comparison marks those below 5 "tentative"; `--min-events 5` leaves them out).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub min_events: u64,
    #[command(flatten)]
    pub config: ConfigArg,
}

impl SidesArgs {
    /// Compares the sides, trace files read as `format`; returns the changes
    /// and the exit status the gates give.
    pub fn run(
        &self,
        format: Format,
        on_bad: OnBadInput,
        diag: &mut Diag,
    ) -> anyhow::Result<(Vec<Change>, AnalyzeOptions)> {
        let mut opts = AnalyzeOptions::new(self.config.load()?);
        opts.format = format;
        opts.on_bad = on_bad;
        let changes = diff_sides(&self.before, &self.after, &opts, diag)?;
        Ok((changes, opts))
    }

    pub fn gate(&self, changes: &[Change], diag: &mut Diag) -> u8 {
        let opts = GateOptions {
            tolerance_pct: self.tolerance,
            min_events: self.min_events,
            alpha: self.alpha,
        };
        gate(&self.fail_on, opts, changes, diag)
    }
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

fn alpha(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(a) if a > 0.0 && a < 1.0 => Ok(a),
        _ => Err(format!(
            "{s:?}: a significance level between 0 and 1, such as 0.05"
        )),
    }
}

/// Analyzes both sides and compares them.
pub fn diff_sides(
    before: &Path,
    after: &Path,
    opts: &AnalyzeOptions,
    diag: &mut Diag,
) -> anyhow::Result<Vec<Change>> {
    if before.as_os_str() == "-" && after.as_os_str() == "-" {
        anyhow::bail!("only one side can be stdin (-)");
    }
    let inputs = side_inputs(before, diag)?;
    let b = analyze(&inputs, opts, diag)?;
    input::refuse_empty_stdin(&inputs)?;
    something_to_compare(before, &b)?;
    let inputs = side_inputs(after, diag)?;
    let a = analyze(&inputs, opts, diag)?;
    input::refuse_empty_stdin(&inputs)?;
    something_to_compare(after, &a)?;
    let changes = compare(&b, &a, &opts.config.scoring);
    let sides = [
        (false, before, "empty-before", "AFTER counts as new"),
        (true, after, "empty-after", "BEFORE counts as resolved"),
    ];
    for (is_after, path, code, meaning) in sides {
        if side_is_empty(&changes, is_after) {
            diag.warn(
                code,
                format_args!(
                    "{}: no runs were read, so every pattern of {meaning}",
                    path.display()
                ),
            );
        }
    }
    Ok(changes)
}

/// Refuses a side that gave no events or patterns but did hold something:
/// records of other kinds (triage-explain's, triage-diff's own) or input
/// that could not be read. Compared as an empty batch, it would make
/// everything on the other side new, or pass every gate. An empty input
/// is an empty batch (a night without runs).
fn something_to_compare(side: &Path, a: &Analysis) -> anyhow::Result<()> {
    let read = a.batch.events_total > 0 || a.batch.runs_total > 0 || !a.patterns.is_empty();
    if read || (a.other.is_empty() && a.batch.skipped == 0) {
        return Ok(());
    }
    let mut kinds: Vec<String> = a
        .other
        .iter()
        .filter_map(|line| serde_json::from_slice::<KindOnly>(line).ok()?.kind)
        .collect();
    kinds.sort();
    kinds.dedup();
    let held = match (kinds.is_empty(), a.batch.skipped) {
        (false, _) => format!("it holds only {} records", kinds.join(", ")),
        (true, n) => format!("{n} of its lines or values could not be read"),
    };
    anyhow::bail!(
        "{}: nothing to compare: no events or patterns, and {held} (give trace files, events, or triage-group or triage-score output)",
        side.display()
    )
}

/// Whether the comparison's AFTER side (else BEFORE) read no runs, events
/// or patterns (the summary change says; the warning and the gate both
/// ask).
fn side_is_empty(changes: &[Change], after: bool) -> bool {
    changes.iter().any(|c| match &c.change {
        ChangeScope::Summary(s) => {
            let (totals, patterns) = if after {
                (&s.after, s.patterns.after)
            } else {
                (&s.before, s.patterns.before)
            };
            totals.runs == 0 && totals.events == 0 && patterns == 0
        }
        _ => false,
    })
}

#[derive(serde::Deserialize)]
struct KindOnly {
    kind: Option<String>,
}

/// The exit status the `--fail-on` conditions give: each reason on its
/// own line, then one last line with the verdict, `gate failed: 2
/// regressions (…)` or `gate passed`. A side with no runs cannot pass a
/// gate: a candidate that wrote no traces would pass every condition, and
/// against an empty baseline everything is new.
pub fn gate(conditions: &[FailOn], opts: GateOptions, changes: &[Change], diag: &mut Diag) -> u8 {
    let judged = !conditions.is_empty();
    for (after, side) in [(false, "BEFORE"), (true, "AFTER")] {
        if judged && side_is_empty(changes, after) {
            diag.warn(
                "fail-on",
                format_args!(
                    "--fail-on cannot judge a comparison whose {side} batch has no runs (exit 2)"
                ),
            );
            return cli::EXIT_ERROR;
        }
    }
    if !judged {
        return cli::EXIT_OK;
    }
    if conditions
        .iter()
        .any(|c| matches!(c, FailOn::PassRate | FailOn::PassRateBelow(_)))
        && let Some(p) = changes.iter().find_map(|c| match &c.change {
            ChangeScope::PassRate(p) => Some(p),
            _ => None,
        })
    {
        for (side, t) in [("BEFORE", &p.before), ("AFTER", &p.after)] {
            if t.pass_rate.is_none() {
                diag.warn(
                    "fail-on",
                    format_args!(
                        "--fail-on pass-rate cannot judge a comparison whose {side} batch has no run of known outcome (exit 2)"
                    ),
                );
                return cli::EXIT_ERROR;
            }
            if t.unknown > 0 {
                diag.warn(
                    "unknown-outcome",
                    format_args!(
                        "{} of the {} runs {side} have no known outcome and are left out of its pass rate",
                        t.unknown, t.runs
                    ),
                );
            }
        }
    }
    let tool = diag.tool();
    let mut held = Vec::new();
    let mut subjects = Vec::new();
    let mut below = 0;
    for cond in conditions {
        let (reasons, small) = failing(cond, changes, opts);
        below += small;
        let in_verdict = matches!(cond, FailOn::PassRate | FailOn::PassRateBelow(_));
        for r in reasons.iter().filter(|_| !in_verdict) {
            diag::to_stderr(format_args!("{tool}: fail-on {cond}: {}\n", r.text));
        }
        match cond {
            // The verdict itself says both rates and the p-value.
            FailOn::PassRate | FailOn::PassRateBelow(_) => {
                held.extend(reasons.into_iter().map(|r| r.text));
            }
            _ if !reasons.is_empty() => {
                held.push(cond.count_text(reasons.len()));
                subjects.extend(reasons.into_iter().map(|r| r.subject));
            }
            _ => {}
        }
    }
    let unjudged =
        (below > 0).then(|| format!("{below} below --min-events {} not judged", opts.min_events));
    if held.is_empty() {
        let note = unjudged.map(|n| format!(" ({n})")).unwrap_or_default();
        diag::to_stderr(format_args!("{tool}: gate passed{note}\n"));
        return cli::EXIT_OK;
    }
    subjects.dedup();
    let (named, more) = crate::render::first_named(&subjects);
    let mut why = format!(
        "{}{}",
        named.join(", "),
        crate::render::more_sources_text(more)
    );
    if let Some(n) = unjudged {
        if !why.is_empty() {
            why.push_str("; ");
        }
        why.push_str(&n);
    }
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(" ({why})")
    };
    diag::to_stderr(format_args!(
        "{tool}: gate failed: {}{why}\n",
        held.join("; ")
    ));
    cli::EXIT_NEGATIVE
}

/// A side's inputs: stdin, a file, or the trace files in a directory,
/// recursively and in path order (`io::input`), what else it holds named
/// in a warning.
pub fn side_inputs(path: &Path, diag: &mut Diag) -> anyhow::Result<Vec<Input>> {
    if path.as_os_str() == "-" {
        return input::resolve_inputs(&[]);
    }
    input::inputs(&[path.to_path_buf()], diag)
}
