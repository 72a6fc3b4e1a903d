//! The `atif` format: Agent Trajectory Interchange Format trajectories
//! (Harbor, Terminal-Bench): `session_id`, `agent`, and `steps` of system,
//! user and agent turns with tool calls and the observations that answer
//! them. One run per top-level trajectory; a sub-agent trajectory (embedded
//! in `subagent_trajectories`, or present in the same input and referenced
//! from an observation) joins its parent's run right after the call that
//! delegated to it, under its own agent.

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

/// What an observation that answers no tool call is called: the harness
/// speaking to the agent (a parse error, a timeout, a warning).
const OBSERVATION: &str = "observation";

/// One trajectory of the input: the line it starts on, the document, and
/// the trajectory it is embedded in.
struct Traj {
    line: u64,
    value: Value,
    parent: Option<usize>,
}

/// Reads trajectories from `r` into `sink`: per top-level trajectory its
/// events (sub-agents inline), then its `run` record.
pub fn read(r: impl Read, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let data = super::read_document(r, sink)?;
    let mut trajectories: Vec<Traj> = Vec::new();
    for (line, value) in observations::json_values(&data) {
        let mut reasons = Vec::new();
        match value {
            Ok(Value::Array(items)) => {
                for item in items {
                    take(item, line, None, &mut trajectories, &mut reasons);
                }
            }
            Ok(v) => take(v, line, None, &mut trajectories, &mut reasons),
            Err(reason) => reasons.push(reason),
        }
        for reason in reasons {
            sink.skip(Some(line), &reason)?;
        }
    }
    // A trajectory is found by its session id or its trajectory id; the
    // first one with an id keeps it.
    let mut by_id: HashMap<String, usize> = HashMap::new();
    for (i, t) in trajectories.iter().enumerate() {
        for id in own_ids(&t.value) {
            by_id.entry(id).or_insert(i);
        }
    }
    let referenced: HashSet<usize> = trajectories
        .iter()
        .enumerate()
        .flat_map(|(i, t)| {
            delegations(&t.value)
                .into_iter()
                .filter_map(|keys| resolve(&by_id, &keys))
                .filter(move |&j| j != i)
                .collect::<Vec<_>>()
        })
        .collect();
    let tops: Vec<usize> = (0..trajectories.len())
        .filter(|&i| trajectories[i].parent.is_none() && !referenced.contains(&i))
        .collect();
    let mut walk = Walk {
        trajectories: &trajectories,
        by_id,
        visited: HashSet::new(),
        used_ids: HashSet::new(),
    };
    // Sub-agents whose parents form a cycle (or are missing) still get read, last.
    for i in tops.into_iter().chain(0..trajectories.len()) {
        if !walk.visited.contains(&i) {
            walk.emit_run(i, sink)?;
        }
    }
    Ok(())
}

/// Adds a trajectory, and those embedded in it (ATIF v1.7
/// `subagent_trajectories`) after it.
fn take(
    mut v: Value,
    line: u64,
    parent: Option<usize>,
    out: &mut Vec<Traj>,
    reasons: &mut Vec<String>,
) {
    match v.get("steps") {
        Some(Value::Array(_)) => {}
        Some(other) => {
            return reasons.push(format!("steps: expected a list, got {}", describe(other)));
        }
        None => {
            return reasons.push(format!(
                "not an ATIF trajectory: {} without \"steps\"",
                describe(&v)
            ));
        }
    }
    let embedded = v
        .as_object_mut()
        .and_then(|o| o.remove("subagent_trajectories"));
    let me = out.len();
    out.push(Traj {
        line,
        value: v,
        parent,
    });
    match embedded {
        Some(Value::Array(subs)) => {
            for sub in subs {
                take(sub, line, Some(me), out, reasons);
            }
        }
        Some(Value::Null) | None => {}
        Some(other) => reasons.push(format!(
            "subagent_trajectories: expected a list, got {}",
            describe(&other)
        )),
    }
}

/// The ids a trajectory is referred to by.
fn own_ids(t: &Value) -> Vec<String> {
    ["trajectory_id", "session_id"]
        .iter()
        .filter_map(|k| str_of(t.get(*k)))
        .collect()
}

/// Per sub-agent reference of a trajectory's observations, the ids it names.
fn delegations(t: &Value) -> Vec<Vec<String>> {
    steps(t).iter().flat_map(results).flat_map(refs).collect()
}

/// The trajectory a reference names, when the input holds it.
fn resolve(by_id: &HashMap<String, usize>, keys: &[String]) -> Option<usize> {
    keys.iter().find_map(|k| by_id.get(k).copied())
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

/// The sub-agent references of one observation result: per reference, its
/// trajectory id and session id (either may be missing).
fn refs(result: &Value) -> Vec<Vec<String>> {
    result
        .get("subagent_trajectory_ref")
        .and_then(Value::as_array)
        .map_or(Vec::new(), |refs| {
            refs.iter()
                .map(own_ids)
                .filter(|ids| !ids.is_empty())
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

/// Pairs a step's tool calls with the observation results that answer
/// them: by `source_call_id`, then the results that name no call (as
/// Terminus-2 writes them) by position among the calls still unanswered.
/// Returns each call's result, and the results that answer no call.
fn pair<'v>(calls: &[Value], results: &'v [Value]) -> (Vec<Option<&'v Value>>, Vec<&'v Value>) {
    let mut answer: Vec<Option<&Value>> = vec![None; calls.len()];
    let mut taken = vec![false; results.len()];
    let ids: Vec<Option<String>> = calls
        .iter()
        .map(|c| str_of(c.get("tool_call_id")))
        .collect();
    for (r, result) in results.iter().enumerate() {
        let Some(source) = str_of(result.get("source_call_id")) else {
            continue;
        };
        if let Some(k) =
            (0..calls.len()).find(|&k| answer[k].is_none() && ids[k].as_deref() == Some(&source))
        {
            answer[k] = Some(result);
            taken[r] = true;
        }
    }
    for (r, result) in results.iter().enumerate() {
        if taken[r] || result.get("source_call_id").is_some_and(|v| !v.is_null()) {
            continue;
        }
        if let Some(k) = answer.iter().position(Option::is_none) {
            answer[k] = Some(result);
            taken[r] = true;
        }
    }
    let unanswered = results
        .iter()
        .zip(&taken)
        .filter(|(_, t)| !**t)
        .map(|(r, _)| r)
        .collect();
    (answer, unanswered)
}

/// Whether a tool's name says it ends the episode (`finish`, `submit`,
/// `mark_task_complete`, `attempt_completion`, `final_answer`, …): one of
/// its words, split at `_`, `-`, `.`, `/` and case changes, is one agents
/// use for being done.
fn names_an_ending(name: &str) -> bool {
    const WORDS: &[&str] = &[
        "finish",
        "finished",
        "submit",
        "complete",
        "completion",
        "completed",
        "done",
        "terminate",
        "final",
        "exit",
        "end",
        "stop",
    ];
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        let split = !c.is_alphanumeric() || (c.is_uppercase() && prev_lower);
        if split && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c.is_alphanumeric() {
            word.push(c.to_ascii_lowercase());
        }
        prev_lower = c.is_lowercase();
    }
    words.push(word);
    words.iter().any(|w| WORDS.contains(&w.as_str()))
}

/// Walks trajectories into runs.
struct Walk<'t> {
    trajectories: &'t [Traj],
    by_id: HashMap<String, usize>,
    visited: HashSet<usize>,
    used_ids: HashSet<String>,
}

/// Where a trajectory's events go.
struct RunCtx<'t> {
    run: String,
    task: Option<String>,
    events: Vec<EventOut<'t>>,
    /// The positions in `events` of tool calls no observation answered.
    unanswered: Vec<usize>,
}

impl<'t> Walk<'t> {
    fn emit_run(&mut self, i: usize, sink: &mut Sink<'_>) -> anyhow::Result<()> {
        let t = &self.trajectories[i].value;
        let run = own_ids(t).pop().unwrap_or_else(|| format!("atif-{i}"));
        let mut ctx = RunCtx {
            run,
            task: None,
            events: Vec::new(),
            unanswered: Vec::new(),
        };
        let mut answered = self.walk(i, None, &mut ctx, sink);
        // The run's last call, left without a result, is how the agent
        // ended the episode when its name says so: not a call that waits
        // for a result.
        let last = ctx.events.len().checked_sub(1);
        if let Some(last) = last.filter(|l| ctx.unanswered.last() == Some(l))
            && names_an_ending(&ctx.events[last].action_taken.tool_name)
        {
            ctx.unanswered.pop();
            answered = true;
        }
        for &k in &ctx.unanswered {
            let ev = &mut ctx.events[k];
            fail_inferred(ev, "no_result", "the tool call has no observation");
            sink.settings.infer_failure(ev);
        }
        // A trajectory that stops without an answer failed, though no step says so.
        let last = ctx.events.iter_mut().rev().find(|e| e.agent_id != "user");
        if !answered && let Some(last) = last.filter(|e| e.action_succeeded) {
            fail_inferred(last, "no_answer", "the trajectory ends without an answer");
        }
        let stopped = !answered || ctx.events.last().is_some_and(|e| !e.action_succeeded);
        let outcome = verdict(t).unwrap_or(if stopped { "failed" } else { "unknown" });
        for ev in &ctx.events {
            sink.emit(ev)?;
        }
        sink.emit_run(&RunRec {
            kind: "run".into(),
            run_id: ctx.run,
            outcome: outcome.to_string(),
            task: ctx.task,
            expected: None,
            policy: None,
            src: None,
        })?;
        Ok(())
    }

    /// Adds trajectory `i`'s events to `ctx`, then those of the trajectories
    /// embedded in it that no step delegated to; true when it ends with an
    /// answer (an agent message with no tool call after it) or a call that
    /// names an ending.
    fn walk(
        &mut self,
        i: usize,
        parent_agent: Option<&str>,
        ctx: &mut RunCtx<'t>,
        sink: &Sink<'_>,
    ) -> bool {
        self.visited.insert(i);
        let trajectories = self.trajectories;
        let (line, t) = (trajectories[i].line, &trajectories[i].value);
        let session = own_ids(t).pop().unwrap_or_default();
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
            let (answers, unanswered) = pair(calls, results(step));
            match source {
                "system" | "user" => {
                    if source == "user" {
                        if ctx.task.is_none() {
                            ctx.task = message.clone();
                        }
                        let ev = self.message(&base, &ctx.run, "user", message.as_deref(), sink);
                        ctx.events.push(ev);
                    }
                    // What is delegated from a message (a child's answer
                    // coming back) still joins the run.
                    for result in unanswered {
                        self.delegate(result, &agent, ctx, sink);
                    }
                    if source == "user" {
                        answered = false;
                    }
                }
                _ => {
                    if message.is_some() || calls.is_empty() {
                        let ev = self.message(&base, &ctx.run, &agent, message.as_deref(), sink);
                        ctx.events.push(ev);
                    }
                    for (k, (call, result)) in calls.iter().zip(answers).enumerate() {
                        let (ev, delegated) =
                            self.tool_call(&base, k, call, result, &ctx.run, &agent, sink);
                        if result.is_none() {
                            ctx.unanswered.push(ctx.events.len());
                        }
                        ctx.events.push(ev);
                        self.walk_subs(&delegated, &agent, ctx, sink);
                    }
                    for result in unanswered {
                        let text = result.get("content").and_then(text_of);
                        if text.as_deref().is_some_and(|t| !t.trim().is_empty()) {
                            let ev =
                                self.observation(&base, &ctx.run, &agent, text.as_deref(), sink);
                            ctx.events.push(ev);
                        }
                        self.delegate(result, &agent, ctx, sink);
                    }
                    answered = if calls.is_empty() {
                        message.is_some()
                    } else {
                        calls.iter().any(|c| {
                            str_of(c.get("function_name")).is_some_and(|n| names_an_ending(&n))
                        })
                    };
                }
            }
        }
        let embedded: Vec<usize> = (0..trajectories.len())
            .filter(|&j| trajectories[j].parent == Some(i))
            .collect();
        for j in embedded {
            if !self.visited.contains(&j) {
                self.walk(j, Some(&agent), ctx, sink);
            }
        }
        answered
    }

    /// Walks the sub-agents an observation result refers to.
    fn delegate(&mut self, result: &Value, agent: &str, ctx: &mut RunCtx<'t>, sink: &Sink<'_>) {
        let delegated = refs(result);
        self.walk_subs(&delegated, agent, ctx, sink);
    }

    fn walk_subs(
        &mut self,
        delegated: &[Vec<String>],
        agent: &str,
        ctx: &mut RunCtx<'t>,
        sink: &Sink<'_>,
    ) {
        for keys in delegated {
            if let Some(j) = resolve(&self.by_id, keys)
                && !self.visited.contains(&j)
            {
                self.walk(j, Some(agent), ctx, sink);
            }
        }
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

    /// What the harness said back to the agent's step without answering a
    /// tool call: an event of the agent's, which its text can fail.
    fn observation(
        &mut self,
        b: &Base<'_>,
        run: &str,
        agent: &str,
        text: Option<&str>,
        sink: &Sink<'_>,
    ) -> EventOut<'t> {
        let id = unique_id(
            &format!("{}#{}.observation", b.session, b.step_id),
            self.used_ids.len(),
            &mut self.used_ids,
        );
        let mut ev = EventOut::new(
            id,
            run.to_string(),
            b.step_id,
            agent.to_string(),
            OBSERVATION,
            true,
        );
        ev.span_kind = Some(OBSERVATION);
        set_texts(&mut ev, None, text, &sink.settings);
        b.finish(&mut ev, sink);
        ev
    }

    /// The event of one tool call given its result, and the sub-agents its
    /// result delegated to.
    #[allow(clippy::too_many_arguments)]
    fn tool_call(
        &mut self,
        b: &Base<'_>,
        k: usize,
        call: &Value,
        result: Option<&Value>,
        run: &str,
        agent: &str,
        sink: &Sink<'_>,
    ) -> (EventOut<'t>, Vec<Vec<String>>) {
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
        let output = result.and_then(|r| r.get("content")).and_then(text_of);
        let delegated = result.map(refs).unwrap_or_default();
        let output = output.or_else(|| {
            (!delegated.is_empty()).then(|| {
                let names: Vec<&str> = delegated.iter().map(|ids| ids[0].as_str()).collect();
                format!("delegated to {}", names.join(", "))
            })
        });
        set_texts(
            &mut ev,
            args.as_ref().and_then(text_of).as_deref(),
            output.as_deref(),
            &sink.settings,
        );
        b.finish(&mut ev, sink);
        (ev, delegated)
    }
}

/// The run's own verdict, where the trajectory records one: a reward or
/// score (1 solved, less not), or a boolean `success`, `is_correct`,
/// `resolved` or `passed`, at the top, in `extra` or in `final_metrics`
/// (and its `extra`).
fn verdict(t: &Value) -> Option<&'static str> {
    let places = [
        Some(t),
        t.get("extra"),
        t.get("final_metrics"),
        t.pointer("/final_metrics/extra"),
    ];
    places.into_iter().flatten().find_map(|place| {
        for key in ["success", "is_correct", "resolved", "passed"] {
            if let Some(b) = place.get(key).and_then(Value::as_bool) {
                return Some(if b { "succeeded" } else { "failed" });
            }
        }
        ["reward", "score"].iter().find_map(|key| {
            let r = place.get(*key).and_then(Value::as_f64)?;
            Some(if r >= 1.0 - 1e-9 {
                "succeeded"
            } else {
                "failed"
            })
        })
    })
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

    fn agent_step(id: i64, message: &str, calls: Value, results: Value) -> Value {
        let mut s = step(id, "agent", message);
        s["tool_calls"] = calls;
        s["observation"] = json!({"results": results});
        s
    }

    fn trajectory(session: &str, steps: Vec<Value>) -> Value {
        json!({"schema_version": "ATIF-v1.5", "session_id": session,
               "agent": {"name": "terminus-2", "version": "2.0.0"}, "steps": steps})
    }

    /// Terminus-2 writes results without `source_call_id`: they answer the
    /// step's calls in order.
    #[test]
    fn results_without_a_call_id_answer_the_calls_by_position() {
        let t = trajectory(
            "p",
            vec![
                step(1, "user", "make it"),
                agent_step(
                    2,
                    "running two commands",
                    json!([{"tool_call_id": "call_0_1", "function_name": "bash_command", "arguments": {"keystrokes": "ls\n"}},
                           {"tool_call_id": "call_0_2", "function_name": "bash_command", "arguments": {"keystrokes": "make\n"}}]),
                    json!([{"content": "New Terminal Output:\nsrc  Makefile"},
                           {"content": "make: *** No rule to make target\nError: build failed"}]),
                ),
                step(3, "agent", "the build has no target"),
            ],
        );
        let (evs, runs, source) = records(&t.to_string());
        assert_eq!(evs[2]["output"], "New Terminal Output:\nsrc  Makefile");
        assert_eq!(evs[2]["action_succeeded"], true);
        assert_eq!(evs[3]["action_succeeded"], false);
        assert_eq!(evs[3]["failure_source"], "output");
        assert!(evs.iter().all(|e| e["failure_source"] != "no_result"));
        assert_eq!(runs[0]["outcome"], "unknown");
        assert_eq!(source["skipped"], 0);
    }

    /// The harness answers a step that made no valid call (a response it
    /// could not parse, a timeout): an event of the agent's that fails.
    #[test]
    fn an_observation_that_answers_no_call_is_an_event_that_can_fail() {
        let mut bad = step(
            2,
            "agent",
            "I will create it.\n{\"commands\": []}\nThis should work!",
        );
        bad["observation"] = json!({"results": [{"content": "Previous response had parsing errors:\nERROR: Missing required fields: analysis, plan\n\nPlease fix these issues and provide a proper JSON response."}]});
        let t = trajectory(
            "p",
            vec![
                step(1, "user", "create hello.txt"),
                bad,
                agent_step(
                    3,
                    "Analysis: fixed.",
                    json!([{"tool_call_id": "call_1_1", "function_name": "bash_command", "arguments": {"keystrokes": "echo hi > hello.txt\n"}}]),
                    json!([{"content": "New Terminal Output:\n"}]),
                ),
                step(4, "agent", "done"),
            ],
        );
        let (evs, runs, _) = records(&t.to_string());
        let tools: Vec<_> = evs
            .iter()
            .map(|e| e["action_taken"]["tool_name"].as_str().unwrap())
            .collect();
        assert_eq!(
            tools,
            [
                "message",
                "message",
                "observation",
                "message",
                "bash_command",
                "message"
            ]
        );
        assert_eq!(evs[2]["agent_id"], "terminus-2");
        assert_eq!(evs[2]["action_succeeded"], false);
        assert_eq!(evs[2]["failure_source"], "output");
        assert!(
            evs[2]["output"]
                .as_str()
                .unwrap()
                .contains("Missing required fields")
        );
        // Recovered from: the run ends with an answer, so it is not failed.
        assert_eq!(evs[4]["action_succeeded"], true);
        assert_eq!(runs[0]["outcome"], "unknown");
    }

    /// A tool that ends the episode is the run's end whether or not the
    /// harness answered it; any other call left unanswered still fails.
    #[test]
    fn an_episode_ending_call_is_the_end_of_the_run_not_a_missing_result() {
        for ending in [
            "mark_task_complete",
            "finish",
            "submit",
            "attemptCompletion",
            "task_complete",
        ] {
            let t = trajectory(
                "p",
                vec![
                    step(1, "user", "do it"),
                    agent_step(
                        2,
                        "",
                        json!([{"tool_call_id": "c1", "function_name": "bash", "arguments": {}}]),
                        json!([{"source_call_id": "c1", "content": "ok"}]),
                    ),
                    agent_step(
                        3,
                        "all done",
                        json!([{"tool_call_id": "c2", "function_name": ending, "arguments": {}}]),
                        json!([]),
                    ),
                ],
            );
            let (evs, runs, _) = records(&t.to_string());
            assert!(
                evs.iter().all(|e| e["action_succeeded"] == true),
                "{ending}: {evs:?}"
            );
            assert_eq!(runs[0]["outcome"], "unknown", "{ending}");
        }
        // Answered, as Terminus-2 confirms completion: still the end.
        let t = trajectory(
            "p",
            vec![
                step(1, "user", "do it"),
                agent_step(
                    2,
                    "Plan: the task is complete.",
                    json!([{"tool_call_id": "c", "function_name": "mark_task_complete", "arguments": {}}]),
                    json!([{"content": "New Terminal Output:\n\n"}]),
                ),
            ],
        );
        let (evs, runs, _) = records(&t.to_string());
        assert!(evs.iter().all(|e| e["action_succeeded"] == true));
        assert_eq!(runs[0]["outcome"], "unknown");
        // A command cut off at the end is no ending.
        let t = trajectory(
            "p",
            vec![
                step(1, "user", "do it"),
                agent_step(
                    2,
                    "",
                    json!([{"tool_call_id": "c", "function_name": "bash_command", "arguments": {}}]),
                    json!([]),
                ),
            ],
        );
        let (evs, runs, _) = records(&t.to_string());
        assert_eq!(evs[1]["failure_source"], "no_result");
        assert_eq!(runs[0]["outcome"], "failed");
    }

    #[test]
    fn names_that_end_an_episode() {
        for name in [
            "finish",
            "mark_task_complete",
            "Submit",
            "attempt_completion",
            "functions.submit",
            "final_answer",
            "TaskComplete",
            "end-task",
        ] {
            assert!(super::names_an_ending(name), "{name}");
        }
        for name in [
            "bash",
            "finisher",
            "extend",
            "submission_status",
            "search",
            "send",
        ] {
            assert!(!super::names_an_ending(name), "{name}");
        }
    }

    /// ATIF v1.7 embeds sub-agent trajectories in `subagent_trajectories`:
    /// a referenced one joins after the call that delegated to it (found by
    /// `trajectory_id`), one nothing refers to after its parent's steps.
    #[test]
    fn embedded_sub_agent_trajectories_join_their_parent_run() {
        let mut delegate = step(2, "agent", "");
        delegate["tool_calls"] = json!([{"tool_call_id": "d1", "function_name": "Task", "arguments": {"prompt": "look"}}]);
        delegate["observation"] = json!({"results": [{"source_call_id": "d1", "content": "found it",
            "subagent_trajectory_ref": [{"trajectory_id": "child-0"}]}]});
        let parent = json!({"schema_version": "ATIF-v1.7", "session_id": "main", "agent": {"name": "lead"},
        "steps": [step(1, "user", "q"), delegate, step(3, "agent", "answer")],
        "subagent_trajectories": [
            {"trajectory_id": "child-0", "session_id": "main", "agent": {"name": "explorer"},
             "steps": [step(1, "user", "look"), step(2, "agent", "found it")]},
            {"trajectory_id": "child-1", "agent": {"name": "summarizer"},
             "steps": [step(1, "agent", "summary")]}
        ]});
        let (evs, runs, source) = records(&parent.to_string());
        let agents: Vec<_> = evs
            .iter()
            .map(|e| e["agent_id"].as_str().unwrap())
            .collect();
        assert_eq!(
            agents,
            ["user", "lead", "user", "explorer", "lead", "summarizer"]
        );
        assert!(evs.iter().all(|e| e["run_id"] == "main"));
        assert_eq!(runs.len(), 1);
        assert_eq!(source["skipped"], 0);
    }

    /// A verdict the trajectory records decides the outcome: a failure the
    /// run recovered from stays an event but does not fail a solved run.
    #[test]
    fn a_recorded_verdict_is_the_outcome() {
        let steps = vec![
            step(1, "user", "q"),
            agent_step(
                2,
                "",
                json!([{"tool_call_id": "c", "function_name": "bash", "arguments": {}}]),
                json!([{"source_call_id": "c", "content": "Error: no such file"}]),
            ),
            step(3, "agent", "fixed"),
        ];
        for (extra, outcome) in [
            (
                json!({"final_metrics": {"extra": {"reward": 1.0}}}),
                "succeeded",
            ),
            (json!({"extra": {"reward": 0.0}}), "failed"),
            (json!({"extra": {"is_correct": true}}), "succeeded"),
            (json!({}), "unknown"),
        ] {
            let mut t = trajectory("p", steps.clone());
            for (k, v) in extra.as_object().unwrap() {
                t[k] = v.clone();
            }
            let (evs, runs, _) = records(&t.to_string());
            let bash = evs
                .iter()
                .find(|e| e["action_taken"]["tool_name"] == "bash");
            assert_eq!(bash.unwrap()["action_succeeded"], false);
            assert_eq!(runs[0]["outcome"], outcome, "{extra}");
        }
    }
}
