//! Input formats: detection, and the sink every adapter writes events, runs
//! and skipped lines to. One file per format beside this one.

mod detect;
mod documents;
pub mod lax;
pub mod ndjson;
pub mod otel;
pub mod otlp;
mod span_events;
mod spans;
pub mod taubench;
pub mod trace_window;
pub mod whowhen;
// Tracing-platform exports and agent event logs.
pub mod atif;
pub mod coding_agent;
pub mod inspect_ai;
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
use crate::group::{GroupWarning, Grouper, Interner};
use crate::io::diag::Diag;
use crate::io::input::Input;
use crate::io::ndjson::RecordWriter;
use crate::io::waiting::Waiting;
use crate::record::{ErrorInfo, EventOut, RunRec, SourceRec};
use crate::timestamp::Timestamp;

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
    pub fn name(self) -> &'static str {
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
pub fn formats_man_text() -> String {
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
pub fn read_input(input: &Input, format: Format, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let (head, reader) = peek(input)?;
    read_peeked(input, head, reader, format, sink)
}

/// The first 64 KiB of an input, and a reader that still yields them.
pub type Peeked = (Vec<u8>, Box<dyn Read + Send>);

/// Opens an input and reads its start, for format detection.
pub fn peek(input: &Input) -> anyhow::Result<Peeked> {
    let mut reader = input.open()?;
    let head = read_start(&input.name(), &mut reader, input.waiting())?;
    Ok((head, reader))
}

/// Reads an input whose start `head` was already read from `rest`.
pub fn read_peeked(
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

/// Reads a whole-document input (BOM dropped), naming the input in the
/// error. Integers too wide for 64 bits come back quoted (see
/// [`quote_wide_integers`]).
/// Lone surrogate escapes are replaced (see [`crate::io::surrogates`]). A
/// document past the `--max-document` limit is refused: it is read whole,
/// and what it decodes to takes many times its size.
fn read_document(r: impl Read, sink: &mut Sink<'_>) -> anyhow::Result<Vec<u8>> {
    let limit = sink.settings.document_limit;
    let mut data = crate::io::ndjson::read_all(r.take(limit.saturating_add(1)))
        .map_err(|e| anyhow::anyhow!("{}: {}", sink.path(), crate::io::diag::io_reason(&e)))?;
    if data.len() as u64 > limit {
        return Err(too_large(sink.path(), limit));
    }
    sink.repaired(crate::io::surrogates::repair(&mut data, 1));
    Ok(quote_wide_integers(data))
}

/// The error for a document larger than `limit` bytes.
pub fn too_large(path: &str, limit: u64) -> anyhow::Error {
    anyhow::anyhow!(
        "{path}: larger than {}, the --max-document limit of the formats read as one \
         document; raise --max-document, or split the file",
        crate::io::diag::size_text(limit)
    )
}

/// Writes integers past 64 bits (128-bit trace ids, as the Python SDK
/// serializes them) as JSON strings of the same digits, so no parser turns
/// them into floats and loses their low digits.
fn quote_wide_integers(data: Vec<u8>) -> Vec<u8> {
    let mut out: Option<Vec<u8>> = None;
    let mut in_string = false;
    let mut copied = 0;
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        if in_string {
            match b {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if b == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        if !b.is_ascii_digit() || (i > 0 && is_number_byte(data[i - 1])) {
            i += 1;
            continue;
        }
        let end = i + data[i..].iter().take_while(|c| is_number_byte(**c)).count();
        let digits = &data[i..end];
        let past_u64 = digits.len() > 20
            || (digits.len() == 20 && digits > b"18446744073709551615".as_slice());
        if past_u64 && digits.iter().all(u8::is_ascii_digit) {
            let o = out.get_or_insert_with(|| Vec::with_capacity(data.len() + 16));
            o.extend_from_slice(&data[copied..i]);
            o.push(b'"');
            o.extend_from_slice(&data[i..end]);
            o.push(b'"');
            copied = end;
        }
        i = end;
    }
    match out {
        Some(mut o) => {
            o.extend_from_slice(&data[copied..]);
            o
        }
        None => data,
    }
}

fn is_number_byte(b: u8) -> bool {
    b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-')
}

/// What is lost of a document read in part: the line where it went wrong
/// (when known) and why.
pub type DocumentLoss = (Option<u64>, String);

/// Parses a whole JSON document. On failure: the line where it went wrong
/// (when known) and why, in serde_json's words (simd-json's are terse).
/// A list cut short (a download or copy that stopped early) keeps its
/// complete items: the document comes back with them, and the loss too.
fn parse_document(
    data: &mut Vec<u8>,
) -> Result<(simd_json::BorrowedValue<'_>, Option<DocumentLoss>), DocumentLoss> {
    if let Some(bad) = not_utf8(data) {
        return Err(bad);
    }
    let mut loss = None;
    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(data) {
        let line = Some(e.line() as u64).filter(|l| *l > 0);
        let reason = document_reason(&e);
        // Only a document that ends too soon can have been cut short.
        let salvage = e.is_eof().then(|| complete_items(data)).flatten();
        match salvage.filter(|&(_, n)| n > 0) {
            Some((end, n)) => {
                data.truncate(end);
                data.push(b']');
                let items = if n == 1 { "item" } else { "items" };
                loss = Some((
                    line,
                    format!(
                        "{reason}: the file is cut short; the {n} complete {items} before the cut are read"
                    ),
                ));
            }
            None => return Err((line, reason)),
        }
    }
    let doc = simd_json::to_borrowed_value(data).map_err(|_| {
        (
            None,
            "not valid JSON: nested too deeply or too large".to_string(),
        )
    })?;
    Ok((doc, loss))
}

/// Where a whole-document input stops being UTF-8, and why all of it is
/// lost: one JSON document cannot be read around a bad byte.
fn not_utf8(data: &[u8]) -> Option<DocumentLoss> {
    let e = std::str::from_utf8(data).err()?;
    let line = 1 + memchr::memchr_iter(b'\n', &data[..e.valid_up_to()]).count() as u64;
    Some((
        Some(line),
        "not valid UTF-8, so the whole file is skipped (convert it first, e.g. `iconv -f latin1 -t utf-8`)".to_string(),
    ))
}

/// For a document that is a list: the end of its last complete item and
/// how many items came before that end, or `None` when it is no list.
fn complete_items(data: &[u8]) -> Option<(usize, usize)> {
    let skip_ws = |mut at: usize| {
        while data.get(at).is_some_and(|b| b" \t\r\n".contains(b)) {
            at += 1;
        }
        at
    };
    let mut at = skip_ws(0);
    if data.get(at) != Some(&b'[') {
        return None;
    }
    at += 1;
    let (mut end, mut n) = (at, 0);
    loop {
        let mut items =
            serde_json::Deserializer::from_slice(&data[at..]).into_iter::<serde::de::IgnoredAny>();
        let Some(Ok(_)) = items.next() else {
            return Some((end, n));
        };
        (at, n) = (at + items.byte_offset(), n + 1);
        end = at;
        at = skip_ws(at);
        if data.get(at) != Some(&b',') {
            return Some((end, n));
        }
        at += 1;
    }
}

/// Why a whole-document input is not JSON, in serde_json's words.
fn document_reason(e: &serde_json::Error) -> String {
    match crate::io::diag::json_reason(e) {
        // A second value after the first: most likely NDJSON read with a
        // format that takes one document per file.
        m if m == "trailing characters" => format!(
            "not valid JSON: {m} after the first value; this format reads one JSON \
             document per file (NDJSON? leave the format to auto-detection)"
        ),
        m => format!("not valid JSON: {m}"),
    }
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
    pub fn is_set(&self) -> bool {
        self.since.is_some() || self.until.is_some()
    }

    /// True when an event at `ts` is in range; an event without a time is
    /// kept (see [`Sink::count_untimed`]).
    pub fn keeps(&self, ts: Option<Timestamp>) -> bool {
        let Some(ts) = ts else { return true };
        self.since.is_none_or(|s| ts >= s) && self.until.is_none_or(|u| ts < u)
    }
}

/// The default of `--max-document`, in bytes: a span list decodes to some
/// thirty times its size, so this is already several GiB of memory.
pub const DEFAULT_MAX_DOCUMENT: u64 = 256 << 20;

/// Settings adapters read while decoding, shared across threads.
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
    pub fn text(&self, text: &str) -> (String, String) {
        crate::record::cut_text(text, self.text_limit)
    }

    /// Marks an unlabeled failure's cause from its error, or a success whose
    /// output reads as a failure. Explicit labels always win.
    pub fn infer_failure(&self, ev: &mut EventOut<'_>) {
        if ev.action_succeeded
            && ev.failure_classification.is_none()
            && let Some(out) = ev.output.as_deref()
            && crate::classify::output_reads_as_failure(out)
        {
            ev.action_succeeded = false;
            ev.failure_source = Some("output");
            ev.failure_inferred = true;
            if ev.error.is_none() {
                ev.error = Some(ErrorInfo {
                    kind: None,
                    message: Some(first_line(out)),
                });
            }
        }
        if ev.action_succeeded || ev.failure_classification.is_some() {
            return;
        }
        let err = ev.error.as_ref();
        let class = self.classifier.classify(
            err.and_then(|e| e.kind.as_deref()),
            err.and_then(|e| e.message.as_deref()),
        );
        if let Some(c) = class {
            ev.failure_classification = Some(c.classification.into());
            ev.failure_cause = Some(c.cause);
        }
    }
}

fn first_line(s: &str) -> String {
    let line = s.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    line.chars().take(200).collect()
}

/// Where a sink's records go.
pub enum SinkTarget<'w> {
    /// Written as NDJSON (triage-parse).
    Records(RecordWriter<Box<dyn Write + 'w>>),
    /// Handed straight to a grouper, without a round trip through JSON
    /// (triage report, triage-diff); records of other kinds are kept.
    Grouper {
        grouper: &'w mut Grouper,
        other: &'w mut Vec<Vec<u8>>,
    },
}

/// Where adapters send what they read: assigns each event its step, applies
/// the time filter, counts per source and reports skipped input.
pub struct Sink<'w> {
    out: SinkTarget<'w>,
    diag: &'w mut Diag,
    strict: bool,
    pub settings: DecodeSettings,
    /// The runs seen, numbered.
    runs: Interner,
    /// By run number: the next step, and the last source that had the run.
    steps: Vec<(u64, u64)>,
    buf: Vec<u8>,
    source: SourceRec,
    /// Runs of the current source; sources are numbered from 1.
    source_runs: u64,
    source_index: u64,
    /// Events of the current source kept by a time filter for want of a
    /// time, which its end reports.
    untimed: u64,
    /// Events and skipped parts of the current input, over its sources.
    input_read: (u64, u64),
    /// Set once the current source's lone surrogates were warned of.
    repaired_warned: bool,
}

impl<'w> Sink<'w> {
    /// A sink that writes NDJSON records.
    pub fn new(
        out: RecordWriter<Box<dyn Write + 'w>>,
        diag: &'w mut Diag,
        strict: bool,
        settings: DecodeSettings,
    ) -> Self {
        Sink::with_target(SinkTarget::Records(out), diag, strict, settings)
    }

    /// A sink that feeds events to `grouper` and keeps other records.
    pub fn to_grouper(
        grouper: &'w mut Grouper,
        other: &'w mut Vec<Vec<u8>>,
        diag: &'w mut Diag,
        strict: bool,
        settings: DecodeSettings,
    ) -> Self {
        Sink::with_target(
            SinkTarget::Grouper { grouper, other },
            diag,
            strict,
            settings,
        )
    }

    fn with_target(
        out: SinkTarget<'w>,
        diag: &'w mut Diag,
        strict: bool,
        settings: DecodeSettings,
    ) -> Self {
        Sink {
            out,
            diag,
            strict,
            settings,
            runs: Interner::default(),
            steps: Vec::new(),
            buf: Vec::with_capacity(4096),
            source: SourceRec {
                kind: "source".into(),
                path: String::new(),
                format: String::new(),
                events: 0,
                runs: 0,
                skipped: 0,
            },
            source_runs: 0,
            source_index: 0,
            untimed: 0,
            input_read: (0, 0),
            repaired_warned: false,
        }
    }

    /// True when events go straight to a grouper, so adapters may hand
    /// over decoded views instead of serialized records.
    pub fn feeds_grouper(&self) -> bool {
        matches!(self.out, SinkTarget::Grouper { .. })
    }

    pub fn path(&self) -> &str {
        &self.source.path
    }

    fn begin_source(&mut self, path: &str, format: &str) {
        self.source.path = path.to_string();
        self.source.format = format.to_string();
        self.source.events = 0;
        self.source.skipped = 0;
        self.source_runs = 0;
        self.source_index += 1;
        self.untimed = 0;
        self.repaired_warned = false;
    }

    /// Warns, once per source, that lone surrogate escapes were replaced.
    pub fn repaired(&mut self, r: crate::io::surrogates::Repaired) {
        if self.repaired_warned {
            return;
        }
        if let Some(msg) = r.warning(&self.source.path) {
            self.repaired_warned = true;
            self.diag.warn("lone-surrogate", format_args!("{msg}"));
        }
    }

    fn begin_input(&mut self) {
        self.input_read = (0, 0);
    }

    /// Notes an input of which nothing could be read (all of it skipped),
    /// which makes the tool fail once every input is read.
    fn end_input(&mut self, name: &str) {
        if self.input_read.0 == 0 && self.input_read.1 > 0 {
            self.diag.nothing_read(name);
        }
    }

    /// Notes `n` events that --since/--until kept because they have no
    /// time to place them by.
    pub fn count_untimed(&mut self, n: u64) {
        self.untimed += n;
    }

    fn end_source(&mut self) -> io::Result<()> {
        if self.untimed > 0 {
            let (n, path) = (self.untimed, &self.source.path);
            let (noun, verb, them) = match n {
                1 => ("event", "has", "it: it was"),
                _ => ("events", "have", "them: they were"),
            };
            self.diag.warn(
                "untimed",
                format_args!(
                    "{path}: {n} {noun} {verb} no timestamp, so --since/--until cannot place {them} kept"
                ),
            );
        }
        self.source.runs = self.source_runs;
        self.input_read.0 += self.source.events;
        self.input_read.1 += self.source.skipped;
        let rec = self.source.clone();
        match &mut self.out {
            SinkTarget::Records(w) => w.record(&rec),
            SinkTarget::Grouper { grouper, .. } => {
                grouper.add_source(rec);
                Ok(())
            }
        }
    }

    /// The step of the next event of `run_id`, counted in the source.
    fn take_step(&mut self, run_id: &str) -> u64 {
        let source = self.source_index;
        let run = self.runs.intern(run_id) as usize;
        if run == self.steps.len() {
            self.steps.push((0, 0));
        }
        let (step, last_source) = &mut self.steps[run];
        if *last_source != source {
            *last_source = source;
            self.source_runs += 1;
        }
        *step += 1;
        let step = *step - 1;
        self.source.events += 1;
        step
    }

    /// Writes an event unless the time filter drops it.
    pub fn emit(&mut self, ev: &EventOut<'_>) -> io::Result<()> {
        let ts = ev.timestamp.as_deref().and_then(Timestamp::parse);
        if !self.settings.filter.keeps(ts) {
            return Ok(());
        }
        if ts.is_none() && self.settings.filter.is_set() {
            self.untimed += 1;
        }
        if self.feeds_grouper() {
            let step = self.take_step(&ev.run_id);
            self.feed(&ev.view(step));
            return Ok(());
        }
        let mut body = std::mem::take(&mut self.buf);
        body.clear();
        serde_json::to_writer(&mut body, ev).map_err(io::Error::other)?;
        body.pop(); // the closing brace; emit_prepared adds the step and closes
        let r = self.emit_prepared(&ev.run_id, &body);
        self.buf = body;
        r
    }

    /// Writes an event serialized without its closing brace: adds the step
    /// (its position in its run) and closes the object.
    pub fn emit_prepared(&mut self, run_id: &str, body: &[u8]) -> io::Result<()> {
        let step = self.take_step(run_id);
        let tail = StepTail::new(step);
        match &mut self.out {
            SinkTarget::Records(w) => w.raw_parts(body, tail.bytes()),
            SinkTarget::Grouper { .. } => {
                let mut line = body.to_vec();
                line.extend_from_slice(tail.bytes());
                let view: crate::record::EventView<'_> =
                    serde_json::from_slice(&line).map_err(io::Error::other)?;
                self.feed(&view);
                Ok(())
            }
        }
    }

    /// Hands a decoded event (already time-filtered) to the grouper; only
    /// when [`Sink::feeds_grouper`].
    pub fn emit_view(&mut self, mut view: crate::record::EventView<'_>, ts: Option<Timestamp>) {
        view.step = self.take_step(&view.run_id);
        self.feed_at(&view, ts);
    }

    fn feed(&mut self, view: &crate::record::EventView<'_>) {
        let ts = view.timestamp.as_deref().and_then(Timestamp::parse);
        self.feed_at(view, ts);
    }

    fn feed_at(&mut self, view: &crate::record::EventView<'_>, ts: Option<Timestamp>) {
        let SinkTarget::Grouper { grouper, .. } = &mut self.out else {
            return;
        };
        if let Some(GroupWarning::OutOfOrder { run_id, agent_id }) = grouper.add_event_at(view, ts)
        {
            self.diag.warn(
                "out-of-order",
                format_args!(
                    "{}: run {run_id:?} agent {agent_id:?} goes back in turn order; its recovery figures may differ from a sorted read",
                    self.source.path
                ),
            );
        }
    }

    /// The step the next event of `run_id` will get.
    pub fn next_step(&self, run_id: &str) -> u64 {
        self.runs
            .get(run_id)
            .map_or(0, |run| self.steps[run as usize].0)
    }

    /// Writes a `run` record.
    pub fn emit_run(&mut self, run: &RunRec) -> io::Result<()> {
        match &mut self.out {
            SinkTarget::Records(w) => w.record(run),
            SinkTarget::Grouper { .. } => Ok(()),
        }
    }

    /// Passes a record of a kind the adapter does not read through unchanged.
    pub fn pass_through(&mut self, line: &[u8]) -> io::Result<()> {
        match &mut self.out {
            SinkTarget::Records(w) => w.raw_line(line),
            SinkTarget::Grouper { other, .. } => {
                other.push(line.to_vec());
                Ok(())
            }
        }
    }

    /// Reports input that could not be read: an error under `--strict`,
    /// otherwise a warning and a count in the source record.
    pub fn skip(&mut self, line: Option<u64>, reason: &str) -> anyhow::Result<()> {
        let at = match line {
            Some(n) => format!("{}:{n}", self.source.path),
            None => self.source.path.clone(),
        };
        if self.strict {
            anyhow::bail!("{at}: {reason}");
        }
        self.source.skipped += 1;
        self.diag
            .warn("unreadable-input", format_args!("{at}: {reason}; skipped"));
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        match &mut self.out {
            SinkTarget::Records(w) => w.flush(),
            SinkTarget::Grouper { .. } => Ok(()),
        }
    }
}

/// The end of an event record: its step and the closing brace and newline.
// itoa into a stack buffer rather than `write!`: the formatting machinery
// cost about 400 instructions an event on triage-parse's writing thread.
struct StepTail {
    buf: [u8; STEP_KEY.len() + 20 + 2],
    len: usize,
}

const STEP_KEY: &[u8] = b",\"step\":";

impl StepTail {
    fn new(step: u64) -> Self {
        let mut digits = itoa::Buffer::new();
        let digits = digits.format(step).as_bytes();
        let mut buf = [0; STEP_KEY.len() + 20 + 2];
        let (key, rest) = buf.split_at_mut(STEP_KEY.len());
        key.copy_from_slice(STEP_KEY);
        rest[..digits.len()].copy_from_slice(digits);
        rest[digits.len()..digits.len() + 2].copy_from_slice(b"}\n");
        StepTail {
            buf,
            len: STEP_KEY.len() + digits.len() + 2,
        }
    }

    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
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
        let mut sink = Sink::new(writer, &mut diag, false, settings);
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
