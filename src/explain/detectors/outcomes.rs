//! Detectors of how agents treat what their calls returned: success claimed
//! right after a failed or empty reply, a failed reply built on as if it had
//! worked, a run that stops at a failure or gives up, and a user who ends
//! the conversation in the turn the agent needed to act.

use super::{Hit, step_name};
use crate::explain::text::{find_phrase, find_words, head, quote_around};
use crate::explain::view::RunView;

/// Words of a claim that the task is done or an answer is final.
const CLAIMS: &[&str] = &[
    "final answer",
    "the answer is",
    "task is complete",
    "task has been completed",
    "successfully completed",
    "has been verified",
    "have been verified",
    "is confirmed",
    "terminate",
];

/// Words of an agent giving up.
const GIVING_UP: &[&str] = &[
    "unable to",
    "cannot proceed",
    "can't proceed",
    "not able to",
    "give up",
    "no further action",
    "not possible to",
];

/// The first claim of success or a final answer made right after a failed
/// or empty tool reply.
pub(crate) fn unverified_claim(run: &RunView) -> Vec<Hit> {
    let mut last_tool: Option<usize> = None;
    for (i, s) in run.steps.iter().enumerate() {
        if run.is_environment(i) || s.is_tool() {
            last_tool = Some(i);
            continue;
        }
        if Some(i) == run.task_index() || run.is_bookkeeping(i) {
            continue;
        }
        let Some(phrase) = find_phrase(&s.output, CLAIMS) else {
            continue;
        };
        // Only the latest reply counts: a claim after a successful check
        // stands on that check, whatever failed before it.
        let bad_reply = last_tool.filter(|&t| run.came_back_bad(t));
        let Some(t) = bad_reply else { continue };
        let s_t = &run.steps[t];
        let what = if s_t.succeeded {
            format!("returned nothing (\"{}\")", head(&s_t.output, 80))
        } else {
            let e = if s_t.error.trim().is_empty() {
                &s_t.output
            } else {
                &s_t.error
            };
            format!("failed (\"{}\")", head(e, 80))
        };
        let why = format!("right after {} {what}", step_name(run, t));
        let title = "claims success without evidence".to_string();
        return vec![
            Hit::suspect(i, "unverified_claim", 0.3, title).because(format!(
                "{} claims \"{}\" {why}",
                step_name(run, i),
                quote_around(&s.output, phrase)
            )),
        ];
    }
    Vec::new()
}

/// Words of a message that builds on a tool's result.
const USES_RESULT: &[&str] = &[
    "successfully",
    "based on the search results",
    "based on the results",
    "based on the output",
    "based on the data",
    "from the search results",
    "from the results",
    "according to the results",
    "according to the search results",
    "the results show",
    "the output shows",
    "the results indicate",
    "the output indicates",
];

/// Words with which a message owns up to a failure.
const OWNS_FAILURE: &[&str] = &[
    "error",
    "fail",
    "issue",
    "exception",
    "traceback",
    "problem",
    "unable",
    "not ",
    "n't",
    "empty",
    "nothing",
    "timed out",
    "timeout",
];

/// A message right after a failed or empty reply whose first sentence
/// builds on that reply as if it had succeeded: the failure is carried
/// forward as a result, so the message, not the call, turns it into a
/// wrong answer.
pub(crate) fn ignored_failure(run: &RunView) -> Vec<Hit> {
    let mut hits = Vec::new();
    for i in run.agent_steps().skip(1) {
        let Some(phrase) = builds_on_failure(run, i) else {
            continue;
        };
        let first = first_sentence(&run.steps[i].output);
        let title = "built on a failed reply as if it had succeeded".to_string();
        hits.push(
            Hit::suspect(i, "ignored_failure", 0.65, title).because(format!(
                "{} failed or returned nothing, and {} goes on \"{}\"",
                step_name(run, i - 1),
                step_name(run, i),
                quote_around(first, phrase)
            )),
        );
    }
    hits
}

/// The phrase with which agent message `i` builds on the failed or empty
/// reply just before it as if it had succeeded, if it does.
pub fn builds_on_failure(run: &RunView, i: usize) -> Option<&'static str> {
    let (s, before) = (run.steps.get(i)?, run.steps.get(i.checked_sub(1)?)?);
    // A reply: a tool's or executor's, or another agent reporting back
    // (a web-surfing agent's "no results found" is its tool's result).
    let reply = run.is_environment(i - 1)
        || before.is_tool()
        || (before.agent != s.agent && !before.is_user());
    let bad = run.came_back_bad(i - 1);
    if s.is_tool()
        || s.is_user()
        || run.is_environment(i)
        || run.is_bookkeeping(i)
        || !reply
        || !bad
    {
        return None;
    }
    let first = first_sentence(&s.output);
    let phrase = find_phrase(first, USES_RESULT)?;
    find_phrase(first, OWNS_FAILURE).is_none().then_some(phrase)
}

/// The text up to the end of its first sentence (or line).
fn first_sentence(text: &str) -> &str {
    let t = text.trim_start();
    let end = t
        .char_indices()
        .find(|&(k, c)| c == '\n' || (c == '.' && t[k + 1..].starts_with(char::is_whitespace)))
        .map_or(t.len(), |(k, _)| k);
    &t[..end]
}

/// A failed run whose last agent step gives up, or ends right after a
/// failed or empty reply.
pub(crate) fn premature_termination(run: &RunView) -> Vec<Hit> {
    if !run.failed() {
        return Vec::new();
    }
    let Some(last) = run
        .agent_steps()
        .filter(|&i| !run.steps[i].is_tool() && !run.is_bookkeeping(i))
        .last()
    else {
        return Vec::new();
    };
    let s = &run.steps[last];
    let reply_before = (0..last)
        .rev()
        .find(|&t| run.is_environment(t) || run.steps[t].is_tool());
    let bad_reply = reply_before.filter(|&t| run.came_back_bad(t));
    let gave_up = find_phrase(&s.output, GIVING_UP);
    let ends_run = last + 1 >= run.steps.len()
        || run.steps[last + 1..]
            .iter()
            .all(|x| x.output.trim().len() < 40);
    let why = match (gave_up, bad_reply) {
        (Some(p), _) => format!(
            "{} gives up: \"{}\"",
            step_name(run, last),
            quote_around(&s.output, p)
        ),
        (None, Some(t)) if ends_run => {
            format!(
                "the run ends at {} right after {} failed or returned nothing",
                step_name(run, last),
                step_name(run, t)
            )
        }
        _ => return Vec::new(),
    };
    let title = "stopped before the task was done".to_string();
    vec![Hit::suspect(last, "premature_termination", 0.1, title).because(why)]
}

/// Words of a user saying yes to what the agent proposed.
const SAYS_YES: &[&str] = &["yes", "yeah", "yep", "go ahead", "proceed", "i confirm"];

/// Words of a user saying no or not yet, which a yes in the same message
/// does not undo (besides a message that opens with "no").
const SAYS_NO: &[&str] = &["not yet", "don't", "do not", "hold on", "wait,", "wait."];

/// Words of an agent waiting for the user's word without a question mark.
const AWAITS: &[&str] = &["let me know", "please confirm", "once you confirm"];

/// Words of a user taking leave.
const TAKES_LEAVE: &[&str] = &[
    "thank you",
    "thanks",
    "bye",
    "that's all",
    "that is all",
    "have a great day",
    "have a nice day",
];

/// A failed run that ends on the user's turn: the agent asked (a question
/// proposing what it would do), the user said yes and, in the same
/// message, took leave or closed the conversation (a simulator's control
/// token such as `###STOP###`), and no call of the agent followed. The
/// agent never got the turn it needed to act: the user's message is the
/// suspect.
pub(crate) fn user_ended_early(run: &RunView) -> Vec<Hit> {
    if !run.failed() {
        return Vec::new();
    }
    let Some(u) = run.steps.iter().rposition(|s| s.is_user() && !s.is_tool()) else {
        return Vec::new();
    };
    let acted_after = run.steps[u + 1..]
        .iter()
        .any(|s| s.is_tool() && !s.is_user());
    let asked = run.steps[..u]
        .iter()
        .rev()
        .find(|s| !s.is_user() && !s.is_tool())
        .is_some_and(|s| s.output.contains('?') || find_phrase(&s.output, AWAITS).is_some());
    if acted_after || !asked {
        return Vec::new();
    }
    let said = &run.steps[u].output;
    let Some(yes) = find_words(said, SAYS_YES) else {
        return Vec::new();
    };
    let opens_with_no = said
        .split(|c: char| !c.is_alphanumeric())
        .find(|w| !w.is_empty())
        .is_some_and(|w| w.eq_ignore_ascii_case("no"));
    if opens_with_no || find_phrase(said, SAYS_NO).is_some() {
        return Vec::new();
    }
    let leave = control_token(said).or_else(|| find_phrase(said, TAKES_LEAVE).map(str::to_string));
    let Some(leave) = leave else {
        return Vec::new();
    };
    let title = "the user ended the conversation before the agent could act".to_string();
    vec![
        Hit::suspect(u, "user_ended_early", 0.5, title).because(format!(
            "{} answers the agent's question with a yes (\"{yes}\") and, in the same \
             message, ends the conversation (\"{leave}\"): \"{}\"; no call of the agent \
             follows",
            step_name(run, u),
            head(said, 200)
        )),
    ]
}

/// A control token a user simulator ends a conversation with: upper-case
/// letters between runs of `#` (`###STOP###`), at the end of the message.
fn control_token(text: &str) -> Option<String> {
    let t = text.trim_end();
    let inner = t.strip_suffix("###")?.trim_end_matches('#');
    let start = inner.rfind("##")?;
    let word = &inner[start + 2..];
    (!word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c == '_' || c == '-'))
    .then(|| format!("###{word}###"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::view::tests::{run, step};

    #[test]
    fn a_user_who_says_yes_and_leaves_in_one_message_ended_the_run() {
        let turns = |last: &str| {
            vec![
                step(0, "user", "message", true, "I want to return my lamp."),
                step(1, "assistant", "get_order", true, "{\"items\": [\"lamp\"]}"),
                step(
                    2,
                    "assistant",
                    "message",
                    true,
                    "I can return the lamp to your card. Shall I proceed?",
                ),
                step(3, "user", "message", true, last),
            ]
        };
        let stop = "Yes, please go ahead. Thank you! ###STOP###";
        let hits = user_ended_early(&run(turns(stop), "failed"));
        assert_eq!(hits.iter().map(|h| h.at).collect::<Vec<_>>(), vec![3]);
        assert!(
            hits[0].evidence[0].contains("(\"###STOP###\")"),
            "{:?}",
            hits[0].evidence
        );
        let bye = user_ended_early(&run(turns("Yes, do it. Thanks, bye!"), "failed"));
        assert_eq!(bye.len(), 1);
        let waiting = "Yes, go ahead, I'll be waiting for the refund. Thanks!";
        assert_eq!(user_ended_early(&run(turns(waiting), "failed")).len(), 1);
        // Not when the user said no, stayed, or the agent then acted; not
        // when the agent asked nothing; not in a run that passed.
        for last in [
            "No, don't return it. Thanks! ###STOP###",
            "No. Yes would be wrong, thanks.",
            "Yes, please go ahead.",
        ] {
            assert!(
                user_ended_early(&run(turns(last), "failed")).is_empty(),
                "{last}"
            );
        }
        let mut acted = turns(stop);
        acted.push(step(4, "assistant", "return_items", true, "{\"ok\": true}"));
        assert!(user_ended_early(&run(acted, "failed")).is_empty());
        let mut waits = turns(stop);
        waits[2].output = "I can return it to your card. Let me know how to proceed!".to_string();
        assert_eq!(user_ended_early(&run(waits, "failed")).len(), 1);
        let mut told = turns(stop);
        told[2].output = "Your lamp can be returned to your card.".to_string();
        assert!(user_ended_early(&run(told, "failed")).is_empty());
        assert!(user_ended_early(&run(turns(stop), "succeeded")).is_empty());
    }

    #[test]
    fn building_on_a_failed_reply_is_an_ignored_failure() {
        let steps = |reply_ok: bool, text: &str| {
            vec![
                step(0, "Planner", "message", true, "task"),
                step(1, "Searcher", "message", true, "```python\nsearch()\n```"),
                step(
                    2,
                    "terminal",
                    "code_execution",
                    reply_ok,
                    "exitcode: 1\nTypeError",
                ),
                step(3, "Expert", "message", true, text),
            ]
        };
        let ignored = run(
            steps(false, "Based on the search results, the answer is Oslo."),
            "failed",
        );
        assert_eq!(ignored_failure(&ignored)[0].at, 3);
        let owned = run(
            steps(
                false,
                "The search failed. Based on the results we have, retry.",
            ),
            "failed",
        );
        assert!(
            ignored_failure(&owned).is_empty(),
            "the message owns up to the failure"
        );
        let fine = run(
            steps(true, "Based on the search results, the answer is Oslo."),
            "failed",
        );
        assert!(ignored_failure(&fine).is_empty(), "the reply succeeded");
        let reported = run(
            vec![
                step(0, "human", "message", true, "How many albums?"),
                step(
                    1,
                    "WebSurfer",
                    "message",
                    true,
                    "I searched. No results found.",
                ),
                step(
                    2,
                    "Orchestrator",
                    "message",
                    true,
                    "Based on the search results, 2.",
                ),
            ],
            "failed",
        );
        assert_eq!(
            ignored_failure(&reported)[0].at,
            2,
            "an agent reporting an empty search back is a reply too"
        );
    }

    #[test]
    fn a_claim_after_a_failure_is_unverified() {
        let r = run(
            vec![
                step(0, "Planner", "message", true, "task"),
                step(1, "Coder", "message", true, "```python\nrun()\n```"),
                step(2, "terminal", "code_execution", false, "exitcode: 1"),
                step(
                    3,
                    "Coder",
                    "message",
                    true,
                    "The final answer is 12. TERMINATE",
                ),
            ],
            "failed",
        );
        assert_eq!(unverified_claim(&r)[0].at, 3);
        assert_eq!(premature_termination(&r)[0].at, 3);
    }

    #[test]
    fn a_claim_after_good_evidence_is_fine() {
        let r = run(
            vec![
                step(0, "Planner", "message", true, "task"),
                step(1, "Coder", "message", true, "```python\nrun()\n```"),
                step(
                    2,
                    "terminal",
                    "code_execution",
                    true,
                    "exitcode: 0\nCode output: 12",
                ),
                step(
                    3,
                    "Coder",
                    "message",
                    true,
                    "The final answer is 12. TERMINATE",
                ),
            ],
            "succeeded",
        );
        assert!(unverified_claim(&r).is_empty());
        assert!(premature_termination(&r).is_empty());
    }

    #[test]
    fn a_claim_after_a_successful_check_is_not_unverified() {
        // An early failure, then a check that worked, then the claim.
        let r = run(
            vec![
                step(0, "Planner", "message", true, "task"),
                step(1, "Coder", "message", true, "```python\nrun()\n```"),
                step(2, "terminal", "code_execution", false, "exitcode: 1"),
                step(
                    3,
                    "Coder",
                    "message",
                    true,
                    "```python\nprint(check())\n```",
                ),
                step(
                    4,
                    "terminal",
                    "code_execution",
                    true,
                    "exitcode: 0\nCode output: 12 rows verified",
                ),
                step(
                    5,
                    "Coder",
                    "message",
                    true,
                    "The file has been verified. TERMINATE",
                ),
            ],
            "failed",
        );
        assert!(unverified_claim(&r).is_empty());
        assert!(premature_termination(&r).is_empty());
    }

    #[test]
    fn the_unverified_claim_quotes_the_failure_it_follows() {
        let r = run(
            vec![
                step(0, "Planner", "message", true, "task"),
                step(1, "Coder", "message", true, "```python\nrun()\n```"),
                step(
                    2,
                    "terminal",
                    "code_execution",
                    false,
                    "exitcode: 1 KeyError: 'date'",
                ),
                step(3, "Coder", "message", true, "The final answer is 12."),
            ],
            "failed",
        );
        let e = &unverified_claim(&r)[0].evidence[0];
        assert!(
            e.contains("final answer") && e.contains("KeyError: 'date'"),
            "{e}"
        );
    }

    #[test]
    fn a_command_that_worked_silently_is_no_ignored_failure() {
        let mut cmd = step(2, "terminal", "code_execution", true, "");
        cmd.input = "sed -i 's/a/b/' setup.py".to_string();
        let r = run(
            vec![
                step(0, "user", "message", true, "fix setup.py"),
                step(
                    1,
                    "agent",
                    "message",
                    true,
                    "```bash\nsed -i 's/a/b/' setup.py\n```",
                ),
                cmd,
                step(
                    3,
                    "agent",
                    "message",
                    true,
                    "Successfully edited the file; now run the tests.",
                ),
            ],
            "failed",
        );
        assert!(ignored_failure(&r).is_empty());
        // The same silence from a read means nothing was found.
        let mut r = r;
        r.steps[2].input = "grep -n foo setup.py".to_string();
        let r = RunView::new("r".into(), r.steps.clone(), r.run.clone());
        assert_eq!(ignored_failure(&r)[0].at, 3);
    }
}
