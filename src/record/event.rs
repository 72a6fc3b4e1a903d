//! `event` records: written by the readers (`EventOut`), read by the stages
//! (`EventView`), and the cut-text convention of their long texts.

use super::run::SourceRec;
use super::{Kind, RunRec};
use crate::timestamp::Timestamp;
use serde::{Deserialize, Serialize, Serializer};
use sha2::Digest;
use std::borrow::Cow;
use std::fmt;

/// Where a record came from in the input.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Src<'a> {
    pub path: Cow<'a, str>,
    pub line: u64,
}

/// A JSON value taken over from the input unchanged, whichever parser read it.
#[derive(Debug, Clone)]
pub enum JsonVal<'a> {
    Simd(&'a simd_json::BorrowedValue<'a>),
    Serde(serde_json::Value),
    /// A value the record's source holds.
    SerdeRef(&'a serde_json::Value),
    /// `latency_ms` as readers of spans find it.
    Latency(Latency),
}

/// An event's `latency_ms`: milliseconds spent in the model, in the tool
/// and in all, each when known.
#[derive(Serialize, Debug, Clone, Copy, Default, PartialEq)]
pub struct Latency {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<i64>,
}

impl Serialize for JsonVal<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            JsonVal::Simd(v) => v.serialize(s),
            JsonVal::Serde(v) => v.serialize(s),
            JsonVal::SerdeRef(v) => v.serialize(s),
            JsonVal::Latency(v) => v.serialize(s),
        }
    }
}

/// An error an event carries: its type and message.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct ErrorInfo {
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// What the event did: the tool or, for other actions, their name.
#[derive(Serialize, Debug, Clone, Default)]
pub struct ActionOut<'a> {
    pub tool_name: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_input: Option<JsonVal<'a>>,
}

/// An `event` record as adapters write it. `step` is assigned by the sink
/// and written last.
#[derive(Serialize, Debug, Clone, Default)]
pub struct EventOut<'a> {
    /// Always `event`: [`Kind::Event`] as lines spell it.
    pub kind: &'static str,
    pub event_id: Cow<'a, str>,
    pub run_id: Cow<'a, str>,
    pub turn: i64,
    pub agent_id: Cow<'a, str>,
    pub action_taken: ActionOut<'a>,
    pub action_succeeded: bool,
    /// Kept as an instant and written as RFC 3339 text: the time filter
    /// and the grouper take the instant, and only a record written out
    /// needs the text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_classification: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_source: Option<FailureSource>,
    /// True when no record stated the failure and the reader concluded it
    /// (error text in a result, a call never answered, a run that ends
    /// without an answer).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub failure_inferred: bool,
    /// The finer cause behind an inferred classification (`rate_limit`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_cause: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub divergence_fields: Vec<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub divergence_age: Option<JsonVal<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<JsonVal<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<JsonVal<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_context: Option<JsonVal<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span_id: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_span_id: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span_kind: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorInfo>,
    /// The digest of `error.message` when `--max-text` cut it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_digest: Option<String>,
    /// The digest of `action_taken.tool_input`'s JSON text when
    /// `--max-text` cut it (it is then that text, cut, as a string).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_input_digest: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_digest: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_digest: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src: Option<Src<'a>>,
}

impl<'a> EventOut<'a> {
    /// True when `error.message` or `action_taken.tool_input` is longer
    /// than `limit` bytes (the input and output are cut where read).
    pub(crate) fn has_long_texts(&self, limit: usize) -> bool {
        let long_error = self
            .error
            .as_ref()
            .and_then(|e| e.message.as_ref())
            .is_some_and(|m| m.len() > limit)
            && self.error_digest.is_none();
        long_error
            || (self.tool_input_digest.is_none()
                && self
                    .action_taken
                    .tool_input
                    .as_ref()
                    .is_some_and(|v| json_longer_than(v, limit)))
    }

    /// Cuts `error.message` and `action_taken.tool_input` (as JSON text)
    /// to `limit` bytes, keeping the digest of each whole: one huge error
    /// costs the stages after it no more than `--max-text` allows.
    pub(crate) fn cut_long_texts(&mut self, limit: usize) {
        if let Some(message) = self.error.as_mut().and_then(|e| e.message.as_mut())
            && message.len() > limit
        {
            let (kept, digest) = cut_text(message, limit);
            *message = kept;
            self.error_digest = Some(digest);
        }
        if let Some(text) = self.tool_input_text().filter(|t| t.len() > limit) {
            let (kept, digest) = cut_text(&text, limit);
            self.action_taken.tool_input = Some(JsonVal::Serde(serde_json::Value::String(kept)));
            self.tool_input_digest = Some(digest);
        }
    }

    fn tool_input_text(&self) -> Option<String> {
        self.action_taken
            .tool_input
            .as_ref()
            .and_then(|v| serde_json::to_string(v).ok())
    }

    /// An event with the required fields set and everything else unknown.
    pub(crate) fn new(
        event_id: impl Into<Cow<'a, str>>,
        run_id: impl Into<Cow<'a, str>>,
        turn: i64,
        agent_id: impl Into<Cow<'a, str>>,
        tool_name: impl Into<Cow<'a, str>>,
        succeeded: bool,
    ) -> Self {
        EventOut {
            kind: Kind::Event.as_str(),
            event_id: event_id.into(),
            run_id: run_id.into(),
            turn,
            agent_id: agent_id.into(),
            action_taken: ActionOut {
                tool_name: tool_name.into(),
                tool_input: None,
            },
            action_succeeded: succeeded,
            ..Default::default()
        }
    }
}

impl EventOut<'_> {
    /// Sets the event's time from Unix nanoseconds; none, 0 (an unset time
    /// in OTLP) or a time RFC 3339 cannot write (past the year 9999) leaves
    /// it unset.
    pub(crate) fn set_time_nanos(&mut self, nanos: Option<i128>) {
        self.timestamp = nanos.filter(|n| *n > 0).and_then(Timestamp::writable);
    }

    /// The event as a stage reads it, without a round trip through JSON.
    /// Its time is not in it as text: it goes beside it as the instant
    /// (`timestamp`), which is what a stage reads of it.
    pub(crate) fn view(&self, step: u64) -> EventView<'_> {
        EventView {
            event_id: Cow::Borrowed(&self.event_id),
            run_id: Cow::Borrowed(&self.run_id),
            turn: self.turn,
            step,
            agent_id: Cow::Borrowed(&self.agent_id),
            action_taken: ActionView {
                tool_name: Cow::Borrowed(&self.action_taken.tool_name),
            },
            action_succeeded: self.action_succeeded,
            failure_classification: self.failure_classification.as_deref().map(Cow::Borrowed),
            divergence_fields: Some(
                self.divergence_fields
                    .iter()
                    .map(|d| Cow::Borrowed(d.as_ref()))
                    .collect(),
            ),
            timestamp: None,
            error: self.error.clone().map(Box::new),
            output: self.output.as_deref().map(Cow::Borrowed),
        }
    }
}

/// Why an event counts as failed: what in the source said so, or how the
/// reader concluded it (the `failure_source` member of an event record).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FailureSource {
    /// The trace labelled the failure with its class.
    Label,
    /// A status said so: an error status, a non-zero exit code.
    Status,
    /// An error the source recorded with the step.
    Error,
    /// An exception that ended the run, put on the step it stopped in.
    Exception,
    /// Error text in the step's output.
    Output,
    /// A parent's failure passed to the child where it happened.
    Carried,
    /// A call that was never answered.
    NoResult,
    /// A run that ended without an answer.
    NoAnswer,
}

impl FailureSource {
    pub fn as_str(self) -> &'static str {
        match self {
            FailureSource::Label => "label",
            FailureSource::Status => "status",
            FailureSource::Error => "error",
            FailureSource::Exception => "exception",
            FailureSource::Output => "output",
            FailureSource::Carried => "inherited",
            FailureSource::NoResult => "no_result",
            FailureSource::NoAnswer => "no_answer",
        }
    }
}

/// The action of an event as readers see it.
#[derive(Deserialize, Debug, Clone, Default)]
pub struct ActionView<'a> {
    #[serde(borrow)]
    pub tool_name: Cow<'a, str>,
}

/// An `event` record as stages read it: the fields they use, borrowed from
/// the line where possible.
#[derive(Deserialize, Debug, Clone)]
pub struct EventView<'a> {
    #[serde(borrow)]
    pub event_id: Cow<'a, str>,
    #[serde(borrow)]
    pub run_id: Cow<'a, str>,
    pub turn: i64,
    #[serde(default)]
    pub step: u64,
    #[serde(borrow)]
    pub agent_id: Cow<'a, str>,
    #[serde(borrow)]
    pub action_taken: ActionView<'a>,
    pub action_succeeded: bool,
    #[serde(borrow, default)]
    pub failure_classification: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub divergence_fields: Option<Vec<Cow<'a, str>>>,
    #[serde(borrow, default)]
    pub timestamp: Option<Cow<'a, str>>,
    /// Boxed: most events have none, and records are moved several times
    /// on their way from the decoding threads.
    #[serde(default)]
    pub error: Option<Box<ErrorInfo>>,
    #[serde(borrow, default)]
    pub output: Option<Cow<'a, str>>,
}

impl EventView<'_> {
    /// The reference's failure test: not succeeded, or a classification.
    pub(crate) fn is_failure(&self) -> bool {
        !self.action_succeeded || self.classification().is_some()
    }

    /// The classification, with null, "" and "null" meaning none.
    pub(crate) fn classification(&self) -> Option<&str> {
        match self.failure_classification.as_deref() {
            None | Some("") | Some("null") => None,
            Some(c) => Some(c),
        }
    }
}

/// The `input_digest`/`output_digest` of a text: `sha256:` and the hex.
pub fn text_digest(text: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let hash = sha2::Sha256::digest(text.as_bytes());
    let mut digest = String::with_capacity(7 + 64);
    digest.push_str("sha256:");
    for b in hash.iter() {
        digest.push(char::from(HEX[usize::from(b >> 4)]));
        digest.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    digest
}

/// True when `v` written as JSON takes more than `limit` bytes; stops
/// writing once past it, so a small value costs little and a huge one no
/// more than the limit.
fn json_longer_than(v: &JsonVal<'_>, limit: usize) -> bool {
    struct Counter {
        left: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if buf.len() > self.left {
                self.left = 0;
                return Err(std::io::Error::other("past the limit"));
            }
            self.left -= buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Counter { left: limit };
    serde_json::to_writer(&mut c, v).is_err()
}

/// `text` cut to `limit` bytes at a character boundary (and marked `…`
/// when cut), and the digest of the whole.
pub fn cut_text(text: &str, limit: usize) -> (String, String) {
    let digest = text_digest(text);
    if text.len() <= limit {
        return (text.to_string(), digest);
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (format!("{}…", &text[..end]), digest)
}

/// Whether `kept` is a text cut short (`…`) of the whole that `digest`
/// names, rather than the whole text.
pub fn is_cut(kept: &str, digest: Option<&str>) -> bool {
    kept.ends_with('…') && digest.is_some_and(|d| d != text_digest(kept))
}

/// A run's agent whose events came back in turn order after the grouper
/// stopped buffering: its recovery figures may differ from a sorted read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutOfOrder {
    pub run_id: String,
    pub agent_id: String,
}

impl fmt::Display for OutOfOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "run {:?} agent {:?} goes back in turn order; its recovery figures may differ from a sorted read",
            self.run_id, self.agent_id
        )
    }
}

/// What takes decoded events in process, instead of event records: the
/// grouper under `triage report`, the runs to explain under `--explain`.
/// The formats feed it without knowing which.
pub trait EventConsumer {
    /// Takes a `source` record: one input read.
    fn add_source(&mut self, source: SourceRec);
    /// Takes a `run` record: what the format states of a whole run.
    fn add_run(&mut self, run: &RunRec);
    /// Takes one event as the grouper reads it, with its timestamp read;
    /// says when the event's run and agent went back in turn order.
    fn add_event_at(&mut self, ev: &EventView<'_>, at: Option<Timestamp>) -> Option<OutOfOrder>;
    /// Takes one whole event, at `step` of its run. By default only its
    /// view is taken.
    fn add_event(&mut self, ev: &EventOut<'_>, step: u64) -> Option<OutOfOrder> {
        self.add_event_at(&ev.view(step), ev.timestamp)
    }
    /// Takes one event as its record reads (`line`, an ndjson input's own
    /// text), read as `view`. By default only the view is taken.
    fn add_event_line(&mut self, view: &EventView<'_>, _line: &[u8]) -> Option<OutOfOrder> {
        let at = view.timestamp.as_deref().and_then(Timestamp::parse);
        self.add_event_at(view, at)
    }
    /// False when the consumer reads more of an event than its view, so
    /// readers must not hand over views alone.
    fn views_suffice(&self) -> bool {
        true
    }
}
