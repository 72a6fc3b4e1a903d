//! The `taubench` format: τ-bench trajectory files, a list of runs with
//! `traj` (OpenAI-style chat messages) and `reward`. Messages become events,
//! each assistant tool call one event whose success its tool reply decides;
//! the reward decides the run's outcome.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::path::Path;

use simd_json::prelude::*;
use simd_json::{BorrowedValue as Value, StaticNode};

use crate::adapters::formats::Format;
use crate::adapters::read::lax::{as_str, describe, python_str};
use crate::adapters::read::shape::Shape;
use crate::adapters::settings::DecodeSettings;
use crate::adapters::sink::Sink;
use crate::adapters::unreadable::Unreadable;
use crate::record::{EventOut, JsonVal, Outcome, RunRec};

/// What a message without a tool call is, as an action.
const MESSAGE: &str = "message";

/// Reads one trajectory file from `r` into `sink`: per run its events, then
/// its `run` record.
pub(crate) fn read(r: impl Read, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let mut data = crate::adapters::read::document::read_document(r, sink)?;
    let doc = match crate::adapters::read::document::parse_document(&mut data) {
        Ok((doc, None)) => doc,
        Ok((doc, Some((line, reason)))) => {
            sink.skip(line, &reason)?;
            doc
        }
        Err((line, reason)) => return sink.skip(line, &reason),
    };
    let Value::Array(runs) = &doc else {
        return sink.skip(
            None,
            format!("expected a list of runs, got {}", describe(&doc)),
        );
    };
    let prefix = run_prefix(sink.path());
    let prefix = sink.claim_stem(prefix);
    for (i, run) in runs.iter().enumerate() {
        match decode_run(run, i, &prefix, &sink.settings) {
            Ok((events, rec)) => {
                for mut ev in events {
                    sink.settings.infer_failure(&mut ev);
                    sink.emit_event(&ev)?;
                }
                sink.emit_run(&rec)?;
            }
            Err(reason) => sink.skip(None, reason.inside(format!("runs[{i}]")))?,
        }
    }
    Ok(())
}

/// Run ids start with the file's stem, so the same task in two files
/// (airline and retail number their tasks alike) stays two runs.
fn run_prefix(path: &str) -> String {
    Path::new(path)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.starts_with('<'))
        .unwrap_or("taubench")
        .to_string()
}

/// The events of one run in trajectory order, and its `run` record.
fn decode_run<'v>(
    run: &'v Value<'v>,
    index: usize,
    prefix: &str,
    settings: &DecodeSettings,
) -> Result<(Vec<EventOut<'v>>, RunRec), Unreadable> {
    let Value::Object(obj) = run else {
        return Err(Unreadable::shape(format!(
            "expected a run object, got {}",
            describe(run)
        )));
    };
    let traj = match obj.get("traj") {
        Some(Value::Array(t)) => t,
        Some(other) => return Err(Unreadable::mistyped("traj", "a list", describe(other))),
        None => return Err(Unreadable::Missing("traj".into())),
    };
    let run_id = run_id(obj.get("task_id"), obj.get("trial"), index, prefix);
    let stated = outcome(run_id.clone(), obj.get("reward"))?;
    let mut replies = Replies::of(traj);
    let mut events = Vec::new();
    let mut policy: Option<String> = None;
    for (turn, msg) in traj.iter().enumerate() {
        let Value::Object(m) = msg else {
            return Err(Unreadable::mistyped(
                format!("traj[{turn}]"),
                "a message object",
                describe(msg),
            ));
        };
        let role = m.get("role").and_then(as_str).unwrap_or("");
        if role == "system" {
            // The policy prompt: the rules the run is judged by.
            policy = m.get("content").and_then(as_str).map(str::to_string);
            continue;
        }
        if matches!(role, "tool" | "function") {
            continue; // tool replies join their call
        }
        let agent = if role.is_empty() { "unknown" } else { role };
        let content = m
            .get("content")
            .and_then(as_str)
            .filter(|c| !c.trim().is_empty());
        let calls = match m.get("tool_calls") {
            Some(Value::Array(calls)) => calls.as_slice(),
            _ => &[],
        };
        if content.is_some() || calls.is_empty() {
            let mut ev = EventOut::new(
                format!("{run_id}#{turn}"),
                run_id.clone(),
                turn as i64,
                agent,
                MESSAGE,
                true,
            );
            ev.span_kind = Some(MESSAGE);
            set_text(&mut ev.output, &mut ev.output_digest, content, settings);
            events.push(ev);
        }
        for (k, call) in calls.iter().enumerate() {
            let ev = tool_event(call, &mut replies, settings, (&run_id, turn, k), agent)
                .map_err(|e| e.inside(format!("traj[{turn}].tool_calls[{k}]")))?;
            events.push(ev);
        }
    }
    let task = obj.get("info").and_then(|i| i.get("task"));
    let id = |v: &Value<'_>| as_str(v).map_or_else(|| python_str(v), str::to_string);
    let rec = RunRec {
        task_id: obj.get("task_id").map(id),
        trial: obj.get("trial").and_then(|t| t.as_u64()),
        task: task
            .and_then(|t| t.get("instruction"))
            .and_then(as_str)
            .map(str::to_string),
        expected: task.and_then(|t| t.get("actions")).map(|a| a.encode()),
        policy,
        ..stated
    };
    Ok((events, rec))
}

fn run_id(
    task_id: Option<&Value<'_>>,
    trial: Option<&Value<'_>>,
    index: usize,
    prefix: &str,
) -> String {
    let id = |v: &Value<'_>| as_str(v).map_or_else(|| python_str(v), str::to_string);
    match (task_id, trial) {
        (Some(t), Some(n)) => format!("{prefix}/task-{}/trial-{}", id(t), id(n)),
        (Some(t), None) => format!("{prefix}/task-{}", id(t)),
        _ => format!("{prefix}/run-{index}"),
    }
}

/// τ-bench rewards are 1.0 for a solved task and 0.0 otherwise.
/// The run the reward states, as every format's scores read
/// ([`RunRec::scored`]); unknown without one.
fn outcome(run_id: String, reward: Option<&Value<'_>>) -> Result<RunRec, Unreadable> {
    match reward {
        None | Some(Value::Static(StaticNode::Null)) => Ok(RunRec::new(run_id, Outcome::Unknown)),
        Some(v) => match v.cast_f64() {
            Some(r) => Ok(RunRec::scored(run_id, r)),
            None => Err(Unreadable::mistyped("reward", "a number", describe(v))),
        },
    }
}

/// Tool replies by the id of the call they answer, in trajectory order:
/// call ids repeat within a run (73 times in the airline file), so a call
/// takes the first reply with its id that comes after it.
struct Replies<'v>(HashMap<&'v str, VecDeque<(usize, &'v str)>>);

impl<'v> Replies<'v> {
    fn of(traj: &'v [Value<'v>]) -> Self {
        let mut map: HashMap<&str, VecDeque<(usize, &str)>> = HashMap::new();
        for (i, m) in traj.iter().enumerate() {
            if m.get("role").and_then(as_str) != Some("tool") {
                continue;
            }
            if let (Some(id), Some(content)) = (
                m.get("tool_call_id").and_then(as_str),
                m.get("content").and_then(as_str),
            ) {
                map.entry(id).or_default().push_back((i, content));
            }
        }
        Replies(map)
    }

    /// The reply to call `id` made at trajectory position `at`.
    fn take(&mut self, id: &str, at: usize) -> Option<&'v str> {
        let queue = self.0.get_mut(id)?;
        while queue.front().is_some_and(|(i, _)| *i <= at) {
            queue.pop_front();
        }
        queue.pop_front().map(|(_, content)| content)
    }
}

/// The event of one assistant tool call: the function and its arguments,
/// and the reply as output (an "Error: ..." reply reads as a failure when the
/// sink infers failures).
fn tool_event<'v>(
    call: &'v Value<'v>,
    replies: &mut Replies<'v>,
    settings: &DecodeSettings,
    (run_id, turn, k): (&str, usize, usize),
    agent: &'v str,
) -> Result<EventOut<'v>, Unreadable> {
    let function = call.get("function").unwrap_or(call);
    let name = function
        .get("name")
        .and_then(as_str)
        .ok_or(Unreadable::shape("missing function name"))?;
    let mut ev = EventOut::new(
        format!("{run_id}#{turn}.{k}"),
        run_id.to_string(),
        turn as i64,
        agent,
        name,
        true,
    );
    ev.span_kind = Some("tool");
    let arguments = function.get("arguments");
    ev.action_taken.tool_input = match arguments {
        Some(v @ Value::Object(_)) => Some(JsonVal::Simd(v)),
        Some(Value::String(s)) => match serde_json::from_str::<serde_json::Value>(s) {
            Ok(v @ serde_json::Value::Object(_)) => Some(JsonVal::Serde(v)),
            _ => None,
        },
        _ => None,
    };
    let args_text =
        arguments.map(|a| as_str(a).map_or_else(|| Cow::Owned(a.encode()), Cow::Borrowed));
    set_text(
        &mut ev.input,
        &mut ev.input_digest,
        args_text.as_deref(),
        settings,
    );
    let reply = call
        .get("id")
        .and_then(as_str)
        .and_then(|id| replies.take(id, turn));
    set_text(&mut ev.output, &mut ev.output_digest, reply, settings);
    Ok(ev)
}

fn set_text(
    text: &mut Option<String>,
    digest: &mut Option<String>,
    value: Option<&str>,
    settings: &DecodeSettings,
) {
    if let Some(v) = value {
        let (cut, sum) = settings.text(v);
        *text = Some(cut);
        *digest = Some(sum);
    }
}

/// The `taubench` row of the format table.
pub(crate) const FORMAT: Format = Format {
    name: "taubench",
    help: "τ-bench trajectory files: a list of runs with `traj` and `reward`.",
    claims: Some(claims),
    read: |r, _, sink| read(r, sink),
};

/// A list of runs with a `reward`; a run's `traj` may lie past the bytes
/// looked at, behind a long `info`.
fn claims(shape: &Shape<'_>) -> bool {
    shape.top_is_list && shape.has("reward") && (shape.has("traj") || shape.cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = r#"{"task_id": 7, "trial": 1, "reward": 0.0,
      "info": {"task": {"instruction": "Book a flight to SEA.", "actions": [{"name": "book", "kwargs": {}}]}},
      "traj": [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "Hi, book me a flight."},
        {"role": "assistant", "content": null, "tool_calls": [
          {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"to\":\"SEA\"}"}},
          {"id": "c2", "type": "function", "function": {"name": "book", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "name": "search", "content": "[{\"flight\": \"HAT1\"}]"},
        {"role": "tool", "tool_call_id": "c2", "name": "book", "content": "Error: not enough seats on flight HAT1"},
        {"role": "assistant", "content": "Sorry, that flight is full."}
      ]}"#;

    fn decode(json: &str) -> Result<(Vec<serde_json::Value>, RunRec), String> {
        let mut bytes = json.as_bytes().to_vec();
        let v = simd_json::to_borrowed_value(&mut bytes).unwrap();
        let settings = DecodeSettings::default();
        let (events, rec) = decode_run(&v, 0, "air", &settings).map_err(|e| e.to_string())?;
        let events = events
            .into_iter()
            .map(|mut ev| {
                settings.infer_failure(&mut ev);
                serde_json::to_value(&ev).unwrap()
            })
            .collect();
        Ok((events, rec))
    }

    #[test]
    fn messages_and_tool_calls_become_events() {
        let (events, rec) = decode(RUN).unwrap();
        let summary: Vec<(String, String, i64, bool)> = events
            .iter()
            .map(|e| {
                (
                    e["agent_id"].as_str().unwrap().to_string(),
                    e["action_taken"]["tool_name"].as_str().unwrap().to_string(),
                    e["turn"].as_i64().unwrap(),
                    e["action_succeeded"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("user".into(), "message".into(), 1, true),
                ("assistant".into(), "search".into(), 2, true),
                ("assistant".into(), "book".into(), 2, false),
                ("assistant".into(), "message".into(), 5, true),
            ]
        );
        let book = &events[2];
        assert_eq!(book["event_id"], "air/task-7/trial-1#2.1");
        assert_eq!(book["failure_source"], "output");
        assert_eq!(
            book["error"]["message"],
            "Error: not enough seats on flight HAT1"
        );
        assert_eq!(book["span_kind"], "tool");
        assert_eq!(
            events[1]["action_taken"]["tool_input"],
            serde_json::json!({"to": "SEA"})
        );
        assert_eq!(events[1]["input"], "{\"to\":\"SEA\"}");
        assert!(
            events[1]["output_digest"]
                .as_str()
                .unwrap()
                .starts_with("sha256:")
        );
        assert_eq!(rec.run_id, "air/task-7/trial-1");
        assert_eq!(rec.outcome.as_str(), "failed");
        assert_eq!(rec.task.as_deref(), Some("Book a flight to SEA."));
        assert_eq!(
            rec.expected.as_deref(),
            Some(r#"[{"name":"book","kwargs":{}}]"#)
        );
    }

    #[test]
    fn repeated_call_ids_take_the_next_reply() {
        let (events, _) = decode(
            r#"{"traj": [
              {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "a", "arguments": "{}"}}]},
              {"role": "tool", "tool_call_id": "c", "content": "fine"},
              {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "b", "arguments": "{}"}}]},
              {"role": "tool", "tool_call_id": "c", "content": "Error: no"}]}"#,
        )
        .unwrap();
        assert_eq!(events[0]["output"], "fine");
        assert_eq!(events[0]["action_succeeded"], true);
        assert_eq!(events[1]["output"], "Error: no");
        assert_eq!(events[1]["action_succeeded"], false);
    }

    #[test]
    fn reward_decides_the_outcome() {
        for (reward, want) in [
            ("1.0", "succeeded"),
            ("1", "succeeded"),
            ("0", "failed"),
            ("0.5", "failed"),
            ("null", "unknown"),
        ] {
            let (_, rec) = decode(&format!(r#"{{"reward": {reward}, "traj": []}}"#)).unwrap();
            assert_eq!(rec.outcome.as_str(), want, "{reward}");
            assert_eq!(rec.run_id, "air/run-0");
        }
        assert!(
            decode(r#"{"reward": "high", "traj": []}"#)
                .unwrap_err()
                .contains("reward")
        );
    }

    #[test]
    fn bad_runs_are_reasons_not_panics() {
        assert!(decode("[]").unwrap_err().contains("expected a run object"));
        assert!(decode(r#"{"reward": 1}"#).unwrap_err().contains("traj"));
        assert!(decode(r#"{"traj": {}}"#).unwrap_err().contains("traj"));
        assert!(decode(r#"{"traj": [1]}"#).unwrap_err().contains("traj[0]"));
        let err = decode(r#"{"traj": [{"role": "assistant", "tool_calls": [{"id": "c"}]}]}"#)
            .unwrap_err();
        assert!(err.contains("traj[0].tool_calls[0]"), "{err}");
    }

    #[test]
    fn run_ids_name_the_file() {
        assert_eq!(run_prefix("data/gpt-4o-airline.json"), "gpt-4o-airline");
        assert_eq!(run_prefix("<stdin>"), "taubench");
    }
}
