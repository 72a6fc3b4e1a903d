//! Detectors of how the task is carried through a team: a task statement
//! that drifts from the user's question, a handoff that drops the task's
//! specifics, and an agent setting the plan aside.

use super::{Hit, step_name};
use crate::explain::text::{find_phrase, key_words, quote_around, values};
use crate::explain::view::RunView;

/// Words of an agent setting the plan or an instruction aside.
const DEVIATION: &[&str] = &[
    "instead of using",
    "rather than using",
    "instead of following",
    "deviate from the plan",
    "skip the verification",
    "skip verification",
    "ignore the plan",
    "without following",
    "i recommend providing",
];

/// An agent that announces it sets the plan or an instruction aside.
pub(crate) fn ignored_instruction(run: &RunView) -> Vec<Hit> {
    run.agent_steps()
        .filter(|&i| Some(i) != run.task_index() && !run.is_bookkeeping(i))
        .filter_map(|i| {
            let out = &run.steps[i].output;
            let phrase = find_phrase(out, DEVIATION)?;
            let title = "set aside the plan or an instruction".to_string();
            Some(
                Hit::suspect(i, "ignored_instruction", 0.45, title).because(format!(
                    "{} says \"{}\"",
                    step_name(run, i),
                    quote_around(out, phrase)
                )),
            )
        })
        .collect()
}

/// A message that names the next agent and hands it work, but keeps none of
/// the specific values of the task (names, numbers, dates).
pub(crate) fn lossy_handoff(run: &RunView) -> Vec<Hit> {
    if !run.failed() {
        return Vec::new();
    }
    let task_values = run.given_values();
    if task_values.len() < 2 {
        return Vec::new();
    }
    let agents: Vec<usize> = run
        .agent_steps()
        .filter(|&i| !run.steps[i].is_tool() && !run.is_bookkeeping(i))
        .collect();
    let mut hits = Vec::new();
    for pair in agents.windows(2) {
        let (i, next) = (pair[0], pair[1]);
        let (from, to) = (&run.steps[i], &run.steps[next]);
        // A reply to the user is no handoff of work.
        if Some(i) == run.task_index()
            || to.is_user()
            || from.agent == to.agent
            || !from.output.contains(to.agent.as_str())
        {
            continue;
        }
        let said = values(&from.output);
        if task_values.iter().any(|v| said.contains(v)) {
            continue;
        }
        let title = format!("handed work to {} without the task's specifics", to.agent);
        let dropped: Vec<&str> = task_values.iter().take(4).map(String::as_str).collect();
        hits.push(
            Hit::suspect(i, "lossy_handoff", 0.15, title).because(format!(
                "{} hands over to {} without any of {}",
                step_name(run, i),
                to.agent,
                dropped.join(", ")
            )),
        );
    }
    hits
}

/// The share of the question's key words a task statement must keep to be
/// a restatement of it: below half, the team was set another task.
const TASK_KEPT: f64 = 0.5;
/// Questions with fewer key words are too short to judge a restatement by.
const TASK_MIN_WORDS: usize = 5;

/// A task statement written by an agent (a manager relaying the user's
/// question to the team) that keeps less than half of the question's key
/// words: everyone after it works on a different task.
pub(crate) fn task_drift(run: &RunView) -> Vec<Hit> {
    let Some(question) = run.run.as_ref().and_then(|r| r.task.as_deref()) else {
        return Vec::new();
    };
    let Some(t) = run.task_index().filter(|&t| !run.steps[t].is_user()) else {
        return Vec::new();
    };
    let asked = key_words(question);
    if asked.len() < TASK_MIN_WORDS {
        return Vec::new();
    }
    let stated = run.steps[t].text().to_lowercase();
    let (kept, lost): (Vec<&String>, Vec<&String>) =
        asked.iter().partition(|w| stated.contains(w.as_str()));
    if kept.len() as f64 >= TASK_KEPT * asked.len() as f64 {
        return Vec::new();
    }
    let missing: Vec<&str> = lost.iter().take(5).map(|w| w.as_str()).collect();
    let title = "set the team a task other than the user's question".to_string();
    vec![Hit::suspect(t, "task_drift", 0.8, title).because(format!(
        "{} states the task with {} of the {} key words of the user's question (it lacks {})",
        step_name(run, t),
        kept.len(),
        asked.len(),
        missing.join(", ")
    ))]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::view::tests::{run, step};

    #[test]
    fn setting_the_plan_aside_is_flagged() {
        let r = run(
            vec![
                step(
                    0,
                    "Planner",
                    "message",
                    true,
                    "Search the web for the poem.",
                ),
                step(
                    1,
                    "Python_Expert",
                    "message",
                    true,
                    "Instead of using the search, I recommend providing the text.",
                ),
            ],
            "failed",
        );
        assert_eq!(ignored_instruction(&r)[0].at, 1);
    }

    #[test]
    fn a_handoff_without_the_task_specifics_is_lossy() {
        let r = run(
            vec![
                step(0, "Orchestrator", "message", true, "task"),
                step(
                    1,
                    "Orchestrator",
                    "message",
                    true,
                    "WebSurfer, please look up the schedule.",
                ),
                step(2, "WebSurfer", "message", true, "Looking."),
            ],
            "failed",
        );
        // The test run's task names "2023"; the handoff drops it.
        let r = RunView::new(
            "r".into(),
            r.steps.clone(),
            r.run.clone().map(|mut rec| {
                rec.task = Some("Which trains run from \"South Station\" in 2023?".into());
                rec
            }),
        );
        assert_eq!(
            lossy_handoff(&r).iter().map(|h| h.at).collect::<Vec<_>>(),
            vec![1]
        );
    }

    #[test]
    fn a_task_statement_without_the_question_is_drift() {
        let question = "Which university cities lie furthest apart among the secretaries of homeland security?";
        let with_task = |text: &str| {
            let r = run(
                vec![
                    step(0, "Python_Expert", "message", true, text),
                    step(1, "Coder", "message", true, "ok"),
                ],
                "failed",
            );
            let rec = r.run.clone().map(|mut rec| {
                rec.task = Some(question.into());
                rec
            });
            RunView::new("r".into(), r.steps, rec)
        };
        let drifted = with_task("Resolve the error: exitcode 1, unknown language unknown.");
        let hits = task_drift(&drifted);
        assert_eq!(hits.iter().map(|h| h.at).collect::<Vec<_>>(), vec![0]);
        assert!(hits[0].evidence[0].contains("0 of the"));
        let faithful = with_task(&format!(
            "# General Task\n{question}\n## Plan\n1. List them."
        ));
        assert!(task_drift(&faithful).is_empty());
        // The user's own words are the task, never a drift from it.
        let mut by_user = drifted.clone();
        by_user.steps[0].agent = "user".into();
        assert!(task_drift(&by_user).is_empty());
    }

    #[test]
    fn a_handoff_with_the_task_specifics_is_not_lossy_and_no_action_is_bookkeeping() {
        let mk = |text: &str| {
            let r = run(
                vec![
                    step(0, "Orchestrator", "message", true, "task"),
                    step(1, "Orchestrator", "message", true, text),
                    step(2, "WebSurfer", "message", true, "Looking."),
                ],
                "failed",
            );
            RunView::new(
                "r".into(),
                r.steps.clone(),
                r.run.clone().map(|mut rec| {
                    rec.task = Some("Which trains run from \"South Station\" in 2023?".into());
                    rec
                }),
            )
        };
        assert!(lossy_handoff(&mk("WebSurfer, please look up the 2023 schedule.")).is_empty());
        // A routing message is no handoff of work and no first action.
        let routed = mk("Next speaker: WebSurfer");
        assert!(lossy_handoff(&routed).is_empty());
        assert_eq!(super::super::flow::first_action(&routed)[0].at, 2);
    }
}
