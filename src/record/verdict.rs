//! `finding` and `verdict` records: root-cause evidence and the verdict on
//! a failed run.

use serde::{Deserialize, Serialize};

use super::{FindingKind, Outcome, VerdictKind};

/// A `finding` record (triage-explain): one thing a detector saw in a run.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Finding {
    #[serde(default)]
    pub kind: FindingKind,
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
    #[serde(default)]
    pub kind: VerdictKind,
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
    /// Absent for a failed run; `unknown` for a run no record gives an
    /// outcome, explained on request (`triage-explain --unknown-outcome`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// The kind of system the run reads as (multi-agent chat, tool use with
    /// a user, coding agent, web browsing, other): `confidence` is how often
    /// such verdicts were right on labelled runs of that kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
    /// The run's shape, which the confidence's likeness check holds
    /// against the calibration sets of its kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<SystemProfile>,
    /// What the LLM judge (`triage-explain --judge`) said of the candidates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<JudgeNote>,
}

/// The shape of a run: who acts, with how many tools, over how many steps,
/// in messages how long.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct SystemProfile {
    /// Distinct agents acting, the user aside.
    pub agents: u64,
    /// Distinct tools called.
    pub tools: u64,
    pub steps: u64,
    /// The median length in characters of the agents' messages.
    pub message_chars: u64,
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
