//! The tree emitter: a trace's observations (spans, runs, steps) as events
//! in tree order, each one's agent resolved and failures inherited by the
//! parents that carry them, and each trace's run record; a trace at a time,
//! once the reader's window has it complete.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::adapters::read::spans;
use crate::adapters::read::spans::{RecentIds, TreeNode};
use crate::adapters::settings::DecodeSettings;
use crate::adapters::sink::Sink;
use crate::record::{
    ErrorInfo, EventOut, FailureSource, JsonVal, Outcome, OutcomeReason, RunRec, Src,
};

// ---- one observation (span, run, step) as an event ----

/// One observation of a trace, decoded: what its event needs. Texts are
/// whole; they are cut when the event is made.
#[derive(Debug, Default)]
pub(crate) struct Node {
    pub run: String,
    pub id: String,
    pub parent: Option<String>,
    pub start: Option<i128>,
    pub end: Option<i128>,
    pub name: String,
    pub kind: &'static str,
    /// The agent the observation names in an attribute; children without
    /// one inherit it.
    pub agent: Option<String>,
    /// The agent an agent span's name names, taken when no ancestor named
    /// one (nested agent spans of a framework are steps of the outer agent).
    pub span_agent: Option<String>,
    /// The agent to fall back on when neither it nor an ancestor names
    /// one: a LangGraph node, then the service.
    pub fallback_agent: Option<String>,
    pub tool: Option<String>,
    /// Why it failed (status, error, exception) and the error.
    pub failure: Option<(FailureSource, ErrorInfo)>,
    /// The observation states that it succeeded (LangSmith's `status:
    /// success`): on a root, the run's own verdict.
    pub stated_ok: bool,
    pub input: Option<String>,
    pub tool_input: Option<Value>,
    pub output: Option<String>,
    /// Digests of the whole texts, once [`Node::cut`] cut them.
    pub input_digest: Option<String>,
    pub output_digest: Option<String>,
    pub usage: Option<Value>,
    pub line: Option<u64>,
    /// Its position among the input's observations, which tells apart
    /// events that share an id.
    pub seq: usize,
}

impl Node {
    /// Cuts the texts to the configured size (keeping the digests of the
    /// whole) and drops what its event will not use, so a large export's
    /// observations are held small until their trace is emitted.
    pub(crate) fn cut(mut self, settings: &DecodeSettings) -> Self {
        let cut = |text: Option<String>| match text {
            Some(t) => {
                let (kept, digest) = settings.text(&t);
                (Some(kept), Some(digest))
            }
            None => (None, None),
        };
        (self.input, self.input_digest) = cut(self.input.take());
        (self.output, self.output_digest) = cut(self.output.take());
        if self.kind != "tool" {
            self.tool_input = None;
        }
        self
    }
}

impl TreeNode for Node {
    fn node_id(&self) -> &str {
        &self.id
    }
    fn parent_id(&self) -> Option<&str> {
        self.parent.as_deref()
    }
    fn start_nanos(&self) -> Option<i128> {
        self.start
    }
}

/// What a trace's run record says besides its id.
#[derive(Debug, Default, Clone)]
pub(crate) struct RunInfo {
    pub task: Option<String>,
}

/// What an emitted trace's run carries over to observations of it that come
/// late: the agent its root names, and what its run record says so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct Carried {
    agent: Option<String>,
    verdict: Verdict,
    task: Option<String>,
}

/// What a run's outcome is made of: its roots, how many state success,
/// whether one failed, and whether any event failed.
#[derive(Debug, Clone, Copy, Default)]
struct Verdict {
    roots: usize,
    roots_ok: usize,
    root_failed: bool,
    failed: bool,
}

impl Verdict {
    /// A root that states its outcome is the run's verdict: a failure
    /// below it that the run recovered from stays an event. Otherwise, as
    /// in span formats, a failure no later call of the same agent and tool
    /// settled fails the run.
    fn outcome(&self) -> Outcome {
        if self.root_failed {
            Outcome::Failed
        } else if self.roots > 0 && self.roots_ok == self.roots {
            Outcome::Succeeded
        } else if self.failed {
            Outcome::Failed
        } else {
            Outcome::Unknown
        }
    }
}

/// Turns complete traces of observations into events and run records:
/// what the traces of one input share (the event ids given).
#[derive(Default)]
pub(crate) struct RunEmitter {
    used: RecentIds,
}

impl RunEmitter {
    /// Emits the nodes of each run of a trace (in first-appearance order)
    /// in pre-order of their tree, then the run's record: failed when its
    /// root failed, else unknown (no error recorded is not proof of
    /// success); its task is the one `runs` gives, else the first root's
    /// input. `carried` is what a part of the trace emitted before hands
    /// on: nodes whose parent is not here hang under its root. Returns
    /// what this part hands on.
    pub(crate) fn emit_trace(
        &mut self,
        nodes: &[Node],
        runs: &HashMap<String, RunInfo>,
        carried: Option<Carried>,
        sink: &mut Sink<'_>,
    ) -> anyhow::Result<Option<Carried>> {
        let mut carried_on = None;
        for members in spans::group_in_order(nodes.iter().map(|n| n.run.as_str())) {
            let part = Part {
                nodes,
                members: &members,
                carried: carried.clone(),
            };
            carried_on = Some(self.emit_run(part, runs, sink)?);
        }
        Ok(carried_on)
    }

    fn emit_run(
        &mut self,
        part: Part<'_>,
        runs: &HashMap<String, RunInfo>,
        sink: &mut Sink<'_>,
    ) -> anyhow::Result<Carried> {
        let Part {
            nodes,
            members,
            carried,
        } = part;
        let run = &nodes[members[0]].run;
        let first_turn = sink.next_step(run) as i64;
        let late = carried.is_some();
        let Carried {
            agent: root_agent,
            mut verdict,
            task,
        } = carried.unwrap_or_default();
        let mut agents: HashMap<usize, Option<String>> = HashMap::new();
        let mut position: HashMap<usize, usize> = HashMap::new();
        let mut events = Vec::with_capacity(members.len());
        let mut parents = Vec::with_capacity(members.len());
        let mut times = Vec::with_capacity(members.len());
        let mut root_input = None;
        let mut own_root_agent = None;
        for (i, parent) in spans::preorder(nodes, members) {
            let node = &nodes[i];
            // Late, a node whose parent was emitted before is not a root.
            let orphan = late && parent.is_none() && node.parent.is_some();
            let inherited = match parent {
                Some(p) => agents.get(&p).cloned().flatten(),
                None if orphan => root_agent.clone(),
                None => None,
            };
            let own = node
                .agent
                .clone()
                .or(inherited)
                .or_else(|| node.span_agent.clone());
            agents.insert(i, own.clone());
            let agent = own
                .clone()
                .or_else(|| node.fallback_agent.clone())
                .unwrap_or_else(|| "unknown".to_string());
            let id = unique_id(&node.id, node.seq, &mut self.used);
            let turn = first_turn + events.len() as i64;
            if parent.is_none() && !orphan {
                root_input = root_input.or_else(|| node.input.clone());
                own_root_agent = own_root_agent.or(Some(own));
                verdict.roots += 1;
                verdict.roots_ok += usize::from(node.stated_ok);
                verdict.root_failed |= node.failure.is_some();
            }
            position.insert(i, events.len());
            times.push((node.start, node.end));
            parents.push(parent.and_then(|p| position.get(&p).copied()));
            events.push(event_of(node, id, agent, turn, sink));
        }
        inherit_failures(&mut events, &parents);
        spans::pass_failures_up(&mut events, &parents);
        let mut unsettled = spans::Unsettled::default();
        for (k, pos) in spans::emission_order(&events, &parents, &times)
            .into_iter()
            .enumerate()
        {
            events[pos].turn = first_turn + k as i64;
            unsettled.note(&events[pos], times[pos]);
            sink.emit_event(&events[pos])?;
        }
        verdict.failed |= unsettled.failed();
        let info = runs.get(run).cloned().unwrap_or_default();
        let task = info.task.or(task).or(root_input);
        let outcome = verdict.outcome();
        sink.emit_run(&RunRec {
            reason: (outcome == Outcome::Failed).then_some(OutcomeReason::Error),
            task: task.clone(),
            ..RunRec::new(run.as_str(), outcome)
        })?;
        Ok(Carried {
            agent: own_root_agent.flatten().or(root_agent),
            verdict,
            task,
        })
    }
}

/// The nodes of one run of a trace (`members` of `nodes`), and what a
/// part of it emitted before hands on.
struct Part<'n> {
    nodes: &'n [Node],
    members: &'n [usize],
    carried: Option<Carried>,
}

/// A failure a span states (status, error, exception) while none of its
/// children records one surfaced in one of them: the last child gets it
/// too, marked inferred with `failure_source` "inherited". `parents` holds
/// each event's parent's position; parents come before their children.
fn inherit_failures(events: &mut [EventOut<'_>], parents: &[Option<usize>]) {
    // Each parent's last child, and whether any child failed, in one pass.
    let mut last_kid = vec![None; events.len()];
    let mut kid_failed = vec![false; events.len()];
    for (k, parent) in parents.iter().enumerate() {
        if let Some(p) = *parent
            && p < k
        {
            last_kid[p] = Some(k);
            kid_failed[p] |= !events[k].action_succeeded;
        }
    }
    for p in 0..events.len() {
        let stated = matches!(
            events[p].failure_source,
            Some(FailureSource::Status | FailureSource::Error | FailureSource::Exception)
        );
        if events[p].action_succeeded || !stated || kid_failed[p] {
            continue;
        }
        if let Some(last) = last_kid[p] {
            spans::inherit_failure(events, p, last);
        }
    }
}

/// The ids an input's events have been given.
pub(crate) trait UsedIds {
    fn has(&self, id: &str) -> bool;
    fn add(&mut self, id: &str);
}

impl UsedIds for HashSet<String> {
    fn has(&self, id: &str) -> bool {
        self.contains(id)
    }
    fn add(&mut self, id: &str) {
        self.insert(id.to_string());
    }
}

impl UsedIds for RecentIds {
    fn has(&self, id: &str) -> bool {
        self.contains(id)
    }
    fn add(&mut self, id: &str) {
        self.insert(id);
    }
}

/// The id, unless an earlier event of the input had it.
pub(crate) fn unique_id(id: &str, index: usize, used: &mut impl UsedIds) -> String {
    let id = if id.is_empty() || used.has(id) {
        format!("{id}#{index}")
    } else {
        id.to_string()
    };
    used.add(&id);
    id
}

fn event_of<'a>(
    node: &'a Node,
    id: String,
    agent: String,
    turn: i64,
    sink: &Sink<'_>,
) -> EventOut<'a> {
    // A nameless observation (a Langfuse generation sent without a name)
    // is named by its kind, so patterns never group under "".
    let tool = [node.tool.as_deref(), Some(node.name.as_str())]
        .into_iter()
        .flatten()
        .find(|t| !t.trim().is_empty())
        .unwrap_or(node.kind);
    let mut ev = EventOut::new(id, node.run.as_str(), turn, agent, tool, true);
    ev.action_taken.tool_input = node
        .tool_input
        .clone()
        .filter(|_| node.kind == "tool")
        .filter(Value::is_object)
        .map(JsonVal::Serde);
    ev.set_time_nanos(node.start);
    ev.span_id = (!node.id.is_empty()).then(|| node.id.as_str().into());
    ev.parent_span_id = node.parent.as_deref().map(Into::into);
    ev.span_kind = Some(node.kind);
    ev.usage = node.usage.clone().map(JsonVal::Serde);
    ev.latency_ms = spans::duration_ms(node.start, node.end).map(|total| {
        JsonVal::Latency(crate::record::Latency {
            total: Some(total),
            ..Default::default()
        })
    });
    if let Some((source, error)) = &node.failure {
        ev.action_succeeded = false;
        ev.failure_source = Some(*source);
        ev.error = Some(error.clone());
    }
    ev.input = node.input.clone();
    ev.input_digest = node.input_digest.clone();
    ev.output = node.output.clone();
    ev.output_digest = node.output_digest.clone();
    ev.src = node.line.map(|line| Src {
        path: sink.path().to_string().into(),
        line,
    });
    sink.settings.infer_failure(&mut ev);
    ev
}
