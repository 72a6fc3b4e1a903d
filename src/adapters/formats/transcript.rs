//! Chat transcripts, whatever API wrote the messages (the `openai-chat` and
//! `anthropic-messages` formats): the envelopes a conversation is kept in,
//! and a conversation's events. A message's words are one event, each tool
//! call one event whose result (paired by id, else by position) decides its
//! success; the run's outcome is the verdict the envelope records.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::Path;

use serde_json::{Value, json};

use crate::adapters::read::code_reply;
use crate::adapters::read::message::openai;
use crate::adapters::read::message::{Message, Part};
use crate::adapters::read::shape::Shape;

use crate::adapters::read::tree::unique_id;
use crate::adapters::read::value::{decoded, describe, set_texts, str_of, text_of};
use crate::adapters::sink::Sink;
use crate::classify::mark_inferred;
use crate::record::{ErrorInfo, EventOut, FailureSource, JsonVal, OutcomeReason, RunRec, Src};

/// What a message without a tool call is, as an action.
const MESSAGE: &str = "message";

/// One conversation of an input, with what its envelope says.
pub(crate) struct Conversation {
    pub id: Option<String>,
    pub task: Option<String>,
    /// What the envelope states of the run (its id filled in later).
    pub verdict: Option<RunRec>,
    /// Each message with the line it was read from.
    pub messages: Vec<(u64, Value)>,
}

impl Conversation {
    pub(crate) fn bare(line: u64, messages: Vec<Value>) -> Self {
        let messages = messages.into_iter().map(|m| (line, m)).collect();
        Conversation {
            id: None,
            task: None,
            verdict: None,
            messages,
        }
    }
}

/// Reads chat transcripts from `r` into `sink`: per conversation its
/// events, then its `run` record. Messages that stand alone (one per line)
/// make one conversation.
pub(crate) fn read(r: impl Read + Send, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let mut conversations = Vec::new();
    // Messages standing alone, one conversation per session they name.
    let mut loose: Vec<Conversation> = Vec::new();
    crate::adapters::read::lines::values(r, sink, |line, value, sink| {
        let mut reasons = Vec::new();
        match value {
            Ok(v) => take(v, line, &mut conversations, &mut loose, &mut reasons),
            Err(reason) => reasons.push(reason.to_string()),
        }
        for reason in reasons {
            sink.skip(Some(line), &reason)?;
        }
        Ok(())
    })?;
    conversations.extend(loose);
    emit_all(&conversations, sink)
}

/// Writes each conversation's events, then its `run` record; a
/// conversation without an id is named by the input's file (and its
/// place, when the input holds several).
pub(crate) fn emit_all(conversations: &[Conversation], sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let stem = run_stem(sink.path());
    let stem = sink.claim_stem(stem);
    let single = conversations.len() == 1;
    let mut used = HashSet::new();
    for (k, conv) in conversations.iter().enumerate() {
        let run = match (&conv.id, single) {
            (Some(id), _) => id.clone(),
            (None, true) => stem.clone(),
            (None, false) => format!("{stem}#{}", k + 1),
        };
        emit_conversation(conv, run, &mut used, sink)?;
    }
    Ok(())
}

/// What names the runs of an input without ids of their own: the file's
/// stem, or the key of a document read from a file of named ones
/// (`cases.json#case_a`).
fn run_stem(path: &str) -> String {
    let name = Path::new(path)
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or(path);
    let (file, key) = match name.split_once('#') {
        Some((file, key)) => (file, Some(key)),
        None => (name, None),
    };
    let stem = Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.starts_with('<') && !s.is_empty())
        .unwrap_or("transcript");
    // A case's key names it within its file: two files' cases of one
    // name stay two runs.
    match key {
        Some(key) => format!("{stem}#{key}"),
        None => stem.to_string(),
    }
}

/// Sorts one JSON value of the input: a conversation in an envelope, a
/// list of messages or of conversations, or a message standing alone.
fn take(
    v: Value,
    line: u64,
    out: &mut Vec<Conversation>,
    loose: &mut Vec<Conversation>,
    reasons: &mut Vec<String>,
) {
    match v {
        Value::Array(items) if items.iter().any(is_envelope) => {
            for (i, item) in items.into_iter().enumerate() {
                match item {
                    Value::Object(_) if is_envelope(&item) => out.push(envelope(item, line)),
                    other => reasons.push(format!(
                        "[{i}]: expected a conversation with \"messages\", got {}",
                        describe(&other)
                    )),
                }
            }
        }
        Value::Array(items) if items.iter().any(openai::is_message) => {
            out.push(Conversation::bare(line, items));
        }
        Value::Array(items) if items.is_empty() => reasons.push("an empty list".to_string()),
        v if is_envelope(&v) => out.push(envelope(v, line)),
        v if openai::is_message(&v) => session(loose, None, line).messages.push((line, v)),
        v if is_session_line(&v) => {
            let id = ["sessionId", "session_id"]
                .iter()
                .find_map(|k| str_of(v.get(*k)));
            match unwrap_session_line(v) {
                SessionLine::Message(m) => session(loose, id, line).messages.push((line, m)),
                SessionLine::Failed => {
                    session(loose, id, line).verdict =
                        Some(RunRec::failed(String::new(), OutcomeReason::Error));
                }
                SessionLine::Other => {}
            }
        }
        v => reasons.push(format!(
            "not a chat transcript: {} without \"messages\"",
            describe(&v)
        )),
    }
}

/// The conversation of loose messages of session `id`, begun at `line` if new.
fn session(loose: &mut Vec<Conversation>, id: Option<String>, line: u64) -> &mut Conversation {
    match loose.iter().position(|c| c.id == id) {
        Some(i) => &mut loose[i],
        None => {
            let mut conv = Conversation::bare(line, Vec::new());
            conv.id = id;
            loose.push(conv);
            loose.last_mut().expect("just pushed")
        }
    }
}

/// A line of an agent's session log, as Claude Code writes its
/// transcripts and the Claude Agent SDK streams them (`stream-json`): a
/// `type` and the session's id, with the API message under `message`, or
/// the session's own records (`system`, `summary`, `result`).
fn is_session_line(v: &Value) -> bool {
    v.get("type").is_some_and(Value::is_string)
        && (["sessionId", "session_id"]
            .iter()
            .any(|k| v.get(*k).is_some())
            || v.get("message").is_some_and(openai::is_message)
            || v.get("leafUuid").is_some()
            || v.get("isSnapshotUpdate").is_some())
}

enum SessionLine {
    Message(Value),
    /// The session's result says it ended in an error.
    Failed,
    /// A record of the session that is no step.
    Other,
}

fn unwrap_session_line(mut v: Value) -> SessionLine {
    let message = v
        .get_mut("message")
        .map(Value::take)
        .filter(openai::is_message);
    if let Some(mut m) = message {
        if let Some(obj) = m.as_object_mut() {
            // The line's time, and a sub-agent's messages named as its own.
            if let Some(t) = v
                .get("timestamp")
                .filter(|_| !obj.contains_key("timestamp"))
            {
                obj.insert("timestamp".to_string(), t.clone());
            }
            let sidechain = v.get("isSidechain").and_then(Value::as_bool) == Some(true)
                || v.get("parent_tool_use_id").is_some_and(Value::is_string);
            if sidechain && !obj.contains_key("name") {
                obj.insert("name".to_string(), Value::from("subagent"));
            }
            // Claude Code's own words in the user's place (a hook's
            // feedback, a command's caveat) are the harness instructing
            // the agent, as a system prompt does, not a turn of the user.
            if v.get("isMeta").and_then(Value::as_bool) == Some(true)
                && obj.get("role").and_then(Value::as_str) == Some("user")
            {
                obj.insert("role".to_string(), Value::from("system"));
            }
        }
        return SessionLine::Message(m);
    }
    // The Agent SDK's last line: `subtype` "success", or "error_…" with
    // `is_error`. Success there means the loop ended, not that the task
    // was done, so only an error is a verdict.
    let is_result = v.get("type").and_then(Value::as_str) == Some("result");
    let error = v.get("is_error").and_then(Value::as_bool) == Some(true)
        || v.get("subtype")
            .and_then(Value::as_str)
            .is_some_and(|s| s.starts_with("error"));
    if is_result && error {
        SessionLine::Failed
    } else {
        SessionLine::Other
    }
}

/// The keys a conversation's messages are kept under: most envelopes'
/// `messages`, and the `chat_history` of AG2's `ChatResult`.
const MESSAGE_LISTS: &[&str] = &["messages", "chat_history"];

fn is_envelope(v: &Value) -> bool {
    MESSAGE_LISTS
        .iter()
        .any(|k| v.get(*k).is_some_and(Value::is_array))
}

/// A conversation kept with other keys: its id, task and verdict.
fn envelope(mut v: Value, line: u64) -> Conversation {
    let key = MESSAGE_LISTS
        .iter()
        .find(|k| v.get(**k).is_some_and(Value::is_array));
    let messages = match key.and_then(|k| v.get_mut(*k)).map(Value::take) {
        Some(Value::Array(m)) => m.into_iter().map(|m| (line, m)).collect(),
        _ => Vec::new(),
    };
    let id = ["run_id", "oid", "id", "session_id", "conversation_id"]
        .iter()
        .find_map(|k| str_of(v.get(*k)));
    let task = ["task", "instruction", "question", "prompt", "input"]
        .iter()
        .find_map(|k| v.get(*k).and_then(task_text));
    Conversation {
        id,
        task,
        verdict: verdict(&v),
        messages,
    }
}

/// The text of a task: a string, or the instruction of a task object.
fn task_text(v: &Value) -> Option<String> {
    match v {
        Value::String(_) => str_of(Some(v)),
        Value::Object(_) => ["instruction", "description", "question", "prompt"]
            .iter()
            .find_map(|k| str_of(v.get(*k))),
        _ => None,
    }
}

/// The verdict an envelope records on its run: a reward or score (1 is a
/// pass, below it a failure, as τ-bench scores), a boolean, or scores by
/// name (a pass when every one passes).
fn verdict(v: &Value) -> Option<RunRec> {
    const KEYS: &[&str] = &[
        "reward",
        "gold_score",
        "score",
        "is_correct",
        "correct",
        "success",
        "resolved",
        "passed",
    ];
    if let Some((found, score)) = KEYS.iter().find_map(|k| v.get(*k).and_then(pass)) {
        return Some(match score {
            Some(r) => RunRec::scored(String::new(), r),
            None => RunRec::judged(String::new(), found),
        });
    }
    // A run whose own status says it errored (Agno's `RunOutput`); one
    // that completed says nothing of whether it did the task.
    if let Some(status) = v.get("status").and_then(Value::as_str)
        && matches!(
            status.to_ascii_lowercase().as_str(),
            "error" | "errored" | "failed" | "failure"
        )
    {
        return Some(RunRec::failed(String::new(), OutcomeReason::Error));
    }
    let scores = v.get("scores")?.as_object()?;
    let each: Vec<bool> = scores.values().filter_map(pass).map(|p| p.0).collect();
    (!each.is_empty()).then(|| RunRec::judged(String::new(), each.iter().all(|p| *p)))
}

/// Whether one recorded score is a pass: a boolean, or a number on τ-bench's
/// scale (1 passes, 0 to 1 fails); other numbers say nothing. With the
/// number, when it was one.
fn pass(v: &Value) -> Option<(bool, Option<f64>)> {
    match v {
        Value::Bool(b) => Some((*b, None)),
        Value::Number(n) => n
            .as_f64()
            .filter(|r| (0.0..=1.0).contains(r))
            .map(|r| (r >= 1.0 - 1e-9, Some(r))),
        Value::Object(o) => o.get("value").and_then(pass),
        _ => None,
    }
}

/// Where each tool call and result stands: (message, part) positions.
type At = (usize, usize);

/// Which result answers which call: by the call's id, else (a result
/// without one) the oldest call still waiting.
struct Pairs {
    /// By call position: its result's position.
    result_of: HashMap<At, At>,
    /// Results that answer no call.
    orphans: HashSet<At>,
}

impl Pairs {
    fn of(messages: &[Option<Message>]) -> Self {
        let mut waiting: Vec<(At, Option<&str>)> = Vec::new();
        let mut pairs = Pairs {
            result_of: HashMap::new(),
            orphans: HashSet::new(),
        };
        for (m, msg) in messages.iter().enumerate() {
            let Some(msg) = msg else { continue };
            for (p, part) in msg.parts.iter().enumerate() {
                match part {
                    Part::Call { id, .. } => waiting.push(((m, p), id.as_deref())),
                    Part::Result { id, .. } => {
                        let found = match id.as_deref() {
                            Some(id) => waiting.iter().position(|(_, c)| *c == Some(id)),
                            None if waiting.is_empty() => None,
                            None => Some(0),
                        };
                        match found {
                            Some(i) => {
                                pairs.result_of.insert(waiting.remove(i).0, (m, p));
                            }
                            None => {
                                pairs.orphans.insert((m, p));
                            }
                        }
                    }
                    Part::Text(_) => {}
                }
            }
        }
        pairs
    }

    fn result(&self, call: At) -> Option<At> {
        self.result_of.get(&call).copied()
    }
}

fn emit_conversation(
    conv: &Conversation,
    run: String,
    used: &mut HashSet<String>,
    sink: &mut Sink<'_>,
) -> anyhow::Result<()> {
    let mut messages = Vec::with_capacity(conv.messages.len());
    for (i, (line, v)) in conv.messages.iter().enumerate() {
        let mut msg = openai::message(v);
        for what in msg
            .as_mut()
            .map(|m| std::mem::take(&mut m.unread))
            .unwrap_or_default()
        {
            sink.not_read(&what);
        }
        if msg.is_none() {
            sink.skip(
                Some(*line),
                format!(
                    "{run}: messages[{i}]: expected a message, got {}",
                    describe(v)
                ),
            )?;
        }
        messages.push(msg);
    }
    let pairs = Pairs::of(&messages);
    // Tool activity after each message: a call with none after it ends the
    // transcript rather than waiting for a result.
    let last_activity = messages.iter().rposition(|m| {
        m.as_ref().is_some_and(|m| {
            m.parts
                .iter()
                .any(|p| matches!(p, Part::Call { .. } | Part::Result { .. }))
        })
    });
    let mut events: Vec<EventOut<'static>> = Vec::new();
    let mut task = conv.task.clone();
    // A log whose every message names its speaker (a multi-agent chat, as
    // AG2 keeps one) states the task in its first message, whatever role
    // the log gives it: AG2's history calls the starting agent's own
    // messages the assistant's.
    let named = messages
        .iter()
        .flatten()
        .filter(|m| !matches!(m.role.as_str(), "system" | "developer") && !texts(m).is_empty())
        .all(|m| m.name.is_some())
        && messages.iter().flatten().any(|m| m.name.is_some());
    let mut last_words: Option<String> = None;
    let mut reasoning: Option<String> = None;
    let mut last_caller = None;
    let mut policy: Option<String> = None;
    for (turn, msg) in messages.iter().enumerate() {
        let Some(msg) = msg else { continue };
        if matches!(msg.role.as_str(), "system" | "developer") {
            // The prompt, not a step of the run: the rules the agent was
            // given, which explain's policy detectors read.
            let prompt = texts(msg);
            if !prompt.is_empty() {
                policy
                    .get_or_insert_with(String::new)
                    .push_str(&prompt.join("\n"));
            }
            continue;
        }
        let agent = msg.name.clone().unwrap_or_else(|| msg.role.clone());
        let first = events.len();
        let text = texts(msg);
        if !text.is_empty() {
            let text = text.join("\n");
            if (msg.role == "user" || named) && task.is_none() {
                task = Some(text.clone());
            }
            if code_reply::is_reply(&text) {
                // An executor's reply: the output of the code the message
                // before it handed over, whoever the log says spoke.
                let mut ev = new_event(
                    format!("{run}#{turn}"),
                    &run,
                    turn,
                    &agent,
                    code_reply::CODE_TOOL,
                );
                ev.span_kind = Some("tool");
                let code = last_words.as_deref().and_then(code_reply::last_code_block);
                set_texts(&mut ev, code, Some(&text), &sink.settings);
                code_reply::mark_exit_status(&mut ev, &text);
                events.push(ev);
            } else {
                let mut ev = new_event(format!("{run}#{turn}"), &run, turn, &agent, MESSAGE);
                ev.span_kind = Some(MESSAGE);
                set_texts(&mut ev, None, Some(&text), &sink.settings);
                events.push(ev);
            }
            last_words = Some(text);
        }
        for (p, part) in msg.parts.iter().enumerate() {
            match part {
                Part::Call { name, args, .. } => {
                    last_caller = Some(agent.clone());
                    let result = pairs
                        .result((turn, p))
                        .and_then(|(m, q)| messages[m].as_ref().map(|msg| &msg.parts[q]));
                    let ends = last_activity == Some(turn);
                    let ev = call_event(
                        (&run, turn, p),
                        &agent,
                        name,
                        args.as_ref(),
                        result,
                        ends,
                        sink,
                    );
                    events.push(ev);
                }
                Part::Result { .. } if pairs.orphans.contains(&(turn, p)) => {
                    let by = last_caller.clone().unwrap_or_else(|| agent.clone());
                    events.push(orphan_event((&run, turn, p), &by, part, sink));
                }
                _ => {}
            }
        }
        let reasoning_now = reasoning.take().into_iter().chain(msg.reasoning.clone());
        let reasoning_now: Vec<String> = reasoning_now.collect();
        if events.len() == first {
            // Thinking with nothing said or done yet: it belongs to what follows.
            reasoning = (!reasoning_now.is_empty()).then(|| reasoning_now.join("\n"));
            continue;
        }
        let head = &mut events[first];
        if !reasoning_now.is_empty() {
            let (kept, _) = sink.settings.text(&reasoning_now.join("\n"));
            head.message_context = Some(JsonVal::Serde(json!({ "reasoning": kept })));
        }
        head.usage = msg.usage.clone().map(JsonVal::Serde);
        for ev in &mut events[first..] {
            ev.set_time_nanos(msg.timestamp);
            ev.src = Some(Src {
                path: sink.path().to_string().into(),
                line: conv.messages[turn].0,
            });
        }
    }
    for ev in &mut events {
        ev.event_id = unique_id(&ev.event_id, used.len(), used).into();
        sink.settings.infer_failure(ev);
    }
    let last_failed = events
        .iter()
        .rev()
        .find(|e| e.agent_id != "user")
        .is_some_and(|e| !e.action_succeeded);
    let stated = conv.verdict.clone().unwrap_or_else(|| {
        RunRec::ended(String::new(), last_failed.then_some(OutcomeReason::Error))
    });
    for ev in &events {
        sink.emit_event(ev)?;
    }
    sink.emit_run(&RunRec {
        run_id: run,
        task,
        policy,
        ..stated
    })?;
    Ok(())
}

/// A message's non-blank text parts.
fn texts(msg: &Message) -> Vec<&str> {
    msg.parts
        .iter()
        .filter_map(|p| match p {
            Part::Text(t) if !t.trim().is_empty() => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn new_event(id: String, run: &str, turn: usize, agent: &str, tool: &str) -> EventOut<'static> {
    EventOut::new(
        id,
        run.to_string(),
        turn as i64,
        agent.to_string(),
        tool.to_string(),
        true,
    )
}

/// The event of one tool call: its arguments, and the result that answers
/// it as output. A result marked an error fails it; a call never answered
/// fails it unless it ends the episode (by its name, or by ending the
/// transcript).
fn call_event(
    (run, turn, p): (&str, usize, usize),
    agent: &str,
    name: &str,
    args: Option<&Value>,
    result: Option<&Part>,
    ends: bool,
    sink: &Sink<'_>,
) -> EventOut<'static> {
    let mut ev = new_event(format!("{run}#{turn}.{p}"), run, turn, agent, name);
    ev.span_kind = Some("tool");
    let args = args.map(|a| decoded(a).into_owned());
    ev.action_taken.tool_input = args.clone().filter(Value::is_object).map(JsonVal::Serde);
    let input = args.as_ref().and_then(text_of);
    match result {
        Some(Part::Result {
            content, is_error, ..
        }) => {
            set_texts(
                &mut ev,
                input.as_deref(),
                content.as_deref(),
                &sink.settings,
            );
            if *is_error {
                fail_stated(&mut ev, content.as_deref());
            } else if let Some(exception) = content
                .as_deref()
                .and_then(crate::classify::traceback_exception)
            {
                fail_raised(&mut ev, exception);
            }
        }
        _ => {
            set_texts(&mut ev, input.as_deref(), None, &sink.settings);
            if !ends && !crate::classify::is_terminal_name(name) {
                mark_inferred(
                    &mut ev,
                    FailureSource::NoResult,
                    "the tool call never got a result",
                );
            }
        }
    }
    ev
}

/// A result that answers no call (a harness reporting back to the agent):
/// kept, and failed when it says it is an error.
fn orphan_event(
    (run, turn, p): (&str, usize, usize),
    agent: &str,
    part: &Part,
    sink: &Sink<'_>,
) -> EventOut<'static> {
    let Part::Result {
        name,
        content,
        is_error,
        ..
    } = part
    else {
        unreachable!("only results are orphans")
    };
    let tool = name.as_deref().unwrap_or("tool_result");
    let mut ev = new_event(format!("{run}#{turn}.{p}"), run, turn, agent, tool);
    ev.span_kind = Some("tool");
    set_texts(&mut ev, None, content.as_deref(), &sink.settings);
    if *is_error {
        fail_stated(&mut ev, content.as_deref());
    } else if let Some(exception) = content
        .as_deref()
        .and_then(crate::classify::traceback_exception)
    {
        fail_raised(&mut ev, exception);
    }
    ev
}

/// Fails an event whose tool raised `exception`.
fn fail_raised(ev: &mut EventOut<'_>, exception: &str) {
    ev.action_succeeded = false;
    ev.failure_source = Some(FailureSource::Exception);
    let (kind, _) = exception.split_once(':').unwrap_or((exception, ""));
    let kind = kind.trim();
    let is_name = !kind.is_empty()
        && kind
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    ev.error = Some(ErrorInfo {
        kind: is_name.then(|| kind.to_string()),
        message: Some(exception.chars().take(200).collect()),
    });
}

/// Fails an event whose result says it is an error.
fn fail_stated(ev: &mut EventOut<'_>, content: Option<&str>) {
    ev.action_succeeded = false;
    ev.failure_source = Some(FailureSource::Error);
    // The line that says what failed: a traceback's exception, an error
    // line, else the first.
    let line = content
        .map(crate::classify::failure_line)
        .filter(|l| !l.trim().is_empty());
    ev.error = Some(ErrorInfo {
        kind: None,
        message: line.or_else(|| Some("the tool reported an error".to_string())),
    });
}

/// A chat transcript: a conversation in an envelope (`messages`), or
/// messages (or Responses items) in a list or one per line, or the lines
/// of a Claude Code transcript or an Agent SDK stream (a typed record of
/// a session, the API message under `message`).
pub(crate) fn is_transcript(shape: &Shape<'_>) -> bool {
    // Claude Code names the session in camelCase on every line, whatever
    // the line's type (a queued prompt, a snapshot, a message).
    let session_log = !shape.top_is_list
        && shape.has("type")
        && (shape.has("sessionId")
            || ((shape.has("message") || shape.has("subtype")) && shape.has("session_id"))
            || shape.has("isSnapshotUpdate"));
    shape.has("messages")
        || (shape.has("chat_history") && shape.has("summary"))
        || (shape.has("role") && (shape.has("content") || shape.has("tool_calls")))
        || (shape.has("type") && (shape.has("call_id") || shape.has("summary")))
        || session_log
}

#[cfg(test)]
mod tests;
