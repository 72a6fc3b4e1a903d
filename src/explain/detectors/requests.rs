//! Detectors of an agent that acts or reports for a user against what the
//! run shows: a consequential call the user never asked for, a handoff to a
//! person the user never asked for, and a reply that states a value other
//! than the one the tool output just read holds.

use std::collections::{BTreeMap, HashSet};

use serde_json::Value;

use super::{Hit, step_name};
use crate::explain::text::{head, quote_around, tool_words};
use crate::explain::view::RunView;

/// The verb of a consequential call and the words with which a user asks
/// for it. A call whose verb is not here is not judged.
const ASKED_WITH: &[(&str, &[&str])] = &[
    ("cancel", &["cancel", "refund", "call off"]),
    ("book", &["book", "reserve", "buy", "purchase"]),
    ("purchase", &["book", "reserve", "buy", "purchase", "order"]),
    ("buy", &["buy", "purchase", "order"]),
    ("update", CHANGE),
    ("modify", CHANGE),
    ("change", CHANGE),
    ("exchange", &["exchange", "swap", "replace", "change"]),
    ("return", &["return", "refund", "send back", "send it back"]),
    (
        "refund",
        &["refund", "money back", "reimburse", "compensat"],
    ),
    (
        "send",
        &["send", "compensat", "certificate", "voucher", "credit"],
    ),
    ("delete", &["delete", "remove", "erase"]),
    ("remove", &["delete", "remove", "take off"]),
];

/// Words of a user asking for a change.
const CHANGE: &[&str] = &[
    "change",
    "modify",
    "update",
    "switch",
    "move",
    "upgrade",
    "downgrade",
    "add",
    "remove",
    "replace",
    "exchange",
    "edit",
    "correct",
    "fix",
];

/// A consequential call (cancel, book, modify, send…) whose verb none of
/// the user's messages before it asks for, and that the user did not accept
/// when the agent offered it (a yes right after an agent's message naming
/// it): the agent acted on an intent the user never stated. Only runs
/// where a user speaks are judged (an autonomous agent has nobody to ask),
/// and a refused call changed nothing.
pub(crate) fn unrequested_action(run: &RunView) -> Vec<Hit> {
    // The asking words the user has used so far, each looked for once per
    // message, so long runs stay linear.
    let mut asked: HashSet<&str> = HashSet::new();
    let mut user_spoke = false;
    // The agent's message the user's latest message answers, if it was a yes.
    let mut accepted: Option<String> = None;
    let mut last_agent_message = String::new();
    let mut hits = Vec::new();
    for (i, s) in run.steps.iter().enumerate() {
        if s.is_user() {
            let text = s.output.to_lowercase();
            let words = ASKED_WITH.iter().flat_map(|(_, asks)| asks.iter());
            asked.extend(words.filter(|w| text.contains(**w)).copied());
            user_spoke = true;
            accepted = super::words::affirms(&s.output).then(|| last_agent_message.clone());
            continue;
        }
        if !s.is_tool() && !run.is_environment(i) {
            last_agent_message = s.output.to_lowercase();
        }
        if !user_spoke || !s.is_tool() || !s.succeeded || run.is_environment(i) {
            continue;
        }
        let words = tool_words(&s.tool);
        let Some((verb, asks)) = ASKED_WITH
            .iter()
            .find(|(v, _)| words.iter().any(|w| w == v))
        else {
            continue;
        };
        let offered = accepted
            .as_deref()
            .is_some_and(|m| m.contains(verb) || asks.iter().any(|w| m.contains(w)));
        if offered || asks.iter().any(|w| asked.contains(w)) {
            continue;
        }
        let title = format!("called {} though the user never asked to {verb}", s.tool);
        hits.push(
            Hit::suspect(i, "unrequested_action", 0.55, title).because(format!(
                "{} called {}, and none of the user's messages before it asks for it (no {})",
                step_name(run, i),
                s.tool,
                asks.join(", ")
            )),
        );
    }
    hits
}

/// Words of a user asking for a person instead of the agent.
const ASKS_FOR_A_PERSON: &[&str] = &[
    "human",
    "person",
    "representative",
    // escalate, escalation, escalated
    "escalat",
    "manager",
    "supervisor",
    "transfer",
    "real agent",
    "live agent",
    "someone else",
];

/// True when the tool's name hands the conversation to a person
/// ("transfer_to_human_agents", "escalate_to_human").
fn hands_over(tool: &str) -> bool {
    let words = tool_words(tool);
    super::words::hands_over(&words)
        || words
            .iter()
            .any(|w| matches!(w.as_str(), "escalate" | "handoff"))
}

/// In a failed run, the agent's handoff to a person that the user never
/// asked for: the agent gave the task up rather than doing it. A user who
/// asked for a person got what they asked.
pub(crate) fn unrequested_handoff(run: &RunView) -> Vec<Hit> {
    if !run.failed() {
        return Vec::new();
    }
    let (mut user_spoke, mut asked) = (false, false);
    for (i, s) in run.steps.iter().enumerate() {
        if s.is_user() {
            let text = s.output.to_lowercase();
            asked |= ASKS_FOR_A_PERSON.iter().any(|w| text.contains(w));
            user_spoke = true;
            continue;
        }
        if !user_spoke || !s.is_tool() || run.is_environment(i) || !hands_over(&s.tool) {
            continue;
        }
        if asked {
            return Vec::new();
        }
        let title = "handed the user to a person instead of finishing the task".to_string();
        return vec![
            Hit::suspect(i, "premature_termination", 0.45, title).because(format!(
                "{} called {} in a run that failed, and none of the user's messages before it \
                 asks for a person",
                step_name(run, i),
                s.tool
            )),
        ];
    }
    Vec::new()
}

/// Words that may stand between a field's name and its value in a reply
/// ("the status is currently \"pending\"").
const LINKS: &[&str] = &[
    "is",
    "was",
    "are",
    "of",
    "now",
    "currently",
    "still",
    "already",
    "set",
    "to",
    "at",
    "marked",
    "as",
    "listed",
];

/// A reply right after tool outputs (JSON objects) that names one of their
/// fields and gives it another value than the output held: "the status is
/// shipped" after `"status": "pending"`, "a balance of $80" after
/// `"balance": 120`. Judged only where the output holds one value for the
/// field, the reply's value is no value that field had anywhere in the run,
/// and a number is not the sum, difference or product of two the run
/// showed (a total, a fare difference).
pub(crate) fn contradicts_tool_output(run: &RunView) -> Vec<Hit> {
    let mut read = Fields::new();
    let mut read_at: Option<usize> = None;
    let mut ever = Seen::default();
    let mut seen: Vec<f64> = Vec::new();
    let mut hits = Vec::new();
    for (i, s) in run.steps.iter().enumerate() {
        if s.is_tool() || run.is_environment(i) {
            if let Ok(v) = serde_json::from_str::<Value>(s.output.trim()) {
                let mut fields = Fields::new();
                scalars(&v, None, &mut fields);
                for (k, vals) in fields {
                    for v in vals {
                        ever.note(&k, &v);
                        add(&mut read, &k, v);
                    }
                }
                read_at = Some(i);
            }
        } else {
            let judged = !s.is_user() && !run.is_bookkeeping(i);
            if let (true, Some(t)) = (judged, read_at) {
                hits.extend(contradiction(run, i, t, &read, &ever, &seen));
            }
            read.clear();
            read_at = None;
        }
        seen.extend(numbers_in(&s.text()));
        if seen.len() > RECENT_NUMBERS {
            seen.drain(..seen.len() - RECENT_NUMBERS);
        }
    }
    hits
}

/// How many of the latest numbers seen a stated number may be computed from.
const RECENT_NUMBERS: usize = 200;

/// Every value a field held in the run, and every word any field held:
/// looked up, not searched, so long runs stay linear.
#[derive(Default)]
struct Seen {
    by_field: HashSet<(String, String)>,
    words: HashSet<String>,
}

impl Seen {
    fn note(&mut self, key: &str, v: &Scalar) {
        if let Scalar::Word(w) = v {
            self.words.insert(w.clone());
        }
        self.by_field.insert((key.to_string(), v.repr()));
    }

    fn held(&self, key: &str, v: &Scalar) -> bool {
        self.by_field.contains(&(key.to_string(), v.repr()))
    }
}

/// A field's value as a reply would state it: a number or a word.
#[derive(Debug, Clone, PartialEq)]
enum Scalar {
    Number(f64),
    Word(String),
}

impl Scalar {
    /// The value as a key: numbers to their shortest form, so 120 and
    /// 120.0 are one.
    fn repr(&self) -> String {
        match self {
            Scalar::Number(x) => format!("{x}"),
            Scalar::Word(w) => w.clone(),
        }
    }
}

/// A field's distinct values, in the order first seen.
type Fields = BTreeMap<String, Vec<Scalar>>;

/// Adds `v` to the values of field `k`, once.
fn add(fields: &mut Fields, k: &str, v: Scalar) {
    let vals = fields.entry(k.to_lowercase()).or_default();
    if !vals.contains(&v) {
        vals.push(v);
    }
}

/// The number and word values of a JSON value's fields, by field name.
/// Words are short and letters only (a status, a tier): ids, dates and
/// free text are written in too many ways to compare.
fn scalars(v: &Value, key: Option<&str>, out: &mut Fields) {
    match v {
        Value::Object(m) => m.iter().for_each(|(k, x)| scalars(x, Some(k), out)),
        Value::Array(a) => a.iter().for_each(|x| scalars(x, key, out)),
        Value::Number(n) => {
            if let (Some(k), Some(x)) = (key, n.as_f64()) {
                add(out, k, Scalar::Number(x));
            }
        }
        Value::String(t) => {
            // Yes and no are said in too many ways ("was not purchased").
            let yes_no = matches!(t.to_lowercase().as_str(), "yes" | "no" | "true" | "false");
            let word = !yes_no
                && t.len() <= 30
                && t.chars().all(|c| c.is_alphabetic() || " _-".contains(c));
            if let (Some(k), true) = (key, word && !t.is_empty()) {
                add(out, k, Scalar::Word(t.to_lowercase()));
            }
        }
        _ => {}
    }
}

/// The first field of the output read at `t` that reply `i` restates with
/// another value.
fn contradiction(
    run: &RunView,
    i: usize,
    t: usize,
    read: &Fields,
    ever: &Seen,
    seen: &[f64],
) -> Option<Hit> {
    let text = &run.steps[i].output;
    let lower = text.to_lowercase();
    for (key, vals) in read {
        if key.len() < 4 || vals.len() != 1 {
            continue;
        }
        let held = vals.first()?;
        let name = key.replace('_', " ");
        for (at, _) in lower.match_indices(&name) {
            if !introduced(&lower[..at]) {
                continue;
            }
            let Some(said) = value_after(&lower[at + name.len()..], held) else {
                continue;
            };
            let other_value = match (&said, held) {
                // A number the field never held, nor arithmetic on two seen.
                (Scalar::Number(x), Scalar::Number(y)) => {
                    (x - y).abs() > 0.005 && !derived(*x, seen) && !ever.held(key, &said)
                }
                // A word some field of the run holds (another status), not
                // any word that happens to follow.
                (Scalar::Word(x), Scalar::Word(y)) => {
                    !y.starts_with(x.as_str()) && ever.words.contains(x.as_str())
                }
                _ => false,
            };
            if !other_value {
                continue;
            }
            let shown = |v: &Scalar| match v {
                Scalar::Number(x) => format!("{x}"),
                Scalar::Word(w) => format!("\"{w}\""),
            };
            let title = format!("told the user a {name} other than the tool output's");
            return Some(
                Hit::suspect(i, "contradicts_tool_output", 0.6, title).because(format!(
                    "{} returned {key} {}, and {} says \"{}\"",
                    step_name(run, t),
                    shown(held),
                    step_name(run, i),
                    head(&quote_around(text, &text[at..at + name.len()]), 160)
                )),
            );
        }
    }
    None
}

/// Words that introduce a field by its own name ("your balance", "the
/// status"). After any other word the name may be part of another field's
/// ("refund amount", "travel insurance").
const INTRODUCERS: &[&str] = &[
    "the", "your", "its", "their", "this", "that", "his", "her", "my", "our", "current",
];

/// True when the reply text before a field's name introduces that field:
/// an introducing word, or the start of a line or sentence.
fn introduced(before: &str) -> bool {
    let t = before.trim_end_matches([' ', '*', '-', '#']);
    match t.rsplit(|c: char| !c.is_alphanumeric()).next() {
        _ if t.is_empty() || t.ends_with(['\n', '.', ':', '!', '?']) => true,
        Some(w) => INTRODUCERS.contains(&w),
        None => true,
    }
}

/// The value a reply gives right after a field's name: a number (with a
/// currency sign or thousands commas) or, for a word-valued field, the
/// first word after a linking word ("is", "now").
fn value_after(rest: &str, like: &Scalar) -> Option<Scalar> {
    let mut words = rest
        .split(|c: char| c.is_whitespace() || "*\"'`:=()".contains(c))
        .filter(|w| !w.is_empty());
    let mut linked = false;
    for w in words.by_ref().take(6) {
        if LINKS.contains(&w) {
            linked = true;
            continue;
        }
        return match like {
            Scalar::Number(_) => {
                let n = w
                    .trim_start_matches('$')
                    .trim_end_matches(['.', ',', ';'])
                    .replace(',', "");
                n.parse::<f64>().ok().map(Scalar::Number)
            }
            Scalar::Word(_) => {
                let word = w.trim_end_matches(['.', ',', ';', '!']);
                (linked && word.chars().all(char::is_alphabetic) && !word.is_empty())
                    .then(|| Scalar::Word(word.to_string()))
            }
        };
    }
    None
}

/// The numbers in a text (currency signs and thousands commas dropped).
fn numbers_in(text: &str) -> Vec<f64> {
    crate::explain::text::numbers(text)
        .iter()
        .filter_map(|v| v.parse().ok())
        .collect()
}

/// True when `x` is the sum, difference or product of two numbers seen.
fn derived(x: f64, seen: &[f64]) -> bool {
    let close = |y: f64| (y - x).abs() <= 0.01;
    seen.iter().enumerate().any(|(k, &a)| {
        seen[k + 1..]
            .iter()
            .any(|&b| close(a + b) || close((a - b).abs()) || close(a * b))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::view::tests::{run, step};

    #[test]
    fn a_call_the_user_never_asked_for_is_unrequested() {
        let steps = |asked: &str| {
            vec![
                step(0, "user", "message", true, asked),
                step(1, "assistant", "get_reservation", true, "{\"id\": \"R1\"}"),
                step(
                    2,
                    "assistant",
                    "cancel_reservation",
                    true,
                    "{\"id\": \"R1\"}",
                ),
            ]
        };
        let hits = unrequested_action(&run(steps("My flight was delayed, I am upset."), "failed"));
        assert_eq!(hits.iter().map(|h| h.at).collect::<Vec<_>>(), vec![2]);
        assert!(hits[0].evidence[0].contains("cancel_reservation"));
        // Counter-examples: the user asked for it, or accepted the agent's
        // offer; a read changes nothing; an agent with no user to ask; a
        // refused call did nothing.
        assert!(unrequested_action(&run(steps("Please cancel my trip."), "failed")).is_empty());
        let mut offer = steps("My flight was delayed, I am upset.");
        offer.insert(
            2,
            step(
                2,
                "assistant",
                "message",
                true,
                "Shall I cancel it for you?",
            ),
        );
        offer.insert(3, step(3, "user", "message", true, "Yes please."));
        offer[4].step = 4;
        assert!(unrequested_action(&run(offer.clone(), "failed")).is_empty());
        offer[3].output = "What would that cost?".into();
        assert_eq!(unrequested_action(&run(offer, "failed")).len(), 1);
        let mut no_user = steps("x");
        no_user.remove(0);
        assert!(unrequested_action(&run(no_user, "failed")).is_empty());
        let mut refused = steps("My flight was delayed.");
        refused[2].succeeded = false;
        assert!(unrequested_action(&run(refused, "failed")).is_empty());
        let change = vec![
            step(
                0,
                "user",
                "message",
                true,
                "I'd like to move my flight a day later.",
            ),
            step(1, "assistant", "update_reservation_flights", true, "{}"),
            step(2, "assistant", "transfer_to_human_agents", true, "{}"),
        ];
        assert!(unrequested_action(&run(change, "failed")).is_empty());
    }

    #[test]
    fn a_handoff_nobody_asked_for_in_a_failed_run_is_giving_up() {
        let steps = |asked: &str| {
            vec![
                step(0, "user", "message", true, asked),
                step(
                    1,
                    "assistant",
                    "check_line",
                    true,
                    "{\"status\": \"active\"}",
                ),
                step(
                    2,
                    "assistant",
                    "transfer_to_human_agents",
                    true,
                    "Transfer successful",
                ),
            ]
        };
        let hits = unrequested_handoff(&run(steps("My MMS will not send."), "failed"));
        assert_eq!(hits.iter().map(|h| h.at).collect::<Vec<_>>(), vec![2]);
        // Counter-examples: the user asked for a person; the run succeeded;
        // a money transfer is no handoff.
        let asked = steps("MMS is broken, let me talk to a human.");
        assert!(unrequested_handoff(&run(asked, "failed")).is_empty());
        let escalation = steps("MMS still fails. It sounds like this may need to be escalated.");
        assert!(unrequested_handoff(&run(escalation, "failed")).is_empty());
        assert!(unrequested_handoff(&run(steps("MMS is broken."), "succeeded")).is_empty());
        let mut money = steps("MMS is broken.");
        money[2].tool = "transfer_funds".into();
        assert!(unrequested_handoff(&run(money, "failed")).is_empty());
    }

    #[test]
    fn a_reply_restating_a_field_with_another_value_contradicts_the_output() {
        let reply = |text: &str| {
            vec![
                step(0, "user", "message", true, "Where is my order?"),
                step(
                    1,
                    "assistant",
                    "get_order_details",
                    true,
                    "{\"order_id\": \"W0\", \"status\": \"delivered\", \"balance\": 0}",
                ),
                step(2, "assistant", "message", true, "That one arrived. And W1?"),
                step(
                    3,
                    "assistant",
                    "get_order_details",
                    true,
                    "{\"order_id\": \"W1\", \"status\": \"pending\", \"balance\": 120}",
                ),
                step(4, "assistant", "message", true, text),
            ]
        };
        let hits = contradicts_tool_output(&run(
            reply("Good news: the status is now \"delivered\"."),
            "failed",
        ));
        assert_eq!(hits.iter().map(|h| h.at).collect::<Vec<_>>(), vec![4]);
        assert!(
            hits[0].evidence[0].contains("status \"pending\""),
            "{:?}",
            hits[0].evidence
        );
        let money = contradicts_tool_output(&run(reply("Your balance is $80."), "failed"));
        assert_eq!(money.len(), 1);
        // Counter-examples: the same value; a total computed from values
        // seen; a field the reply does not restate.
        // a word no field holds; a field named inside another's name.
        for fine in [
            "Your status is currently pending.",
            "Your balance is $120.00.",
            "With the $30 fee your balance of 150 is due.",
            "I will check the shipping status for you.",
            "The status is unclear to me.",
            "Your refund balance is $45.",
        ] {
            let r = run(reply(fine), "failed");
            let mut steps = r.steps.clone();
            steps[0].output = "Where is my order? A fee of 30 applies.".into();
            let r = RunView::new("r".into(), steps, r.run.clone());
            assert!(contradicts_tool_output(&r).is_empty(), "{fine}");
        }
    }

    #[test]
    fn long_customer_service_runs_take_linear_time() {
        // A user, JSON replies with ever new ids and amounts, replies that
        // restate them: 8x the steps must take well under 24x the time.
        let long = |n: u64| {
            let steps = (0..n)
                .map(|i| match i % 4 {
                    0 => step(
                        i,
                        "user",
                        "message",
                        true,
                        "Please change my order, thanks.",
                    ),
                    1 => step(
                        i,
                        "assistant",
                        "get_order_details",
                        true,
                        &format!("{{\"id\": \"W{i}\", \"status\": \"pending\", \"total\": {i}}}"),
                    ),
                    2 => step(
                        i,
                        "assistant",
                        "message",
                        true,
                        &format!("The total is {i}."),
                    ),
                    _ => step(i, "assistant", "modify_order", true, "{}"),
                })
                .collect();
            run(steps, "failed")
        };
        let fastest = |n| {
            let r = long(n);
            (0..3)
                .map(|_| {
                    let t = std::time::Instant::now();
                    unrequested_action(&r);
                    unrequested_handoff(&r);
                    contradicts_tool_output(&r);
                    t.elapsed()
                })
                .min()
                .unwrap()
        };
        let (short, long) = (fastest(2_000), fastest(16_000));
        assert!(
            long < short * 24,
            "8x the steps took {:.1}x the time",
            long.as_secs_f64() / short.as_secs_f64()
        );
    }
}
