//! Reads a run's protocol from its shape: which steps are actions, which
//! are messages that say something, and which are bookkeeping (routing,
//! status ledgers, restated plans, system prompts, placeholders). Nothing
//! here knows a framework's strings: a router is an agent that repeats a
//! message verbatim between other agents' turns, a ledger is a message
//! that is a JSON object, a restated plan is a message whose content words
//! an earlier message of the same agent already held.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::step::Step;
use super::text::{has_code, key_words};

/// What a step is in the run's protocol. Detectors that judge actions and
/// claims look at actions and messages only: bookkeeping states no claim
/// of its own and does nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A tool call, a page view, code run, or a tool's reply.
    Action,
    /// A message to another agent or the user that says something new.
    Message,
    /// Routing, status ledgers, plan restatements, system prompts,
    /// redacted or placeholder texts: the protocol's own traffic.
    Bookkeeping,
}

/// A restatement keeps at least this share of its content words from one
/// earlier message of the same agent.
const RESTATED: f64 = 0.9;
/// Messages with fewer content words are too short to call restatements.
const RESTATED_MIN_WORDS: usize = 15;
/// How many earlier messages of the same agent a message is compared with
/// (keeps long runs linear).
const RESTATED_LOOKBACK: usize = 8;
/// A routing message names an agent and has at most this many other words.
const ROUTING_WORDS: usize = 3;

/// The role of every step; `environment` marks the replies of executors.
pub(crate) fn roles(steps: &[Step], environment: &[bool]) -> Vec<Role> {
    let agents: HashSet<String> = steps
        .iter()
        .filter(|s| !s.is_user())
        .map(|s| s.agent.to_lowercase())
        .collect();
    let mut roles: Vec<Role> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if environment.get(i).copied().unwrap_or(false) || s.is_tool() || has_code(&s.output) {
                Role::Action
            } else if !s.is_user()
                && (is_system(s)
                    || is_placeholder(&s.output)
                    || is_ledger(&s.output)
                    || is_routing(s, &agents))
            {
                Role::Bookkeeping
            } else {
                Role::Message
            }
        })
        .collect();
    for i in repeated_by_a_router(steps, &roles) {
        roles[i] = Role::Bookkeeping;
    }
    for i in restatements(steps, &roles) {
        roles[i] = Role::Bookkeeping;
    }
    roles
}

fn is_system(s: &Step) -> bool {
    s.agent.eq_ignore_ascii_case("system") || s.span_kind.as_deref() == Some("system")
}

/// A text that stands in for content: nothing, punctuation, or one
/// bracketed token ("<redacted>", "[omitted]", "(image)").
pub(crate) fn is_placeholder(text: &str) -> bool {
    let t = text.trim();
    if !t.chars().any(char::is_alphanumeric) {
        return true;
    }
    let bracketed = t.len() <= 40
        && !t.contains('\n')
        && matches!(
            (t.chars().next(), t.chars().last()),
            (Some('<'), Some('>')) | (Some('['), Some(']')) | (Some('('), Some(')'))
        )
        && t[1..t.len() - 1].split_whitespace().count() <= 3;
    bracketed
        || matches!(
            t.to_ascii_lowercase().as_str(),
            "none" | "null" | "n/a" | "redacted" | "omitted" | "placeholder"
        )
}

/// A message that is a JSON object of two or more fields (a status ledger,
/// a structured plan), possibly in a code fence: state, not a claim.
pub(crate) fn is_ledger(text: &str) -> bool {
    let t = text.trim();
    let t = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .and_then(|r| r.strip_suffix("```"))
        .unwrap_or(t)
        .trim();
    if !(t.starts_with('{') && t.ends_with('}')) {
        return false;
    }
    serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(t)
        .is_ok_and(|m| m.len() >= 2)
}

/// A short message that names another agent of the run and says little
/// else ("Next speaker: WebSurfer"): it routes the conversation.
fn is_routing(s: &Step, agents: &HashSet<String>) -> bool {
    let own = s.agent.to_lowercase();
    let words: Vec<String> = s
        .output
        .split(|c: char| !c.is_alphanumeric() && c != '_' && c != '-')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let named = words.iter().any(|w| *w != own && agents.contains(w));
    let other = words.iter().filter(|w| !agents.contains(*w)).count();
    named && other <= ROUTING_WORDS
}

/// Messages an agent repeats verbatim with other agents' turns between
/// the repeats, when that agent hands the turn to two or more others: a
/// coordinator's routine message, not a loop.
fn repeated_by_a_router(steps: &[Step], roles: &[Role]) -> Vec<usize> {
    let said: Vec<usize> = (0..steps.len())
        .filter(|&i| roles[i] == Role::Message && !steps[i].is_user())
        .collect();
    // Who speaks right after each agent.
    let mut next: HashMap<&str, BTreeSet<&str>> = HashMap::new();
    for w in said.windows(2) {
        let (a, b) = (&steps[w[0]].agent, &steps[w[1]].agent);
        if a != b {
            next.entry(a).or_default().insert(b);
        }
    }
    let mut at: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for &i in &said {
        let s = &steps[i];
        at.entry((&s.agent, s.output.trim())).or_default().push(i);
    }
    let mut out = Vec::new();
    for ((agent, _), idx) in at {
        let routes = next.get(agent).is_some_and(|n| n.len() >= 2);
        let others_between = idx
            .windows(2)
            .all(|w| steps[w[0] + 1..w[1]].iter().any(|s| s.agent != agent));
        if idx.len() >= 2 && routes && others_between {
            out.extend(idx);
        }
    }
    out
}

/// Messages whose content words one of the same agent's recent earlier
/// messages already held: a restated plan or status, nothing new.
fn restatements(steps: &[Step], roles: &[Role]) -> Vec<usize> {
    let mut recent: HashMap<&str, Vec<BTreeSet<String>>> = HashMap::new();
    let mut out = Vec::new();
    for (i, s) in steps.iter().enumerate() {
        if roles[i] != Role::Message || s.is_user() {
            continue;
        }
        let words = key_words(&s.output);
        let earlier = recent.entry(&s.agent).or_default();
        if words.len() >= RESTATED_MIN_WORDS
            && earlier.iter().any(|e| {
                words.iter().filter(|w| e.contains(*w)).count() as f64
                    >= RESTATED * words.len() as f64
            })
        {
            out.push(i);
        }
        earlier.push(words);
        if earlier.len() > RESTATED_LOOKBACK {
            earlier.remove(0);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::view::tests::{run, step};

    fn roles_of(steps: Vec<Step>) -> Vec<Role> {
        let r = run(steps, "failed");
        (0..r.steps.len()).map(|i| r.role(i)).collect()
    }

    #[test]
    fn a_coordinator_repeating_its_routing_is_bookkeeping() {
        let route = "Please continue with the next step of the plan.";
        let roles = roles_of(vec![
            step(0, "user", "message", true, "Find the album count."),
            step(1, "Lead", "message", true, route),
            step(
                2,
                "Surfer",
                "message",
                true,
                "I opened the discography page.",
            ),
            step(3, "Lead", "message", true, route),
            step(
                4,
                "Coder",
                "message",
                true,
                "I counted 12 albums in the table.",
            ),
            step(5, "Lead", "message", true, route),
        ]);
        assert_eq!(roles[1], Role::Bookkeeping);
        assert_eq!(roles[5], Role::Bookkeeping);
        assert_eq!(roles[2], Role::Message);
        assert_eq!(roles[4], Role::Message);
        assert_eq!(roles[0], Role::Message, "the user is never bookkeeping");
    }

    #[test]
    fn an_agent_repeating_itself_to_one_peer_is_not_routing() {
        let same = "I will try the search again with the same query now.";
        let roles = roles_of(vec![
            step(0, "Asker", "message", true, same),
            step(1, "Peer", "message", true, "No results."),
            step(2, "Asker", "message", true, same),
        ]);
        assert_eq!(roles[0], Role::Message);
        assert_eq!(roles[2], Role::Message);
    }

    #[test]
    fn ledgers_routing_placeholders_and_system_prompts_are_bookkeeping() {
        let roles = roles_of(vec![
            step(0, "system", "message", true, "You are a helpful agent."),
            step(
                1,
                "Lead",
                "message",
                true,
                "{\"is_done\": false, \"next\": \"Surfer\"}",
            ),
            step(2, "Lead", "message", true, "Next speaker: Surfer"),
            step(3, "Surfer", "message", true, "<redacted>"),
            step(
                4,
                "Surfer",
                "message",
                true,
                "Surfer, please look up the 2023 schedule.",
            ),
            step(5, "Surfer", "search", true, "{\"a\": 1, \"b\": 2}"),
        ]);
        assert_eq!(
            roles,
            vec![
                Role::Bookkeeping,
                Role::Bookkeeping,
                Role::Bookkeeping,
                Role::Bookkeeping,
                Role::Message,
                Role::Action,
            ]
        );
    }

    #[test]
    fn a_restated_plan_is_bookkeeping_and_new_content_is_not() {
        let plan = "Plan: search the archive for the mayor election results, \
                    open the official county page, read the vote totals, compare \
                    candidates, compute margins, report winner names clearly";
        let roles = roles_of(vec![
            step(0, "Lead", "message", true, plan),
            step(1, "Surfer", "message", true, "Opened the county page."),
            step(2, "Lead", "message", true, &format!("Updated plan. {plan}")),
            step(
                3,
                "Lead",
                "message",
                true,
                "The county page lists 4,512 votes for Ruiz and 3,998 for Chen in precinct seven, tallied after the recount concluded on Friday evening downtown officially.",
            ),
        ]);
        assert_eq!(roles[2], Role::Bookkeeping);
        assert_eq!(roles[3], Role::Message);
    }
}
