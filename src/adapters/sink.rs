//! The sink every format writes into: events, runs and skipped lines, as
//! NDJSON records (triage-parse) or straight into a grouper.

use std::io::{self, Write};
use std::path::Path;

use crate::adapters::settings::DecodeSettings;
use crate::plumbing::diag::Diag;
use crate::plumbing::diag::OnBadInput;
use crate::plumbing::framing::RecordWriter;
use crate::plumbing::intern::Interner;
use crate::record::EventConsumer;
use crate::record::{EventOut, RunRec, SourceRec};
use crate::timestamp::Timestamp;

/// The `format` of a source record whose input is no JSON triage reads
/// (binary, or text in another encoding).
pub(crate) const NOT_JSON: &str = "binary";
/// The `format` of a source record whose JSON no format claims.
pub(crate) const NO_FORMAT: &str = "json";

/// Where a sink's records go.
pub enum SinkTarget<'w> {
    /// Written as NDJSON (triage-parse).
    Records(RecordWriter<Box<dyn Write + 'w>>),
    /// Handed to an [`EventConsumer`] in the same process (the grouper of
    /// triage report and triage-diff, the runs `--explain` explains),
    /// without a round trip through JSON; records of other kinds are kept.
    InProcess {
        consumer: &'w mut dyn EventConsumer,
        other: &'w mut Vec<Vec<u8>>,
    },
}

/// Where adapters send what they read: assigns each event its step, applies
/// the time filter, counts per source and reports skipped input.
pub struct Sink<'w> {
    out: SinkTarget<'w>,
    pub(super) diag: &'w mut Diag,
    on_bad: OnBadInput,
    pub settings: DecodeSettings,
    /// A skip not said yet: where, why, and how often in a row.
    held_skip: Option<(String, String, u64)>,
    /// What the reader met and does not read, per kind, in this source.
    not_read: Vec<(String, u64)>,
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
    /// Run records the current input gave, with events or without.
    input_runs: u64,
    /// Set once the current source's lone surrogates were warned of.
    repaired_warned: bool,
    /// Run names taken from a file's name, and the file that took each.
    stems: std::collections::HashMap<String, String>,
}

impl<'w> Sink<'w> {
    /// A sink that writes NDJSON records.
    pub fn new(
        out: RecordWriter<Box<dyn Write + 'w>>,
        diag: &'w mut Diag,
        on_bad: OnBadInput,
        settings: DecodeSettings,
    ) -> Self {
        Sink::with_target(SinkTarget::Records(out), diag, on_bad, settings)
    }

    /// A sink that feeds events to `consumer` and keeps other records.
    pub(crate) fn in_process(
        consumer: &'w mut dyn EventConsumer,
        other: &'w mut Vec<Vec<u8>>,
        diag: &'w mut Diag,
        on_bad: OnBadInput,
        settings: DecodeSettings,
    ) -> Self {
        Sink::with_target(
            SinkTarget::InProcess { consumer, other },
            diag,
            on_bad,
            settings,
        )
    }

    pub(super) fn with_target(
        out: SinkTarget<'w>,
        diag: &'w mut Diag,
        on_bad: OnBadInput,
        settings: DecodeSettings,
    ) -> Self {
        Sink {
            out,
            diag,
            on_bad,
            settings,
            runs: Interner::default(),
            steps: Vec::new(),
            buf: Vec::with_capacity(4096),
            source: SourceRec {
                kind: crate::record::SourceKind,
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
            input_runs: 0,
            repaired_warned: false,
            not_read: Vec::new(),
            held_skip: None,
            stems: std::collections::HashMap::new(),
        }
    }

    /// True when events go straight to a consumer that reads only their
    /// views, so adapters may hand over views instead of whole events.
    pub(crate) fn takes_views(&self) -> bool {
        matches!(&self.out, SinkTarget::InProcess { consumer, .. } if consumer.views_suffice())
    }

    /// `stem`, a name for runs made from this input's file name, unless
    /// another file of this invocation took it (`A/res.json` and
    /// `B/res.json`): then the file's path without its extension, and a
    /// warning, so that two files' runs never merge.
    pub(crate) fn claim_stem(&mut self, stem: String) -> String {
        let file = self.file_name();
        let file = file
            .split_once('#')
            .map_or(file.as_str(), |(f, _)| f)
            .to_string();
        match self.stems.get(&stem) {
            None => {
                self.stems.insert(stem.clone(), file);
                stem
            }
            Some(owner) if *owner == file => stem,
            Some(owner) => {
                let owner = owner.clone();
                let path = Path::new(&file);
                let qualified = path.with_extension("").display().to_string();
                let qualified = match stem.split_once('#') {
                    Some((_, key)) => format!("{qualified}#{key}"),
                    None => qualified,
                };
                self.diag.warn(
                    "same-name",
                    format_args!(
                        "{file}: its runs would be named {stem}, as those of {owner}; they are named {qualified}"
                    ),
                );
                self.stems.insert(qualified.clone(), file);
                qualified
            }
        }
    }

    /// The input's path as a run id falls back on it: the same however it
    /// was typed (`./a.traj`, `a.traj`, `dir//a.traj`), with `.` segments
    /// and repeated slashes gone.
    pub(crate) fn file_name(&self) -> String {
        let path = &self.source.path;
        let absolute = path.starts_with('/');
        let parts: Vec<&str> = path
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        let joined = parts.join("/");
        if absolute {
            format!("/{joined}")
        } else {
            joined
        }
    }

    pub(crate) fn path(&self) -> &str {
        &self.source.path
    }

    pub(super) fn begin_source(&mut self, path: &str, format: &str) {
        self.source.path = path.to_string();
        self.source.format = format.to_string();
        self.source.events = 0;
        self.source.skipped = 0;
        self.source_runs = 0;
        self.source_index += 1;
        self.untimed = 0;
        self.repaired_warned = false;
        self.not_read.clear();
    }

    /// Counts one part of the source its reader knows the place of but not
    /// the meaning (a record type, an item type, a role it does not read),
    /// said once per kind, with the count, when the source ends.
    pub(crate) fn not_read(&mut self, what: &str) {
        match self.not_read.iter_mut().find(|(w, _)| w == what) {
            Some((_, n)) => *n += 1,
            None => self.not_read.push((what.to_string(), 1)),
        }
    }

    /// Warns, once per source, that lone surrogate escapes were replaced.
    pub(crate) fn repaired(&mut self, r: crate::plumbing::surrogates::Repaired) {
        if self.repaired_warned {
            return;
        }
        if let Some(msg) = r.warning(&self.source.path) {
            self.repaired_warned = true;
            self.diag.warn("lone-surrogate", format_args!("{msg}"));
        }
    }

    pub(super) fn begin_input(&mut self) {
        self.input_read = (0, 0);
        self.input_runs = 0;
    }

    /// Notes an input of which nothing could be read (all of it skipped),
    /// which makes the tool fail once every input is read.
    pub(super) fn end_input(&mut self, name: &str) {
        if self.input_read.0 == 0 && self.input_read.1 > 0 {
            let format = &self.source.format;
            if [NOT_JSON, NO_FORMAT].contains(&format.as_str()) {
                self.diag.nothing_read(name);
            } else {
                self.diag
                    .nothing_read(&format!("{name} (read as {format})"));
            }
        }
    }

    /// Warns of an input that held nothing at all (no byte but blanks), or
    /// a document whose lists are empty (`{"resourceSpans": []}`): not an
    /// error, as an empty batch is none, but never silent.
    pub(super) fn empty_input(&mut self, name: &str, blank: bool) {
        if self.input_read == (0, 0) && self.input_runs == 0 {
            let why = if blank {
                "empty, nothing to read"
            } else {
                "a document with no span, run or event in it: nothing to read"
            };
            self.diag.warn("empty-input", format_args!("{name}: {why}"));
        }
    }

    /// Notes `n` events that --since/--until kept because they have no
    /// time to place them by.
    pub(crate) fn count_untimed(&mut self, n: u64) {
        self.untimed += n;
    }

    pub(super) fn end_source(&mut self) -> io::Result<()> {
        self.say_held_skip().map_err(io::Error::other)?;
        for (what, n) in std::mem::take(&mut self.not_read) {
            // Parts left out count as unread, so an input of nothing else
            // is an error, as one of nothing but bad lines is.
            self.input_read.1 += n;
            let path = &self.source.path;
            self.diag.warn(
                "not-read",
                format_args!("{path}: {n} × {what}, which this reader does not read, left out"),
            );
        }
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
            SinkTarget::InProcess { consumer, .. } => {
                consumer.add_source(rec);
                Ok(())
            }
        }
    }

    /// The step of the next event of `run_id`, counted in the source.
    pub(super) fn take_step(&mut self, run_id: &str) -> u64 {
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
    pub(crate) fn emit_event(&mut self, ev: &EventOut<'_>) -> io::Result<()> {
        let limit = self.settings.text_limit;
        if ev.has_long_texts(limit) {
            let mut cut = ev.clone();
            cut.cut_long_texts(limit);
            return self.emit_cut_event(&cut);
        }
        self.emit_cut_event(ev)
    }

    /// [`Sink::emit_event`] for an event whose texts are within the limit.
    fn emit_cut_event(&mut self, ev: &EventOut<'_>) -> io::Result<()> {
        if self.held_skip.is_some() {
            self.say_held_skip().map_err(io::Error::other)?;
        }
        let ts = ev.timestamp;
        if !self.settings.filter.keeps(ts) {
            return Ok(());
        }
        if ts.is_none() && self.settings.filter.is_set() {
            self.untimed += 1;
        }
        if matches!(self.out, SinkTarget::InProcess { .. }) {
            let step = self.take_step(&ev.run_id);
            let SinkTarget::InProcess { consumer, .. } = &mut self.out else {
                unreachable!("matched above")
            };
            let out_of_order = consumer.add_event(ev, step);
            self.warn_out_of_order(out_of_order);
            return Ok(());
        }
        let mut body = std::mem::take(&mut self.buf);
        body.clear();
        ev.write_open(&mut body); // emit_event_text adds the step and closes
        let r = self.emit_event_text(&ev.run_id, &body);
        self.buf = body;
        r
    }

    /// Writes an event serialized without its closing brace: adds the step
    /// (its position in its run) and closes the object.
    pub(crate) fn emit_event_text(&mut self, run_id: &str, body: &[u8]) -> io::Result<()> {
        if self.held_skip.is_some() {
            self.say_held_skip().map_err(io::Error::other)?;
        }
        let step = self.take_step(run_id);
        let tail = StepTail::new(step);
        match &mut self.out {
            SinkTarget::Records(w) => w.raw_parts(body, tail.bytes()),
            SinkTarget::InProcess { .. } => {
                let mut line = body.to_vec();
                line.extend_from_slice(tail.bytes());
                let view: crate::record::EventView<'_> =
                    serde_json::from_slice(&line).map_err(io::Error::other)?;
                let SinkTarget::InProcess { consumer, .. } = &mut self.out else {
                    unreachable!("matched above")
                };
                let out_of_order = consumer.add_event_line(&view, &line);
                self.warn_out_of_order(out_of_order);
                Ok(())
            }
        }
    }

    /// Hands a decoded event (already time-filtered) to the grouper; only
    /// when [`Sink::takes_views`].
    pub(crate) fn emit_event_view(
        &mut self,
        mut view: crate::record::EventView<'_>,
        ts: Option<Timestamp>,
    ) {
        if self.held_skip.is_some() {
            // Only a skip that did not stop the read is held: saying it
            // cannot fail.
            let _ = self.say_held_skip();
        }
        view.step = self.take_step(&view.run_id);
        self.feed_at(&view, ts);
    }

    pub(super) fn feed_at(&mut self, view: &crate::record::EventView<'_>, ts: Option<Timestamp>) {
        let SinkTarget::InProcess { consumer, .. } = &mut self.out else {
            return;
        };
        let out_of_order = consumer.add_event_at(view, ts);
        self.warn_out_of_order(out_of_order);
    }

    fn warn_out_of_order(&mut self, out_of_order: Option<crate::record::OutOfOrder>) {
        if let Some(w) = out_of_order {
            self.diag
                .warn("out-of-order", format_args!("{}: {w}", self.source.path));
        }
    }

    /// The step the next event of `run_id` will get.
    pub(crate) fn next_step(&self, run_id: &str) -> u64 {
        self.runs
            .get(run_id)
            .map_or(0, |run| self.steps[run as usize].0)
    }

    /// Writes a `run` record.
    pub(crate) fn emit_run(&mut self, run: &RunRec) -> io::Result<()> {
        self.input_runs += 1;
        match &mut self.out {
            SinkTarget::Records(w) => w.record(run),
            SinkTarget::InProcess { consumer, .. } => {
                consumer.add_run(run);
                Ok(())
            }
        }
    }

    /// Passes a record of a kind the adapter does not read through unchanged.
    pub(crate) fn emit_line(&mut self, line: &[u8]) -> io::Result<()> {
        match &mut self.out {
            SinkTarget::Records(w) => w.raw_line(line),
            SinkTarget::InProcess { consumer, other } => {
                // A run record among trace lines states a run's outcome:
                // the grouper takes it, as triage-group does.
                let probe: Option<crate::record::KindProbe<'_>> = serde_json::from_slice(line).ok();
                if probe.and_then(|p| p.kind).as_deref() == Some("run")
                    && let Ok(run) = serde_json::from_slice::<RunRec>(line)
                {
                    consumer.add_run(&run);
                } else {
                    other.push(line.to_vec());
                }
                Ok(())
            }
        }
    }

    /// Reports input that could not be read: an error under `--strict`,
    /// otherwise a warning and a count in the source record.
    /// The same skip again and again (the elements of one document, each
    /// unreadable for one reason) is said once, with how often: it is held
    /// until another skip, an event or the source's end comes.
    pub(crate) fn skip(
        &mut self,
        line: Option<u64>,
        reason: impl std::fmt::Display,
    ) -> anyhow::Result<()> {
        let at = match line {
            Some(n) => format!("{}:{n}", self.source.path),
            None => self.source.path.clone(),
        };
        let reason = reason.to_string();
        self.source.skipped += 1;
        if let Some((held_at, held_reason, n)) = &mut self.held_skip
            && *held_at == at
            && *held_reason == reason
        {
            *n += 1;
            return Ok(());
        }
        self.say_held_skip()?;
        match self.on_bad {
            OnBadInput::Stop => self.on_bad.skip(self.diag, "unreadable-input", at, reason),
            OnBadInput::Skip => {
                self.held_skip = Some((at, reason, 1));
                Ok(())
            }
        }
    }

    /// Says the skip held back, with its count when it recurred.
    fn say_held_skip(&mut self) -> anyhow::Result<()> {
        let Some((at, reason, n)) = self.held_skip.take() else {
            return Ok(());
        };
        let reason = match n {
            1 => reason,
            n => format!("{reason} ({n} times)"),
        };
        self.on_bad.skip(self.diag, "unreadable-input", at, reason)
    }

    pub fn flush(&mut self) -> io::Result<()> {
        match &mut self.out {
            SinkTarget::Records(w) => w.flush(),
            SinkTarget::InProcess { .. } => Ok(()),
        }
    }
}

/// The end of an event record: its step and the closing brace and newline.
// itoa into a stack buffer rather than `write!`: the formatting machinery
// cost about 400 instructions an event on triage-parse's writing thread.
pub(super) struct StepTail {
    buf: [u8; STEP_KEY.len() + 20 + 2],
    len: usize,
}

pub(super) const STEP_KEY: &[u8] = b",\"step\":";

impl StepTail {
    pub(super) fn new(step: u64) -> Self {
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

    pub(super) fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}
