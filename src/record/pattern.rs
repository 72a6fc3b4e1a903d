//! `pattern` records: one failure signature with its samples and scores.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{PatternKind, RecordError, RunCounts, json_reason};

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
    pub kind: PatternKind,
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
    pub(crate) const FIELDS: [&'static str; 15] = [
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
    pub(crate) fn writes(&self, name: &str) -> bool {
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

impl Pattern {
    /// Reads a pattern record; the error is a [`json_reason`]. Scores that
    /// do not read leave `score` empty: see [`Pattern::check_unscored`].
    pub(crate) fn from_line(line: &[u8]) -> Result<Pattern, RecordError> {
        serde_json::from_slice(line).map_err(|e| RecordError::Unreadable(json_reason(line, &e)))
    }

    /// `self`, read from `line` without scores, unless the record has a
    /// score field (`has` says whether it has a member of that name): then
    /// the reason its scores did not read.
    pub(crate) fn check_unscored(
        self,
        line: &[u8],
        has: impl Fn(&str) -> bool,
    ) -> Result<Pattern, RecordError> {
        if !Scores::FIELDS.iter().any(|f| has(f)) {
            return Ok(self);
        }
        match serde_json::from_slice::<Scores>(line) {
            Err(e) => Err(RecordError::Unreadable(json_reason(line, &e))),
            // Unreachable while `score` reads the same fields; kept an error.
            Ok(_) => Err(RecordError::Unreadable(
                "score fields that do not read as scores".to_string(),
            )),
        }
    }
}
