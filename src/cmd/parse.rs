//! triage-parse: trace files in, `event`, `run` and `source` records out.

use std::path::PathBuf;

use clap::Parser;

use crate::adapters::{self, DecodeSettings, Sink, TimeFilter};
use crate::classify::Classifier;
use crate::cli::{self, CommonArgs, ConfigArg, Tool, TraceFormatArg};
use crate::plumbing::diag::Diag;
use crate::plumbing::framing::RecordWriter;
use crate::plumbing::input;
use crate::record::Header;
use crate::timestamp::Timestamp;

/// Read trace files of any supported format and write one `event` record per
/// action (and `run` records where the source knows the run's task and
/// outcome), then one `source` record per input.
#[derive(Parser, Debug)]
#[command(name = "triage-parse", version)]
#[command(mut_arg("config", |a| a.help("Configuration file; its [classify] section adds failure classification rules")))]
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
    /// Cut input and output texts, error messages and tool inputs to this many bytes (their
    /// digest covers the whole); 0 keeps only the digest and the "…" that marks a text cut
    /// short.
    #[arg(long, value_name = "BYTES", default_value_t = 2000)]
    pub max_text: usize,
    /// How long a trace of a stream of spans or observations (otlp, otel, langfuse and
    /// langsmith lines) waits, after its root ended, for more of it, in span time ("300s",
    /// "5m", "1h"); "end" holds every trace to the end of the input. A span, observation or
    /// run payload that comes later is emitted as a continuation of its run.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = parse_window)]
    pub trace_window: Window,
    /// Refuse a file larger than this in a format read as one document (all but ndjson; a
    /// line of otlp, otel, langfuse or langsmith lines is held to it instead), K, M, G suffixes
    /// allowed: the whole document is held in memory, many times over once decoded.
    #[arg(long, value_name = "BYTES", default_value = "256M", value_parser = cli::size)]
    pub max_document: u64,
    #[command(flatten)]
    pub config: ConfigArg,
    /// Threads to decode on, the one writing the records included [default: one per core].
    #[arg(long, short = 'j', value_name = "N", value_parser = crate::cli::positive::<usize>)]
    pub threads: Option<usize>,
    #[command(flatten)]
    pub common: CommonArgs,
}

/// A `--trace-window`: nanoseconds, or None for the end of the input.
#[derive(Debug, Clone, Copy)]
pub struct Window(pub Option<i128>);

fn parse_window(s: &str) -> Result<Window, String> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("end") {
        return Ok(Window(None));
    }
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let scale: i128 = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        _ => return Err(format!("{s:?} is no duration (try 300s, 5m, 1h or end)")),
    };
    let n: i128 = digits
        .parse()
        .map_err(|_| format!("{s:?} is no duration (try 300s, 5m, 1h or end)"))?;
    n.checked_mul(scale * 1_000_000_000)
        .map(|nanos| Window(Some(nanos)))
        .ok_or_else(|| format!("{s:?} is too long a window (\"end\" holds every trace to the end)"))
}

fn parse_time(s: &str) -> Result<Timestamp, String> {
    Timestamp::parse(s)
        .ok_or_else(|| format!("{s:?} is not a date-time (try 2026-04-25 or 2026-04-25T12:00:00Z)"))
}

impl Tool for Args {
    const NAME: &'static str = "triage-parse";
    const READS_TRACES: bool = true;
    const MAN_SECTIONS: &'static [(&'static str, &'static str)] = &[(
        "EXAMPLES",
        "triage-parse runs/*.ndjson | triage-group | triage-score | triage-render\n\n\
triage-parse --since 2026-04-25 traces.jsonl | jq -c 'select(.action_succeeded == false)'",
    )];

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn run(self, diag: &mut Diag) -> anyhow::Result<u8> {
        if let (Some(since), Some(until)) = (self.since, self.until)
            && since >= until
        {
            anyhow::bail!("--since {since} is not before --until {until}: no event could be kept");
        }
        let config = self.config.load()?;
        let inputs = input::inputs(&self.files, diag)?;
        let settings = DecodeSettings {
            filter: TimeFilter {
                since: self.since,
                until: self.until,
            },
            text_limit: self.max_text,
            document_limit: self.max_document,
            classifier: Classifier::new(&config.classify),
            trace_window: self.trace_window.0,
        };
        if let Some(threads) = self.threads {
            // Fails only when the pool exists already: it then stays as it is.
            let _ = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build_global();
        }
        crate::plumbing::framing::enlarge_pipe(&std::io::stdout());
        let stdout = crate::plumbing::outfile::stdout(256 * 1024);
        let mut writer = RecordWriter::new(
            Box::new(stdout) as Box<dyn std::io::Write>,
            self.common.line_buffered,
        );
        writer.record(&Header::for_tool(Self::NAME))?;
        let mut sink = Sink::new(writer, diag, self.common.on_bad_input(), settings);
        for input in &inputs {
            adapters::read_input(input, self.input.format, &mut sink)?;
        }
        input::refuse_empty_stdin(&inputs)?;
        sink.flush()?;
        Ok(cli::EXIT_OK)
    }
}
