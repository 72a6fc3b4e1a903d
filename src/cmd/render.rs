//! triage-render: triage records in, the report people read out (markdown,
//! terminal table, HTML dashboard, JSON or CSV).

use std::path::PathBuf;

use clap::Parser;

use crate::cli::{self, CommonArgs, ConfigArg, OutputArgs, Tool, TopArg};
use crate::plumbing::diag::{Diag, OnBadInput};
use crate::plumbing::input;
use crate::plumbing::input::Input;
use crate::render::Report;
use crate::render::model::ReportLine;
use crate::stream::{self, Kindless, Record};

/// Render scored triage records (batch and pattern from triage-score, and
/// finding, verdict and change records) as a report: the markdown morning
/// report, a terminal table, a self-contained HTML dashboard, JSON or CSV.
#[derive(Parser, Debug)]
#[command(name = "triage-render", version)]
#[command(mut_arg("config", |a| a.help("Configuration the patterns were scored with (its recovery window, multiplier and weights appear in the report)")))]
pub struct Args {
    /// Record files; none or `-` reads stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub config: ConfigArg,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub top: TopArg,
    /// Hide verdicts (triage-explain) whose confidence is below P, from 0
    /// to 1; stderr says how many were hidden.
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = crate::cli::share)]
    pub min_confidence: f64,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl Tool for Args {
    const NAME: &'static str = "triage-render";
    const MAN_SECTIONS: &'static [(&'static str, &'static str)] = &[
        (
            "FORMATS",
            "md: the morning report: a summary, then for each of the top N patterns its metrics, \
why it matters, its earliest failures and the root causes of its runs (verdict records), and a suggested next action; \
the per-agent view; root causes and changes when the input has them.\n\n\
table: one row per pattern, sized to the terminal; coloured on a terminal unless NO_COLOR is set.\n\n\
html: one self-contained page (no script, no network): the summary, the top patterns and the per-agent view \
on the first screen (1400x900); charts, each pattern's details (samples, root causes) and the run-by-run root causes \
open in place (<details>).\n\n\
json: one document with the batch, every pattern with every field, findings, verdicts and changes.\n\n\
csv: one table, one row per pattern with every field (without patterns: one per verdict, else per finding, else per pattern change of a comparison, its nested fields as frequency.before columns). Records of other kinds do not fit its columns: a warning counts them.",
        ),
        (
            "ENVIRONMENT",
            "SOURCE_DATE_EPOCH: the report's date, in seconds since 1970, for reproducible output.\n\n\
NO_COLOR: no colour in the terminal table.\n\n\
TRIAGE_CONFIG: the configuration file, as --config.",
        ),
        (
            "EXAMPLES",
            "triage-parse runs/*.ndjson | triage-group | triage-score | triage-render --top 5\n\n\
triage-score < patterns.ndjson | triage-render --format html --refresh 300 -o /var/www/triage.html\n\n\
triage-render --format csv scored.ndjson > patterns.csv",
        ),
    ];

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn run(self, diag: &mut Diag) -> anyhow::Result<u8> {
        self.output.check()?;
        let config = self.config.load()?;
        let mut report = Report::default();
        let inputs = input::inputs(&self.files, diag)?;
        for input in &inputs {
            let events_before = report.events_not_shown;
            read_records(input, &mut report, self.common.on_bad_input(), diag)?;
            let events = report.events_not_shown - events_before;
            if events > 0 {
                diag.warn(
                    "events-not-shown",
                    format_args!(
                        "{}: {events} event records are not in the report: group and score them first \
(triage-parse | triage-group | triage-score | triage-render)",
                        input.name()
                    ),
                );
            }
        }
        input::refuse_empty_stdin(&inputs)?;
        refuse_events_only(&report)?;
        let before = report.verdicts.len();
        report
            .verdicts
            .retain(|v| v.confidence >= self.min_confidence);
        if report.verdicts.len() < before {
            diag.note(format_args!(
                "{} verdicts below --min-confidence {} hidden",
                before - report.verdicts.len(),
                self.min_confidence
            ));
        }
        report.finish();
        let mut scoring = config.scoring;
        // The window the scores were counted with, not this run's default.
        if let Some(window) = report.batch.as_ref().and_then(|b| b.recovery_window) {
            scoring.recovery_window = window;
        }
        self.output
            .emit(&report, scoring, &config.links, &self.top, diag)?;
        Ok(cli::EXIT_OK)
    }
}

/// Events with nothing grouped, explained or compared beside them would
/// render as "All clear" over failures never counted: a stage is missing.
fn refuse_events_only(report: &Report) -> anyhow::Result<()> {
    let nothing_else = report.batch.is_none()
        && report.patterns.is_empty()
        && report.findings.is_empty()
        && report.verdicts.is_empty()
        && report.changes.is_empty();
    if report.events_not_shown > 0 && nothing_else {
        anyhow::bail!(
            "{} event records and nothing grouped: group and score them first \
(triage-parse | triage-group | triage-score | triage-render)",
            report.events_not_shown
        );
    }
    Ok(())
}

/// Reads every record of one input into the report. A line that does not
/// read is skipped with a warning naming the file and line (an error under
/// `strict`), and counted in the report; a newer schema or a second batch
/// is an error.
fn read_records(
    input: &Input,
    report: &mut Report,
    on_bad: OnBadInput,
    diag: &mut Diag,
) -> anyhow::Result<()> {
    let inputs = std::slice::from_ref(input);
    let skipped = stream::read_records(inputs, diag, on_bad, KINDLESS, |rec, loc, diag| {
        let line = match rec {
            Record::Header(_) => return Ok(()),
            Record::Event { .. } => ReportLine::Event,
            Record::Other { kind, line } => match ReportLine::of_kind(*kind, line) {
                Ok(line) => line,
                Err(reason) => {
                    on_bad.skip(diag, "bad-record", loc, reason)?;
                    report.lines_skipped += 1;
                    return Ok(());
                }
            },
            // Refused by the reader (`KINDLESS`): never handed over.
            Record::Untyped(_) => return Ok(()),
        };
        report.add(line).map_err(|e| anyhow::anyhow!("{loc}: {e}"))
    })?;
    report.lines_skipped += skipped;
    Ok(())
}

/// Raw trace lines given where records were expected.
const KINDLESS: Kindless = Kindless::Refused(
    "not a triage record: no \"kind\" field (a trace file goes through \
     triage-parse | triage-group | triage-score first, or `triage report FILE`)",
);
