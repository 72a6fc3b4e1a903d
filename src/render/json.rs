//! The JSON report: one document with the batch, its runs, every pattern
//! with every field (its extra fields too), findings, verdicts and changes,
//! for scripts.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::{Map, Value};

use super::RenderOptions;
use super::model::{Report, ReportPattern};
use crate::outcomes::{SilentFailures, TaskSummary};
use crate::record::{Batch, Finding, RunRec, SourceRec, Verdict};

#[derive(Serialize)]
struct Document<'a> {
    generated: String,
    runs_total: u64,
    skipped: u64,
    max_severity: f64,
    batch: Option<&'a Batch>,
    runs_failed: u64,
    runs_succeeded: u64,
    runs_unknown: u64,
    /// Failed runs no failure event explains, by reason.
    failed_without_failing_step: Vec<SilentFailures>,
    /// Pass counts and pass^k where tasks ran more than once.
    #[serde(skip_serializing_if = "Option::is_none")]
    tasks: Option<TaskSummary>,
    /// The `run` records: every run's outcome, why, task and trial.
    runs: &'a [RunRec],
    /// `source` records that came without a batch.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    sources: &'a [SourceRec],
    patterns: &'a [ReportPattern],
    /// The per-agent view (agent × classification).
    agents: Vec<super::model::AgentRow>,
    findings: &'a [Finding],
    verdicts: &'a [Verdict],
    changes: &'a [Map<String, Value>],
}

pub(crate) fn write(report: &Report, opts: &RenderOptions, out: &mut dyn Write) -> io::Result<()> {
    let outcomes = report.outcomes();
    let doc = Document {
        generated: opts.generated.to_string(),
        runs_total: report.runs_total(),
        skipped: report.skipped(),
        max_severity: opts.scoring.max_severity(),
        batch: report.batch.as_ref(),
        runs_failed: outcomes.failed,
        runs_succeeded: outcomes.succeeded,
        runs_unknown: outcomes.unknown(),
        failed_without_failing_step: report.silent_failures(),
        tasks: report.tasks(),
        runs: &report.runs,
        sources: &report.sources,
        patterns: &report.patterns,
        agents: report.agent_view(),
        findings: &report.findings,
        verdicts: &report.verdicts,
        changes: &report.changes,
    };
    let text = serde_json::to_string_pretty(&doc).map_err(io::Error::other)?;
    out.write_all(super::escape_for_terminal(text).as_bytes())?;
    writeln!(out)
}
