//! triage-explain: `event` and `run` records in, `finding` and `verdict`
//! records out, one verdict per failed run.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use clap::Parser;

use crate::cli::{self, CommonArgs, Diag, Input, Tool};
use crate::explain::{self, view::EventExtras, view::RunView, view::Step};
use crate::ndjson::{ChunkReader, RecordWriter};
use crate::record::{EventView, Header, KindProbe, RunRec, SCHEMA};

/// Trace each failed run back to the agent and step that caused it: run the
/// detectors over every run's events, write what they found as `finding`
/// records and one `verdict` per failed run with the top 3 candidates.
#[derive(Parser, Debug)]
#[command(name = "triage-explain", version, about, long_about = None)]
pub struct Args {
    /// Event and run records (triage-parse output); none or `-` reads stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Write only the verdicts, not the findings behind them.
    #[arg(long)]
    pub verdicts_only: bool,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl Tool for Args {
    const NAME: &'static str = "triage-explain";
    const MAN_SECTIONS: &'static [(&'static str, &'static str)] = &[
        (
            "DETECTORS",
            "Each detector is a small function over one run; see the README's detector table. \
Symptoms (what visibly failed) are walked back along data flow (values of one step reused verbatim by a later one, \
a tool reply and the step that asked for it, parent and child spans) to the earliest suspect they reach.",
        ),
        (
            "EXAMPLES",
            "triage-parse --format whowhen run.json | triage-explain\n\n\
triage-parse traces/*.jsonl | triage-explain --verdicts-only | jq -r '[.run_id, .agent_id, .step, .category] | @tsv'",
        ),
    ];

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn run(self, diag: &mut Diag) -> anyhow::Result<u8> {
        let inputs = cli::inputs(&self.files)?;
        let stdout = std::io::BufWriter::with_capacity(256 * 1024, std::io::stdout().lock());
        let mut out = RecordWriter::new(
            Box::new(stdout) as Box<dyn Write>,
            self.common.line_buffered,
        );
        out.record(&Header::for_tool(Self::NAME))?;
        let mut runs = Runs::default();
        for input in &inputs {
            read_input(input, &mut runs, &mut out, diag, self.common.strict)?;
        }
        for run in runs.into_views() {
            let e = explain::explain(&run);
            if !self.verdicts_only {
                for f in &e.findings {
                    out.record(f)?;
                }
            }
            if let Some(v) = &e.verdict {
                out.record(v)?;
            }
        }
        out.flush()?;
        Ok(cli::EXIT_OK)
    }
}

/// The runs read so far, in first-appearance order.
#[derive(Default)]
struct Runs {
    order: Vec<String>,
    steps: HashMap<String, Vec<Step>>,
    records: HashMap<String, RunRec>,
}

impl Runs {
    fn slot(&mut self, run_id: &str) -> &mut Vec<Step> {
        if !self.steps.contains_key(run_id) {
            self.order.push(run_id.to_string());
        }
        self.steps.entry(run_id.to_string()).or_default()
    }

    fn into_views(mut self) -> impl Iterator<Item = RunView> {
        self.order.into_iter().map(move |id| {
            let steps = self.steps.remove(&id).unwrap_or_default();
            let rec = self.records.remove(&id);
            RunView::new(id, steps, rec)
        })
    }
}

/// Reads one input: events and runs are kept, headers checked and passed
/// through, every other kind passed through unchanged.
fn read_input(
    input: &Input,
    runs: &mut Runs,
    out: &mut RecordWriter<Box<dyn Write>>,
    diag: &mut Diag,
    strict: bool,
) -> anyhow::Result<()> {
    let name = input.name();
    let mut reader = ChunkReader::new(input.open()?);
    while let Some(mut chunk) = reader
        .next_chunk()
        .map_err(|e| anyhow::anyhow!("{name}: {}", cli::io_reason(&e)))?
    {
        for line in chunk.lines() {
            let at = format!("{name}:{}", line.number);
            match read_line(line.bytes, runs, out) {
                Ok(()) => {}
                Err(LineError::Fatal(reason)) => anyhow::bail!("{at}: {reason}"),
                Err(LineError::Io(e)) => return Err(e.into()),
                Err(LineError::Bad(reason)) if strict => anyhow::bail!("{at}: {reason}"),
                Err(LineError::Bad(reason)) => {
                    diag.warn("unreadable-input", format_args!("{at}: {reason}; skipped"))
                }
            }
        }
    }
    Ok(())
}

enum LineError {
    /// A line that cannot be read: skipped, or an error under --strict.
    Bad(String),
    /// Input this tool must refuse (a newer schema).
    Fatal(String),
    Io(std::io::Error),
}

fn read_line(
    bytes: &[u8],
    runs: &mut Runs,
    out: &mut RecordWriter<Box<dyn Write>>,
) -> Result<(), LineError> {
    let probe: KindProbe = serde_json::from_slice(bytes)
        .map_err(|e| LineError::Bad(format!("not valid JSON: {e}")))?;
    match probe.kind.as_deref() {
        Some("header") => {
            if let Some(schema) = probe.schema.filter(|&s| s > SCHEMA) {
                return Err(LineError::Fatal(format!(
                    "schema {schema} is newer than this tool's ({SCHEMA}); upgrade triage"
                )));
            }
            out.raw_line(bytes).map_err(LineError::Io)
        }
        Some("event") | None => {
            let ev: EventView =
                serde_json::from_slice(bytes).map_err(|e| LineError::Bad(e.to_string()))?;
            let extras: EventExtras =
                serde_json::from_slice(bytes).map_err(|e| LineError::Bad(e.to_string()))?;
            let step = Step::from_event(&ev, extras);
            runs.slot(&ev.run_id).push(step);
            Ok(())
        }
        Some("run") => {
            let rec: RunRec =
                serde_json::from_slice(bytes).map_err(|e| LineError::Bad(e.to_string()))?;
            runs.slot(&rec.run_id);
            runs.records.insert(rec.run_id.clone(), rec);
            Ok(())
        }
        Some(_) => out.raw_line(bytes).map_err(LineError::Io),
    }
}
