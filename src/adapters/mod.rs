//! Input formats: detection, and the sink every adapter writes events, runs
//! and skipped lines to. One file per format beside this one.

pub mod ndjson;
pub mod whowhen;

use std::collections::{HashMap, HashSet};
use std::io::{self, Read, Write};
use std::path::Path;

use anyhow::Context;
use clap::ValueEnum;
use sha2::Digest;

use crate::classify::Classifier;
use crate::cli::{Diag, Input};
use crate::ndjson::RecordWriter;
use crate::record::{ErrorInfo, EventOut, RunRec, SourceRec};
use crate::timestamp::Timestamp;

/// The trace formats triage-parse reads.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Decide per file from the extension, then the content.
    Auto,
    /// agent-triage TraceEvent lines (.ndjson, .jsonl).
    Ndjson,
    /// Who&When benchmark runs: one JSON object with a `history` per file.
    Whowhen,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Auto => "auto",
            Format::Ndjson => "ndjson",
            Format::Whowhen => "whowhen",
        }
    }
}

/// Picks the format of an input from its name and its first bytes.
pub fn detect(path: Option<&Path>, head: &[u8]) -> Format {
    let _ = path;
    if whowhen::looks_like(head) {
        return Format::Whowhen;
    }
    Format::Ndjson
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
    let mut head = vec![0u8; 64 * 1024];
    let n = read_head(&mut reader, &mut head).with_context(|| input.name())?;
    head.truncate(n);
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
    let format = match format {
        Format::Auto => detect(input.path(), &head),
        f => f,
    };
    sink.begin_source(&input.name(), format.name());
    let reader = io::Cursor::new(head).chain(rest);
    match format {
        Format::Ndjson | Format::Auto => ndjson::read(reader, sink)?,
        Format::Whowhen => whowhen::read(reader, sink)?,
    }
    sink.end_source()?;
    Ok(())
}

fn read_head(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
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
    pub fn keeps(&self, ts: Option<Timestamp>) -> bool {
        let Some(ts) = ts else { return true };
        self.since.is_none_or(|s| ts >= s) && self.until.is_none_or(|u| ts < u)
    }
}

/// Settings adapters read while decoding, shared across threads.
pub struct DecodeSettings {
    pub filter: TimeFilter,
    /// Input and output texts are cut to this many bytes.
    pub text_limit: usize,
    pub classifier: Classifier,
}

impl Default for DecodeSettings {
    fn default() -> Self {
        DecodeSettings {
            filter: TimeFilter::default(),
            text_limit: 2000,
            classifier: Classifier::default(),
        }
    }
}

impl DecodeSettings {
    /// Cuts `text` to the limit at a character boundary; returns the kept
    /// text and the digest of the whole.
    pub fn text(&self, text: &str) -> (String, String) {
        let hash = sha2::Sha256::digest(text.as_bytes());
        let mut digest = String::with_capacity(7 + 64);
        digest.push_str("sha256:");
        for b in hash.iter() {
            digest.push_str(&format!("{b:02x}"));
        }
        if text.len() <= self.text_limit {
            return (text.to_string(), digest);
        }
        let mut end = self.text_limit;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        (format!("{}…", &text[..end]), digest)
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

/// Where adapters send what they read: assigns each event its step, applies
/// the time filter, counts per source and reports skipped input.
pub struct Sink<'w> {
    out: RecordWriter<Box<dyn Write + 'w>>,
    diag: &'w mut Diag,
    strict: bool,
    pub settings: DecodeSettings,
    steps: HashMap<Box<str>, u64>,
    buf: Vec<u8>,
    source: SourceRec,
    source_runs: HashSet<Box<str>>,
}

impl<'w> Sink<'w> {
    pub fn new(
        out: RecordWriter<Box<dyn Write + 'w>>,
        diag: &'w mut Diag,
        strict: bool,
        settings: DecodeSettings,
    ) -> Self {
        Sink {
            out,
            diag,
            strict,
            settings,
            steps: HashMap::new(),
            buf: Vec::with_capacity(4096),
            source: SourceRec {
                kind: "source".into(),
                path: String::new(),
                format: String::new(),
                events: 0,
                runs: 0,
                skipped: 0,
            },
            source_runs: HashSet::new(),
        }
    }

    pub fn writer(&mut self) -> &mut RecordWriter<Box<dyn Write + 'w>> {
        &mut self.out
    }

    pub fn path(&self) -> &str {
        &self.source.path
    }

    fn begin_source(&mut self, path: &str, format: &str) {
        self.source.path = path.to_string();
        self.source.format = format.to_string();
        self.source.events = 0;
        self.source.skipped = 0;
        self.source_runs.clear();
    }

    fn end_source(&mut self) -> io::Result<()> {
        self.source.runs = self.source_runs.len() as u64;
        let rec = self.source.clone();
        self.out.record(&rec)
    }

    /// Writes an event unless the time filter drops it.
    pub fn emit(&mut self, ev: &EventOut<'_>) -> io::Result<()> {
        let ts = ev.timestamp.as_deref().and_then(Timestamp::parse);
        if !self.settings.filter.keeps(ts) {
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
        let step = match self.steps.get_mut(run_id) {
            Some(n) => {
                *n += 1;
                *n - 1
            }
            None => {
                self.steps.insert(run_id.into(), 1);
                0
            }
        };
        if !self.source_runs.contains(run_id) {
            self.source_runs.insert(run_id.into());
        }
        self.source.events += 1;
        let mut tail = [0u8; 40];
        let mut cur = io::Cursor::new(&mut tail[..]);
        writeln!(cur, ",\"step\":{step}}}")?;
        let n = cur.position() as usize;
        self.out.raw_parts(body, &tail[..n])
    }

    /// Writes a `run` record.
    pub fn emit_run(&mut self, run: &RunRec) -> io::Result<()> {
        self.out.record(run)
    }

    /// Passes a record of a kind the adapter does not read through unchanged.
    pub fn pass_through(&mut self, line: &[u8]) -> io::Result<()> {
        self.out.raw_line(line)
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
        self.out.flush()
    }
}
