//! triage-parse: trace files in, `event`, `run` and `source` records out.

use std::path::PathBuf;

use clap::Parser;

use crate::adapters::{self, DecodeSettings, Sink, TimeFilter};
use crate::classify::Classifier;
use crate::cli::{self, CommonArgs, Diag, Tool, TraceFormatArg};
use crate::config::Config;
use crate::ndjson::RecordWriter;
use crate::record::Header;
use crate::timestamp::Timestamp;

/// Read trace files of any supported format and write one `event` record per
/// action (and `run` records where the source knows the run's task and
/// outcome), then one `source` record per input.
#[derive(Parser, Debug)]
#[command(name = "triage-parse", version)]
pub struct Args {
    /// Trace files; none or `-` reads stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub input: TraceFormatArg,
    /// Keep only events at or after this time (RFC 3339 or YYYY-MM-DD).
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub since: Option<Timestamp>,
    /// Keep only events before this time (RFC 3339 or YYYY-MM-DD).
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub until: Option<Timestamp>,
    /// Cut input and output texts to this many bytes (their digest covers the whole); 0 keeps
    /// only the digest and the "…" that marks a text cut short.
    #[arg(long, value_name = "BYTES", default_value_t = 2000)]
    pub max_text: usize,
    /// Configuration file; its [classify] section adds failure classification rules.
    #[arg(long, short = 'c', value_name = "FILE", env = "TRIAGE_CONFIG")]
    pub config: Option<PathBuf>,
    /// Threads to decode on, the one writing the records included [default: one per core].
    #[arg(long, short = 'j', value_name = "N", value_parser = crate::cli::positive::<usize>)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub common: CommonArgs,
}

fn parse_time(s: &str) -> Result<Timestamp, String> {
    Timestamp::parse(s)
        .ok_or_else(|| format!("{s:?} is not a date-time (try 2026-04-25 or 2026-04-25T12:00:00Z)"))
}

impl Tool for Args {
    const NAME: &'static str = "triage-parse";
    const MAN_SECTIONS: &'static [(&'static str, &'static str)] = &[
        (
            "FORMATS",
            "ndjson: agent-triage TraceEvent lines, with the reference's lax values (turn \"3\" or 2.0; \
action_succeeded true, \"yes\", 0 or 1; failure_classification null, \"\" or \"null\" meaning none).\n\n\
otel: spans as JSON: the OpenTelemetry SDKs' span dumps (Python's to_json and console exporter with 0x ids \
and SpanKind.INTERNAL, JS ReadableSpans with the Vercel AI SDK's ai.* attributes), Phoenix / OpenInference spans \
(context.trace_id, parent_id, span_kind, status_code, exception events, attributes nested or flat), OpenInference \
and GenAI attribute maps (one span each), and agent-triage's minimal span list. One object, a list, JSONL of \
objects or of lists, or pretty-printed objects one after another; each trace is emitted parent first, siblings by \
start time. Status \"STATUS_CODE_OK\", \"OK\", \"UNSET\", 0 and 1 are success; \"STATUS_CODE_ERROR\", \"ERROR\" and 2 failure.\n\n\
otlp: OTLP/HTTP JSON trace requests, one per file or one per line (the Collector's file exporter). Reads the \
agent-triage receiver's attributes (agent.id, run.id, turn, action.tool, action.succeeded, failure.classification, \
divergence.fields), the OpenTelemetry GenAI conventions, OpenInference and OpenLLMetry (traceloop.*). Each trace is emitted in pre-order of its \
span tree once the input ends; a span without an agent inherits its nearest agent ancestor's. Status ERROR, \
error.type and exception events mark failure.\n\n\
taubench: tau-bench trajectory files. Messages become events of agent \"user\" or \"assistant\"; each tool call \
is an event that fails when its reply reads as an error (\"Error: ...\"); one run record per run, failed unless \
the reward is 1.\n\n\
Detection: by the shape of the input's first JSON value, never its name; content nothing claims is read as \
ndjson. Collector protobuf, zstd and gzip files are recognised and refused with what to do.",
        ),
        (
            "EXAMPLES",
            "triage-parse runs/*.ndjson | triage-group | triage-score | triage-render\n\n\
triage-parse --since 2026-04-25 traces.jsonl | jq -c 'select(.action_succeeded == false)'",
        ),
    ];

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn run(self, diag: &mut Diag) -> anyhow::Result<u8> {
        if let (Some(since), Some(until)) = (self.since, self.until)
            && since >= until
        {
            anyhow::bail!("--since {since} is not before --until {until}: no event could be kept");
        }
        let config = Config::load_or_default(self.config.as_deref())?;
        let inputs = cli::inputs(&self.files, diag)?;
        let settings = DecodeSettings {
            filter: TimeFilter {
                since: self.since,
                until: self.until,
            },
            text_limit: self.max_text,
            classifier: Classifier::new(&config.classify),
        };
        if let Some(threads) = self.threads {
            // Fails only when the pool exists already: it then stays as it is.
            let _ = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build_global();
        }
        crate::ndjson::enlarge_pipe(&std::io::stdout());
        let stdout = crate::outfile::stdout(256 * 1024);
        let mut writer = RecordWriter::new(
            Box::new(stdout) as Box<dyn std::io::Write>,
            self.common.line_buffered,
        );
        writer.record(&Header::for_tool(Self::NAME))?;
        let mut sink = Sink::new(writer, diag, self.common.strict, settings);
        for input in &inputs {
            adapters::read_input(input, self.input.format, &mut sink)?;
        }
        cli::refuse_empty_stdin(&inputs)?;
        sink.flush()?;
        Ok(cli::EXIT_OK)
    }
}
