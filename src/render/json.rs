//! The JSON report: one document with the batch, every pattern with every
//! field (its extra fields too), findings, verdicts and changes, for scripts.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::{Map, Value};

use super::RenderOptions;
use super::model::{Report, ReportPattern};
use crate::record::{Batch, Finding, SourceRec, Verdict};

#[derive(Serialize)]
struct Document<'a> {
    generated: String,
    runs_total: u64,
    skipped: u64,
    max_severity: f64,
    batch: Option<&'a Batch>,
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
    let doc = Document {
        generated: opts.generated.to_string(),
        runs_total: report.runs_total(),
        skipped: report.skipped(),
        max_severity: opts.scoring.max_severity(),
        batch: report.batch.as_ref(),
        sources: &report.sources,
        patterns: &report.patterns,
        agents: report.agent_view(),
        findings: &report.findings,
        verdicts: &report.verdicts,
        changes: &report.changes,
    };
    let text = serde_json::to_string_pretty(&doc).map_err(io::Error::other)?;
    out.write_all(super::escape_bidi(text).as_bytes())?;
    writeln!(out)
}
