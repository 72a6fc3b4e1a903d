//! The record kinds the tools exchange and their fields, one module per
//! family of kinds: the contract every stage shares (docs/records.md).

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

mod alert;
mod change;
mod event;
mod event_writer;
mod pattern;
mod run;
mod verdict;

pub use alert::Alert;
pub use change::{
    Change, ChangeScope, ClassificationChange, CountChange, PassRateChange, PatternChange,
    RunTotals, ScoreChange, SideSummary, SummaryChange, TaskChange,
};
pub use event::{
    ActionOut, ActionView, ErrorInfo, EventConsumer, EventOut, EventView, FailureSource, JsonVal,
    Latency, OutOfOrder, Src, cut_text, is_cut, text_digest,
};
pub use pattern::{Pattern, Sample, Scores};
pub use run::{
    Batch, OpenTimeline, Outcome, OutcomeReason, RunCounts, RunRec, SourceRec, natural_cmp,
    shared_run_id,
};
pub use verdict::{Candidate, Finding, JudgeNote, SystemProfile, Verdict};

/// What a record is: the `kind` member every line carries.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Header,
    Event,
    Run,
    Source,
    Batch,
    Pattern,
    Finding,
    Verdict,
    Change,
    Alert,
}

impl Kind {
    /// Every kind, in pipeline order.
    pub const ALL: [Kind; 10] = [
        Kind::Header,
        Kind::Event,
        Kind::Run,
        Kind::Source,
        Kind::Batch,
        Kind::Pattern,
        Kind::Finding,
        Kind::Verdict,
        Kind::Change,
        Kind::Alert,
    ];

    /// The kind as lines spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Header => "header",
            Kind::Event => "event",
            Kind::Run => "run",
            Kind::Source => "source",
            Kind::Batch => "batch",
            Kind::Pattern => "pattern",
            Kind::Finding => "finding",
            Kind::Verdict => "verdict",
            Kind::Change => "change",
            Kind::Alert => "alert",
        }
    }

    /// The kind a line's `kind` member names; none for a kind this build
    /// does not know (such records pass through the stages unchanged).
    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// The `kind` member of a record type: a type with one value, so a record
/// gets its kind from its type and can carry no other. It reads only its
/// own kind.
macro_rules! kind_tag {
    ($($tag:ident => $kind:ident),* $(,)?) => {$(
        #[doc = concat!("The `kind` of a `", stringify!($kind), "` record.")]
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $tag;

        impl $tag {
            pub const KIND: Kind = Kind::$kind;
        }

        impl Serialize for $tag {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                Kind::$kind.serialize(s)
            }
        }

        impl<'de> Deserialize<'de> for $tag {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let kind = Kind::deserialize(d)?;
                if kind == Kind::$kind {
                    Ok($tag)
                } else {
                    Err(serde::de::Error::custom(format_args!(
                        "a {} record where a {} record belongs",
                        kind.as_str(),
                        Kind::$kind.as_str()
                    )))
                }
            }
        }
    )*};
}

kind_tag! {
    HeaderKind => Header,
    RunKind => Run,
    SourceKind => Source,
    BatchKind => Batch,
    PatternKind => Pattern,
    FindingKind => Finding,
    VerdictKind => Verdict,
    ChangeKind => Change,
    AlertKind => Alert,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The record schema this build reads and writes.
pub(crate) const SCHEMA: u64 = 1;

/// Why a record line cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// A header of a schema newer than this build: every stage stops.
    #[error("schema {0} is newer than this tool reads ({SCHEMA}); upgrade triage")]
    NewerSchema(u64),
    /// A line that does not read as the record it says it is: the reason,
    /// naming the field where serde can.
    #[error("{0}")]
    Unreadable(String),
}

/// Refuses a header whose schema is newer than this build reads: every
/// stage says it the same way.
pub fn check_schema(schema: Option<u64>) -> Result<(), RecordError> {
    match schema {
        Some(s) if s > SCHEMA => Err(RecordError::NewerSchema(s)),
        _ => Ok(()),
    }
}

/// First record of every stage's output.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub(crate) struct Header {
    pub kind: HeaderKind,
    pub schema: u64,
    pub producer: String,
}

impl Header {
    /// The header a tool writes: `producer` is "tool version".
    pub(crate) fn for_tool(tool: &str) -> Self {
        Header {
            kind: HeaderKind,
            schema: SCHEMA,
            producer: format!("{tool} {}", env!("CARGO_PKG_VERSION")),
        }
    }
}

/// Just enough of any record to route it.
#[derive(Deserialize)]
pub(crate) struct KindProbe<'a> {
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
pub(crate) fn json_reason(line: &[u8], e: &serde_json::Error) -> String {
    // Rust's type names mean nothing to someone editing a record.
    let msg = crate::plumbing::diag::json_reason(e)
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
    crate::plumbing::json_scan::object_members(text, &mut members).ok()?;
    // The scanner's keys are slices of the line: their offsets say where
    // each member starts, and the last to start before the column holds it.
    let start = |key: &crate::plumbing::json_scan::Value<'_>| {
        key.raw().as_ptr() as usize - text.as_ptr() as usize
    };
    members
        .iter()
        .rev()
        .find(|(key, _)| start(key) < column)
        .and_then(|(key, _)| key.as_str())
        .map(Cow::into_owned)
}

#[cfg(test)]
mod tests;
