//! The read-only view of one run that detectors work on: its steps in step
//! order, who acted at each, and the run record.

use crate::record::{Outcome, RunRec};

use super::protocol::Role;
use super::step::Step;

/// One run: its steps in step order and what the source said of it.
#[derive(Debug, Clone, Default)]
pub struct RunView {
    pub run_id: String,
    pub steps: Vec<Step>,
    pub run: Option<RunRec>,
    /// Per step: true when the step is a reply of the environment (a tool
    /// whose "agent" never speaks), so its author is the step that asked.
    environment: Vec<bool>,
    /// Per step: true when a later step of the same agent and tool
    /// succeeded with a non-empty result.
    recovered: Vec<bool>,
    /// Per step: the step responsible for it (see `actor_of`), computed
    /// once so a long stretch of replies costs no walk back per step.
    actor: Vec<usize>,
    /// Per step: what kind of step it is (see [`Role`]).
    roles: Vec<Role>,
}

impl RunView {
    pub(crate) fn new(run_id: String, mut steps: Vec<Step>, run: Option<RunRec>) -> Self {
        steps.sort_by_key(|s| s.step);
        let environment = environment_replies(&steps);
        let recovered = later_success(&steps);
        let mut actor: Vec<usize> = Vec::with_capacity(steps.len());
        for (i, &env) in environment.iter().enumerate() {
            // The first step is never a reply, so a reply has an asker.
            actor.push(if env && i > 0 { actor[i - 1] } else { i });
        }
        let roles = super::protocol::roles(&steps, &environment);
        RunView {
            run_id,
            steps,
            run,
            environment,
            recovered,
            actor,
            roles,
        }
    }

    /// What step `i` is in the run's protocol.
    pub(crate) fn role(&self, i: usize) -> Role {
        self.roles.get(i).copied().unwrap_or(Role::Message)
    }

    /// True when step `i` is a reply that came back with nothing in it: a
    /// failure, or an empty result of a call that expected output. A
    /// command that writes and prints nothing on success ("sed -i …" with
    /// exit code 0) did not come back empty: silence is its success.
    pub(crate) fn came_back_bad(&self, i: usize) -> bool {
        let s = &self.steps[i];
        if !s.succeeded {
            return true;
        }
        s.output_recorded
            && super::text::reads_as_empty(&s.output)
            && (s.input.trim().is_empty() || expects_output(&s.input))
    }

    /// True when step `i` is the protocol's own traffic (routing, a ledger,
    /// a restated plan, a system prompt, a placeholder), not a claim or an
    /// action of an agent.
    pub(crate) fn is_bookkeeping(&self, i: usize) -> bool {
        self.role(i) == Role::Bookkeeping
    }

    /// The user's goal: the run record's task, else the first step's text.
    pub(crate) fn task(&self) -> &str {
        match self.run.as_ref().and_then(|r| r.task.as_deref()) {
            Some(t) => t,
            None => self.steps.first().map_or("", |s| s.input_or_output()),
        }
    }

    /// The rules the agent was given: the run record's policy, else the
    /// text of a system step.
    pub(crate) fn policy(&self) -> Option<&str> {
        self.run
            .as_ref()
            .and_then(|r| r.policy.as_deref())
            .or_else(|| {
                self.steps
                    .iter()
                    .find(|s| s.agent.eq_ignore_ascii_case("system"))
                    .map(|s| s.output.as_str())
            })
            .filter(|p| !p.trim().is_empty())
    }

    /// The outcome the run's record states; unknown without one.
    pub(crate) fn recorded_outcome(&self) -> Outcome {
        self.run.as_ref().map_or(Outcome::Unknown, |r| r.outcome)
    }

    /// True when the run failed: so its run record says, or, without one,
    /// when any of its events failed: a run whose last step went well
    /// after a failure still failed, as a run read from spans does.
    pub(crate) fn failed(&self) -> bool {
        match self.run.as_ref().map(|r| r.outcome) {
            Some(Outcome::Failed) => true,
            Some(Outcome::Succeeded) => false,
            _ => self.steps.iter().any(|s| !s.succeeded),
        }
    }

    /// True when step `i` (an index into `steps`) is a reply of the
    /// environment rather than an agent's own action.
    pub(crate) fn is_environment(&self, i: usize) -> bool {
        self.environment.get(i).copied().unwrap_or(false)
    }

    /// The step responsible for step `i`: the step itself, or for an
    /// environment reply the nearest earlier step of an agent.
    pub(crate) fn actor_of(&self, i: usize) -> usize {
        self.actor.get(i).copied().unwrap_or(i)
    }

    /// Indexes of the steps agents took themselves (not environment replies).
    pub(crate) fn agent_steps(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.steps.len()).filter(|&i| !self.is_environment(i))
    }

    /// True when failed step `i` was recovered: a later step of the same
    /// agent and tool succeeded with a non-empty result.
    pub(crate) fn recovered(&self, i: usize) -> bool {
        self.recovered.get(i).copied().unwrap_or(false)
    }

    /// The values the run was given: the task's and the task statement's.
    /// A value among them is no step's own product.
    pub(crate) fn given_values(&self) -> std::collections::BTreeSet<String> {
        let mut v = super::text::values(self.task());
        if let Some(t) = self.task_index() {
            v.extend(super::text::values(&self.steps[t].text()));
        }
        v
    }

    /// The index of the step that is the task statement: the first step,
    /// when it is an agent's message.
    pub(crate) fn task_index(&self) -> Option<usize> {
        (!self.steps.is_empty() && !self.is_environment(0) && !self.steps[0].is_tool()).then_some(0)
    }
}

/// Words of a call that reads or prints: its empty output means nothing
/// was found. A call without them changes something, and prints nothing
/// when it works.
const OUTPUT_WORDS: &[&str] = &[
    "print", "cat ", "grep", "find ", "ls", "head", "tail", "echo", "search", "get", "fetch",
    "read", "list", "query", "select", "show", "display", "return", "log", "dump", "diff", "wc ",
];

/// True when a call's text reads or prints something.
fn expects_output(input: &str) -> bool {
    let lower = input.to_ascii_lowercase();
    OUTPUT_WORDS.iter().any(|w| lower.contains(w))
}

/// Per step, whether a later step of the same agent and tool succeeded with
/// a non-empty result: one pass from the end, so long runs stay linear.
fn later_success(steps: &[Step]) -> Vec<bool> {
    let mut succeeded_later: std::collections::HashSet<(&str, &str)> = Default::default();
    let mut out = vec![false; steps.len()];
    for (i, s) in steps.iter().enumerate().rev() {
        let key = (s.agent.as_str(), s.tool.as_str());
        out[i] = succeeded_later.contains(&key);
        if s.succeeded && !super::text::reads_as_empty(&s.output) {
            succeeded_later.insert(key);
        }
    }
    out
}

/// Marks the steps of an executor (a code terminal and the like) that
/// never speaks for itself: its steps are replies to whoever spoke before.
/// An agent that calls tools under its own name is not an executor; one
/// that speaks too (AG2's user proxy states the task, then runs the code
/// it is sent) is one where it runs the code another agent just wrote.
fn environment_replies(steps: &[Step]) -> Vec<bool> {
    let mut speaks = std::collections::HashSet::new();
    for s in steps {
        if !s.is_tool() {
            speaks.insert(s.agent.as_str());
        }
    }
    let executor = |s: &Step| {
        let name = s.agent.to_ascii_lowercase();
        s.tool == "code_execution"
            || ["terminal", "executor", "computer", "environment"]
                .iter()
                .any(|w| name.contains(w))
    };
    steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let runs_code_sent = || {
                let before = &steps[i - 1];
                s.tool == "code_execution"
                    && before.agent != s.agent
                    && !before.is_tool()
                    && !before.is_user()
                    && super::text::has_code(&before.output)
            };
            i > 0
                && s.is_tool()
                && executor(s)
                && (!speaks.contains(s.agent.as_str()) || runs_code_sent())
        })
        .collect()
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A step for tests: `tool` "message" makes it a chat message.
    pub(crate) fn step(i: u64, agent: &str, tool: &str, ok: bool, output: &str) -> Step {
        Step {
            step: i,
            agent: agent.to_string(),
            tool: tool.to_string(),
            span_kind: Some(if tool == "message" { "message" } else { "tool" }.to_string()),
            succeeded: ok,
            output: output.to_string(),
            output_recorded: true,
            ..Default::default()
        }
    }

    /// A failed tool step whose trace labels it with `class`.
    pub(crate) fn labelled(i: u64, agent: &str, tool: &str, class: &str) -> Step {
        Step {
            classification: Some(class.to_string()),
            labelled: true,
            ..step(i, agent, tool, false, "")
        }
    }

    pub(crate) fn run(steps: Vec<Step>, outcome: &str) -> RunView {
        let rec = RunRec {
            task: Some("How many stops are between A and B as of 2023?".to_string()),
            ..RunRec::new(
                "r",
                serde_json::from_value(serde_json::Value::from(outcome)).expect("an outcome"),
            )
        };
        RunView::new("r".to_string(), steps, Some(rec))
    }

    #[test]
    fn without_a_run_record_any_failed_step_fails_the_run() {
        let unrecorded = |steps| RunView::new("r".to_string(), steps, None);
        let ends_well = vec![
            step(0, "planner", "dispatch", false, ""),
            step(1, "retriever", "fetch", true, "docs"),
        ];
        assert!(unrecorded(ends_well).failed());
        assert!(!unrecorded(vec![step(0, "planner", "dispatch", true, "ok")]).failed());
        let mut told = run(vec![step(0, "planner", "dispatch", false, "")], "succeeded");
        assert!(!told.failed(), "the run record decides");
        told.run = None;
        assert!(told.failed());
    }

    #[test]
    fn terminal_replies_belong_to_the_agent_that_asked() {
        let r = run(
            vec![
                step(0, "Planner", "message", true, "task"),
                step(1, "Coder", "message", true, "```python\nprint(1)\n```"),
                step(2, "terminal", "code_execution", false, "exitcode: 1"),
            ],
            "failed",
        );
        assert!(r.is_environment(2));
        assert_eq!(r.actor_of(2), 1);
        assert_eq!(r.actor_of(1), 1);
        assert_eq!(r.agent_steps().collect::<Vec<_>>(), vec![0, 1]);
    }

    #[test]
    fn a_proxy_that_states_the_task_then_runs_sent_code_replies_to_its_author() {
        let r = run(
            vec![
                step(
                    0,
                    "user_proxy",
                    "message",
                    true,
                    "Count the lines of x.csv.",
                ),
                step(1, "coder", "message", true, "```python\nopen('x.csv')\n```"),
                step(2, "user_proxy", "code_execution", false, "exitcode: 1"),
                step(3, "coder", "message", true, "I will write it myself."),
                step(4, "coder", "code_execution", true, "exitcode: 0"),
            ],
            "failed",
        );
        assert!(r.is_environment(2));
        assert_eq!(r.actor_of(2), 1);
        assert!(
            !r.is_environment(4),
            "code an agent runs after its own words is its own call"
        );
        let quoted = run(
            vec![
                step(0, "user", "message", true, "Why does ```open('x')``` fail?"),
                step(1, "coder", "code_execution", false, "exitcode: 1"),
                step(
                    2,
                    "coder",
                    "message",
                    true,
                    "It fails because x is missing.",
                ),
            ],
            "failed",
        );
        assert!(
            !quoted.is_environment(1),
            "code quoted in the user's task is no code sent to run"
        );
    }

    #[test]
    fn an_agent_calling_a_tool_is_its_own_actor() {
        let r = run(
            vec![
                step(0, "Planner", "message", true, "task"),
                step(1, "Planner", "search", true, "results"),
            ],
            "failed",
        );
        assert!(!r.is_environment(1));
        assert_eq!(r.actor_of(1), 1);
    }
}
