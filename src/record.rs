//! The record kinds the tools exchange and their fields: the contract of
//! DESIGN.md §2, shared by every stage.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::Digest;

/// The record schema this build reads and writes.
pub const SCHEMA: u64 = 1;

/// First record of every stage's output.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Header {
    pub kind: Cow<'static, str>,
    pub schema: u64,
    pub producer: String,
}

impl Header {
    /// The header a tool writes: `producer` is "tool version".
    pub fn for_tool(tool: &str) -> Self {
        Header {
            kind: Cow::Borrowed("header"),
            schema: SCHEMA,
            producer: format!("{tool} {}", env!("CARGO_PKG_VERSION")),
        }
    }
}

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
}

impl Serialize for JsonVal<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            JsonVal::Simd(v) => v.serialize(s),
            JsonVal::Serde(v) => v.serialize(s),
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
    pub kind: &'static str,
    pub event_id: Cow<'a, str>,
    pub run_id: Cow<'a, str>,
    pub turn: i64,
    pub agent_id: Cow<'a, str>,
    pub action_taken: ActionOut<'a>,
    pub action_succeeded: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_classification: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_source: Option<&'static str>,
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
    /// An event with the required fields set and everything else unknown.
    pub fn new(
        event_id: impl Into<Cow<'a, str>>,
        run_id: impl Into<Cow<'a, str>>,
        turn: i64,
        agent_id: impl Into<Cow<'a, str>>,
        tool_name: impl Into<Cow<'a, str>>,
        succeeded: bool,
    ) -> Self {
        EventOut {
            kind: "event",
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
    /// The event as a stage reads it, without a round trip through JSON.
    pub fn view(&self, step: u64) -> EventView<'_> {
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
            timestamp: self.timestamp.as_deref().map(Cow::Borrowed),
            error: self.error.clone().map(Box::new),
            output: self.output.as_deref().map(Cow::Borrowed),
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
    pub fn is_failure(&self) -> bool {
        !self.action_succeeded || self.classification().is_some()
    }

    /// The classification, with null, "" and "null" meaning none.
    pub fn classification(&self) -> Option<&str> {
        match self.failure_classification.as_deref() {
            None | Some("") | Some("null") => None,
            Some(c) => Some(c),
        }
    }
}

/// A `run` record: what the source knows of a whole run.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct RunRec {
    pub kind: Cow<'static, str>,
    pub run_id: String,
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// The rules the agent was told to follow (a system prompt's policy),
    /// when the source carries them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<Src<'static>>,
}

/// A `source` record: what was read from one input.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct SourceRec {
    #[serde(default = "source_kind")]
    pub kind: Cow<'static, str>,
    pub path: String,
    pub format: String,
    pub events: u64,
    pub runs: u64,
    pub skipped: u64,
}

fn source_kind() -> Cow<'static, str> {
    Cow::Borrowed("source")
}

/// The `batch` record: totals over everything a stage read.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct Batch {
    pub kind: Cow<'static, str>,
    pub runs_total: u64,
    /// Runs in time order (each run's earliest event timestamp); runs
    /// without one keep their place after the run they followed in the input.
    pub run_order: Vec<String>,
    /// Each run's earliest event timestamp, aligned with `run_order` (null
    /// for a run without one): what merging shards orders their runs by.
    /// Absent when no event had a timestamp.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run_first_timestamps: Vec<Option<String>>,
    pub events_total: u64,
    pub failures_total: u64,
    pub skipped: u64,
    pub sources: Vec<SourceRec>,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    /// The recovery window (turns) `recovered` was counted with, written by
    /// triage-score, so a report states the window its numbers mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_window: Option<u64>,
}

/// Run id → count, kept in first-appearance order. Run ids are shared
/// between patterns (every pattern of a batch names the same runs), so a
/// reader holds each id once however many patterns name it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunCounts(pub Vec<(std::sync::Arc<str>, u64)>);

thread_local! {
    // Fx rather than SipHash: hashing each run id of every pattern's
    // run_counts was a tenth of triage-score's time, as it is for the
    // grouper's own interners.
    static RUN_IDS: std::cell::RefCell<rustc_hash::FxHashSet<std::sync::Arc<str>>> =
        std::cell::RefCell::new(rustc_hash::FxHashSet::default());
}

/// The shared copy of a run id.
pub fn shared_run_id(id: &str) -> std::sync::Arc<str> {
    RUN_IDS.with(|ids| {
        let mut ids = ids.borrow_mut();
        if let Some(a) = ids.get(id) {
            return a.clone();
        }
        let a: std::sync::Arc<str> = id.into();
        ids.insert(a.clone());
        a
    })
}

impl Serialize for RunCounts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(&**k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for RunCounts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RunCounts;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of run id to count")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<RunCounts, A::Error> {
                let mut out = Vec::with_capacity(a.size_hint().unwrap_or(0));
                while let Some((k, v)) = a.next_entry::<Cow<'de, str>, u64>()? {
                    out.push((shared_run_id(&k), v));
                }
                Ok(RunCounts(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// One example occurrence of a pattern.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Sample {
    pub event_id: String,
    pub run_id: String,
    pub turn: i64,
    pub step: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The event's timestamp (RFC 3339), when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// The fields triage-score adds to a pattern.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Scores {
    pub frequency_score: f64,
    pub severity_score: f64,
    pub recovery_rate: f64,
    pub final_score: f64,
    pub confidence: f64,
    pub confidence_label: String,
    pub median_recovery_latency: Option<f64>,
    pub runs_seen: u64,
    pub runs_total: u64,
    pub trend: String,
    pub rank: u64,
}

/// A `pattern` record: one failure signature and what happened to it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Pattern {
    pub kind: Cow<'static, str>,
    pub pattern_id: String,
    pub display_name: String,
    pub agent_id: String,
    pub tool_name: String,
    pub failure_classification: String,
    pub divergence_fields: Vec<String>,
    pub frequency: u64,
    /// Failures followed by a success within the recovery window.
    pub recovered: u64,
    /// Failures with no later success, or none within 10 turns.
    pub tail_unrecovered: u64,
    /// Offset in turns to the first later success → failures with that
    /// offset, for every failure that had one (inside the window or not).
    pub recovery_latencies: BTreeMap<u64, u64>,
    pub run_counts: RunCounts,
    /// Failures per day (from event timestamps), for trend charts.
    #[serde(default)]
    pub day_counts: BTreeMap<String, u64>,
    /// Failures per hour (`YYYY-MM-DDTHH:00:00Z`), for `--bucket hour`.
    #[serde(default)]
    pub hour_counts: BTreeMap<String, u64>,
    pub samples: Vec<Sample>,
    #[serde(flatten, default)]
    pub score: Option<Scores>,
}

impl Pattern {
    /// The members a pattern record is written with.
    pub const FIELDS: [&'static str; 15] = [
        "kind",
        "pattern_id",
        "display_name",
        "agent_id",
        "tool_name",
        "failure_classification",
        "divergence_fields",
        "frequency",
        "recovered",
        "tail_unrecovered",
        "recovery_latencies",
        "run_counts",
        "day_counts",
        "hour_counts",
        "samples",
    ];

    /// True when this pattern, written out, has a member named `name`.
    pub fn writes(&self, name: &str) -> bool {
        Self::FIELDS.contains(&name) || self.score.is_some() && Scores::FIELDS.contains(&name)
    }
}

impl Scores {
    /// The members scores add to a pattern record.
    pub const FIELDS: [&'static str; 11] = [
        "frequency_score",
        "severity_score",
        "recovery_rate",
        "final_score",
        "confidence",
        "confidence_label",
        "median_recovery_latency",
        "runs_seen",
        "runs_total",
        "trend",
        "rank",
    ];
}

/// A `finding` record (triage-explain): one thing a detector saw in a run.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Finding {
    #[serde(default = "finding_kind")]
    pub kind: Cow<'static, str>,
    pub run_id: String,
    pub step: u64,
    pub agent_id: String,
    pub category: String,
    pub title: String,
    pub detector: String,
    /// Orders findings only; not a probability.
    pub confidence: f64,
    /// True for where a failure showed, false for a suspected cause.
    pub symptom: bool,
    /// Sentences a person can check against the run.
    #[serde(default)]
    pub evidence: Vec<String>,
}

fn finding_kind() -> Cow<'static, str> {
    Cow::Borrowed("finding")
}

/// One ranked root-cause candidate of a verdict.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Candidate {
    pub agent_id: String,
    pub step: u64,
    pub category: String,
    pub detector: String,
    pub confidence: f64,
}

/// A `verdict` record (triage-explain): the agent and step a failed run is
/// traced back to.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Verdict {
    #[serde(default = "verdict_kind")]
    pub kind: Cow<'static, str>,
    pub run_id: String,
    pub agent_id: String,
    pub step: u64,
    pub category: String,
    /// agent, user, environment or unknown.
    pub blame: String,
    pub confidence: f64,
    #[serde(default)]
    pub evidence: Vec<String>,
    /// The top three candidates; the first is the verdict.
    #[serde(default)]
    pub candidates: Vec<Candidate>,
    /// What the LLM judge (`triage-explain --judge`) said of the candidates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeNote>,
}

/// The LLM judge's pick among a verdict's candidates.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct JudgeNote {
    pub model: String,
    /// The rule-ranked position (1-based) of the candidate it picked; 0
    /// when a judge shown the whole run named a step the rules did not list.
    pub choice: u64,
    /// True when it picked another candidate than the rules' first, which
    /// is then the verdict.
    pub reranked: bool,
    pub reason: String,
}

fn verdict_kind() -> Cow<'static, str> {
    Cow::Borrowed("verdict")
}

/// An `alert` record (triage-alert): what was decided for one scored
/// pattern, and what came of the send.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Alert {
    #[serde(default = "alert_kind")]
    pub kind: Cow<'static, str>,
    pub pattern_id: String,
    pub display_name: String,
    pub final_score: f64,
    pub threshold: f64,
    /// fired, would_fire (--dry-run), suppressed (cooldown), below_threshold
    /// or failed.
    pub decision: String,
    /// Sends tried: 0 when nothing was sent.
    pub attempts: u32,
    /// The receiver's last HTTP status, when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// Why the last send failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The webhook without its secret path (`https://hooks.slack.com/…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<String>,
    /// When the pattern last fired (RFC 3339), for a suppressed alert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_fired: Option<String>,
    /// When the cooldown ends (RFC 3339), for a suppressed alert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooldown_until: Option<String>,
    /// The body a dry run would have sent, for a would_fire alert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<serde_json::Value>,
}

fn alert_kind() -> Cow<'static, str> {
    Cow::Borrowed("alert")
}

/// Just enough of any record to route it.
#[derive(Deserialize)]
pub struct KindProbe<'a> {
    #[serde(borrow, default)]
    pub kind: Option<Cow<'a, str>>,
    #[serde(default)]
    pub schema: Option<u64>,
}

/// Why a record line could not be read, for a message that already names
/// the file and line: serde_json's reason without its "at line 1", with
/// the column of a syntax error; for a line that is JSON but not an object
/// (most often one line of pretty-printed records), what records look
/// like; and the field at fault first when a value has the wrong type
/// (`frequency: invalid type: string "x", expected a non-negative
/// integer`). Every stage words bad records with it.
pub fn json_reason(line: &[u8], e: &serde_json::Error) -> String {
    // Rust's type names mean nothing to someone editing a record.
    let msg = crate::io::diag::json_reason(e)
        .replace("expected u64", "expected a non-negative integer")
        .replace("expected i64", "expected an integer")
        .replace("expected f64", "expected a number");
    if !e.is_data() {
        return format!("not valid JSON: {msg} at column {}", e.column());
    }
    if !line.trim_ascii_start().starts_with(b"{") {
        return "not a JSON object: records are one object per line, as triage-parse \
                writes them (a trace file goes through triage-parse first, pretty-printed \
                records through `jq -c .`)"
            .to_string();
    }
    // "missing field", "duplicate field" name it already.
    match field_at(line, e.column()) {
        Some(field) if !msg.contains(" field ") => format!("{field}: {msg}"),
        _ => msg,
    }
}

/// The top-level member of a JSON object line that holds byte `column`
/// (1-based, where serde_json stopped).
fn field_at(line: &[u8], column: usize) -> Option<String> {
    let text = std::str::from_utf8(line).ok()?;
    let mut members = Vec::new();
    crate::io::json_scan::object_members(text, &mut members).ok()?;
    // The scanner's keys are slices of the line: their offsets say where
    // each member starts, and the last to start before the column holds it.
    let start = |key: &crate::io::json_scan::Value<'_>| {
        key.raw().as_ptr() as usize - text.as_ptr() as usize
    };
    members
        .iter()
        .rev()
        .find(|(key, _)| start(key) < column)
        .and_then(|(key, _)| key.as_str())
        .map(Cow::into_owned)
}

impl Pattern {
    /// Reads a pattern record; the error is a [`json_reason`]. Scores that
    /// do not read leave `score` empty: see [`Pattern::check_unscored`].
    pub fn from_line(line: &[u8]) -> Result<Pattern, String> {
        serde_json::from_slice(line).map_err(|e| json_reason(line, &e))
    }

    /// `self`, read from `line` without scores, unless the record has a
    /// score field (`has` says whether it has a member of that name): then
    /// the reason its scores did not read.
    pub fn check_unscored(
        self,
        line: &[u8],
        has: impl Fn(&str) -> bool,
    ) -> Result<Pattern, String> {
        if !Scores::FIELDS.iter().any(|f| has(f)) {
            return Ok(self);
        }
        match serde_json::from_slice::<Scores>(line) {
            Err(e) => Err(json_reason(line, &e)),
            // Unreachable while `score` reads the same fields; kept an error.
            Ok(_) => Err("score fields that do not read as scores".to_string()),
        }
    }
}

/// The `input_digest`/`output_digest` of a text: `sha256:` and the hex.
pub fn text_digest(text: &str) -> String {
    let hash = sha2::Sha256::digest(text.as_bytes());
    let mut digest = String::with_capacity(7 + 64);
    digest.push_str("sha256:");
    for b in hash.iter() {
        digest.push_str(&format!("{b:02x}"));
    }
    digest
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

/// A before/after pair of a count, with its change label.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct CountChange {
    pub before: u64,
    pub after: u64,
    pub delta: i64,
    pub label: String,
}

/// A before/after pair of a score, with its change label.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ScoreChange {
    pub before: f64,
    pub after: f64,
    pub delta: f64,
    pub label: String,
}

/// What one side of a comparison was read from.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct SideSummary {
    pub sources: Vec<String>,
    pub runs: u64,
    pub events: u64,
}

/// The headline metrics of two batches.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct SummaryChange {
    pub before: SideSummary,
    pub after: SideSummary,
    pub patterns: CountChange,
    pub failure_events: CountChange,
    pub unrecovered_events: CountChange,
    pub coordination_failure_events: CountChange,
    pub top_final_score: ScoreChange,
    pub mean_final_score: ScoreChange,
    /// Headline sentences, most important first (the reference's Headline).
    pub headlines: Vec<String>,
}

/// One classification's change.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ClassificationChange {
    pub classification: String,
    pub frequency: CountChange,
    pub unrecovered: CountChange,
    pub median_latency_before: Option<f64>,
    pub median_latency_after: Option<f64>,
    pub latency_label: String,
    /// Null on a side without that classification, as a pattern's
    /// `final_score_before` is.
    pub top_score_before: Option<f64>,
    pub top_score_after: Option<f64>,
    /// The larger side has fewer than 5 occurrences.
    pub tentative: bool,
}

/// One pattern's change: new, resolved or persisting.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct PatternChange {
    pub status: String,
    pub pattern_id: String,
    pub display_name: String,
    pub agent_id: String,
    pub tool_name: String,
    pub failure_classification: String,
    pub divergence_fields: Vec<String>,
    pub frequency: CountChange,
    pub unrecovered: CountChange,
    pub final_score_before: Option<f64>,
    pub final_score_after: Option<f64>,
    pub tentative: bool,
}

/// What a `change` record describes, named by its `scope` field.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "scope", rename_all = "lowercase")]
pub enum ChangeScope {
    Summary(SummaryChange),
    Classification(ClassificationChange),
    Pattern(PatternChange),
}

/// A `change` record (triage-diff).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Change {
    pub kind: Cow<'static, str>,
    #[serde(flatten)]
    pub change: ChangeScope,
}

#[cfg(test)]
mod tests;
