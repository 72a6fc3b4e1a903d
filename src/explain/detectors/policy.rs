//! Detectors for agents that act for a user under written rules: a
//! consequential action taken without the confirmation or before the
//! identity check the policy requires, and asking the user again for what
//! they already gave.

use std::collections::HashSet;

use super::words::{affirms, irreversible_verb};
use super::{Hit, step_name};
use crate::explain::text::{head, quote_around};
use crate::explain::view::RunView;

/// Words of a policy that requires the user's explicit go-ahead.
const REQUIRES_CONFIRMATION: &[&str] = &[
    "explicit user confirmation",
    "explicit confirmation",
    "confirm with the user",
    "user confirmation",
    "must confirm",
    "obtain confirmation",
];

/// True when the tool's name says it changes the world for good, and it is
/// not a handoff to a person ("transfer_to_human_agents").
fn consequential(tool: &str) -> bool {
    irreversible_verb(tool).is_some()
}

/// A consequential call (book, cancel, refund, modify, send…) whose user
/// did not say yes in their latest message before it, in a run whose policy
/// requires explicit confirmation. Without such a policy nothing fires:
/// many systems may act at once.
pub(crate) fn unconfirmed_action(run: &RunView) -> Vec<Hit> {
    let Some(policy) = run.policy() else {
        return Vec::new();
    };
    let Some(rule) = REQUIRES_CONFIRMATION
        .iter()
        .find(|p| policy.to_ascii_lowercase().contains(**p))
    else {
        return Vec::new();
    };
    let mut hits = Vec::new();
    let mut last_user: Option<usize> = None;
    for (i, s) in run.steps.iter().enumerate() {
        if s.is_user() {
            last_user = Some(i);
            continue;
        }
        if !s.is_tool() || !consequential(&s.tool) || run.is_environment(i) {
            continue;
        }
        if last_user.is_some_and(|u| affirms(&run.steps[u].output)) {
            continue;
        }
        let said = match last_user {
            Some(u) => format!(
                "the user's latest message, {}, says \"{}\"",
                step_name(run, u),
                head(&run.steps[u].output, 100)
            ),
            None => "the user never spoke before it".to_string(),
        };
        let title = format!("called {} without the user's confirmation", s.tool);
        hits.push(
            Hit::suspect(i, "policy_violation", 0.6, title)
                .because(format!(
                    "the policy requires it: \"{}\"",
                    quote_around(policy, rule)
                ))
                .because(format!(
                    "{} called {} and {said}, no yes",
                    step_name(run, i),
                    s.tool
                )),
        );
    }
    hits
}

/// Words of a policy that requires checking who the user is before acting.
/// "Obtain the user id" is not among them: asking for it obtains it.
const REQUIRES_IDENTITY: &[&str] = &[
    "authenticate",
    "verify the identity",
    "verify their identity",
    "verify the user",
    "confirm the identity",
    "identify the user",
    "identify the customer",
];

/// Words of a tool that looks a person up.
const WHO: &[&str] = &[
    "user", "customer", "account", "profile", "identity", "auth", "member", "client",
];

/// A consequential call made before any identity check, in a run whose
/// policy requires one. An identity check is an earlier call that worked,
/// looks a person up (its name says user, customer, account…) and was given
/// something the user said (an id, an email, a phone number, a name).
pub(crate) fn before_identity_check(run: &RunView) -> Vec<Hit> {
    let Some(policy) = run.policy() else {
        return Vec::new();
    };
    let lower_policy = policy.to_ascii_lowercase();
    let Some(rule) = REQUIRES_IDENTITY
        .iter()
        .find(|p| lower_policy.contains(**p))
    else {
        return Vec::new();
    };
    // What the user said, as tokens looked up rather than searched, so long
    // runs stay linear.
    let mut said: HashSet<String> = HashSet::new();
    for (i, s) in run.steps.iter().enumerate() {
        if s.is_user() {
            said.extend(
                tokens(&s.output)
                    .filter(|w| w.chars().filter(char::is_ascii_alphanumeric).count() >= 4),
            );
            continue;
        }
        if !s.is_tool() || run.is_environment(i) {
            continue;
        }
        if !consequential(&s.tool) {
            let tool = s.tool.to_ascii_lowercase();
            let looks_up = WHO.iter().any(|w| tool.contains(w));
            if looks_up && s.succeeded && tokens(&s.input).any(|w| said.contains(&w)) {
                return Vec::new(); // the user was looked up first
            }
            continue;
        }
        let title = format!("called {} before checking who the user is", s.tool);
        return vec![
            Hit::suspect(i, "policy_violation", 0.6, title)
                .because(format!(
                    "the policy requires it: \"{}\"",
                    quote_around(policy, rule)
                ))
                .because(format!(
                    "{} called {} and no call before it looked the user up with what they said",
                    step_name(run, i),
                    s.tool
                )),
        ];
    }
    Vec::new()
}

/// The words of a text as they would be quoted in a call's arguments:
/// split at spaces, quotes and JSON punctuation, lowercased.
fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| c.is_whitespace() || "{}[]\":,;!?()'`".contains(c))
        .map(|w| w.trim_end_matches('.').to_lowercase())
        .filter(|w| !w.is_empty())
}

/// The words after "your" in an agent's question ("provide your user id"),
/// up to two, without punctuation.
fn asked_for(question: &str) -> Vec<String> {
    let lower = question.to_ascii_lowercase();
    let mut out = Vec::new();
    for (at, _) in lower.match_indices("your ") {
        let words: Vec<&str> = lower[at + 5..]
            .split(|c: char| !c.is_alphanumeric() && c != ' ')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .take(2)
            .collect();
        if words.len() == 2 && words.iter().all(|w| w.len() >= 2) {
            out.push(words.join(" "));
        }
    }
    out
}

/// Words of a request for information.
const REQUESTS: &[&str] = &[
    "provide",
    "what is",
    "what's",
    "share",
    "tell me",
    "give me",
    "may i have",
    "can i have",
    "could i have",
    "send me",
    "let me know",
];

/// The sentences of `text` that end in a question mark and request
/// something.
fn questions(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let mut out = Vec::new();
    for (k, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '\n' | '?') {
            let sentence = &text[start..k];
            if c == '?'
                && REQUESTS
                    .iter()
                    .any(|r| sentence.to_ascii_lowercase().contains(r))
            {
                out.push(sentence);
            }
            start = k + c.len_utf8();
        }
    }
    out.into_iter()
}

/// True when a user's message (lowercase) gives `thing` a value: "my user
/// id is mia_li_3668", "my phone number: 555-0100".
fn gave(told: &str, thing: &str) -> bool {
    ["is ", ": ", "ends in ", "ending in "].iter().any(|sep| {
        told.match_indices(&format!("my {thing} {sep}"))
            .chain(told.match_indices(&format!("my {thing}{sep}")))
            .any(|(at, m)| {
                told[at + m.len()..]
                    .split_whitespace()
                    .next()
                    .is_some_and(|v| {
                        v.chars()
                            .any(|c| c.is_ascii_digit() || c == '_' || c == '@')
                    })
            })
    })
}

/// An agent asking the user (a question, addressed with "your …") for a
/// thing the user already named with a value in an earlier message ("my
/// user id is mia_li_3668").
pub(crate) fn asked_again(run: &RunView) -> Vec<Hit> {
    let mut hits = Vec::new();
    let mut told: Vec<(usize, String)> = Vec::new();
    for (i, s) in run.steps.iter().enumerate() {
        if s.is_user() {
            told.push((i, s.output.to_ascii_lowercase()));
            continue;
        }
        if s.is_tool() || run.is_bookkeeping(i) || !s.output.contains('?') {
            continue;
        }
        let found = questions(&s.output).flat_map(asked_for).find_map(|thing| {
            told.iter()
                .find(|(_, t)| gave(t, &thing))
                .map(|(u, _)| (thing, *u))
        });
        let Some((thing, u)) = found else {
            continue;
        };
        let title = format!("asked the user again for their {thing}");
        hits.push(Hit::suspect(i, "asked_again", 0.3, title).because(format!(
            "{} asks \"{}\" though {} said \"{}\"",
            step_name(run, i),
            quote_around(&s.output, &format!("your {thing}")),
            step_name(run, u),
            quote_around(&run.steps[u].output, &format!("my {thing}"))
        )));
        // One finding per run is enough to make the point.
        break;
    }
    hits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::step::Step;
    use crate::explain::view::tests::{run, step};

    fn with_policy(steps: Vec<Step>, policy: &str) -> RunView {
        let r = run(steps, "failed");
        let rec = r.run.clone().map(|mut rec| {
            rec.policy = Some(policy.to_string());
            rec
        });
        RunView::new("r".into(), r.steps, rec)
    }

    const POLICY: &str = "Before booking, you must list the details and obtain explicit user confirmation (yes) to proceed.";

    #[test]
    fn booking_without_a_yes_breaks_the_policy() {
        let steps = |answer: &str| {
            vec![
                step(0, "user", "message", true, "Book me the 9am flight."),
                step(
                    1,
                    "assistant",
                    "message",
                    true,
                    "Flight HAT1 at 9am, $120. Shall I book it?",
                ),
                step(2, "user", "message", true, answer),
                step(3, "assistant", "book_reservation", true, "{\"id\": \"R1\"}"),
            ]
        };
        let hits = unconfirmed_action(&with_policy(steps("What about the baggage fee?"), POLICY));
        assert_eq!(hits.iter().map(|h| h.at).collect::<Vec<_>>(), vec![3]);
        assert!(hits[0].evidence[0].contains("explicit user confirmation"));
        assert!(hits[0].evidence[1].contains("What about the baggage fee?"));
        // Counter-examples: the user said yes; no policy asks for it; a
        // handoff to a person is no consequential action.
        assert!(unconfirmed_action(&with_policy(steps("Yes, please."), POLICY)).is_empty());
        assert!(unconfirmed_action(&run(steps("What about the fee?"), "failed")).is_empty());
        let mut handoff = steps("What about the fee?");
        handoff[3].tool = "transfer_to_human_agents".into();
        assert!(unconfirmed_action(&with_policy(handoff, POLICY)).is_empty());
    }

    #[test]
    fn acting_before_the_identity_check_the_policy_requires() {
        const RULES: &str =
            "You must authenticate the user identity by locating their user id via email.";
        let steps = |lookup: &str| {
            vec![
                step(
                    0,
                    "user",
                    "message",
                    true,
                    "Cancel order W1. I am jo@example.com.",
                ),
                Step {
                    input: format!("{{\"email\": \"{lookup}\"}}"),
                    ..step(1, "assistant", "find_user_id_by_email", true, "jo_1")
                },
                step(
                    2,
                    "assistant",
                    "cancel_pending_order",
                    true,
                    "{\"id\": \"W1\"}",
                ),
            ]
        };
        let mut skipped = steps("x");
        skipped.remove(1);
        let hits = before_identity_check(&with_policy(skipped.clone(), RULES));
        assert_eq!(hits.iter().map(|h| h.at).collect::<Vec<_>>(), vec![1]);
        assert!(hits[0].evidence[0].contains("authenticate"));
        // Counter-examples: the user was looked up with their email first;
        // no policy asks for it.
        assert!(before_identity_check(&with_policy(steps("jo@example.com"), RULES)).is_empty());
        assert!(before_identity_check(&run(skipped, "failed")).is_empty());
        // A lookup with something the user never said is no identity check.
        let guessed = before_identity_check(&with_policy(steps("someone@else.org"), RULES));
        assert_eq!(guessed.iter().map(|h| h.at).collect::<Vec<_>>(), vec![2]);
    }

    #[test]
    fn asking_again_for_what_the_user_gave() {
        let r = run(
            vec![
                step(0, "user", "message", true, "Hi, my user id is mia_li_3668."),
                step(
                    1,
                    "assistant",
                    "message",
                    true,
                    "Could you please provide your user id?",
                ),
            ],
            "failed",
        );
        let hits = asked_again(&r);
        assert_eq!(hits.iter().map(|h| h.at).collect::<Vec<_>>(), vec![1]);
        assert!(hits[0].evidence[0].contains("mia_li_3668"));
        // Counter-example: asking for something new.
        let fresh = run(
            vec![
                step(0, "user", "message", true, "Hi, my user id is mia_li_3668."),
                step(
                    1,
                    "assistant",
                    "message",
                    true,
                    "What is your reservation number?",
                ),
            ],
            "failed",
        );
        assert!(asked_again(&fresh).is_empty());
    }
}
