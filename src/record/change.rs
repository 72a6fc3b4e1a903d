//! `change` records: what differs between two batches.

use serde::{Deserialize, Serialize};

use super::ChangeKind;

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
    /// Failure events per run on each side: what a regression is judged on,
    /// so a batch twice the size at the same rate is no regression.
    #[serde(default)]
    pub per_run_before: f64,
    #[serde(default)]
    pub per_run_after: f64,
    /// The chance of a rise in failure events per run at least this large
    /// if the rate had not changed (an exact test on two Poisson rates).
    #[serde(default)]
    pub rise_p_value: Option<f64>,
    /// The same for unrecovered events.
    #[serde(default)]
    pub unrecovered_rise_p_value: Option<f64>,
}

/// One side's runs: how many failed and passed, and the pass rate of those
/// with a known outcome with its 95% interval (Wilson).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct RunTotals {
    pub runs: u64,
    pub failed: u64,
    pub succeeded: u64,
    pub unknown: u64,
    pub pass_rate: Option<f64>,
    pub pass_rate_low: Option<f64>,
    pub pass_rate_high: Option<f64>,
}

/// Two batches' pass rates and whether the change is beyond noise.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct PassRateChange {
    pub before: RunTotals,
    pub after: RunTotals,
    /// `paired`: McNemar's exact test over the tasks (or task trials) both
    /// batches ran; `unpaired`: Fisher's exact test on the two proportions;
    /// `none`: a side has no run of known outcome.
    pub test: String,
    /// Tasks (or task trials) compared pair by pair.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<u64>,
    /// What a pair is: `task`, or `trial` (a task's trial of one number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paired_by: Option<String>,
    /// Pairs that passed before and fail after, and the other way (paired
    /// tests only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub newly_failing: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed: Option<u64>,
    /// One-sided: the chance of a drop at least this large by chance.
    pub p_value: Option<f64>,
    /// "down 12.0 points (p = 0.003)", "up 4.0 points", "stable".
    pub label: String,
}

/// A task whose outcome flipped between the batches.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct TaskChange {
    /// `newly_failing` or `fixed`.
    pub status: String,
    pub task_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<u64>,
    pub run_before: String,
    pub run_after: String,
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
    #[serde(rename = "pass_rate")]
    PassRate(PassRateChange),
    Task(TaskChange),
    Classification(ClassificationChange),
    Pattern(PatternChange),
}

/// A `change` record (triage-diff).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Change {
    pub kind: ChangeKind,
    #[serde(flatten)]
    pub change: ChangeScope,
}
