//! `change` records: what differs between two batches.

use super::*;

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
    pub kind: Kind,
    #[serde(flatten)]
    pub change: ChangeScope,
}
