//! Detectors of what agents state as fact: data they invent, lookups no
//! tool made, and values no earlier step or the task contains.

use std::collections::BTreeSet;

use super::{Hit, step_name};
use crate::explain::text::{
    digit_runs, find_phrase, has_code, numbers, quote_around, reads_as_no_op, values,
};
use crate::explain::view::RunView;

/// Words with which an agent announces it will make data up instead of
/// fetching it.
const FABRICATION: &[&str] = &[
    "simulate",
    "simulating",
    "simulated",
    "hypothetical",
    // "placeholder" alone names a thing ("used as a placeholder site",
    // "replace the placeholder key"); made-up data is placeholder *data*.
    "placeholder data",
    "placeholder value",
    "placeholder number",
    "placeholder figure",
    "placeholder result",
    "placeholder information",
    "using placeholder",
    "use placeholder",
    // "dummy", "fake" and "mock" alone name test doubles and scratch files
    // ("a dummy file", "mock the client"); made-up results are data.
    "dummy data",
    "dummy value",
    "dummy result",
    "dummy number",
    "fake data",
    "fake value",
    "fake result",
    "mock data",
    "sample data",
    "example data",
    "for demonstration",
    "for illustration",
    "illustrative",
    "let's say",
    "made-up",
    "fictional",
    "pretend",
];

/// Words before a fabrication phrase that turn it into a warning against it.
const NEGATIONS: &[&str] = &["not ", "n't ", "never ", "avoid ", "without ", "no "];

/// An agent announcing simulated, assumed or placeholder data.
pub(crate) fn fabricated_data(run: &RunView) -> Vec<Hit> {
    let mut hits = Vec::new();
    for i in run.agent_steps() {
        let s = &run.steps[i];
        // The user's "let's assume" is a wish, not data an agent made up;
        // a tool's reply (a command's output, a file it printed) is not the
        // agent's words.
        if Some(i) == run.task_index() || s.is_user() || s.is_tool() || run.is_bookkeeping(i) {
            continue;
        }
        // Commands, code and quoted strings are what the agent runs or
        // writes, not what it says it did.
        // A comment in its code that assumes a fact hard-codes it: that
        // is said too.
        let said = words_outside_code(&s.output);
        let Some(phrase) = unnegated_phrase(&said, FABRICATION)
            .or_else(|| unnegated_phrase(&said, ASSUMPTIONS))
            .or_else(|| unnegated_phrase(&code_comments(&s.output), ASSUMPTIONS))
        else {
            continue;
        };
        // A test that simulates a case or uses sample data reproduces a
        // problem on purpose: that is how tests work, not made-up results.
        let around = quote_around(&s.output, phrase).to_ascii_lowercase();
        if ["test", "reproduc", "mock"]
            .iter()
            .any(|w| around.contains(w))
        {
            continue;
        }
        let title = "made up data instead of fetching it".to_string();
        hits.push(Hit::suspect(i, "fabrication", 0.7, title).because(format!(
            "{} says \"{}\"",
            step_name(run, i),
            quote_around(&s.output, phrase)
        )));
    }
    hits
}

/// Phrases of an assumption: fabrication in what an agent says, and in a
/// code comment too.
const ASSUMPTIONS: &[&str] = &[
    "let's assume",
    "let us assume",
    "we can assume",
    "i will assume",
    "assuming that",
    "assume the",
    "assume that",
];

/// The comment lines (`#`, `//`) of the code blocks in `text`.
fn code_comments(text: &str) -> String {
    text.split("```")
        .skip(1)
        .step_by(2)
        .flat_map(str::lines)
        .map(str::trim_start)
        .filter(|l| l.starts_with('#') || l.starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` without its code blocks, inline code and quoted strings.
fn words_outside_code(text: &str) -> String {
    let prose = text.split("```").step_by(2).collect::<Vec<_>>().join("\n");
    let mut out = String::with_capacity(prose.len());
    let mut open: Option<char> = None;
    let chars: Vec<char> = prose.chars().collect();
    for (k, &c) in chars.iter().enumerate() {
        match open {
            Some(q) if c == q || c == '\n' => open = None,
            Some(_) => {}
            // An apostrophe inside a word ("let's", "don't") opens nothing.
            None if c == '`'
                || c == '"'
                || (c == '\''
                    && !chars
                        .get(k.wrapping_sub(1))
                        .is_some_and(|p| p.is_alphanumeric())) =>
            {
                open = Some(c);
                out.push(' ');
            }
            None => out.push(c),
        }
    }
    out
}

/// The first of `phrases` in `text` that is not negated just before it.
fn unnegated_phrase<'p>(text: &str, phrases: &[&'p str]) -> Option<&'p str> {
    let lower = text.to_ascii_lowercase();
    phrases.iter().copied().find(|p| {
        lower.match_indices(p).any(|(at, _)| {
            let mut from = at.saturating_sub(12);
            while !lower.is_char_boundary(from) {
                from -= 1;
            }
            let before = &lower[from..at];
            !NEGATIONS.iter().any(|n| before.contains(n)) && !in_a_name(&lower, at, p.len())
        })
    })
}

/// True when the text at `at..at + len` is part of a path or identifier
/// ("backends/dummy/base.py", "mock_data"): a name, not what an agent says
/// it does.
fn in_a_name(text: &str, at: usize, len: usize) -> bool {
    let start = text[..at].rfind(char::is_whitespace).map_or(0, |k| k + 1);
    let end = text[at + len..]
        .find(char::is_whitespace)
        .map_or(text.len(), |k| at + len + k);
    let token = &text[start..end];
    token.contains('/') || token.contains('_') || token.contains('\\')
}

/// Words of an agent reporting that it looked something up itself.
const LOOKED_UP: &[&str] = &[
    "i have reviewed",
    "i reviewed",
    "i have examined",
    "i examined",
    "i have visited",
    "i visited",
    "i have looked up",
    "i looked up",
    "i have searched",
    "i searched",
    "i have retrieved",
    "i retrieved",
    "i have accessed",
    "i accessed",
    "i have consulted",
    "i consulted",
    "i have gathered",
    "i gathered",
    "i have obtained",
    "i obtained",
    "i have located",
    "i located",
    "i have watched",
    "i watched",
    "i have listened",
    "we have reviewed",
    "we have searched",
    "we have retrieved",
    "after reviewing",
    "upon reviewing",
    "after examining",
    "upon examining",
    "after visiting",
    "after searching",
    "here is the data",
    "here are the results",
    "here is the information",
];

/// An agent that reports having looked something up when no tool ran for
/// it: the step before is no tool's result and the message runs no code.
pub(crate) fn claimed_lookup(run: &RunView) -> Vec<Hit> {
    let mut hits = Vec::new();
    for i in run.agent_steps() {
        let s = &run.steps[i];
        if i == 0
            || Some(i) == run.task_index()
            || s.tool != "message"
            || has_code(&s.output)
            || run.is_bookkeeping(i)
            || s.is_user()
        {
            continue;
        }
        let before = &run.steps[i - 1];
        let had_result = (run.is_environment(i - 1) || before.tool != "message")
            && !run.came_back_bad(i - 1)
            && !reads_as_no_op(&before.output);
        if had_result {
            continue;
        }
        let Some(phrase) = find_phrase(&s.output, LOOKED_UP) else {
            continue;
        };
        let title = "reports a lookup no tool performed".to_string();
        hits.push(
            Hit::suspect(i, "hallucinated_action", 0.5, title).because(format!(
                "{} says \"{}\" but no tool ran before it",
                step_name(run, i),
                quote_around(&s.output, phrase)
            )),
        );
    }
    hits
}

/// An agent message, not computed by code, that states two or more numbers
/// found neither in the task nor in any earlier step. Once a step's text
/// was cut short (--max-text), the values may be in the part left out: after
/// a tool's reply was cut no later message is judged (the reply may hold any
/// value); after a message was cut, only in a failed run, where a suspect
/// is sought, and the finding says so.
pub(crate) fn unsourced_values(run: &RunView) -> Vec<Hit> {
    // What the run has seen includes numbers inside identifiers
    // ("certificate_7504069"): an agent quoting one did not make it up.
    let mut known: BTreeSet<String> = run.given_values();
    known.extend(digit_runs(run.task()));
    let mut hits = Vec::new();
    let mut unseen = false;
    let mut replies_cut = false;
    let mut recent: Vec<f64> = numbers(run.task())
        .iter()
        .filter_map(|v| v.parse::<f64>().ok())
        .collect();
    for (i, s) in run.steps.iter().enumerate() {
        let stated = numbers(&prose_of(&s.output));
        // Pages and tool results bring new values by nature; only a
        // message states them as its own.
        let is_claim = s.tool == "message"
            && (!unseen || run.failed())
            && !replies_cut
            && !run.is_environment(i)
            && !run.is_bookkeeping(i)
            && !s.is_user()
            && Some(i) != run.task_index()
            && !has_code(&s.output);
        if is_claim {
            let new: Vec<&String> = stated
                .iter()
                .filter(|v| {
                    !known.contains(*v) && !rounds_a_known(v, &known) && !derived(v, &recent)
                })
                .collect();
            if new.len() >= 2 {
                let shown: Vec<&str> = new.iter().take(4).map(|v| v.as_str()).collect();
                let title = "states values no earlier step produced".to_string();
                let caveat = if unseen {
                    " in the text kept (--max-text cut an earlier message short)"
                } else {
                    ""
                };
                hits.push(
                    Hit::suspect(i, "unsupported_claim", 0.5, title).because(format!(
                        "{} states {} that neither the task nor any earlier step contains{caveat}",
                        step_name(run, i),
                        shown.join(", ")
                    )),
                );
            }
        }
        // A tool's reply cut short may hold any value a later message
        // states; a message cut short states its own (judged in a failed
        // run, with a caveat).
        if s.text_cut && (s.is_tool() || run.is_environment(i)) {
            replies_cut = true;
        }
        unseen |= s.text_cut;
        let seen = s.text();
        known.extend(values(&seen));
        known.extend(digit_runs(&seen));
        recent.extend(numbers(&seen).iter().filter_map(|v| v.parse::<f64>().ok()));
        if recent.len() > RECENT_NUMBERS {
            recent.drain(..recent.len() - RECENT_NUMBERS);
        }
    }
    hits
}

/// How many of the latest numbers seen a stated value may be computed from.
const RECENT_NUMBERS: usize = 120;

/// True when `v` is the sum, difference, product or quotient of two of
/// the `recent` numbers, to its own precision ("13.45" from 12.07 and
/// 1.38): arithmetic on values the run has seen, not a value made up.
fn derived(v: &str, recent: &[f64]) -> bool {
    let Ok(x) = v.parse::<f64>() else {
        return false;
    };
    let decimals = v.split_once('.').map_or(0, |(_, f)| f.len());
    let tolerance = 0.5 * 10f64.powi(-(decimals as i32)) + 1e-9;
    let close = |y: f64| (y - x).abs() <= tolerance;
    recent.iter().enumerate().any(|(k, &a)| {
        recent[k + 1..].iter().any(|&b| {
            close(a + b)
                || close((a - b).abs())
                || close(a * b)
                || (b != 0.0 && close(a / b))
                || (a != 0.0 && close(b / a))
        })
    })
}

/// True when `v` is one of `known` rounded to fewer decimals ("1023.17"
/// of "1023.1729", "1023" of "1022.8"): a value carried over, not made up.
fn rounds_a_known(v: &str, known: &BTreeSet<String>) -> bool {
    let decimals = v.split_once('.').map_or(0, |(_, f)| f.len());
    let (Ok(x), Ok(whole)) = (
        v.parse::<f64>(),
        v.split('.').next().unwrap_or("").parse::<u64>(),
    ) else {
        return false;
    };
    let half_unit = 0.5 * 10f64.powi(-(decimals as i32)) + 1e-9;
    // Rounding moves the whole part by one at most; known values with a
    // whole part sort together, right after its digits and the point.
    [whole.checked_sub(1), Some(whole), whole.checked_add(1)]
        .into_iter()
        .flatten()
        .any(|w| {
            let prefix = format!("{w}.");
            known
                .range(prefix.clone()..)
                .take_while(|k| k.starts_with(&prefix))
                .any(|k| {
                    k.len() - prefix.len() > decimals
                        && k.parse::<f64>().is_ok_and(|k| (k - x).abs() <= half_unit)
                })
        })
}

/// Words of a sentence that illustrates rather than states.
const EXAMPLE: &[&str] = &["for example", "e.g.", "for instance", "such as"];

/// A message without its code blocks and its example sentences: what the
/// agent states, not computes or illustrates.
fn prose_of(text: &str) -> String {
    let prose = text.split("```").step_by(2).collect::<Vec<_>>().join("\n");
    prose
        .split_inclusive(['.', '\n', '?', '!'])
        .filter(|s| find_phrase(s, EXAMPLE).is_none())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::view::tests::{run, step};

    #[test]
    fn simulated_data_is_fabrication_but_a_warning_is_not() {
        let r = run(
            vec![
                step(
                    0,
                    "Planner",
                    "message",
                    true,
                    "Do not assume the data; fetch it.",
                ),
                step(
                    1,
                    "Analyst",
                    "message",
                    true,
                    "We must not simulate anything.",
                ),
                step(
                    2,
                    "Analyst",
                    "message",
                    true,
                    "The download timed out, so let's simulate the numbers.",
                ),
            ],
            "failed",
        );
        let hits = fabricated_data(&r);
        assert_eq!(hits.iter().map(|h| h.at).collect::<Vec<_>>(), vec![2]);
    }

    #[test]
    fn test_doubles_scratch_files_and_command_output_are_not_fabrication() {
        let said = |tool: &str, text: &str| {
            let r = run(
                vec![
                    step(0, "user", "message", true, "Fix the parser."),
                    step(1, "agent", tool, true, text),
                ],
                "failed",
            );
            fabricated_data(&r).len()
        };
        assert_eq!(
            said(
                "message",
                "I'll write a dummy file: `echo 'hello world' > x.txt`"
            ),
            0
        );
        assert_eq!(
            said("message", "Let me mock the client and add a fake server."),
            0
        );
        assert_eq!(
            said(
                "message",
                "```python\nrows = simulate_rows()\n```\nRunning it."
            ),
            0
        );
        assert_eq!(
            said("message", "I ran \"simulated mode\" as the docs say."),
            0
        );
        // A command's output is the tool's text, not the agent's words.
        assert_eq!(said("bash", "dummy data loaded; simulated results"), 0);
        // Data made up in the agent's own words still is.
        assert_eq!(
            said(
                "message",
                "The API failed, so I'll use dummy data for the totals."
            ),
            1
        );
        assert_eq!(said("message", "Let's assume the fare is $300."), 1);
        // An assumption in a code comment hard-codes a fact; a test double
        // in code does not.
        let code = "```python\n# Assume the winner is in column 1\nw = row[0]\n```";
        assert_eq!(said("message", code), 1);
        let code = "```python\n# a dummy client\nc = Dummy()\n```";
        assert_eq!(said("message", code), 0);
    }

    #[test]
    fn a_placeholder_described_is_not_data_made_up() {
        let r = run(
            vec![
                step(0, "User", "message", true, "Search the web for 'example'."),
                step(
                    1,
                    "Agent",
                    "message",
                    true,
                    "It leads to example.com, which is often used as a placeholder site.",
                ),
                step(
                    2,
                    "Agent",
                    "message",
                    true,
                    "No source answered, so I will use placeholder values for the totals.",
                ),
            ],
            "failed",
        );
        let hits = fabricated_data(&r);
        assert_eq!(hits.iter().map(|h| h.at).collect::<Vec<_>>(), vec![2]);
    }

    #[test]
    fn a_lookup_without_a_tool_is_hallucinated() {
        let r = run(
            vec![
                step(0, "Planner", "message", true, "Find the exhibit's theme."),
                step(
                    1,
                    "Historian",
                    "message",
                    true,
                    "I have reviewed the museum's page: the theme is water.",
                ),
                step(
                    2,
                    "Coder",
                    "message",
                    true,
                    "```python\nprint(search('exhibit'))\n```",
                ),
                step(
                    3,
                    "terminal",
                    "code_execution",
                    true,
                    "exitcode: 0\nCode output: Exhibit: fire",
                ),
                step(
                    4,
                    "Checker",
                    "message",
                    true,
                    "I have reviewed the results: the theme is fire.",
                ),
            ],
            "failed",
        );
        assert_eq!(
            claimed_lookup(&r).iter().map(|h| h.at).collect::<Vec<_>>(),
            vec![1]
        );
    }

    #[test]
    fn values_from_nowhere_are_unsupported() {
        let r = run(
            vec![
                step(
                    0,
                    "Planner",
                    "message",
                    true,
                    "Find the sale prices of the two homes.",
                ),
                step(
                    1,
                    "Realtor",
                    "message",
                    true,
                    "Home A sold for $850,000 and home B for $950,000.",
                ),
                step(
                    2,
                    "Checker",
                    "message",
                    true,
                    "So B (950,000) sold for more than A (850,000).",
                ),
            ],
            "failed",
        );
        let hits = unsourced_values(&r);
        assert_eq!(hits.iter().map(|h| h.at).collect::<Vec<_>>(), vec![1]);
    }

    /// After a text cut short, values may come from the part left out: a
    /// run that did not fail is not judged, a failed one says so.
    #[test]
    fn values_after_a_cut_reply_are_not_judged() {
        let steps = || {
            let mut tool = step(1, "agent", "search", true, "Results: 12 items, first a…");
            tool.text_cut = true;
            vec![
                step(0, "user", "message", true, "How many listings are there?"),
                tool,
                step(
                    2,
                    "agent",
                    "message",
                    true,
                    "There are 935 listings, 936 with drafts.",
                ),
            ]
        };
        assert!(unsourced_values(&run(steps(), "unknown")).is_empty());
        // A failed run too: the values may be in the part of the reply
        // left out.
        assert!(unsourced_values(&run(steps(), "failed")).is_empty());
        let mut whole = steps();
        whole[1].text_cut = false;
        assert_eq!(unsourced_values(&run(whole, "failed")).len(), 1);
        // A message cut short: judged in a failed run, with a caveat.
        let mut message_cut = steps();
        message_cut[1].text_cut = false;
        message_cut[0].text_cut = true;
        assert!(unsourced_values(&run(message_cut.clone(), "unknown")).is_empty());
        let hits = unsourced_values(&run(message_cut, "failed"));
        assert!(hits[0].evidence[0].ends_with("(--max-text cut an earlier message short)"));
    }

    #[test]
    fn values_rounded_from_earlier_ones_are_sourced() {
        let steps = |answer: &str| {
            vec![
                step(0, "user", "message", true, "What are the two totals?"),
                step(1, "calc", "code_execution", true, "1023.1729 and 14.96"),
                step(2, "agent", "message", true, answer),
            ]
        };
        for answer in ["The totals are 1023.17 and 15.", "About 1023 and 14.96."] {
            assert!(
                unsourced_values(&run(steps(answer), "failed")).is_empty(),
                "{answer}"
            );
        }
        let made_up = unsourced_values(&run(steps("The totals are 1023.27 and 16."), "failed"));
        assert_eq!(made_up.iter().map(|h| h.at).collect::<Vec<_>>(), vec![2]);
    }

    #[test]
    fn values_a_tool_showed_in_another_form_are_sourced() {
        let r = run(
            vec![
                step(0, "user", "message", true, "Book it with my certificate."),
                step(
                    1,
                    "agent",
                    "get_user",
                    true,
                    "{\"certificate_7504069\": 250}",
                ),
                step(2, "agent", "calculate", true, "255.0"),
                step(
                    3,
                    "agent",
                    "message",
                    true,
                    "Total $255, certificate 7504069 pays $250.",
                ),
            ],
            "failed",
        );
        assert!(unsourced_values(&r).is_empty());
    }

    #[test]
    fn a_lookup_after_a_tool_result_or_by_the_user_is_no_claimed_lookup() {
        let r = run(
            vec![
                step(0, "user", "message", true, "check my phone"),
                step(1, "agent", "get_line", true, "{\"status\": \"active\"}"),
                step(
                    2,
                    "agent",
                    "message",
                    true,
                    "I have reviewed your line: it is active.",
                ),
                step(
                    3,
                    "user",
                    "message",
                    true,
                    "Here are the results from my checks: airplane mode is on.",
                ),
            ],
            "failed",
        );
        assert!(claimed_lookup(&r).is_empty());
    }

    #[test]
    fn arithmetic_on_seen_values_and_the_users_own_values_are_sourced() {
        let r = run(
            vec![
                step(
                    0,
                    "user",
                    "message",
                    true,
                    "I was born on 1985-06-15, my bill please",
                ),
                step(
                    1,
                    "agent",
                    "get_bill",
                    true,
                    "{\"data\": 12.07, \"roaming\": 1.38}",
                ),
                step(
                    2,
                    "agent",
                    "message",
                    true,
                    "Your total is 13.45, of which 12.07 is data.",
                ),
                step(
                    3,
                    "user",
                    "message",
                    true,
                    "My other line ends 4471 and costs 19.99?",
                ),
            ],
            "failed",
        );
        assert!(
            unsourced_values(&r).is_empty(),
            "{:?}",
            unsourced_values(&r)
        );
    }

    #[test]
    fn a_path_or_identifier_naming_a_dummy_is_no_fabrication() {
        let r = run(
            vec![
                step(0, "user", "message", true, "Fix the backend."),
                step(
                    1,
                    "assistant",
                    "message",
                    true,
                    "Files: ./django/db/backends/dummy/base.py and mock_data_loader.py",
                ),
                step(
                    2,
                    "assistant",
                    "message",
                    true,
                    "We can use dummy values here.",
                ),
            ],
            "failed",
        );
        let hits = fabricated_data(&r);
        assert_eq!(hits.iter().map(|h| h.at).collect::<Vec<_>>(), vec![2]);
    }

    #[test]
    fn a_test_that_simulates_a_case_is_no_fabrication() {
        let r = run(
            vec![
                step(0, "user", "message", true, "fix the bug"),
                step(
                    1,
                    "agent",
                    "message",
                    true,
                    "Let me write a test that simulates the failing request.",
                ),
            ],
            "failed",
        );
        assert!(fabricated_data(&r).is_empty());
    }
}
