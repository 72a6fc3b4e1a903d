//! The `atif` format: Agent Trajectory Interchange Format trajectories
//! (Harbor, Terminal-Bench): `session_id`, `agent`, and `steps` of system,
//! user and agent turns with tool calls and the observations that answer
//! them. One run per top-level trajectory; a sub-agent trajectory referenced
//! from an observation (and present in the same input) joins its parent's
//! run right after the call that delegated to it, under its own agent.

use std::collections::{HashMap, HashSet};
use std::io::Read;

use serde_json::Value;

use super::Sink;
use super::observations::{
    self, describe, fail_inferred, nanos_of, set_texts, str_of, text_of, unique_id,
};
use super::spans;
use crate::record::{EventOut, JsonVal, RunRec, Src};

/// What a message step's action is called.
const MESSAGE: &str = "message";

/// Reads trajectories from `r` into `sink`: per top-level trajectory its
/// events (sub-agents inline), then its `run` record.
pub fn read(r: impl Read, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let data = super::read_document(r, sink)?;
    let mut trajectories: Vec<(u64, Value)> = Vec::new();
    for (line, value) in observations::json_values(&data) {
        let mut reasons = Vec::new();
        match value {
            Ok(Value::Array(items)) => {
                for item in items {
                    take(item, line, &mut trajectories, &mut reasons);
                }
            }
            Ok(v) => take(v, line, &mut trajectories, &mut reasons),
            Err(reason) => reasons.push(reason),
        }
        for reason in reasons {
            sink.skip(Some(line), &reason)?;
        }
    }
    let by_session: HashMap<String, usize> = trajectories
        .iter()
        .enumerate()
        .filter_map(|(i, (_, t))| Some((str_of(t.get("session_id"))?, i)))
        .collect();
    let referenced: HashSet<String> = trajectories
        .iter()
        .flat_map(|(_, t)| subagent_sessions(t))
        .filter(|s| by_session.contains_key(s))
        .collect();
    let mut walk = Walk {
        trajectories: &trajectories,
        by_session,
        visited: HashSet::new(),
        used_ids: HashSet::new(),
    };
    let is_sub = |t: &Value| str_of(t.get("session_id")).is_some_and(|s| referenced.contains(&s));
    let tops: Vec<usize> = (0..trajectories.len())
        .filter(|&i| !is_sub(&trajectories[i].1))
        .collect();
    // Sub-agents whose parents form a cycle (or are missing) still get read, last.
    for i in tops.into_iter().chain(0..trajectories.len()) {
        if !walk.visited.contains(&i) {
            walk.emit_run(i, sink)?;
        }
    }
    Ok(())
}

fn take(v: Value, line: u64, out: &mut Vec<(u64, Value)>, reasons: &mut Vec<String>) {
    match v.get("steps") {
        Some(Value::Array(_)) => out.push((line, v)),
        Some(other) => reasons.push(format!("steps: expected a list, got {}", describe(other))),
        None => reasons.push(format!(
            "not an ATIF trajectory: {} without \"steps\"",
            describe(&v)
        )),
    }
}

/// The session ids a trajectory delegates to.
fn subagent_sessions(t: &Value) -> Vec<String> {
    steps(t).iter().flat_map(results).flat_map(refs).collect()
}

fn steps(t: &Value) -> &[Value] {
    t.get("steps")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn results(step: &Value) -> &[Value] {
    step.pointer("/observation/results")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn refs(result: &Value) -> Vec<String> {
    result
        .get("subagent_trajectory_ref")
        .and_then(Value::as_array)
        .map_or(Vec::new(), |refs| {
            refs.iter()
                .filter_map(|r| str_of(r.get("session_id")))
                .collect()
        })
}

/// The steps of a trajectory in `step_id` order (steps without one keep
/// their place after the one before).
fn ordered(t: &Value) -> Vec<&Value> {
    let mut last = i64::MIN;
    let mut keyed: Vec<(i64, usize, &Value)> = steps(t)
        .iter()
        .enumerate()
        .map(|(i, s)| {
            last = s.get("step_id").and_then(Value::as_i64).unwrap_or(last);
            (last, i, s)
        })
        .collect();
    keyed.sort_by_key(|(id, i, _)| (*id, *i));
    keyed.into_iter().map(|(_, _, s)| s).collect()
}

/// Walks trajectories into runs.
struct Walk<'t> {
    trajectories: &'t [(u64, Value)],
    by_session: HashMap<String, usize>,
    visited: HashSet<usize>,
    used_ids: HashSet<String>,
}

/// Where a trajectory's events go.
struct RunCtx<'t> {
    run: String,
    task: Option<String>,
    events: Vec<EventOut<'t>>,
}

impl<'t> Walk<'t> {
    fn emit_run(&mut self, i: usize, sink: &mut Sink<'_>) -> anyhow::Result<()> {
        let t = &self.trajectories[i].1;
        let run = str_of(t.get("session_id")).unwrap_or_else(|| format!("atif-{i}"));
        let mut ctx = RunCtx {
            run,
            task: None,
            events: Vec::new(),
        };
        let answered = self.walk(i, None, &mut ctx, sink);
        // A trajectory that stops without an answer failed, though no step says so.
        let last = ctx.events.iter_mut().rev().find(|e| e.agent_id != "user");
        if !answered && let Some(last) = last.filter(|e| e.action_succeeded) {
            fail_inferred(last, "no_answer", "the trajectory ends without an answer");
        }
        let failed = !answered || ctx.events.last().is_some_and(|e| !e.action_succeeded);
        for ev in &ctx.events {
            sink.emit(ev)?;
        }
        sink.emit_run(&RunRec {
            kind: "run".into(),
            run_id: ctx.run,
            outcome: if failed { "failed" } else { "unknown" }.to_string(),
            task: ctx.task,
            expected: None,
            policy: None,
            src: None,
        })?;
        Ok(())
    }

    /// Adds trajectory `i`'s events to `ctx`; true when it ends with an answer
    /// (an agent message with no tool call after it).
    fn walk(
        &mut self,
        i: usize,
        parent_agent: Option<&str>,
        ctx: &mut RunCtx<'t>,
        sink: &Sink<'_>,
    ) -> bool {
        self.visited.insert(i);
        let trajectories = self.trajectories;
        let (line, t) = (trajectories[i].0, &trajectories[i].1);
        let session = str_of(t.get("session_id")).unwrap_or_default();
        let mut agent = str_of(t.pointer("/agent/name")).unwrap_or_else(|| "agent".to_string());
        if parent_agent == Some(agent.as_str()) {
            agent = session.clone(); // a sub-agent of the same name is told apart by its session
        }
        let mut answered = false;
        for step in ordered(t) {
            let source = step
                .get("source")
                .and_then(Value::as_str)
                .unwrap_or("agent");
            let step_id = step.get("step_id").and_then(Value::as_i64).unwrap_or(0);
            let message = step.get("message").and_then(text_of);
            let calls = step
                .get("tool_calls")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            let base = Base {
                session: &session,
                step,
                step_id,
                line,
            };
            match source {
                "system" => continue,
                "user" => {
                    if ctx.task.is_none() {
                        ctx.task = message.clone();
                    }
                    let ev = self.message(&base, &ctx.run, "user", message.as_deref(), sink);
                    ctx.events.push(ev);
                }
                _ => {
                    if message.is_some() || calls.is_empty() {
                        let ev = self.message(&base, &ctx.run, &agent, message.as_deref(), sink);
                        ctx.events.push(ev);
                    }
                    for (k, call) in calls.iter().enumerate() {
                        let (ev, delegated) =
                            self.tool_call(&base, k, call, &ctx.run, &agent, sink);
                        ctx.events.push(ev);
                        for sub in delegated {
                            if let Some(&j) = self.by_session.get(&sub)
                                && !self.visited.contains(&j)
                            {
                                self.walk(j, Some(&agent), ctx, sink);
                            }
                        }
                    }
                    answered = message.is_some() && calls.is_empty();
                    continue;
                }
            }
            answered = false;
        }
        answered
    }

    fn message(
        &mut self,
        b: &Base<'_>,
        run: &str,
        agent: &str,
        text: Option<&str>,
        sink: &Sink<'_>,
    ) -> EventOut<'t> {
        let id = unique_id(
            &format!("{}#{}", b.session, b.step_id),
            self.used_ids.len(),
            &mut self.used_ids,
        );
        let mut ev = EventOut::new(
            id,
            run.to_string(),
            b.step_id,
            agent.to_string(),
            MESSAGE,
            true,
        );
        ev.span_kind = Some(MESSAGE);
        set_texts(&mut ev, None, text, &sink.settings);
        ev.usage = b
            .step
            .get("metrics")
            .filter(|m| m.is_object())
            .cloned()
            .map(JsonVal::Serde);
        b.finish(&mut ev, sink);
        ev
    }

    /// The event of one tool call, and the sub-agent sessions its result
    /// delegated to.
    fn tool_call(
        &mut self,
        b: &Base<'_>,
        k: usize,
        call: &Value,
        run: &str,
        agent: &str,
        sink: &Sink<'_>,
    ) -> (EventOut<'t>, Vec<String>) {
        let call_id = str_of(call.get("tool_call_id"));
        let fallback = format!("{}#{}.{k}", b.session, b.step_id);
        let id = unique_id(
            call_id.as_deref().unwrap_or(&fallback),
            self.used_ids.len(),
            &mut self.used_ids,
        );
        let name = str_of(call.get("function_name")).unwrap_or_else(|| "tool".to_string());
        let mut ev = EventOut::new(
            id,
            run.to_string(),
            b.step_id,
            agent.to_string(),
            name,
            true,
        );
        ev.span_kind = Some("tool");
        let args = call.get("arguments").map(observations::decoded);
        ev.action_taken.tool_input = args.clone().filter(Value::is_object).map(JsonVal::Serde);
        let result = call_id.as_deref().and_then(|id| {
            results(b.step)
                .iter()
                .find(|r| r.get("source_call_id").and_then(Value::as_str) == Some(id))
        });
        let output = result.and_then(|r| r.get("content")).and_then(text_of);
        let delegated = result.map(refs).unwrap_or_default();
        let output = output.or_else(|| {
            (!delegated.is_empty()).then(|| format!("delegated to {}", delegated.join(", ")))
        });
        set_texts(
            &mut ev,
            args.as_ref().and_then(text_of).as_deref(),
            output.as_deref(),
            &sink.settings,
        );
        if result.is_none() {
            fail_inferred(&mut ev, "no_result", "the tool call has no observation");
        }
        b.finish(&mut ev, sink);
        (ev, delegated)
    }
}

/// What every event of one step shares.
struct Base<'s> {
    session: &'s str,
    step: &'s Value,
    step_id: i64,
    line: u64,
}

impl Base<'_> {
    fn finish(&self, ev: &mut EventOut<'_>, sink: &Sink<'_>) {
        ev.timestamp = nanos_of(self.step.get("timestamp")).and_then(spans::timestamp_from_nanos);
        ev.src = Some(Src {
            path: sink.path().to_string().into(),
            line: self.line,
        });
        sink.settings.infer_failure(ev);
    }
}

#[cfg(test)]
mod tests {
    use super::super::Format;
    use super::super::observations::split_records;
    use serde_json::{Value, json};

    fn records(input: &str) -> (Vec<Value>, Vec<Value>, Value) {
        split_records(Format::Atif, "t.json", input)
    }

    fn step(id: i64, source: &str, message: &str) -> Value {
        json!({"step_id": id, "source": source, "message": message, "timestamp": "2025-10-11T10:30:00Z"})
    }

    #[test]
    fn steps_in_step_order_with_results_and_an_answer() {
        let mut search = step(2, "agent", "");
        search["tool_calls"] = json!([{"tool_call_id": "c1", "function_name": "search", "arguments": {"q": "x"}},
                                      {"tool_call_id": "c2", "function_name": "fetch", "arguments": {}}]);
        search["observation"] = json!({"results": [{"source_call_id": "c1", "content": "found"},
                                                   {"source_call_id": "c2", "content": "Error: 404 not found"}]});
        let t = json!({"schema_version": "ATIF-v1.4", "session_id": "s1", "agent": {"name": "harbor", "version": "1"},
                       "steps": [step(3, "agent", "the answer"), search, step(1, "user", "question?"),
                                 step(0, "system", "you are")]});
        let (evs, runs, source) = records(&t.to_string());
        let tools: Vec<_> = evs
            .iter()
            .map(|e| e["action_taken"]["tool_name"].as_str().unwrap())
            .collect();
        assert_eq!(tools, ["message", "search", "fetch", "message"]);
        let turns: Vec<_> = evs.iter().map(|e| e["turn"].as_i64().unwrap()).collect();
        assert_eq!(turns, [1, 2, 2, 3]);
        assert_eq!(evs[0]["agent_id"], "user");
        assert_eq!(evs[1]["agent_id"], "harbor");
        assert_eq!(evs[1]["action_taken"]["tool_input"], json!({"q": "x"}));
        assert_eq!(evs[1]["output"], "found");
        assert_eq!(evs[2]["action_succeeded"], false);
        assert_eq!(evs[2]["failure_source"], "output");
        assert_eq!(evs[2]["failure_inferred"], true);
        assert_eq!(evs[3]["action_succeeded"], true);
        assert_eq!(
            runs,
            [json!({"kind": "run", "run_id": "s1", "outcome": "unknown", "task": "question?"})]
        );
        assert_eq!(source["skipped"], 0);
    }

    #[test]
    fn no_observation_and_no_answer_are_inferred_failures() {
        let mut call = step(2, "agent", "running it");
        call["tool_calls"] =
            json!([{"tool_call_id": "c1", "function_name": "bash", "arguments": {"cmd": "make"}}]);
        let t = json!({"schema_version": "ATIF-v1.4", "session_id": "s2", "agent": {"name": "a", "version": "1"},
                       "steps": [step(1, "user", "build it"), call]});
        let (evs, runs, _) = records(&t.to_string());
        assert_eq!(evs[2]["failure_source"], "no_result");
        assert_eq!(evs[2]["failure_inferred"], true);
        // The message before the unanswered call ends nothing; the run fails.
        assert_eq!(evs[1]["action_succeeded"], true);
        assert_eq!(runs[0]["outcome"], "failed");
        let t = json!({"session_id": "s3", "agent": {"name": "a"}, "steps": [step(1, "user", "q"), step(2, "agent", "")]});
        let (evs, runs, _) = records(&t.to_string());
        assert_eq!(evs[1]["failure_source"], "no_answer");
        assert_eq!(runs[0]["outcome"], "failed");
    }

    #[test]
    fn sub_agent_trajectories_join_their_parent_run() {
        let mut delegate = step(2, "agent", "");
        delegate["tool_calls"] =
            json!([{"tool_call_id": "d1", "function_name": "delegate", "arguments": {}}]);
        delegate["observation"] = json!({"results": [{"source_call_id": "d1",
            "subagent_trajectory_ref": [{"session_id": "child"}]}]});
        let parent = json!({"session_id": "parent", "agent": {"name": "lead"},
                            "steps": [step(1, "user", "q"), delegate, step(3, "agent", "done")]});
        let child = json!({"session_id": "child", "agent": {"name": "researcher"},
                           "steps": [step(1, "user", "sub q"), step(2, "agent", "sub answer")]});
        let (evs, runs, _) = records(&format!("{child}\n{parent}\n{{\"nope\": 1}}\n"));
        let agents: Vec<_> = evs
            .iter()
            .map(|e| e["agent_id"].as_str().unwrap())
            .collect();
        assert_eq!(agents, ["user", "lead", "user", "researcher", "lead"]);
        assert!(evs.iter().all(|e| e["run_id"] == "parent"));
        assert_eq!(evs[1]["output"], "delegated to child");
        assert_eq!(runs.len(), 1);
    }
}
