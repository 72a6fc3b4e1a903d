//! The detector table: every detector triage-explain runs, in one place,
//! and the `Hit` a detector returns before the framework names it.
//!
//! Adding a detector is one function (in the file of its theme), one row in
//! [`DETECTORS`], a unit test beside it and a row in docs/explain.md's table.

mod claims;
mod errors;
mod flow;
mod outcomes;
mod policy;
mod requests;
mod task;
mod words;

pub use outcomes::builds_on_failure;

use super::view::RunView;

/// What a detector saw at one step; the framework turns it into a
/// `finding` record with the run, step, agent and detector name.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Hit {
    /// Index into `RunView::steps`.
    pub at: usize,
    pub category: &'static str,
    pub title: String,
    /// Orders candidates; not a probability.
    pub confidence: f64,
    /// True for what went visibly wrong, false for a suspected cause.
    pub symptom: bool,
    pub evidence: Vec<String>,
}

impl Hit {
    /// A suspected cause at step index `at`; add evidence with
    /// [`Hit::because`].
    pub(crate) fn suspect(
        at: usize,
        category: &'static str,
        confidence: f64,
        title: String,
    ) -> Self {
        Hit {
            at,
            category,
            title,
            confidence,
            symptom: false,
            evidence: Vec::new(),
        }
    }

    /// What visibly went wrong at step index `at`.
    pub(crate) fn symptom(
        at: usize,
        category: &'static str,
        confidence: f64,
        title: String,
    ) -> Self {
        Hit {
            symptom: true,
            ..Hit::suspect(at, category, confidence, title)
        }
    }

    /// Adds an evidence sentence a person can check against the run.
    pub(crate) fn because(mut self, sentence: String) -> Self {
        self.evidence.push(sentence);
        self
    }
}

/// A detector: a small function over a read-only view of one run.
pub(crate) struct Detector {
    pub name: &'static str,
    /// What it looks for, in one line (`triage-explain --list-detectors`).
    pub about: &'static str,
    pub detect: fn(&RunView) -> Vec<Hit>,
}

/// Every detector, in the order their findings are written.
pub(crate) static DETECTORS: &[Detector] = &[
    Detector {
        name: "explicit_error",
        about: "a step that failed: an error, an exception, a non-zero exit (symptom)",
        detect: errors::explicit_error,
    },
    Detector {
        name: "labelled_failure",
        about: "a failed step the trace itself labels with a failure class, not recovered later",
        detect: errors::labelled_failure,
    },
    Detector {
        name: "environment_fault",
        about: "a call (a model call included) that failed because of the environment (rate limit, provider error, timeout, sandbox fault), not recovered and not taken for a result: blames the environment",
        detect: errors::environment_fault,
    },
    Detector {
        name: "bad_tool_call",
        about: "a tool call the tool refused: bad arguments, undefined names, an unknown tool",
        detect: errors::bad_tool_call,
    },
    Detector {
        name: "refused_output",
        about: "an agent's own message or action that failed (a harness refusing its format), not a tool's reply",
        detect: errors::refused_output,
    },
    Detector {
        name: "empty_retrieval",
        about: "a search or tool that returned nothing, and the step that asked for it",
        detect: errors::empty_retrieval,
    },
    Detector {
        name: "repeated_call",
        about: "the same call or message repeated with the same result (a loop)",
        detect: flow::repeated_call,
    },
    Detector {
        name: "fabricated_data",
        about: "an agent that simulates, assumes or invents the data it should have fetched",
        detect: claims::fabricated_data,
    },
    Detector {
        name: "unsourced_values",
        about: "specific values stated as facts that no earlier step or the task contains",
        detect: claims::unsourced_values,
    },
    Detector {
        name: "claimed_lookup",
        about: "an agent reporting a lookup (reviewed, searched, visited) that no tool performed",
        detect: claims::claimed_lookup,
    },
    Detector {
        name: "unverified_claim",
        about: "a claim of success or a final answer after a failure or without any evidence",
        detect: outcomes::unverified_claim,
    },
    Detector {
        name: "ignored_failure",
        about: "a message right after a failed or empty reply that builds on it as if it had succeeded",
        detect: outcomes::ignored_failure,
    },
    Detector {
        name: "premature_termination",
        about: "a failed run that ends right after an error, an empty result or giving up",
        detect: outcomes::premature_termination,
    },
    Detector {
        name: "user_ended_early",
        about: "a user saying yes to the agent's proposal and leaving in the same message, so the agent never acted",
        detect: outcomes::user_ended_early,
    },
    Detector {
        name: "value_provenance",
        about: "a value produced at one step and reused verbatim in a failing step",
        detect: flow::value_provenance,
    },
    Detector {
        name: "empty_submission",
        about: "a coding agent handing its result in before any step of its own changed a file",
        detect: flow::empty_submission,
    },
    Detector {
        name: "submitted_edit",
        about: "the first edit of a file a failed coding agent's submission changed: where to look, not evidence",
        detect: flow::submitted_edit,
    },
    Detector {
        name: "point_of_no_return",
        about: "the first irreversible action (write, booking, deletion, payment) of a failed run: where to look, not evidence",
        detect: flow::point_of_no_return,
    },
    Detector {
        name: "unconfirmed_action",
        about: "a consequential call (book, cancel, refund, modify, send) made without the user's explicit confirmation the run's policy requires",
        detect: policy::unconfirmed_action,
    },
    Detector {
        name: "before_identity_check",
        about: "a consequential call made before looking the user up with what they said, where the run's policy requires an identity check",
        detect: policy::before_identity_check,
    },
    Detector {
        name: "unrequested_action",
        about: "a consequential call (cancel, book, modify, send) whose verb none of the user's messages before it asks for",
        detect: requests::unrequested_action,
    },
    Detector {
        name: "unrequested_handoff",
        about: "in a failed run, a handoff to a person (transfer_to_…) the user never asked for: the agent gave up",
        detect: requests::unrequested_handoff,
    },
    Detector {
        name: "contradicts_tool_output",
        about: "a reply that restates a field of the tool output just read (a status, a price, a count) with another value",
        detect: requests::contradicts_tool_output,
    },
    Detector {
        name: "asked_again",
        about: "an agent asking the user for something the user already gave",
        detect: policy::asked_again,
    },
    Detector {
        name: "prompt_injection",
        about: "instructions inside tool or retrieved text that an agent then follows",
        detect: flow::prompt_injection,
    },
    Detector {
        name: "ignored_instruction",
        about: "an agent that sets aside the plan or an earlier instruction",
        detect: task::ignored_instruction,
    },
    Detector {
        name: "task_drift",
        about: "a task statement by an agent that keeps less than half of the user's question",
        detect: task::task_drift,
    },
    Detector {
        name: "lossy_handoff",
        about: "a handoff to another agent that drops every specific of the task",
        detect: task::lossy_handoff,
    },
    Detector {
        name: "final_change",
        about: "in a failed run no step failed: the last step that changed what it ended with, or where a submission is missing (a locator)",
        detect: flow::final_change,
    },
    Detector {
        name: "first_action",
        about: "the first action after the task of a failed run: a weak prior when nothing else explains it",
        detect: flow::first_action,
    },
];

/// A sentence naming a step for evidence: `step 4 (Verification_Expert)`.
pub(crate) fn step_name(run: &RunView, i: usize) -> String {
    let s = &run.steps[i];
    format!("step {} ({})", s.step, s.agent)
}
