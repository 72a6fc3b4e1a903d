//! The `inspect-ai` format: Inspect AI eval logs in its JSON log format
//! (`version`, `status`, `eval`, `samples` with `messages`, `events` and
//! `scores`). One run per sample (and epoch): a message's words are one
//! event, each tool call one event that its tool message's `error` fails;
//! an error that ended the sample fails the call it stopped in. The run's
//! outcome is the sample's score.

mod eval_file;

use std::collections::{HashMap, HashSet};
use std::io::Read;

use serde_json::Value;

use crate::adapters::formats::Format;
use crate::adapters::read::shape::Shape;
use crate::adapters::read::tree::unique_id;
use crate::adapters::read::value::{describe, nanos_of, set_texts, str_of, text_of};
use crate::adapters::sink::Sink;
use crate::record::{
    ErrorInfo, EventOut, FailureSource, JsonVal, Outcome, OutcomeReason, RunRec, Src,
};

/// Reads eval logs from `r` into `sink`: per sample its events, then its
/// `run` record.
pub(crate) fn read(r: impl Read + Send, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    crate::adapters::read::lines::values(r, sink, |line, value, sink| {
        let log = match value {
            Ok(v) => v,
            Err(reason) => {
                sink.skip(Some(line), &reason)?;
                return Ok(());
            }
        };
        let samples = match log.get("samples") {
            Some(Value::Array(samples)) if !samples.is_empty() => samples.as_slice(),
            // A log of an eval that stopped before any sample, or written
            // with `--no-log-samples`: the header alone holds no run.
            None | Some(Value::Null) | Some(Value::Array(_)) => {
                let status = str_of(log.get("status")).unwrap_or_else(|| "unknown".to_string());
                let reason = format!(
                    "an Inspect eval log without samples (status {status}: written with --no-log-samples, or stopped before any): no runs to read"
                );
                sink.skip(Some(line), &reason)?;
                return Ok(());
            }
            Some(other) => {
                let reason = format!("samples: expected a list, got {}", describe(other));
                sink.skip(Some(line), &reason)?;
                return Ok(());
            }
        };
        let eval = log.get("eval").cloned().unwrap_or(Value::Null);
        let mut used = HashSet::new();
        for sample in samples {
            if !sample.is_object() {
                let reason = format!("a sample: expected an object, got {}", describe(sample));
                sink.skip(Some(line), &reason)?;
                continue;
            }
            emit_sample(&eval, sample, line, &mut used, sink)?;
        }
        Ok(())
    })?;
    Ok(())
}

/// The run id of a sample: the task, the eval's id (unique per log) and
/// the sample id, with the epoch when there are several.
fn run_id(eval: &Value, sample: &Value) -> String {
    let task = str_of(eval.get("task")).unwrap_or_else(|| "eval".to_string());
    let eval_id = str_of(eval.get("eval_id"))
        .or_else(|| str_of(eval.get("run_id")))
        .unwrap_or_default();
    let id = str_of(sample.get("id")).unwrap_or_default();
    let epochs = eval
        .pointer("/config/epochs")
        .and_then(Value::as_u64)
        .unwrap_or(1);
    let mut run = format!("{task}/{eval_id}/{id}");
    if let Some(epoch) = sample.get("epoch").and_then(Value::as_u64)
        && (epochs > 1 || epoch > 1)
    {
        run.push_str(&format!("#{epoch}"));
    }
    run
}

fn emit_sample(
    eval: &Value,
    sample: &Value,
    line: u64,
    used: &mut HashSet<String>,
    sink: &mut Sink<'_>,
) -> anyhow::Result<()> {
    let run = run_id(eval, sample);
    let messages = sample
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let events = sample
        .get("events")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    // When things happened: tool calls by id, model outputs in order.
    let mut call_times: HashMap<String, Option<i128>> = HashMap::new();
    let mut model_times = Vec::new();
    for e in events {
        match e.get("event").and_then(Value::as_str) {
            Some("tool") => {
                if let Some(id) = str_of(e.get("id")) {
                    call_times.insert(id, nanos_of(e.get("timestamp")));
                }
            }
            Some("model") => model_times.push(nanos_of(e.get("timestamp"))),
            _ => {}
        }
    }
    let started = nanos_of(sample.get("started_at"));
    let src = Src {
        path: sink.path().to_string().into(),
        line,
    };
    let mut out: Vec<EventOut<'static>> = Vec::new();
    // Tool calls waiting for their tool message: (event index, call id).
    let mut pending: Vec<(usize, Option<String>)> = Vec::new();
    let mut assistant_turns = 0usize;
    let mut task = None;
    let mut policy = None;
    let new_event = |out: &Vec<EventOut<'static>>,
                     used: &mut HashSet<String>,
                     id: String,
                     agent: &str,
                     tool: String| {
        let id = unique_id(&id, out.len(), used);
        EventOut::new(
            id,
            run.clone(),
            out.len() as i64,
            agent.to_string(),
            tool,
            true,
        )
    };
    for (i, m) in messages.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        let text = m.get("content").and_then(text_of);
        let msg_id = str_of(m.get("id")).unwrap_or_else(|| format!("{run}#{i}"));
        match role {
            // The system prompt is the policy the agent was given.
            "system" => policy = policy.or(text),
            "user" => {
                task = task.or_else(|| text.clone());
                let mut ev = new_event(&out, used, msg_id, "user", "message".to_string());
                ev.span_kind = Some("message");
                set_texts(&mut ev, None, text.as_deref(), &sink.settings);
                ev.set_time_nanos(started);
                out.push(ev);
            }
            "assistant" => {
                let when = model_times.get(assistant_turns).copied().flatten();
                assistant_turns += 1;
                let calls = m
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .map_or(&[][..], Vec::as_slice);
                if text.is_some() || calls.is_empty() {
                    let mut ev = new_event(
                        &out,
                        used,
                        msg_id.clone(),
                        "assistant",
                        "message".to_string(),
                    );
                    ev.span_kind = Some("message");
                    set_texts(&mut ev, None, text.as_deref(), &sink.settings);
                    ev.set_time_nanos(when);
                    sink.settings.infer_failure(&mut ev);
                    out.push(ev);
                }
                for (k, call) in calls.iter().enumerate() {
                    let call_id = str_of(call.get("id"));
                    let name = str_of(call.get("function")).unwrap_or_else(|| "tool".to_string());
                    let id = call_id.clone().unwrap_or_else(|| format!("{msg_id}.{k}"));
                    let mut ev = new_event(&out, used, id, "assistant", name);
                    ev.span_kind = Some("tool");
                    let args = call
                        .get("arguments")
                        .map(|a| crate::adapters::read::value::decoded(a).into_owned());
                    ev.action_taken.tool_input =
                        args.clone().filter(Value::is_object).map(JsonVal::Serde);
                    set_texts(
                        &mut ev,
                        args.as_ref().and_then(text_of).as_deref(),
                        None,
                        &sink.settings,
                    );
                    let at = call_id
                        .as_ref()
                        .and_then(|c| call_times.get(c).copied().flatten());
                    ev.set_time_nanos(at.or(when));
                    pending.push((out.len(), call_id));
                    out.push(ev);
                }
            }
            "tool" => {
                let answers = str_of(m.get("tool_call_id"));
                let slot = match &answers {
                    Some(id) => pending.iter().position(|(_, c)| c.as_deref() == Some(id)),
                    None => None,
                }
                .or_else(|| (!pending.is_empty()).then_some(0));
                let k = match slot {
                    Some(slot) => pending.remove(slot).0,
                    None => {
                        // A tool's answer whose call the log does not
                        // hold (a trimmed or compacted history): the call
                        // is known by its answer alone.
                        let name = str_of(m.get("function")).unwrap_or_else(|| "tool".to_string());
                        let id = answers.clone().unwrap_or_else(|| msg_id.clone());
                        let mut ev = new_event(&out, used, id, "assistant", name);
                        ev.span_kind = Some("tool");
                        ev.set_time_nanos(
                            answers
                                .as_ref()
                                .and_then(|c| call_times.get(c).copied().flatten()),
                        );
                        out.push(ev);
                        out.len() - 1
                    }
                };
                let ev = &mut out[k];
                set_texts(
                    ev,
                    ev.input.clone().as_deref(),
                    text.as_deref(),
                    &sink.settings,
                );
                fail_with_tool_error(ev, m.get("error"));
                sink.settings.infer_failure(ev);
            }
            other => sink.not_read(&format!("a message of role \"{other}\"")),
        }
    }
    insert_subagent_calls(&mut out, events, messages, &run, used, &sink.settings);
    // An error that ended the sample: the call it stopped in, else the last
    // step, failed with it.
    let sample_error = sample.get("error").filter(|e| !e.is_null());
    if let Some(err) = sample_error {
        let message = str_of(err.get("message")).or_else(|| text_of(err));
        let at = pending
            .last()
            .map(|(k, _)| *k)
            .or_else(|| out.iter().rposition(|e| e.agent_id != "user"));
        if let Some(ev) = at.map(|k| &mut out[k]) {
            ev.action_succeeded = false;
            ev.failure_source = Some(FailureSource::Exception);
            ev.error = Some(ErrorInfo {
                kind: message.as_deref().and_then(exception_type),
                message,
            });
            sink.settings.infer_failure(ev);
        }
    }
    for ev in &mut out {
        ev.src = Some(src.clone());
    }
    let error_text = sample_error.and_then(|e| str_of(e.get("message")).or_else(|| text_of(e)));
    let mut stated = score_outcome(&run, sample).unwrap_or_else(|| {
        RunRec::ended(run.as_str(), sample_error.map(|_| OutcomeReason::Error))
            .saying(error_text.as_deref().unwrap_or_default())
    });
    // A limit (time, tokens, messages) that ended the sample is why it
    // failed, whatever the scorer made of what was left.
    if let Some(limit) = sample.get("limit").filter(|l| !l.is_null())
        && stated.outcome != Outcome::Succeeded
    {
        stated.outcome = Outcome::Failed;
        stated.reason = Some(OutcomeReason::Timeout);
        stated = stated.saying(&limit_text(limit));
    }
    for ev in &out {
        sink.emit_event(ev)?;
    }
    sink.emit_run(&RunRec {
        task_id: str_of(sample.get("id")).map(|id| {
            let name = str_of(eval.get("task")).unwrap_or_else(|| "eval".to_string());
            format!("{name}/{id}")
        }),
        trial: sample.get("epoch").and_then(Value::as_u64),
        task: task.or_else(|| sample.get("input").and_then(text_of)),
        expected: sample.get("target").and_then(text_of),
        policy,
        ..stated
    })?;
    Ok(())
}

/// `KeyError` of `KeyError('b')`: the exception type Python's repr names.
/// The tool calls of sub-agents (an agent a handoff started, its work in
/// an `agent` span within another's), which the sample's `messages` only
/// summarise as text: read from the `tool` events, each a step of the
/// sub-agent its span names, after the handoff call that started it (the
/// call whose event names that agent), else at the end.
fn insert_subagent_calls(
    out: &mut Vec<EventOut<'static>>,
    events: &[Value],
    messages: &[Value],
    run: &str,
    used: &mut HashSet<String>,
    settings: &crate::adapters::settings::DecodeSettings,
) {
    // Spans by id: (type, name, parent).
    let mut spans: HashMap<String, (String, String, Option<String>)> = HashMap::new();
    for e in events {
        if e.get("event").and_then(Value::as_str) == Some("span_begin")
            && let Some(id) = str_of(e.get("id"))
        {
            let text = |k| str_of(e.get(k)).unwrap_or_default();
            spans.insert(id, (text("type"), text("name"), str_of(e.get("parent_id"))));
        }
    }
    // The agent spans a span lies in, innermost first.
    let agents_of = |mut at: Option<String>| {
        let mut agents = Vec::new();
        while let Some(id) = at {
            let Some((kind, name, parent)) = spans.get(&id) else {
                break;
            };
            if kind == "agent" {
                agents.push(name.clone());
            }
            at = parent.clone();
        }
        agents
    };
    let called: HashSet<String> = messages
        .iter()
        .filter_map(|m| m.get("tool_calls").and_then(Value::as_array))
        .flatten()
        .filter_map(|c| str_of(c.get("id")))
        .collect();
    // The step after which each sub-agent's calls go: its handoff call.
    let mut after: HashMap<String, usize> = HashMap::new();
    for e in events
        .iter()
        .filter(|e| e.get("event").and_then(Value::as_str) == Some("tool"))
    {
        if let (Some(agent), Some(id)) = (str_of(e.get("agent")), str_of(e.get("id")))
            && let Some(k) = out.iter().position(|ev| *ev.event_id == *id)
        {
            after.entry(agent).or_insert(k);
        }
    }
    // The calls, each with the step it goes after.
    let mut calls: Vec<(usize, EventOut<'static>)> = Vec::new();
    for e in events
        .iter()
        .filter(|e| e.get("event").and_then(Value::as_str) == Some("tool"))
    {
        let Some(call_id) = str_of(e.get("id")).filter(|id| !called.contains(id)) else {
            continue;
        };
        let agents = agents_of(str_of(e.get("span_id")));
        // Only a sub-agent's: the outer agent's calls are its messages'.
        let [agent, _, ..] = agents.as_slice() else {
            continue;
        };
        let tool = str_of(e.get("function")).unwrap_or_else(|| "tool".to_string());
        let id = unique_id(&call_id, out.len(), used);
        let mut ev = EventOut::new(id, run.to_string(), 0, agent.clone(), tool, true);
        ev.span_kind = Some("tool");
        let args = e.get("arguments").filter(|a| !a.is_null());
        ev.action_taken.tool_input = args.filter(|a| a.is_object()).cloned().map(JsonVal::Serde);
        set_texts(
            &mut ev,
            args.and_then(text_of).as_deref(),
            e.get("result").and_then(text_of).as_deref(),
            settings,
        );
        ev.set_time_nanos(nanos_of(e.get("timestamp")));
        fail_with_tool_error(&mut ev, e.get("error"));
        settings.infer_failure(&mut ev);
        // After its handoff's step (and the calls before it), else last.
        let anchor = after.get(agent.as_str()).copied().unwrap_or(usize::MAX);
        calls.push((anchor, ev));
    }
    if calls.is_empty() {
        return;
    }
    // Stable: each anchor's calls keep their order.
    calls.sort_by_key(|(anchor, _)| *anchor);
    let mut calls = calls.into_iter().peekable();
    let steps = std::mem::take(out);
    for (k, step) in steps.into_iter().enumerate() {
        out.push(step);
        while let Some((_, call)) = calls.next_if(|(anchor, _)| *anchor == k) {
            out.push(call);
        }
    }
    out.extend(calls.map(|(_, call)| call));
    for (turn, ev) in out.iter_mut().enumerate() {
        ev.turn = turn as i64;
    }
}

/// Fails a tool call with the error Inspect recorded for it (a
/// `ToolError` sent back to the model, a parsing error), if any.
fn fail_with_tool_error(ev: &mut EventOut<'_>, error: Option<&Value>) {
    if let Some(err) = error.filter(|e| !e.is_null()) {
        ev.action_succeeded = false;
        ev.failure_source = Some(FailureSource::Error);
        ev.error = Some(ErrorInfo {
            kind: str_of(err.get("type")).filter(|t| t != "unknown"),
            message: str_of(err.get("message")).or_else(|| text_of(err)),
        });
    }
}

fn exception_type(message: &str) -> Option<String> {
    let name: String = message
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
        .collect();
    (!name.is_empty() && message[name.len()..].starts_with('(')).then_some(name)
}

/// The sample's verdict from its first score: Inspect's `C` (correct) is
/// success and `I`, `N` (no answer), `P` (partial) failure; a number is 1
/// for solved; a boolean says it; `correct`/`incorrect`, `pass`/`fail` and
/// the like too. A score of several values decides nothing.
fn score_outcome(run: &str, sample: &Value) -> Option<RunRec> {
    let scores = sample.get("scores")?.as_object()?;
    let value = scores
        .values()
        .find_map(|s| s.get("value"))
        .or_else(|| sample.pointer("/score/value"))?;
    match value {
        Value::Bool(b) => Some(RunRec::judged(run, *b)),
        Value::Number(n) => n.as_f64().map(|r| RunRec::scored(run, r)),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "c" | "correct" | "pass" | "passed" | "true" | "yes" | "success" => {
                Some(RunRec::judged(run, true))
            }
            "i" | "incorrect" | "fail" | "failed" | "false" | "no" => {
                Some(RunRec::judged(run, false))
            }
            "n" | "noanswer" => Some(RunRec::failed(run, OutcomeReason::NotSubmitted)),
            "p" | "partial" => Some(RunRec::failed(run, OutcomeReason::LowScore)),
            other => other.parse::<f64>().ok().map(|r| RunRec::scored(run, r)),
        },
        _ => None,
    }
}

/// Reads a log in either of Inspect's formats, told apart by its first
/// bytes: `.eval` is a zip.
fn read_log(r: Box<dyn Read + Send + '_>, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let mut r = r;
    let mut magic = Vec::with_capacity(4);
    r.by_ref().take(4).read_to_end(&mut magic)?;
    let zip = magic == eval_file::ZIP_MAGIC;
    let r = std::io::Cursor::new(magic).chain(r);
    if zip {
        eval_file::read(r, sink)
    } else {
        read(r, sink)
    }
}

/// An Inspect sample's limit in words: its `reason` (`Message limit
/// reached. count: 5; limit: 5`), else `message limit 5` from its type and
/// value.
fn limit_text(limit: &Value) -> String {
    if let Some(reason) = str_of(limit.get("reason")).filter(|r| !r.trim().is_empty()) {
        return reason;
    }
    let kind = str_of(limit.get("type")).unwrap_or_else(|| "a".to_string());
    match limit.get("limit").and_then(Value::as_f64) {
        Some(n) => format!("{kind} limit {n}"),
        None => format!("{kind} limit"),
    }
}

/// The `inspect-ai` row of the format table.
pub(crate) const FORMAT: Format = Format {
    name: "inspect-ai",
    help: "Inspect AI eval logs, `.eval` (its default, a zip) or its JSON log format: one run per sample.",
    claims: Some(claims),
    read: |r, _, sink| read_log(r, sink),
};

/// An Inspect AI eval log: a zip (`.eval`, no other format is one), or its
/// JSON log format, `eval` with the log's `version` and `status`.
fn claims(shape: &Shape<'_>) -> bool {
    shape.head.starts_with(&eval_file::ZIP_MAGIC)
        || (!shape.top_is_list && shape.has("eval") && shape.has("status") && shape.has("version"))
}

#[cfg(test)]
mod tests {

    use crate::adapters::split_records;
    use serde_json::{Value, json};

    fn records(input: &str) -> (Vec<Value>, Vec<Value>, Value) {
        split_records(
            crate::adapters::formats::inspect_ai::FORMAT,
            "log.json",
            input,
        )
    }

    /// Each event's agent, tool and whether it succeeded.
    fn steps(evs: &[Value]) -> Vec<(&str, &str, bool)> {
        evs.iter()
            .map(|e| {
                (
                    e["agent_id"].as_str().unwrap(),
                    e["action_taken"]["tool_name"].as_str().unwrap(),
                    e["action_succeeded"].as_bool().unwrap(),
                )
            })
            .collect()
    }

    fn log(samples: Value) -> String {
        json!({"version": 2, "status": "success",
               "eval": {"task": "t", "eval_id": "E1", "config": {}},
               "samples": samples})
        .to_string()
    }

    /// A sub-agent's calls are only in the sample's events, inside its
    /// agent span within the outer agent's: steps of it, after the handoff
    /// that started it; the outer agent's own calls are not read twice.
    #[test]
    fn a_subagents_calls_come_from_its_events_after_the_handoff() {
        let span = |id: &str, kind: &str, name: &str, parent: Option<&str>| json!({"event": "span_begin", "id": id, "type": kind, "name": name, "parent_id": parent});
        let input = log(json!([{"id": 1, "epoch": 1,
            "messages": [
                {"role": "user", "content": "count the lines"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "h1", "function": "transfer_to_counter", "arguments": {}}]},
                {"role": "tool", "tool_call_id": "h1", "content": "transferred"},
                {"role": "assistant", "content": "[counter] tool call for tool bash"},
                {"role": "assistant", "content": "3"}],
            "events": [
                span("s0", "agent", "boss", None),
                {"event": "tool", "id": "h1", "function": "transfer_to_counter", "span_id": "s0",
                 "agent": "counter"},
                span("s1", "handoff", "counter", Some("s0")),
                span("s2", "agent", "counter", Some("s1")),
                {"event": "tool", "id": "c1", "function": "bash", "span_id": "s2",
                 "arguments": {"cmd": "wc -l f"}, "result": "",
                 "error": {"type": "parsing", "message": "'command' is a required property"}},
                {"event": "tool", "id": "c2", "function": "bash", "span_id": "s2",
                 "arguments": {"command": "wc -l f"}, "result": "3 f"},
                {"event": "tool", "id": "b1", "function": "submit", "span_id": "s0",
                 "arguments": {"answer": "3"}, "result": "3"}]}]));
        let (evs, _, _) = records(&input);
        assert_eq!(
            steps(&evs),
            [
                ("user", "message", true),
                ("assistant", "transfer_to_counter", true),
                ("counter", "bash", false),
                ("counter", "bash", true),
                ("assistant", "message", true),
                ("assistant", "message", true),
            ]
        );
        let turns: Vec<i64> = evs.iter().map(|e| e["turn"].as_i64().unwrap()).collect();
        assert_eq!(turns, [0, 1, 2, 3, 4, 5]);
        assert_eq!(
            evs[2]["error"]["message"],
            "'command' is a required property"
        );
    }

    #[test]
    fn a_tool_error_whose_call_is_not_in_the_log_is_still_a_failed_step() {
        let log = json!({"version": 2, "status": "success", "eval": {"task": "t", "eval_id": "e"},
        "samples": [{"id": 1, "epoch": 1, "messages": [
            {"role": "user", "content": "fetch it"},
            {"role": "tool", "tool_call_id": "call_9", "function": "fetch", "content": "",
             "error": {"type": "timeout", "message": "fetch timed out"}}
        ]}]});
        let (evs, _, _) = split_records(super::FORMAT, "log.json", &log.to_string());
        let fetch = evs
            .iter()
            .find(|e| e["action_taken"]["tool_name"] == "fetch")
            .unwrap();
        assert_eq!(fetch["action_succeeded"], false);
        assert_eq!(fetch["error"]["message"], "fetch timed out");
    }

    #[test]
    fn a_log_whose_samples_are_empty_is_skipped_with_its_status() {
        let log =
            json!({"version": 2, "status": "cancelled", "eval": {"task": "t"}, "samples": []});
        let (evs, _, source) = split_records(super::FORMAT, "log.json", &log.to_string());
        assert!(evs.is_empty());
        assert_eq!(source["skipped"], 1);
    }

    #[test]
    fn a_tool_error_the_model_recovered_from_fails_its_call_not_the_run() {
        let input = log(
            json!([{"id": 1, "epoch": 1, "input": "add then divide", "target": "3",
            "messages": [
                {"role": "user", "content": "add then divide"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "function": "add", "arguments": {"x": 1, "y": 2}}]},
                {"role": "tool", "content": "3", "tool_call_id": "a", "function": "add"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "d", "function": "divide", "arguments": {"x": 3, "y": 0}}]},
                {"role": "tool", "content": "", "tool_call_id": "d", "function": "divide",
                 "error": {"type": "unknown", "message": "cannot divide by zero"}},
                {"role": "assistant", "content": [{"type": "text", "text": "3"}]}
            ],
            "events": [{"event": "tool", "id": "d", "timestamp": "2026-12-04T21:29:30.898793+00:00"}],
            "scores": {"includes": {"value": "C"}}}]),
        );
        let (evs, runs, source) = records(&input);
        assert_eq!(
            steps(&evs),
            [
                ("user", "message", true),
                ("assistant", "add", true),
                ("assistant", "divide", false),
                ("assistant", "message", true)
            ]
        );
        assert_eq!(evs[1]["output"], "3");
        assert_eq!(evs[2]["failure_source"], "error");
        assert_eq!(evs[2]["error"], json!({"message": "cannot divide by zero"}));
        assert_eq!(evs[2]["timestamp"], "2026-12-04T21:29:30.898793Z");
        assert_eq!(runs[0]["run_id"], "t/E1/1");
        assert_eq!(runs[0]["outcome"], "succeeded");
        assert_eq!(runs[0]["expected"], "3");
        assert_eq!(source["skipped"], 0);
    }

    #[test]
    fn a_sample_error_fails_the_call_it_stopped_in_and_the_run() {
        let input = log(json!([{"id": "s2", "epoch": 1, "messages": [
                {"role": "user", "content": "look up b"},
                {"role": "assistant", "content": "", "tool_calls": [{"id": "l", "function": "lookup", "arguments": {"key": "b"}}]}
            ],
            "scores": {}, "error": {"message": "KeyError('b')", "traceback": "..."}}]));
        let (evs, runs, _) = records(&input);
        assert_eq!(evs[1]["action_succeeded"], false);
        assert_eq!(evs[1]["failure_source"], "exception");
        assert_eq!(
            evs[1]["error"],
            json!({"type": "KeyError", "message": "KeyError('b')"})
        );
        assert_eq!(runs[0]["outcome"], "failed");
        assert_eq!(runs[0]["message"], "KeyError('b')");
    }

    #[test]
    fn a_limit_that_ended_a_sample_is_its_reason_and_its_message() {
        let input = log(json!([{"id": 1, "epoch": 1, "messages": [
                {"role": "user", "content": "count to a million"},
                {"role": "assistant", "content": "1, 2, 3"}
            ],
            "scores": {"match": {"value": "I"}}, "limit": {"type": "message", "limit": 2}}]));
        let (_, runs, _) = records(&input);
        assert_eq!(runs[0]["outcome"], "failed");
        assert_eq!(runs[0]["reason"], "timeout");
        assert_eq!(runs[0]["message"], "message limit 2");
    }

    #[test]
    fn scores_decide_the_outcome() {
        for (value, outcome) in [
            (json!("C"), "succeeded"),
            (json!("I"), "failed"),
            (json!("P"), "failed"),
            (json!(1.0), "succeeded"),
            (json!(0), "failed"),
            (json!(true), "succeeded"),
            (json!({"a": 1}), "unknown"),
        ] {
            let input = log(
                json!([{"id": 1, "messages": [{"role": "user", "content": "q"},
                {"role": "assistant", "content": "a"}], "scores": {"s": {"value": value}}}]),
            );
            let (_, runs, _) = records(&input);
            assert_eq!(runs[0]["outcome"], outcome, "{value}");
        }
        let (_, runs, source) =
            records(r#"{"version": 2, "status": "started", "eval": {"task": "t"}}"#);
        assert!(runs.is_empty());
        assert_eq!(source["skipped"], 1);
    }
}
