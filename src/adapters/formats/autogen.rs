//! The `autogen` format: AutoGen AgentChat runs (autogen-agentchat 0.4 and
//! later, Magentic-One included), as its own dumps write them: a
//! `TaskResult` (`result.model_dump_json()`: the messages and the reason
//! the team stopped), the messages `run_stream` yields, one per line
//! (`message.model_dump_json()`, often ending with the `TaskResult`), a
//! list of messages, or a team's saved state (`team.save_state()`), whose
//! manager keeps the chat. Each message becomes transcript messages spoken
//! by its `source`: words, tool calls and their results (paired by call
//! id; `is_error` fails the call), code an agent generated and ran (a
//! `code_execution` call whose exit code decides). A run stopped by one of
//! the library's limits (messages, turns, rounds, tokens, time) failed;
//! any other stop (a termination word, a handoff) leaves its outcome
//! unknown, since no agent's word about its own work is a verdict.

use std::collections::{HashMap, HashSet};
use std::io::Read;

use serde_json::{Value, json};

use crate::adapters::formats::Format;
use crate::adapters::formats::transcript::{self, Conversation};
use crate::adapters::read::code_reply::{CODE_TOOL, last_code_block};
use crate::adapters::read::shape::Shape;
use crate::adapters::read::value::{describe, str_of, text_of};
use crate::adapters::sink::Sink;
use crate::record::{OutcomeReason, RunRec};

/// The `autogen` row of the format table.
pub(crate) const FORMAT: Format = Format {
    name: "autogen",
    help: "AutoGen AgentChat runs: a TaskResult, run_stream's messages one per line, or a team's saved state.",
    claims: Some(claims),
    read: |r, _, sink| read(r, sink),
};

/// What the library's messages all carry beside `source` and `type`.
const MESSAGE_KEYS: &[&str] = &["source", "type", "models_usage"];

/// The keys a message dump opens with, before a content that may be too
/// long for detection to see past (a page, an image).
const MESSAGE_HEAD: &[&str] = &["source", "models_usage"];

/// A TaskResult, a team's state, or a message (alone or first of a list).
fn claims(shape: &Shape<'_>) -> bool {
    let message = MESSAGE_HEAD.iter().all(|k| shape.has(k));
    if shape.top_is_list {
        return message;
    }
    // A TaskResult's stop reason follows its messages: a long run hides it.
    message
        || (shape.has("messages")
            && (shape.has("stop_reason") || shape.cut)
            && shape.mentions("\"models_usage\""))
        || (shape.has("agent_states") && shape.mentions("\"TeamState\""))
}

/// The ids triage gives the calls the library pairs by position: code a
/// generation event hands to the execution event after it, and memory
/// queries.
#[derive(Default)]
struct CallIds {
    code: usize,
    memory: usize,
}

/// What the library's termination conditions say when a limit, not the
/// team, ended the run. Conditions that fire together are joined in one
/// reason.
const LIMITS: &[&str] = &[
    "Maximum number of messages",
    "Maximum number of turns",
    "Max rounds reached",
    "Token usage limit reached",
    "Timeout of ",
];

/// What they say when the team ended the run itself (a word, a handoff, a
/// stop message): with a limit in the same reason, the team still ended it.
const TEAM_ENDS: &[&str] = &[
    "mentioned",
    "Handoff to",
    "Stop message received",
    "External termination",
    "Function '",
];

/// Reads AutoGen runs from `r` into `sink`.
pub(crate) fn read(r: impl Read + Send, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let mut runs: Vec<Conversation> = Vec::new();
    // Messages of a stream not yet closed by its TaskResult.
    let mut stream: Vec<(u64, Value)> = Vec::new();
    crate::adapters::read::lines::values(r, sink, |line, value, sink| {
        let v = match value {
            Ok(v) => v,
            Err(reason) => return sink.skip(Some(line), &reason),
        };
        if is_message(&v) {
            stream.push((line, v));
            return Ok(());
        }
        let (messages, stop) = match &v {
            Value::Array(items) if items.iter().all(is_message) && !items.is_empty() => {
                (items.as_slice(), None)
            }
            Value::Object(_) if v.get("messages").is_some_and(Value::is_array) => (
                v["messages"].as_array().map_or(&[][..], Vec::as_slice),
                str_of(v.get("stop_reason")),
            ),
            Value::Object(_) if v.get("agent_states").is_some() => match thread_of(&v) {
                Some(thread) => (thread, None),
                None => {
                    return sink.skip(Some(line), "a team state with no agent's message thread");
                }
            },
            other => {
                let reason = format!(
                    "not an AutoGen run: {} that is no message, TaskResult or team state",
                    describe(other)
                );
                return sink.skip(Some(line), &reason);
            }
        };
        // A stream's closing TaskResult holds the messages it streamed:
        // the streamed ones are the run, on the lines they were streamed on.
        if let Some(first) = closes(messages, &stream) {
            let earlier: Vec<(u64, Value)> = stream.drain(..first).collect();
            if !earlier.is_empty() {
                runs.push(conversation(earlier, None, sink));
            }
            runs.push(conversation(std::mem::take(&mut stream), stop, sink));
            return Ok(());
        }
        if !messages.is_empty() && messages.iter().all(is_hollow) {
            return sink.skip(Some(line), HOLLOW);
        }
        if !stream.is_empty() {
            runs.push(conversation(std::mem::take(&mut stream), None, sink));
        }
        let lines = messages.iter().map(|m| (line, m.clone())).collect();
        runs.push(conversation(lines, stop, sink));
        Ok(())
    })?;
    if !stream.is_empty() {
        runs.push(conversation(stream, None, sink));
    }
    transcript::emit_all(&runs, sink)
}

/// Why a TaskResult whose messages kept only their common fields is read
/// as nothing.
const HOLLOW: &str = "a TaskResult whose messages keep no type or content (autogen-agentchat 0.5 \
     writes them so with TaskResult.model_dump_json()): save each message with its own \
     model_dump_json() or dump() instead";

/// A message dumped as its base class: its source, no type, no content.
fn is_hollow(m: &Value) -> bool {
    m.get("source").is_some() && m.get("type").is_none()
}

/// Where in the open `stream` the run a TaskResult's `messages` hold
/// begins, when every one of them was streamed, in order: the same id, or
/// (releases before 0.7 write none) the same source, type and content, or
/// the same source alone for a message dumped hollow. Matched from the
/// end: the TaskResult closes the latest run, not an earlier one like it.
fn closes(messages: &[Value], stream: &[(u64, Value)]) -> Option<usize> {
    let same = |a: &Value, b: &Value| match (id_of(a), id_of(b)) {
        (Some(x), Some(y)) => x == y,
        _ => {
            a.get("source") == b.get("source")
                && (is_hollow(a)
                    || (a.get("type") == b.get("type") && a.get("content") == b.get("content")))
        }
    };
    let mut end = stream.len();
    for m in messages.iter().rev() {
        end = stream[..end].iter().rposition(|(_, s)| same(m, s))?;
    }
    (!messages.is_empty()).then_some(end)
}

/// A message's own id (0.7 on).
fn id_of(m: &Value) -> Option<&str> {
    m.get("id").and_then(Value::as_str)
}

/// Whether `v` is one of the library's messages or events.
fn is_message(v: &Value) -> bool {
    MESSAGE_KEYS.iter().all(|k| v.get(*k).is_some()) && v.get("type").is_some_and(Value::is_string)
}

/// The chat a saved team keeps: the message thread of its manager (the
/// agent state that has one).
fn thread_of(state: &Value) -> Option<&[Value]> {
    state
        .get("agent_states")?
        .as_object()?
        .values()
        .find_map(|s| s.get("message_thread")?.as_array())
        .map(Vec::as_slice)
}

/// One run: its messages as a transcript, and what its stop reason says
/// (none where the input records none: a stream cut before its
/// TaskResult, a saved state).
fn conversation(
    messages: Vec<(u64, Value)>,
    stop: Option<String>,
    sink: &mut Sink<'_>,
) -> Conversation {
    let mut conv = Conversation::bare(1, Vec::new());
    // Calls answered by an execution event: a summary of them repeats it.
    let answered: HashSet<String> = messages
        .iter()
        .filter(|(_, m)| type_of(m) == "ToolCallExecutionEvent")
        .flat_map(|(_, m)| items(m.get("content")))
        .filter_map(|r| str_of(r.get("call_id")))
        .collect();
    let executors = executors(&messages);
    let mut ids = CallIds::default();
    let mut last_words: Option<String> = None;
    for (i, (line, m)) in messages.iter().enumerate() {
        let previous = i.checked_sub(1).map(|p| &messages[p].1);
        let source = str_of(m.get("source")).unwrap_or_default();
        let text = content_text(m.get("content")).unwrap_or_default();
        if executors.contains(&source) && type_of(m) == "TextMessage" && !text.starts_with(NO_CODE)
        {
            // An executor's reply is the output of the code it was handed.
            ids.code += 1;
            let id = format!("code-{}", ids.code);
            let code = last_words.as_deref().and_then(last_code_block);
            let call = function_call(&id, CODE_TOOL, json!({"code": code}));
            conv.messages
                .push((*line, calls_message(&source, vec![call])));
            // An output that reads as an error fails by itself, with its
            // exception named; a bare exit status fails it here.
            let failed = stated_exit(&text).is_some_and(|code| code != 0)
                && !crate::classify::output_reads_as_failure(&text);
            conv.messages
                .push((*line, call_output(Some(id), text, failed)));
            continue;
        }
        if is_chat(m) {
            last_words = Some(text);
        }
        for out in transcript_messages(m, previous, &answered, &mut ids, sink) {
            conv.messages.push((*line, out));
        }
    }
    conv.task = messages
        .iter()
        .find(|(_, m)| str_of(m.get("source")).as_deref() == Some("user"))
        .and_then(|(_, m)| content_text(m.get("content")));
    conv.verdict = Some(match &stop {
        Some(r)
            if LIMITS.iter().any(|l| r.contains(l)) && !TEAM_ENDS.iter().any(|e| r.contains(e)) =>
        {
            let mut run = RunRec::failed(String::new(), OutcomeReason::Timeout);
            run.message = Some(crate::classify::failure_line(r));
            run
        }
        _ => RunRec::ended(String::new(), None),
    });
    conv
}

/// Words of an agent's name that say it runs code.
const EXECUTOR_WORDS: &[&str] = &["executor", "terminal", "computer", "interpreter"];

/// How the library's code executor agent opens a reply that is no output.
const EXECUTOR_REPLIES: &[&str] = &["The script ran", NO_CODE];

/// The library's executor's answer to a message without code: words, and
/// the one reply of an executor that answers no code block.
const NO_CODE: &str = "No code blocks found in the thread";

/// Where the library's executor states the exit status of code that failed
/// or printed nothing ("POSIX exit code: 1", "POSIX exit code was: 2").
const EXIT_STATUS: &str = "POSIX exit code";

/// The exit code an executor's reply states, if it states one.
fn stated_exit(text: &str) -> Option<i64> {
    let (_, rest) = text.split_once(EXIT_STATUS)?;
    let digits: String = rest
        .trim_start_matches(|c: char| !c.is_ascii_digit() && c != '\n')
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The agents that run code others wrote: each of their messages answers
/// another agent's message carrying a code block, none carries code or
/// calls a tool itself, and the agent is named as one (an executor, a
/// terminal) or answers as the library's executor does. Their replies are
/// the code's output, not words.
fn executors(messages: &[(u64, Value)]) -> HashSet<String> {
    let mut candidates: HashMap<String, (bool, bool)> = HashMap::new();
    let mut previous: Option<(String, bool)> = None;
    for (_, m) in messages {
        let source = str_of(m.get("source")).unwrap_or_default();
        let kind = type_of(m);
        if kind.ends_with("Event")
            && kind != "ToolCallRequestEvent"
            && kind != "CodeGenerationEvent"
        {
            continue;
        }
        let text = content_text(m.get("content")).unwrap_or_default();
        let has_code = text.contains("```");
        if source != "user" {
            let entry = candidates.entry(source.clone()).or_insert((true, false));
            let answers_code = previous
                .as_ref()
                .is_some_and(|(by, code)| *code && *by != source);
            let no_code = text.starts_with(NO_CODE);
            entry.0 &= kind == "TextMessage" && (answers_code || no_code) && !has_code;
            entry.1 |= EXECUTOR_REPLIES.iter().any(|r| text.starts_with(r));
        }
        previous = Some((source, has_code));
    }
    candidates
        .into_iter()
        .filter(|(name, (answers, replies_as_one))| {
            let name = name.to_ascii_lowercase();
            *answers && (*replies_as_one || EXECUTOR_WORDS.iter().any(|w| name.contains(w)))
        })
        .map(|(name, _)| name)
        .collect()
}

/// Whether `m` is a chat message (words), not an event.
fn is_chat(m: &Value) -> bool {
    !type_of(m).ends_with("Event")
}

/// A message's type: `TextMessage`, `ToolCallRequestEvent`…
fn type_of(m: &Value) -> &str {
    m.get("type").and_then(Value::as_str).unwrap_or("")
}

/// The items of a list, none for anything else.
fn items(v: Option<&Value>) -> &[Value] {
    v.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// The text of a message's content: a string, a multimodal list (its
/// strings, an image as "[image]") or a structured object (as JSON).
fn content_text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::Array(parts) => {
            let texts: Vec<String> = parts
                .iter()
                .map(|p| {
                    text_of(p)
                        .filter(|_| p.is_string())
                        .unwrap_or_else(|| "[image]".into())
                })
                .collect();
            Some(texts.join("\n")).filter(|t| !t.trim().is_empty())
        }
        Value::Object(_) => v.map(Value::to_string),
        other => text_of(other),
    }
}

/// A chat message of `source` making `calls`.
fn calls_message(source: &str, calls: Vec<Value>) -> Value {
    json!({"role": "assistant", "name": source, "tool_calls": calls})
}

/// One call of a chat message, for an id triage gave it.
fn function_call(id: &str, name: &str, args: Value) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
}

/// A call's result as a Responses output item, which can say it failed.
fn call_output(call_id: Option<String>, output: String, failed: bool) -> Value {
    let mut out = json!({"type": "function_call_output", "call_id": call_id, "output": output});
    if failed {
        out["status"] = "failed".into();
    }
    out
}

/// One message of the library as transcript messages (chat messages and
/// Responses call outputs, which carry a call's failure).
fn transcript_messages(
    m: &Value,
    previous: Option<&Value>,
    answered: &HashSet<String>,
    ids: &mut CallIds,
    sink: &mut Sink<'_>,
) -> Vec<Value> {
    let source = str_of(m.get("source")).unwrap_or_else(|| "assistant".into());
    let said = |text: Option<String>| -> Vec<Value> {
        let Some(text) = text else { return Vec::new() };
        let role = if source == "user" {
            "user"
        } else {
            "assistant"
        };
        vec![json!({"role": role, "name": source, "content": text})]
    };
    let calls = |calls: &[Value]| -> Value {
        let calls: Vec<Value> = calls
            .iter()
            .map(|c| {
                json!({"id": c.get("id"), "type": "function",
                       "function": {"name": c.get("name"), "arguments": c.get("arguments")}})
            })
            .collect();
        calls_message(&source, calls)
    };
    let results = |rs: &[Value]| -> Vec<Value> {
        rs.iter()
            .map(|r| {
                let failed = r.get("is_error").and_then(Value::as_bool) == Some(true);
                let output = content_text(r.get("content")).unwrap_or_default();
                call_output(str_of(r.get("call_id")), output, failed)
            })
            .collect()
    };
    match type_of(m) {
        "TextMessage" | "StopMessage" | "HandoffMessage" | "MultiModalMessage"
        | "StructuredMessage" => said(content_text(m.get("content"))),
        kind @ ("ToolCallRequestEvent" | "ToolCallExecutionEvent")
            if !m.get("content").is_some_and(Value::is_array) =>
        {
            sink.not_read(&format!("a {kind} whose content is no list"));
            Vec::new()
        }
        "ToolCallRequestEvent" => vec![calls(items(m.get("content")))],
        "ToolCallExecutionEvent" => results(items(m.get("content"))),
        "ToolCallSummaryMessage" => {
            let calls_of = items(m.get("tool_calls"));
            let ids: Vec<Option<String>> = items(m.get("results"))
                .iter()
                .map(|r| str_of(r.get("call_id")))
                .collect();
            let repeats = if ids.is_empty() {
                // Releases before 0.7 keep only the summary's text, right
                // after the execution event it sums up.
                previous.is_some_and(|p| {
                    type_of(p) == "ToolCallExecutionEvent" && p.get("source") == m.get("source")
                })
            } else {
                ids.iter()
                    .all(|id| id.as_ref().is_some_and(|id| answered.contains(id)))
            };
            if repeats {
                // The execution event before it said this already.
                return Vec::new();
            }
            if calls_of.is_empty() {
                return said(content_text(m.get("content")));
            }
            let mut out = vec![calls(calls_of)];
            out.extend(results(items(m.get("results"))));
            out
        }
        "ThoughtEvent" => {
            let thought = content_text(m.get("content"));
            vec![json!({"role": "assistant", "name": source, "reasoning_content": thought})]
        }
        "CodeGenerationEvent" => {
            let blocks = items(m.get("code_blocks"));
            if blocks.is_empty() {
                return said(content_text(m.get("content")));
            }
            ids.code += 1;
            let code: Vec<String> = blocks
                .iter()
                .filter_map(|b| str_of(b.get("code")))
                .collect();
            let language = blocks.first().and_then(|b| str_of(b.get("language")));
            let args = json!({"language": language, "code": code.join("\n")});
            let call = function_call(&format!("code-{}", ids.code), CODE_TOOL, args);
            vec![calls_message(&source, vec![call])]
        }
        "CodeExecutionEvent" => {
            let exit = m.pointer("/result/exit_code").and_then(Value::as_i64);
            let output = str_of(m.pointer("/result/output")).unwrap_or_default();
            let id = (ids.code > 0).then(|| format!("code-{}", ids.code));
            vec![call_output(id, output, exit.is_some_and(|c| c != 0))]
        }
        "MemoryQueryEvent" => {
            ids.memory += 1;
            let id = format!("memory-{}", ids.memory);
            let found: Vec<String> = items(m.get("content"))
                .iter()
                .filter_map(|c| content_text(c.get("content")))
                .collect();
            let call = function_call(&id, "memory_query", Value::Null);
            vec![
                calls_message(&source, vec![call]),
                call_output(Some(id), found.join("\n"), false),
            ]
        }
        // The team's routing (the next message names its speaker), a
        // request for a person's input, and chunks of a message that
        // follows whole: no step.
        "SelectSpeakerEvent"
        | "SelectorEvent"
        | "UserInputRequestedEvent"
        | "ModelClientStreamingChunkEvent" => Vec::new(),
        other => {
            sink.not_read(&format!("a message of type \"{other}\""));
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::split_records;

    fn msg(kind: &str, source: &str, content: Value) -> Value {
        json!({"id": format!("{kind}-{source}-{content}"), "source": source, "models_usage": null,
               "metadata": {}, "created_at": "2026-12-07T10:00:00Z", "content": content, "type": kind})
    }

    fn call(id: &str, name: &str) -> Value {
        json!({"id": id, "name": name, "arguments": "{\"q\": \"x\"}"})
    }

    fn ran(id: &str, name: &str, out: &str, failed: bool) -> Value {
        json!({"call_id": id, "name": name, "content": out, "is_error": failed})
    }

    fn task_result(messages: Vec<Value>, stop: &str) -> String {
        json!({"messages": messages, "stop_reason": stop}).to_string()
    }

    fn steps(events: &[Value]) -> Vec<(String, String, bool)> {
        events
            .iter()
            .map(|e| {
                (
                    e["agent_id"].as_str().unwrap().to_string(),
                    e["action_taken"]["tool_name"].as_str().unwrap().to_string(),
                    e["action_succeeded"].as_bool().unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn a_task_result_is_one_run_its_failed_tool_call_a_failed_step() {
        let doc = task_result(
            vec![
                msg("TextMessage", "user", json!("Find the population.")),
                msg(
                    "ToolCallRequestEvent",
                    "surfer",
                    json!([call("c1", "visit_page")]),
                ),
                msg(
                    "ToolCallExecutionEvent",
                    "surfer",
                    json!([ran("c1", "visit_page", "404 Not Found", true)]),
                ),
                json!({"id": "s", "source": "surfer", "models_usage": null, "type": "ToolCallSummaryMessage",
                       "content": "404 Not Found", "tool_calls": [call("c1", "visit_page")],
                       "results": [ran("c1", "visit_page", "404 Not Found", true)]}),
                msg("TextMessage", "orchestrator", json!("It is 58,662.")),
            ],
            "Text 'TERMINATE' mentioned",
        );
        assert_eq!(
            crate::adapters::detect(None, doc.as_bytes()).name,
            "autogen"
        );
        let (events, runs, _) = split_records(FORMAT, "result.json", &doc);
        assert_eq!(
            steps(&events),
            [
                ("user".into(), "message".into(), true),
                ("surfer".into(), "visit_page".into(), false),
                ("orchestrator".into(), "message".into(), true),
            ],
            "the summary repeats the execution event and is no step of its own"
        );
        assert_eq!(runs.len(), 1);
        assert_eq!(
            runs[0]["outcome"], "unknown",
            "a termination word is no verdict"
        );
        assert_eq!(runs[0]["task"], "Find the population.");
    }

    #[test]
    fn a_limit_fails_the_run_in_the_library_s_words_and_other_stops_do_not() {
        let m = vec![
            msg("TextMessage", "user", json!("go")),
            msg("TextMessage", "a", json!("ok")),
        ];
        for (stop, outcome) in [
            (
                "Maximum number of messages 4 reached, current message count: 4",
                "failed",
            ),
            ("Max rounds reached.", "failed"),
            ("Handoff to user from agent detected.", "unknown"),
            (
                "The agent reached the maximum number of messages it wanted",
                "unknown",
            ),
        ] {
            let (_, runs, _) = split_records(FORMAT, "r.json", &task_result(m.clone(), stop));
            assert_eq!(runs[0]["outcome"], outcome, "{stop}");
            if outcome == "failed" {
                assert_eq!(runs[0]["reason"], "timeout");
                assert_eq!(runs[0]["message"], stop);
            }
        }
    }

    #[test]
    fn a_stream_closed_by_its_task_result_is_one_run_and_an_open_one_is_kept() {
        let a = msg("TextMessage", "user", json!("go"));
        let b = msg("SelectSpeakerEvent", "manager", json!(["coder"]));
        let c = msg("TextMessage", "coder", json!("done"));
        let closed = [
            a.to_string(),
            b.to_string(),
            c.to_string(),
            task_result(vec![a.clone(), b, c.clone()], "Max rounds reached."),
        ]
        .join("\n");
        let (events, runs, _) = split_records(FORMAT, "s.ndjson", &closed);
        assert_eq!(runs.len(), 1, "{runs:?}");
        assert_eq!(events.len(), 2, "the speaker selection is no step");
        let open = [a.to_string(), c.to_string()].join("\n");
        let (events, runs, _) = split_records(FORMAT, "s.ndjson", &open);
        assert_eq!((events.len(), runs.len()), (2, 1));
        assert_eq!(runs[0]["outcome"], "unknown");
    }

    #[test]
    fn generated_code_is_a_call_its_exit_code_deciding() {
        let generated = |code: &str| {
            json!({"id": code, "source": "coder", "models_usage": null, "type": "CodeGenerationEvent",
                   "retry_attempt": 0, "content": format!("```python\n{code}\n```"),
                   "code_blocks": [{"code": code, "language": "python"}]})
        };
        let exec = |exit: i64| {
            json!({"id": format!("x{exit}"), "source": "coder", "models_usage": null, "type": "CodeExecutionEvent",
                   "retry_attempt": 0, "result": {"exit_code": exit, "output": "out"}})
        };
        let doc = serde_json::to_string(&vec![generated("1/0"), exec(1), generated("1"), exec(0)])
            .unwrap();
        assert_eq!(
            crate::adapters::detect(None, doc.as_bytes()).name,
            "autogen"
        );
        let (events, _, _) = split_records(FORMAT, "c.json", &doc);
        assert_eq!(
            steps(&events),
            [
                ("coder".into(), CODE_TOOL.into(), false),
                ("coder".into(), CODE_TOOL.into(), true),
            ]
        );
    }

    #[test]
    fn an_executor_s_reply_is_the_output_of_the_code_it_was_handed_and_a_reviewer_s_is_words() {
        let code = "Here it is:\n```python\nprint(open('t.json').read())\n```";
        let doc = task_result(
            vec![
                msg("TextMessage", "user", json!("Print t.json.")),
                msg("TextMessage", "coder", json!(code)),
                msg(
                    "TextMessage",
                    "code_executor",
                    json!("Traceback (most recent call last):\nFileNotFoundError: t.json"),
                ),
                msg("TextMessage", "coder", json!(code)),
                msg(
                    "TextMessage",
                    "reviewer",
                    json!("The code does not check that the file exists."),
                ),
            ],
            "x",
        );
        let (events, _, _) = split_records(FORMAT, "r.json", &doc);
        let steps = steps(&events);
        assert_eq!(steps[2], ("code_executor".into(), CODE_TOOL.into(), false));
        assert_eq!(
            events[2]["input"],
            "{\"code\":\"print(open('t.json').read())\\n\"}"
        );
        assert_eq!(
            steps[4],
            ("reviewer".into(), "message".into(), true),
            "a reviewer is not named as an executor nor answers as one"
        );
    }

    #[test]
    fn without_ids_a_task_result_closes_the_stream_that_said_the_same() {
        let m = |kind: &str, source: &str, content: &str| json!({"source": source, "models_usage": null, "type": kind, "content": content});
        let earlier = m("TextMessage", "user", "an earlier run");
        let run = [
            m("TextMessage", "user", "go"),
            m("TextMessage", "a", "done"),
        ];
        let result = json!({"messages": run, "stop_reason": "Max rounds reached."});
        let lines: Vec<String> = [earlier, run[0].clone(), run[1].clone(), result]
            .iter()
            .map(Value::to_string)
            .collect();
        let (events, runs, _) = split_records(FORMAT, "s.ndjson", &lines.join("\n"));
        assert_eq!(runs.len(), 2, "the earlier message stays a run of its own");
        // The same run streamed twice: the TaskResult closes the second.
        let twice: Vec<String> = [
            &run[0],
            &run[1],
            &run[0],
            &run[1],
            &json!({"messages": run, "stop_reason": "Max rounds reached."}),
        ]
        .iter()
        .map(|v| v.to_string())
        .collect();
        let (_, twice_runs, _) = split_records(FORMAT, "s.ndjson", &twice.join("\n"));
        assert_eq!(
            twice_runs
                .iter()
                .map(|r| r["outcome"].as_str().unwrap())
                .collect::<Vec<_>>(),
            ["unknown", "failed"]
        );
        assert_eq!(events.len(), 3);
        assert_eq!(runs[1]["outcome"], "failed");
        // Hollow messages (source only) close a stream by their sources.
        let hollow = json!({"messages": [{"source": "user", "models_usage": null},
                                         {"source": "a", "models_usage": null}],
                            "stop_reason": "Max rounds reached."});
        let lines = [run[0].to_string(), run[1].to_string(), hollow.to_string()];
        let (events, runs, _) = split_records(FORMAT, "s.ndjson", &lines.join("\n"));
        assert_eq!((events.len(), runs.len()), (2, 1));
        assert_eq!(runs[0]["outcome"], "failed");
        // Alone, they are nothing to read.
        let (events, runs, source) = split_records(FORMAT, "r.json", &hollow.to_string());
        assert_eq!((events.len(), runs.len()), (0, 0));
        assert_eq!(source["skipped"], 1);
    }

    #[test]
    fn a_summary_of_the_results_just_read_is_no_step_in_releases_that_keep_only_its_text() {
        let doc = json!({"messages": [
            {"source": "user", "models_usage": null, "type": "TextMessage", "content": "go"},
            {"source": "s", "models_usage": null, "type": "ToolCallRequestEvent",
             "content": [{"id": "c1", "name": "visit_page", "arguments": "{}"}]},
            {"source": "s", "models_usage": null, "type": "ToolCallExecutionEvent",
             "content": [{"call_id": "c1", "content": "Error: 404 Not Found"}]},
            {"source": "s", "models_usage": null, "type": "ToolCallSummaryMessage",
             "content": "Error: 404 Not Found"}], "stop_reason": null})
        .to_string();
        let (events, _, _) = split_records(FORMAT, "r.json", &doc);
        assert_eq!(
            steps(&events),
            [
                ("user".into(), "message".into(), true),
                ("s".into(), "visit_page".into(), false),
            ]
        );
    }

    #[test]
    fn a_run_longer_than_detection_sees_is_still_detected() {
        let page = "x".repeat(100_000);
        let doc = task_result(
            vec![
                msg("TextMessage", "user", json!(page)),
                msg("TextMessage", "a", json!("done")),
            ],
            "x",
        );
        assert_eq!(
            crate::adapters::detect(None, doc.as_bytes()).name,
            "autogen"
        );
        let line = msg("TextMessage", "user", json!(page)).to_string();
        assert_eq!(
            crate::adapters::detect(None, line.as_bytes()).name,
            "autogen"
        );
    }

    #[test]
    fn a_limit_and_the_team_s_own_end_in_one_reason_leave_the_outcome_to_the_team() {
        let m = vec![msg("TextMessage", "user", json!("go"))];
        for (stop, outcome) in [
            (
                "Text 'TERMINATE' mentioned, Maximum number of messages 4 reached, current message count: 4",
                "unknown",
            ),
            (
                "Maximum number of messages 4 reached, current message count: 4, Text 'TERMINATE' mentioned",
                "unknown",
            ),
            (
                "Token usage limit reached, total token count: 9000, Timeout of 60 seconds reached",
                "failed",
            ),
        ] {
            let (_, runs, _) = split_records(FORMAT, "r.json", &task_result(m.clone(), stop));
            assert_eq!(runs[0]["outcome"], outcome, "{stop}");
        }
    }

    #[test]
    fn an_executor_s_stated_exit_code_decides_and_its_no_code_answer_is_words() {
        let code = "```python\nprint(1)\n```";
        let doc = task_result(
            vec![
                msg("TextMessage", "user", json!("Print one.")),
                msg(
                    "TextMessage",
                    "code_executor",
                    json!(
                        "No code blocks found in the thread. Please provide at least one markdown-encoded code block to execute."
                    ),
                ),
                msg("TextMessage", "coder", json!(code)),
                msg(
                    "TextMessage",
                    "code_executor",
                    json!(
                        "The script ran but produced no output to console. The POSIX exit code was: 2. If you were expecting output, consider revising the script."
                    ),
                ),
                msg("TextMessage", "coder", json!(code)),
                msg("TextMessage", "code_executor", json!("1")),
            ],
            "x",
        );
        let (events, _, _) = split_records(FORMAT, "r.json", &doc);
        let steps = steps(&events);
        assert_eq!(steps[1], ("code_executor".into(), "message".into(), true));
        assert_eq!(steps[3], ("code_executor".into(), CODE_TOOL.into(), false));
        assert_eq!(steps[5], ("code_executor".into(), CODE_TOOL.into(), true));
    }

    #[test]
    fn a_saved_team_is_read_from_its_manager_s_thread() {
        let doc = json!({"type": "TeamState", "version": "1.0.0", "agent_states": {
            "helper": {"type": "ChatAgentContainerState", "message_buffer": []},
            "RoundRobinGroupChatManager": {"type": "RoundRobinManagerState", "message_thread": [
                msg("TextMessage", "user", json!("hi")), msg("HandoffMessage", "helper", json!("over to you"))]}}})
        .to_string();
        assert_eq!(
            crate::adapters::detect(None, doc.as_bytes()).name,
            "autogen"
        );
        let (events, runs, _) = split_records(FORMAT, "state.json", &doc);
        assert_eq!(events.len(), 2);
        assert_eq!(runs[0]["outcome"], "unknown");
    }

    #[test]
    fn an_image_is_named_and_a_structured_reply_kept_as_json() {
        let doc = task_result(
            vec![
                msg(
                    "MultiModalMessage",
                    "user",
                    json!(["What is on this page?", {"data": "iVBOR"}]),
                ),
                msg(
                    "StructuredMessage",
                    "reader",
                    json!({"title": "Pricing", "price": 12}),
                ),
            ],
            "x",
        );
        let (events, runs, _) = split_records(FORMAT, "r.json", &doc);
        assert_eq!(runs[0]["task"], "What is on this page?\n[image]");
        assert_eq!(events[1]["output"], r#"{"title":"Pricing","price":12}"#);
    }
}
