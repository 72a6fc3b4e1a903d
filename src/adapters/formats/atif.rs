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

use crate::adapters::formats::Format;
use crate::adapters::read::shape::Shape;
use crate::adapters::read::tree::unique_id;
use crate::adapters::read::value::{describe, nanos_of, set_texts, str_of, text_of};
use crate::adapters::sink::Sink;
use crate::classify::mark_inferred;
use crate::record::{EventOut, FailureSource, JsonVal, OutcomeReason, RunRec, Src};

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
pub(crate) fn read(r: impl Read + Send, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let mut trajectories: Vec<Traj> = Vec::new();
    crate::adapters::read::lines::values(r, sink, |line, value, sink| {
        let mut reasons = Vec::new();
        match value {
            Ok(Value::Array(items)) => {
                for item in items {
                    take(item, line, None, &mut trajectories, &mut reasons);
                }
            }
            Ok(v) => take(v, line, None, &mut trajectories, &mut reasons),
            Err(reason) => reasons.push(reason.to_string()),
        }
        for reason in reasons {
            sink.skip(Some(line), &reason)?;
        }
        Ok(())
    })?;
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
            mark_inferred(
                ev,
                FailureSource::NoResult,
                "the tool call has no observation",
            );
            sink.settings.infer_failure(ev);
        }
        // A trajectory that stops without an answer failed, though no step says so.
        let last = ctx.events.iter_mut().rev().find(|e| e.agent_id != "user");
        if !answered && let Some(last) = last.filter(|e| e.action_succeeded) {
            mark_inferred(
                last,
                FailureSource::NoAnswer,
                "the trajectory ends without an answer",
            );
        }
        let stopped = !answered || ctx.events.last().is_some_and(|e| !e.action_succeeded);
        let reason = if answered {
            OutcomeReason::Error
        } else {
            OutcomeReason::NotSubmitted
        };
        let stated = verdict(t, &ctx.run)
            .unwrap_or_else(|| RunRec::ended(ctx.run.as_str(), stopped.then_some(reason)));
        for ev in &ctx.events {
            sink.emit_event(ev)?;
        }
        sink.emit_run(&RunRec {
            task: ctx.task,
            ..stated
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
        let args = call
            .get("arguments")
            .map(|a| crate::adapters::read::value::decoded(a).into_owned());
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
fn verdict(t: &Value, run: &str) -> Option<RunRec> {
    let places = [
        Some(t),
        t.get("extra"),
        t.get("final_metrics"),
        t.pointer("/final_metrics/extra"),
    ];
    places.into_iter().flatten().find_map(|place| {
        for key in ["success", "is_correct", "resolved", "passed"] {
            if let Some(b) = place.get(key).and_then(Value::as_bool) {
                return Some(RunRec::judged(run, b));
            }
        }
        ["reward", "score"].iter().find_map(|key| {
            let r = place.get(*key).and_then(Value::as_f64)?;
            Some(RunRec::scored(run, r))
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
        ev.set_time_nanos(nanos_of(self.step.get("timestamp")));
        ev.src = Some(Src {
            path: sink.path().to_string().into(),
            line: self.line,
        });
        sink.settings.infer_failure(ev);
    }
}

/// The `atif` row of the format table.
pub(crate) const FORMAT: Format = Format {
    name: "atif",
    help: "Agent Trajectory Interchange Format (Harbor) trajectories.",
    claims: Some(claims),
    read: |r, _, sink| read(r, sink),
};

/// A trajectory: `steps` beside its `schema_version` or `session_id`.
fn claims(shape: &Shape<'_>) -> bool {
    shape.has("steps") && (shape.has("schema_version") || shape.has("session_id"))
}

#[cfg(test)]
mod tests;
