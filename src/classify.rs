//! Failure inference: classifying unlabeled failures from their error type
//! and message, with built-in rules that the `[classify]` section of
//! triage.toml extends, and failures read from outputs or concluded by a
//! reader.

use std::collections::BTreeMap;

use crate::plumbing::json_scan;
use serde_json::Value;

use crate::record::{ErrorInfo, EventOut, FailureSource, JsonVal};

/// A failure class found by a rule: the scoring classification and the
/// finer cause behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Class {
    pub classification: String,
    pub cause: String,
}

#[derive(Clone)]
struct Rule {
    classification: String,
    cause: String,
    needles: Vec<String>,
}

/// Ordered rules; the first whose needle occurs in the error text wins.
#[derive(Clone)]
pub struct Classifier {
    rules: Vec<Rule>,
}

const ENV: &str = "environment_constraint";
const AGENT: &str = "agent_error";

// Order matters: the more specific causes come first ("unknown tool" before
// a generic "not found").
const BUILTIN: &[(&str, &str, &[&str])] = &[
    (
        "rate_limit",
        ENV,
        &[
            "rate limit",
            "ratelimit",
            "rate_limit",
            "too many requests",
            "429",
            "quota",
        ],
    ),
    (
        "context_overflow",
        ENV,
        &[
            "context length",
            "context window",
            "context_length",
            "maximum context",
            "too many tokens",
            "token limit",
            "prompt is too long",
        ],
    ),
    (
        "timeout",
        ENV,
        &["timeout", "timed out", "deadline exceeded", "time limit"],
    ),
    (
        "auth",
        ENV,
        &[
            "unauthorized",
            "unauthorised",
            "forbidden",
            "permission denied",
            "invalid api key",
            "api key",
            "authentication",
            "401",
            "403",
        ],
    ),
    (
        "unknown_tool",
        AGENT,
        &[
            "unknown tool",
            "tool not found",
            "no such tool",
            "not a valid tool",
            "unknown function",
        ],
    ),
    (
        "bad_tool_arguments",
        AGENT,
        &[
            "invalid argument",
            "invalid arguments",
            "missing required",
            "required argument",
            "invalid parameter",
            "unexpected keyword",
            "validation error",
            "validationerror",
            "typeerror",
            "valueerror",
        ],
    ),
    (
        "invalid_output",
        AGENT,
        &[
            "invalid json",
            "jsondecodeerror",
            "failed to parse",
            "could not parse",
            "output parser",
            "outputparserexception",
            "parse error",
            // A coding agent's action its harness refused for its form (a
            // linter, the one-action rule): the agent's output was invalid.
            HARNESS_REFUSAL,
        ],
    ),
    (
        "loop_exhausted",
        AGENT,
        &[
            "max iterations",
            "maximum iterations",
            "max_iterations",
            "recursion limit",
            "max turns",
            "maximum number of turns",
            "budget exhausted",
            "step limit",
        ],
    ),
    (
        "provider_error",
        ENV,
        &[
            "service unavailable",
            "internal server error",
            "bad gateway",
            "overloaded",
            "connection reset",
            "connection refused",
            "connection error",
            // The exception classes of model SDKs, named without spaces.
            "internalservererror",
            "serviceunavailable",
            "apiconnectionerror",
            "badgateway",
            "500",
            "502",
            "503",
            "504",
            "529",
        ],
    ),
];

impl Default for Classifier {
    fn default() -> Self {
        Classifier::new(&BTreeMap::new())
    }
}

impl Classifier {
    /// Built-in rules with the user's rules (classification → needles) first.
    pub(crate) fn new(user: &BTreeMap<String, Vec<String>>) -> Self {
        let mut rules: Vec<Rule> = user
            .iter()
            .map(|(class, needles)| Rule {
                classification: class.clone(),
                cause: class.clone(),
                needles: needles.iter().map(|n| n.to_lowercase()).collect(),
            })
            .collect();
        rules.extend(BUILTIN.iter().map(|(cause, class, needles)| Rule {
            classification: class.to_string(),
            cause: cause.to_string(),
            needles: needles.iter().map(|n| n.to_string()).collect(),
        }));
        Classifier { rules }
    }

    /// The class of a failure from its error type and message, if a rule
    /// matches.
    pub(crate) fn classify(
        &self,
        error_type: Option<&str>,
        message: Option<&str>,
    ) -> Option<Class> {
        let mut text = String::new();
        for part in [error_type, message].into_iter().flatten() {
            text.push_str(&part.to_lowercase());
            text.push(' ');
        }
        if text.trim().is_empty() {
            return None;
        }
        self.rules
            .iter()
            .find(|r| r.needles.iter().any(|n| contains_token(&text, n)))
            .map(|r| Class {
                classification: r.classification.clone(),
                cause: r.cause.clone(),
            })
    }
}

impl Classifier {
    /// Marks an unlabeled failure's cause from its error, or a success whose
    /// output reads as a failure. Explicit labels always win.
    pub(crate) fn infer_failure(&self, ev: &mut EventOut<'_>) {
        if ev.action_succeeded
            && ev.failure_classification.is_none()
            && !shows_content(ev)
            && let Some(out) = ev.output.as_deref()
            && output_reads_as_failure(out)
        {
            ev.action_succeeded = false;
            ev.failure_source = Some(FailureSource::Output);
            ev.failure_inferred = true;
            if ev.error.is_none() {
                ev.error = Some(ErrorInfo {
                    kind: None,
                    message: Some(failure_line(out)),
                });
            }
        }
        if ev.action_succeeded || ev.failure_classification.is_some() {
            return;
        }
        let err = ev.error.as_ref();
        let class = self.classify(
            err.and_then(|e| e.kind.as_deref()),
            err.and_then(|e| e.message.as_deref()),
        );
        if let Some(c) = class {
            ev.failure_classification = Some(c.classification.into());
            ev.failure_cause = Some(c.cause);
        }
    }
}

/// Programs whose output is the content of a file or log: an error in it
/// is what was read, not the command failing.
const CONTENT_READERS: &[&str] = &[
    "cat",
    "head",
    "tail",
    "less",
    "more",
    "zcat",
    "journalctl",
    "dmesg",
    "grep",
    "egrep",
    "rg",
];

/// Whether the event ran a shell command that shows content (`cat x.log`,
/// `journalctl -u app`, `docker logs app`), by its tool input's `cmd` or
/// `command`, or the input of a shell tool.
fn shows_content(ev: &EventOut<'_>) -> bool {
    let from_input = match &ev.action_taken.tool_input {
        Some(JsonVal::Serde(v)) => ["cmd", "command"].iter().find_map(|k| match v.get(*k)? {
            Value::String(s) => Some(s.clone()),
            Value::Array(words) => Some(
                words
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            _ => None,
        }),
        _ => None,
    };
    let shell = matches!(
        ev.action_taken.tool_name.as_ref(),
        "bash" | "shell" | "sh" | "terminal"
    );
    let command = from_input.or_else(|| ev.input.clone().filter(|_| shell));
    let Some(command) = command else {
        return false;
    };
    let mut words = command.split_whitespace().skip_while(|w| *w == "sudo");
    match (words.next(), words.next()) {
        (Some(program), _) if CONTENT_READERS.contains(&program) => true,
        (Some("docker" | "kubectl" | "podman"), Some("logs")) => true,
        _ => false,
    }
}

/// Marks a failure no record states but the reader concluded (a tool call
/// never answered, a run that ends without an answer).
/// The error type a reader gives an action the harness refused for its
/// form (a linter rejecting an edit, a reply with no command or many): the
/// agent's own failed step, whatever tool it named.
pub(crate) const HARNESS_REFUSAL: &str = "refused by the harness";

pub(crate) fn mark_inferred(ev: &mut EventOut<'_>, source: FailureSource, message: &str) {
    ev.action_succeeded = false;
    ev.failure_source = Some(source);
    ev.failure_inferred = true;
    ev.error = Some(ErrorInfo {
        kind: None,
        message: Some(message.to_string()),
    });
}

/// The first line of `s` that holds something, cut to 200 characters: an
/// output's failure message.
pub(crate) fn first_line(s: &str) -> String {
    let line = s.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    line.chars().take(200).collect()
}

/// The line of an output that says what failed, cut to 200 characters: a
/// Python traceback's exception (the line it ends with, `KeyError: 'x'`,
/// not "Traceback (most recent call last):"), else the exception Python
/// names without a traceback (a `SyntaxError`), else the first line that
/// opens with `Error:`, `ERROR:` or `Exception:`, else the first line.
pub(crate) fn failure_line(s: &str) -> String {
    let s = without_ansi(s);
    match stated_failure(&s) {
        Some(line) => line.chars().take(200).collect(),
        None => first_line(&s),
    }
}

/// The line of an output that states a failure: a Python traceback's
/// exception, else the exception Python names without a traceback (a
/// `SyntaxError`), else the first line that opens with `Error:`,
/// `ERROR:` or `Exception:`, else pytest's summary of a failed test
/// (`FAILED …`).
pub(crate) fn stated_failure(s: &str) -> Option<&str> {
    let marked = |markers: &[&str]| {
        let mut lines = s.lines().map(str::trim).filter(|l| !l.is_empty());
        let at = lines.find(|l| markers.iter().any(|m| l.starts_with(m)))?;
        // A marker on a line of its own (`ERROR:`) heads the message on
        // the next.
        match markers.contains(&at) {
            true => lines.next().or(Some(at)),
            false => Some(at),
        }
    };
    traceback_exception(s)
        .or_else(|| exception_line(s))
        .or_else(|| marked(&["Error:", "ERROR:", "Exception:"]))
        .or_else(|| marked(&["FAILED "]))
}

/// `s` without the terminal's colour and cursor codes (`ESC [ … m`) that
/// test runners print, so its lines read as text.
pub(crate) fn without_ansi(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('\u{1b}') {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        // A control sequence runs to its final letter; any other escape
        // is one character long.
        if chars.next_if_eq(&'[').is_some() {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            chars.next();
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The exception Python names after the place of an error it raises
/// before any frame runs (`  File "x.py", line 3`, the code, then
/// `SyntaxError: invalid syntax`), with no traceback heading.
fn exception_line(s: &str) -> Option<&str> {
    let at = s.find("  File \"")?;
    s[at..].lines().map(str::trim_end).find(|l| {
        let name = l.split(':').next().unwrap_or("");
        l.len() > name.len()
            && name.len() > "Error".len()
            && name.starts_with(|c: char| c.is_ascii_uppercase())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            && (name.ends_with("Error") || name.ends_with("Exception"))
    })
}

/// The exception a Python traceback in `s` ends with (`KeyError: 'x'`).
pub(crate) fn traceback_exception(s: &str) -> Option<&str> {
    let at = s.find("Traceback (most recent call last)")?;
    s[at..]
        .lines()
        .rev()
        .map(str::trim_end)
        // Not indented, and not the markup a harness wraps output in.
        .find(|l| !l.is_empty() && !l.starts_with(char::is_whitespace) && !l.starts_with('<'))
        .filter(|l| !l.starts_with("Traceback"))
}

/// True when a tool's output reports a failure although no status said so:
/// a JSON object with an error, `success: false`, `isError: true` or a
/// status member saying error or failure, a Python traceback, or a line
/// that starts with "Error:".
pub(crate) fn output_reads_as_failure(out: &str) -> bool {
    let t = out.trim_start();
    if t.starts_with('{') {
        // Scanned in place, not built into a map: outputs are often whole
        // model responses, and only a few top-level members matter.
        let mut members = Vec::new();
        if json_scan::object_members(t, &mut members).is_ok() {
            return object_reads_as_failure(&members);
        }
    }
    out.contains("Traceback (most recent call last)")
        || out.lines().any(|l| {
            let l = l.trim_start();
            l.starts_with("Error:") || l.starts_with("ERROR:") || l.starts_with("Exception:")
        })
}

/// Whether an object's members say it failed: a truthy `error`, `success`
/// false, `isError` true, or a status naming failure. Of duplicate keys the
/// last counts, as in a parsed map.
fn object_reads_as_failure(members: &[(json_scan::Value<'_>, json_scan::Value<'_>)]) -> bool {
    use json_scan::Value;
    let says_failure = |key: &str, v: &Value<'_>| match key {
        "error" => match v {
            Value::Null | Value::Bool(false) => false,
            Value::String { raw, .. } => raw.len() > 2,
            Value::Object(raw) => !raw[1..raw.len() - 1].trim().is_empty(),
            _ => true,
        },
        "success" => *v == Value::Bool(false),
        "isError" | "is_error" => *v == Value::Bool(true),
        key => is_status_key(key) && v.as_str().is_some_and(|s| names_failure(&s)),
    };
    members.iter().enumerate().any(|(i, (k, v))| {
        let Some(key) = k.as_str() else { return false };
        says_failure(&key, v)
            && !members[i + 1..]
                .iter()
                .any(|(later, _)| later.as_str().as_deref() == Some(&*key))
    })
}

/// A member that holds the call's own status: `status`, or
/// `response_status`, `result_status`, `tool_status` or `call_status` (or
/// camelCase). Not any `*_status`: a lookup that returns an order whose
/// `payment_status` is "failed" has not failed itself.
fn is_status_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase().replace('_', "");
    [
        "status",
        "responsestatus",
        "resultstatus",
        "toolstatus",
        "callstatus",
    ]
    .contains(&key.as_str())
}

/// A status value that says the call failed.
fn names_failure(status: &str) -> bool {
    ["error", "failed", "failure"]
        .iter()
        .any(|f| status.eq_ignore_ascii_case(f))
}

/// Substring match; a needle of digits must stand alone ("429" is not in
/// "order 14290").
fn contains_token(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    if !needle.bytes().all(|b| b.is_ascii_digit()) {
        return hay.contains(needle);
    }
    let h = hay.as_bytes();
    hay.match_indices(needle).any(|(i, _)| {
        let before = i == 0 || !h[i - 1].is_ascii_alphanumeric();
        let end = i + needle.len();
        let after = end >= h.len() || !h[end].is_ascii_alphanumeric();
        before && after
    })
}

/// Tools that end an episode (`finish`, `submit`, `attempt_completion`, …):
/// the agent's way of saying it is done, so no result is owed to them.
/// Names agent frameworks give the tool an agent calls to end its episode
/// (SWE-agent `submit`, Terminus `mark_task_complete`, Cline and Roo
/// `attempt_completion`, OpenHands `finish`, AutoGen `terminate`).
const NAMES: &[&str] = &[
    "finish",
    "final_answer",
    "submit",
    "submit_answer",
    "submit_solution",
    "task_complete",
    "mark_task_complete",
    "complete_task",
    "attempt_completion",
    "done",
    "terminate",
    "end_task",
    "stop",
];

/// Whether `name` is a tool that ends an episode by its name: one of the
/// common names, compared without case, `-` or a namespace prefix
/// (`functions.submit`, `tools__finish`).
pub(crate) fn is_terminal_name(name: &str) -> bool {
    let base = name
        .rsplit(['.', '/', ':'])
        .next()
        .unwrap_or(name)
        .rsplit("__")
        .next()
        .unwrap_or(name);
    let base = base.trim().to_ascii_lowercase().replace('-', "_");
    NAMES.contains(&base.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_action_the_harness_refused_is_the_agents_invalid_output() {
        let c = Classifier::default()
            .classify(
                Some(HARNESS_REFUSAL),
                Some("Your proposed edit has introduced new syntax error(s)."),
            )
            .unwrap();
        assert_eq!(
            (c.classification.as_str(), c.cause.as_str()),
            ("agent_error", "invalid_output")
        );
    }

    #[test]
    fn a_test_runners_colours_are_no_part_of_its_failing_line() {
        let out = "\u{1b}[1m===== test session starts =====\u{1b}[0m\nx.py F\n\
                   FAILED x.py::test_y - assert 1 == 2\n\u{1b}[31m1 failed\u{1b}[0m";
        assert_eq!(failure_line(out), "FAILED x.py::test_y - assert 1 == 2");
        assert_eq!(
            without_ansi("\u{1b}[1;31mred\u{1b}[0m and plain"),
            "red and plain"
        );
        assert_eq!(without_ansi("plain"), "plain");
        // A traceback's exception still comes first.
        let both = "FAILED a\nTraceback (most recent call last):\n  x\nKeyError: 'k'";
        assert_eq!(failure_line(both), "KeyError: 'k'");
    }

    #[test]
    fn episode_ending_tools_by_name() {
        for name in [
            "finish",
            "mark_task_complete",
            "Submit",
            "attempt-completion",
            "functions.task_complete",
            "mcp__agent__finish",
        ] {
            assert!(is_terminal_name(name), "{name}");
        }
        for name in ["finish_line_check", "bash", "submit_form_field", "search"] {
            assert!(!is_terminal_name(name), "{name}");
        }
    }

    #[test]
    fn an_error_in_a_log_that_was_read_is_no_failure() {
        let tb = "Traceback (most recent call last):\n  File \"app.py\"\nKeyError: 'port'";
        let read = |tool: &str, cmd: &str| {
            let mut ev = EventOut::new("e", "r", 0, "a", tool, true);
            ev.action_taken.tool_input = Some(JsonVal::Serde(serde_json::json!({"cmd": cmd})));
            ev.output = Some(tb.to_string());
            Classifier::default().infer_failure(&mut ev);
            ev.action_succeeded
        };
        assert!(read("bash", "journalctl -u app"));
        assert!(read("bash", "sudo tail -n 50 /var/log/app.log"));
        assert!(read("bash", "docker logs app"));
        assert!(
            !read("bash", "python app.py"),
            "running it and crashing fails"
        );
    }

    #[test]
    fn a_tracebacks_failure_line_is_its_exception() {
        let tb = "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    f()\nKeyError: 'x'\n";
        assert_eq!(failure_line(tb), "KeyError: 'x'");
        assert_eq!(
            failure_line("warming up\nError: disk full\n"),
            "Error: disk full"
        );
        assert_eq!(failure_line("\nno such file\n"), "no such file");
        assert_eq!(failure_line("ERROR:\nInvalid `path`.\n"), "Invalid `path`.");
        // Python reports a syntax error without a traceback heading; a
        // terminal's bracketed-paste codes around it are not text.
        let syntax = "\u{1b}[?2004l  File \"<string>\", line 1\n    print(1\n         ^\nSyntaxError: '(' was never closed\n\u{1b}[?2004h";
        assert_eq!(failure_line(syntax), "SyntaxError: '(' was never closed");
        // Not any line that ends its first word in "Error".
        assert_eq!(
            failure_line("Error: cannot connect\nMeanSquaredError: 0.93\nError: giving up\n"),
            "Error: cannot connect"
        );
        let mut ev = EventOut::new("e", "r", 0, "a", "python", true);
        ev.output = Some(format!("running\n{tb}"));
        Classifier::default().infer_failure(&mut ev);
        assert_eq!(ev.error.unwrap().message.as_deref(), Some("KeyError: 'x'"));
    }

    fn cause(t: Option<&str>, m: &str) -> Option<String> {
        Classifier::default().classify(t, Some(m)).map(|c| c.cause)
    }

    #[test]
    fn builtin_rules_name_common_causes() {
        assert_eq!(
            cause(Some("RateLimitError"), "Error code: 429").as_deref(),
            Some("rate_limit")
        );
        assert_eq!(
            cause(None, "Request timed out after 30s").as_deref(),
            Some("timeout")
        );
        assert_eq!(
            cause(None, "Unknown tool: web_serch").as_deref(),
            Some("unknown_tool")
        );
        assert_eq!(
            cause(Some("ValidationError"), "missing required field 'city'").as_deref(),
            Some("bad_tool_arguments")
        );
        assert_eq!(
            cause(None, "This model's maximum context length is 8192").as_deref(),
            Some("context_overflow")
        );
        assert_eq!(
            cause(None, "503 Service Unavailable").as_deref(),
            Some("provider_error")
        );
        assert_eq!(
            cause(None, "Recursion limit of 25 reached").as_deref(),
            Some("loop_exhausted")
        );
    }

    #[test]
    fn soft_failures_in_output() {
        assert!(output_reads_as_failure(r#"{"error": "not found"}"#));
        assert!(output_reads_as_failure(r#"{"success": false, "data": 1}"#));
        assert!(output_reads_as_failure(r#"{"isError": true}"#));
        assert!(output_reads_as_failure(
            "Traceback (most recent call last):\n  File x"
        ));
        assert!(output_reads_as_failure("Error: flight not found"));
        assert!(!output_reads_as_failure(r#"{"error": null, "result": 3}"#));
        assert!(!output_reads_as_failure("The error rate fell to 2%."));
        assert!(!output_reads_as_failure(r#"{"success": true}"#));
        // The last of duplicate keys counts; nested members do not.
        assert!(!output_reads_as_failure(r#"{"error": "x", "error": ""}"#));
        assert!(output_reads_as_failure(
            r#"{"status": "ok", "status": "FAILED"}"#
        ));
        assert!(!output_reads_as_failure(
            r#"{"error": {}, "data": {"error": "x"}}"#
        ));
        assert!(output_reads_as_failure(r#"{"error": [], "result": 3}"#));
        // A status member named after what the tool returns (a Langfuse
        // export's tool observation).
        assert!(output_reads_as_failure(
            r#"{"response_status":"Error","message":"ERROR: No data found"}"#
        ));
        assert!(output_reads_as_failure(r#"{"resultStatus": "FAILURE"}"#));
        assert!(!output_reads_as_failure(r#"{"response_status": "OK"}"#));
        assert!(!output_reads_as_failure(
            r#"{"error_count": 0, "status": "done"}"#
        ));
        // Data about something else, not the call's status.
        assert!(!output_reads_as_failure(
            r#"{"order_id": "1", "payment_status": "failed"}"#
        ));
    }

    #[test]
    fn numbers_inside_words_do_not_match() {
        assert_eq!(cause(None, "order 14290 was rejected"), None);
        assert_eq!(cause(None, "something odd happened"), None);
    }

    #[test]
    fn user_rules_come_first() {
        let mut user = BTreeMap::new();
        user.insert(
            "coordination_failure".to_string(),
            vec!["Handoff Lost".to_string()],
        );
        let c = Classifier::new(&user);
        let got = c.classify(None, Some("timeout: handoff lost")).unwrap();
        assert_eq!(got.classification, "coordination_failure");
        let got = c.classify(None, Some("timeout")).unwrap();
        assert_eq!(got.classification, "environment_constraint");
    }

    /// The reading of an output object as it was written before the
    /// scanner: through a parsed map.
    fn parsed_reads_as_failure(t: &str) -> bool {
        let Value::Object(m) = serde_json::from_str(t).unwrap() else {
            unreachable!()
        };
        let truthy = |k: &str| match m.get(k) {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Object(o)) => !o.is_empty(),
            Some(_) => true,
        };
        let is = |k: &str, v: &Value| m.get(k) == Some(v);
        truthy("error")
            || is("success", &Value::Bool(false))
            || is("isError", &Value::Bool(true))
            || is("is_error", &Value::Bool(true))
            || m.iter()
                .any(|(k, v)| is_status_key(k) && v.as_str().is_some_and(names_failure))
    }

    proptest::proptest! {
        #[test]
        fn scanned_objects_read_as_parsed_ones(
            members in proptest::collection::vec((0..7usize, 0..11usize), 0..6)
        ) {
            const KEYS: [&str; 7] =
                ["error", "success", "isError", "is_error", "Tool_Status", "status", "x"];
            const VALUES: [&str; 11] = [
                "null", "true", "false", "\"\"", "\"failed\"", "\"ok\"", "{}", "{ }",
                "{\"a\": 1}", "[]", "0",
            ];
            let body: Vec<String> = members
                .iter()
                .map(|(k, v)| format!("\"{}\": {}", KEYS[*k], VALUES[*v]))
                .collect();
            let text = format!("{{{}}}", body.join(", "));
            proptest::prop_assert_eq!(
                output_reads_as_failure(&text),
                parsed_reads_as_failure(&text),
                "{}",
                text
            );
        }
    }
}
