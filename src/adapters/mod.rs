//! Input formats: detection, and the sink every adapter writes events, runs
//! and skipped lines to. One file per format beside this one.

mod detect;
mod documents;
mod json_lines;
pub mod lax;
pub mod ndjson;
pub mod otel;
pub mod otlp;
mod pruned_value;
mod span_events;
mod spans;
pub mod taubench;
pub mod trace_window;
pub mod whowhen;
// Tracing-platform exports and agent event logs.
pub mod atif;
pub mod coding_agent;
pub mod inspect_ai;
mod inspect_eval;
pub mod langfuse;
pub mod langsmith;
pub mod managed_agent;
mod message;
mod observations;
// Chat transcripts: the messages of OpenAI's and Anthropic's APIs.
mod anthropic_messages;
mod openai_chat;
mod terminal;
mod transcript;

use std::io::{self, Read, Write};
use std::path::Path;

use clap::ValueEnum;
pub use detect::{detect, refusal};

use crate::classify::Classifier;
use crate::io::diag::Diag;
use crate::io::input::Input;
use crate::io::intern::Interner;
use crate::io::ndjson::RecordWriter;
use crate::io::waiting::Waiting;
use crate::record::{EventOut, RunRec, SourceRec};
use crate::timestamp::Timestamp;
mod sink;
mod unreadable;
mod whole_document;

pub use sink::{Sink, SinkTarget};
pub use unreadable::Unreadable;
use whole_document::*;
pub use whole_document::{DocumentLoss, too_large};

/// The trace formats triage-parse reads.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Decide per input from its first JSON value (never the extension).
    Auto,
    /// agent-triage TraceEvent lines (.ndjson, .jsonl).
    Ndjson,
    /// Spans as JSON: OpenTelemetry SDK dumps (Python, JS, Vercel AI SDK),
    /// Phoenix/OpenInference spans, attribute maps, agent-triage's span list.
    Otel,
    /// OTLP/HTTP JSON trace requests, one per file or one per line; each
    /// trace is emitted once complete (root ended, --trace-window passed).
    Otlp,
    /// τ-bench trajectory files: a list of runs with `traj` and `reward`.
    Taubench,
    /// Who&When benchmark runs: one JSON object with a `history` per file.
    Whowhen,
    /// Langfuse traces with observations, observation lists, blob-export JSONL.
    Langfuse,
    /// LangSmith runs: create/update payloads, lists or JSONL of runs.
    Langsmith,
    /// Claude Managed Agents session event streams (JSONL).
    ManagedAgent,
    /// Agent Trajectory Interchange Format (Harbor) trajectories.
    Atif,
    /// Coding-agent trajectories: mini-SWE-agent transcripts (shell
    /// commands in the assistant's text, `<returncode>` replies) and
    /// SWE-agent `.traj` files.
    CodingAgent,
    /// Inspect AI eval logs in its JSON log format: one run per sample.
    InspectAi,
    /// OpenAI chat transcripts: `{"messages": [...]}` or a list of
    /// messages (Chat Completions or Responses items), per file or per line.
    OpenaiChat,
    /// Anthropic Messages transcripts: `tool_use`/`tool_result` blocks.
    AnthropicMessages,
}

impl Format {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Ndjson => "ndjson",
            Format::Otel => "otel",
            Format::Otlp => "otlp",
            Format::Taubench => "taubench",
            Format::Whowhen => "whowhen",
            Format::Langfuse => "langfuse",
            Format::Langsmith => "langsmith",
            Format::ManagedAgent => "managed-agent",
            Format::Atif => "atif",
            Format::CodingAgent => "coding-agent",
            Format::InspectAi => "inspect-ai",
            Format::OpenaiChat => "openai-chat",
            Format::AnthropicMessages => "anthropic-messages",
        }
    }
}

/// The FORMATS section of the man pages: each format's name and help, from
/// the list above, so a format added there is documented here too.
pub(crate) fn formats_man_text() -> String {
    let mut text = String::new();
    for format in Format::value_variants()
        .iter()
        .filter(|f| **f != Format::Auto)
    {
        let value = format
            .to_possible_value()
            .expect("every format is a flag value");
        let help = value.get_help().map(|h| h.to_string()).unwrap_or_default();
        text.push_str(&format!(
            "{}: {}\n\n",
            value.get_name(),
            help.trim_end_matches('.')
        ));
    }
    text.push_str(
        "With auto, each input's format is decided by the shape of its first JSON value, never its \
name; content no format claims is read as ndjson. Collector protobuf, zstd and gzip files are \
recognised and refused with what to do.\n\n\
docs/formats.md (see SEE ALSO) says how to export each format from its source and what is read from it.",
    );
    text
}

/// Reads one input in `format` (or the detected one) into `sink`.
pub(crate) fn read_input(input: &Input, format: Format, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let (head, reader) = peek(input)?;
    read_peeked(input, head, reader, format, sink)
}

/// The first 64 KiB of an input, and a reader that still yields them.
pub(crate) type Peeked = (Vec<u8>, Box<dyn Read + Send>);

/// Opens an input and reads its start, for format detection.
pub(crate) fn peek(input: &Input) -> anyhow::Result<Peeked> {
    let mut reader = input.open()?;
    let head = read_start(&input.name(), &mut reader, input.waiting())?;
    Ok((head, reader))
}

/// Reads an input whose start `head` was already read from `rest`.
pub(crate) fn read_peeked(
    input: &Input,
    head: Vec<u8>,
    rest: Box<dyn Read + Send>,
    format: Format,
    sink: &mut Sink<'_>,
) -> anyhow::Result<()> {
    let source = Source {
        name: &input.name(),
        path: input.path(),
        waiting: input.waiting(),
    };
    sink.begin_input();
    read_detected(&source, head, rest, format, sink)?;
    sink.end_input(source.name);
    Ok(())
}

/// Reads one input given as a reader: `name` is used in messages and the
/// `source` record, `path` (when there is a file) for detection by extension.
pub fn read_from(
    name: &str,
    path: Option<&Path>,
    mut reader: impl Read + Send,
    format: Format,
    sink: &mut Sink<'_>,
) -> anyhow::Result<()> {
    let head = read_start(name, &mut reader, None)?;
    let source = Source {
        name,
        path,
        waiting: None,
    };
    sink.begin_input();
    read_detected(&source, head, reader, format, sink)?;
    sink.end_input(name);
    Ok(())
}

/// Where an input comes from, as its reader needs to know.
struct Source<'a> {
    /// For messages and the `source` record.
    name: &'a str,
    /// For detection by extension.
    path: Option<&'a Path>,
    /// Set for a live input, read as it arrives.
    waiting: Option<Waiting>,
}

fn read_start(
    name: &str,
    reader: &mut impl Read,
    waiting: Option<Waiting>,
) -> anyhow::Result<Vec<u8>> {
    let mut head = vec![0u8; 64 * 1024];
    let n = read_head(reader, &mut head, waiting)
        .map_err(|e| anyhow::anyhow!("{name}: {}", crate::io::diag::io_reason(&e)))?;
    head.truncate(n);
    Ok(head)
}

/// Detects the format (unless given) from the name and `head`, and reads
/// `head` followed by `rest` with that format's adapter.
fn read_detected(
    source: &Source<'_>,
    head: Vec<u8>,
    rest: impl Read + Send,
    format: Format,
    sink: &mut Sink<'_>,
) -> anyhow::Result<()> {
    let name = source.name;
    let claimed = detect::claim(&head);
    let auto = format == Format::Auto;
    let format = match format {
        Format::Auto => claimed.unwrap_or_else(|| detect(source.path, &head)),
        f => f,
    };
    if head.starts_with(&inspect_eval::ZIP_MAGIC) {
        // Inspect's default log format is a zip; no other format is one.
        sink.begin_source(name, Format::InspectAi.name());
        inspect_eval::read(io::Cursor::new(head).chain(rest), sink)?;
        return Ok(sink.end_source()?);
    }
    if let Some(why) = refusal(&head) {
        // Not a format we read, so the source record names none of them.
        sink.begin_source(name, "binary");
        sink.skip(None, why)?;
        return Ok(sink.end_source()?);
    }
    if auto && claimed.is_none() && documents::may_be_document(&head, source.waiting.is_some()) {
        return documents::read(name, head, rest, sink);
    }
    sink.begin_source(name, format.name());
    let reader = io::Cursor::new(head).chain(rest);
    match format {
        Format::Ndjson | Format::Auto => ndjson::read(reader, source.waiting, sink)?,
        Format::Otel => otel::read(reader, sink)?,
        Format::Otlp => otlp::read(reader, sink)?,
        Format::Taubench => taubench::read(reader, sink)?,
        Format::Whowhen => whowhen::read(reader, sink)?,
        Format::Langfuse => langfuse::read(reader, sink)?,
        Format::Langsmith => langsmith::read(reader, sink)?,
        Format::ManagedAgent => managed_agent::read(reader, sink)?,
        Format::Atif => atif::read(reader, sink)?,
        Format::CodingAgent => coding_agent::read(reader, sink)?,
        Format::InspectAi => inspect_ai::read(reader, sink)?,
        Format::OpenaiChat | Format::AnthropicMessages => transcript::read(reader, sink)?,
    }
    sink.end_source()?;
    Ok(())
}

/// Fills `buf` from `r`, less at its end or, on a live input, once a
/// whole line has arrived and nothing more has: the format is told from
/// what came first rather than after the writer's next 64 KiB.
fn read_head(r: &mut impl Read, buf: &mut [u8], waiting: Option<Waiting>) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => {
                filled += n;
                if buf[..filled].contains(&b'\n') && Waiting::silent(waiting) {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Keeps events whose timestamp lies in [since, until); events without a
/// timestamp are kept.
#[derive(Debug, Clone, Copy, Default)]
pub struct TimeFilter {
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
}

impl TimeFilter {
    /// True when --since or --until was given.
    pub(crate) fn is_set(&self) -> bool {
        self.since.is_some() || self.until.is_some()
    }

    /// True when an event at `ts` is in range; an event without a time is
    /// kept (see [`Sink::count_untimed`]).
    pub(crate) fn keeps(&self, ts: Option<Timestamp>) -> bool {
        let Some(ts) = ts else { return true };
        self.since.is_none_or(|s| ts >= s) && self.until.is_none_or(|u| ts < u)
    }
}

/// The default of `--max-document`, in bytes: a span list decodes to some
/// thirty times its size, so this is already several GiB of memory.
pub(crate) const DEFAULT_MAX_DOCUMENT: u64 = 256 << 20;

/// Settings adapters read while decoding, shared across threads.
#[derive(Clone)]
pub struct DecodeSettings {
    pub filter: TimeFilter,
    /// Input and output texts are cut to this many bytes.
    pub text_limit: usize,
    /// Formats read as whole documents refuse inputs larger than this.
    pub document_limit: u64,
    pub classifier: Classifier,
    /// How long a trace of a span stream is held after its last span, in
    /// nanoseconds of span time; None holds traces until the input ends.
    pub trace_window: Option<i128>,
}

impl Default for DecodeSettings {
    fn default() -> Self {
        DecodeSettings {
            filter: TimeFilter::default(),
            text_limit: 2000,
            document_limit: DEFAULT_MAX_DOCUMENT,
            classifier: Classifier::default(),
            trace_window: Some(trace_window::DEFAULT_WINDOW_NANOS),
        }
    }
}

impl DecodeSettings {
    /// Cuts `text` to the limit at a character boundary; returns the kept
    /// text and the digest of the whole.
    pub(crate) fn text(&self, text: &str) -> (String, String) {
        crate::record::cut_text(text, self.text_limit)
    }

    /// Marks an unlabeled failure's cause ([`Classifier::infer_failure`]).
    pub(crate) fn infer_failure(&self, ev: &mut EventOut<'_>) {
        self.classifier.infer_failure(ev);
    }
}

/// Runs one adapter on bytes in memory, for the adapters' tests: every
/// record written, the `source` record last.
#[cfg(test)]
pub(crate) fn records_of(format: Format, name: &str, bytes: &[u8]) -> Vec<serde_json::Value> {
    records_with(format, name, bytes, DecodeSettings::default())
}

#[cfg(test)]
pub(crate) fn records_with(
    format: Format,
    name: &str,
    bytes: &[u8],
    settings: DecodeSettings,
) -> Vec<serde_json::Value> {
    let mut out = Vec::new();
    let mut diag = Diag::new("test", true);
    {
        let writer = RecordWriter::new(Box::new(&mut out) as Box<dyn Write + '_>, false);
        let mut sink = Sink::new(
            writer,
            &mut diag,
            crate::io::diag::OnBadInput::Skip,
            settings,
        );
        read_from(name, Some(Path::new(name)), bytes, format, &mut sink).unwrap();
        sink.flush().unwrap();
    }
    out.split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

#[cfg(test)]
mod tests;
