//! Emitting held spans: traces in first-appearance order, spans in tree
//! pre-order, each as an event, and each trace's run.

use std::borrow::Cow;
use std::rc::Rc;

use crate::adapters::read::spans::RecentIds;
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;

use super::{HeldSpan, json_in_text};
use crate::adapters::read::spans::{self, StatusCode};
use crate::adapters::settings::DecodeSettings;
use crate::adapters::sink::Sink;
use crate::classify::mark_inferred;
use crate::record::{
    ActionOut, EventOut, FailureSource, JsonVal, Latency, Outcome, OutcomeReason, RunRec, Src,
};

/// What an emitted trace carries over to spans of it that come late: the
/// names its root has or inherits, shared by each part that continues it.
#[derive(Clone)]
pub(crate) struct Carried {
    agent: Option<Rc<str>>,
    agent_fallback: Option<Rc<str>>,
    run: Option<Rc<str>>,
}

/// Turns complete traces into events: what the traces of one input share
/// (the event ids given, the runs seen, the links between traces).
#[derive(Default)]
pub(crate) struct Emitter {
    used_ids: RecentIds,
    runs: Runs,
    links: Links,
    /// Spans of runtime plumbing held and not emitted.
    plumbing: u64,
    /// Of them, messages delivered.
    deliveries: u64,
    emitted: u64,
}

/// Which trace each trace continues: a message-passing runtime
/// (AutoGen's) starts a trace for every message it delivers, its root the
/// delivery, linked to the sender's span, so one team's run is a chain of
/// linked traces. Only a delivery's link counts (a job that merely links
/// to the request that queued it is a run of its own), and only to a
/// trace of the input: a link to a trace nobody exported names no run.
#[derive(Default)]
struct Links {
    continues: FxHashMap<String, String>,
    /// The traces of the input, as hashes of their ids.
    seen: FxHashSet<u64>,
    /// The head of each trace's chain, once known.
    heads: FxHashMap<String, String>,
    /// The run a trace's root named, where it named one.
    runs: FxHashMap<String, String>,
}

impl Links {
    /// The trace a chain of links from `trace` leads back to, if another;
    /// the least trace of a cycle of links heads it.
    fn chain_head(&mut self, trace: &str) -> Option<String> {
        if self.continues.is_empty() {
            return None;
        }
        let mut path = vec![trace.to_string()];
        let head = loop {
            let at = path.last().expect("the path starts with the trace");
            if let Some(head) = self.heads.get(at) {
                break head.clone();
            }
            match self.continues.get(at) {
                Some(prev) if self.seen.contains(&spans::id_hash(prev)) => {
                    if let Some(pos) = path.iter().position(|p| p == prev) {
                        break path[pos..].iter().min().cloned().unwrap_or_default();
                    }
                    path.push(prev.clone());
                }
                _ => break at.clone(),
            }
        };
        for p in path {
            self.heads.insert(p, head.clone());
        }
        (head != trace).then_some(head)
    }

    /// The run of the trace that heads a chain: the run its root named,
    /// else the trace's id.
    fn run_of(&self, head: String) -> String {
        self.runs.get(&head).cloned().unwrap_or(head)
    }
}

/// What a span has of its own or inherits, borrowed from the spans of its
/// trace (or from what an earlier part of it handed on).
#[derive(Clone, Copy, Default)]
pub(crate) struct Resolved<'a> {
    agent: Option<&'a str>,
    agent_fallback: Option<&'a str>,
    run: Option<&'a str>,
}

impl<'a> Resolved<'a> {
    fn owned(self) -> Carried {
        Carried {
            agent: self.agent.map(Rc::from),
            agent_fallback: self.agent_fallback.map(Rc::from),
            run: self.run.map(Rc::from),
        }
    }
}

impl Carried {
    fn borrowed(&self) -> Resolved<'_> {
        Resolved {
            agent: self.agent.as_deref(),
            agent_fallback: self.agent_fallback.as_deref(),
            run: self.run.as_deref(),
        }
    }
}

impl Emitter {
    /// Notes a span's trace (once, with its first span), and the trace a
    /// delivery at its root continues.
    pub(crate) fn note_trace(&mut self, span: &HeldSpan, first_of_trace: bool) {
        if first_of_trace {
            self.links.seen.insert(spans::id_hash(span.trace_id()));
        }
        if let Some(linked) = span.continues_trace().filter(|_| span.is_plumbing()) {
            (self.links.continues)
                .entry(span.trace_id().to_string())
                .or_insert_with(|| linked.to_string());
        }
        // A root's own run, for the traces that continue it and come
        // first; kept only where deliveries link traces.
        if span.parent_id.is_none()
            && !self.links.continues.is_empty()
            && let Some(run) = span.run.as_deref().or(span.conversation.as_deref())
        {
            (self.links.runs)
                .entry(span.trace_id().to_string())
                .or_insert_with(|| run.to_string());
        }
    }

    /// Spans of runtime plumbing held and not emitted, events emitted, and
    /// whether messages were delivered and none linked its trace to
    /// another (so the traces of one run stay apart).
    pub(crate) fn counts(&self) -> (u64, u64, bool) {
        let unlinked = self.deliveries > 0 && self.links.continues.is_empty();
        (self.plumbing, self.emitted, unlinked)
    }

    /// Emits one trace's spans (in arrival order); `carried` is what a
    /// trace emitted before hands on to spans of it that came late.
    /// Returns what its root hands on.
    pub(crate) fn emit_trace(
        &mut self,
        held: Vec<HeldSpan>,
        carried: Option<Carried>,
        sink: &mut Sink<'_>,
    ) -> anyhow::Result<Option<Carried>> {
        let members: Vec<usize> = (0..held.len()).collect();
        let order = spans::preorder(&held, &members);
        // What each span has of its own or inherits, parents first,
        // borrowed: only what the trace hands on is made to outlive it.
        let mut resolved: Vec<Resolved<'_>> = vec![Resolved::default(); held.len()];
        // Spans whose parent is not in the trace hang under its root.
        let mut root: Option<Resolved<'_>> = carried.as_ref().map(Carried::borrowed);
        let mut own_root = None;
        for &(i, parent) in &order {
            let span = &held[i];
            let from_parent = match parent {
                Some(p) => resolved[p],
                None if span.parent_id.is_some() => root.unwrap_or_default(),
                None => Resolved::default(),
            };
            let mine = Resolved {
                agent: span.agent.as_deref().or(from_parent.agent),
                agent_fallback: span
                    .agent_fallback
                    .as_deref()
                    .or(from_parent.agent_fallback),
                run: (span.run.as_deref())
                    .or(span.conversation.as_deref())
                    .or(from_parent.run),
            };
            if span.parent_id.is_none() {
                root.get_or_insert(mine);
                own_root.get_or_insert(mine);
            }
            resolved[i] = mine;
        }
        // A trace that continues another is the same run, unless its spans
        // name a run of their own.
        let trace_id = held.first().map(|s| s.trace_id().to_string());
        let continued = (trace_id.as_deref())
            .and_then(|t| self.links.chain_head(t))
            .map(|head| self.links.run_of(head));
        if let Some(run) = continued.as_deref() {
            for r in resolved
                .iter_mut()
                .chain(&mut own_root)
                .filter(|r| r.run.is_none())
            {
                r.run = Some(run);
            }
        }
        // Kept only where deliveries link traces: a stream without them
        // holds nothing per trace.
        if let (Some(trace), Some(run)) = (&trace_id, own_root.and_then(|r| r.run))
            && !self.links.continues.is_empty()
        {
            self.links.runs.insert(trace.clone(), run.to_string());
        }
        let carried = own_root.or(root).map(Resolved::owned);
        let path = sink.path().to_string();
        let mut events = Vec::with_capacity(order.len());
        for &(i, _) in &order {
            let span = &held[i];
            let source = EventSource {
                path: &path,
                used_ids: &mut self.used_ids,
            };
            events.push(event_of(
                span,
                span.seq,
                &resolved[i],
                source,
                &sink.settings,
            ));
        }
        let mut position = vec![0; order.len()];
        for (pos, (i, _)) in order.iter().enumerate() {
            position[*i] = pos;
        }
        let parents: Vec<Option<usize>> =
            order.iter().map(|(_, p)| p.map(|p| position[p])).collect();
        blame_last_child(&held, &order, &parents, &mut events);
        spans::pass_failures_up(&mut events, &parents);
        // Plumbing is read for what its spans hand on and not emitted: a
        // step below it hangs under its nearest emitted ancestor.
        let mut shown: Vec<Option<&str>> = vec![None; held.len()];
        for &(i, parent) in &order {
            shown[i] = if held[i].is_plumbing() {
                parent.and_then(|p| shown[p])
            } else {
                Some(held[i].span_id())
            };
        }
        let times: Vec<_> = order
            .iter()
            .map(|&(i, _)| (held[i].start, held[i].end))
            .collect();
        for pos in spans::emission_order(&events, &parents, &times) {
            let (ev, (i, parent)) = (&mut events[pos], order[pos]);
            if held[i].is_plumbing() {
                self.plumbing += 1;
                self.deliveries += u64::from(held[i].operation.as_deref() != Some("create_agent"));
                continue;
            }
            if parent.is_some_and(|p| held[p].is_plumbing()) {
                ev.parent_span_id = parent.and_then(|p| shown[p]).map(Into::into);
            }
            // Without a stated turn, a span's turn is its step in the run.
            if held[i].turn.is_none() {
                ev.turn = sink.next_step(&ev.run_id) as i64;
            }
            self.runs.add(&held[i], ev);
            self.emitted += 1;
            sink.emit_event(ev)?;
        }
        Ok(carried)
    }

    /// Writes the run records, once every trace is out.
    pub(crate) fn finish(self, sink: &mut Sink<'_>) -> anyhow::Result<()> {
        for run in &self.runs.order {
            sink.emit_run(run)?;
        }
        Ok(())
    }
}

/// Says how many spans repeated the trace and span id of one read before:
/// an exporter that retries a request it thinks timed out sends its spans
/// again, and counted twice they would double the failures.
pub(crate) fn warn_repeated(dropped: u64, sink: &mut Sink<'_>) {
    if dropped > 0 {
        let path = sink.path().to_string();
        let spans = if dropped == 1 {
            "span repeats"
        } else {
            "spans repeat"
        };
        sink.diag.warn(
            "repeated-span",
            format_args!(
                "{path}: {dropped} {spans} the trace and span id of one read before \
(an exporter's retry?); each is counted once"
            ),
        );
    }
}

/// The runs of a span file in first-appearance order. The outcome is the
/// verdict a root span's status records (OK: succeeded, ERROR: failed, so a
/// failure the run recovered from does not fail a run its root calls OK);
/// without one, failed when an event failed that no later call of the same
/// agent and tool settled, else unknown (UNSET is no
/// error recorded, not success). The task is the first root's input.
#[derive(Default)]
pub(crate) struct Runs {
    order: Vec<RunRec>,
    /// Per run: the failures no later call settled, and the roots'
    /// verdict.
    seen: Vec<(spans::Unsettled, Option<bool>)>,
    index: FxHashMap<String, usize>,
}

impl Runs {
    fn new_run(&mut self, ev: &EventOut<'_>) -> usize {
        self.order.push(RunRec {
            src: ev.src.as_ref().map(|s| Src {
                path: s.path.to_string().into(),
                line: s.line,
            }),
            ..RunRec::new(ev.run_id.to_string(), Outcome::Unknown)
        });
        self.seen.push((spans::Unsettled::default(), None));
        self.index
            .insert(ev.run_id.to_string(), self.order.len() - 1);
        self.order.len() - 1
    }

    pub(crate) fn add(&mut self, span: &HeldSpan, ev: &EventOut<'_>) {
        // Looked up before an entry is made: a key for the entry would be a
        // copy of the run id per event.
        let i = match self.index.get(ev.run_id.as_ref()) {
            Some(&i) => i,
            None => self.new_run(ev),
        };
        let run = &mut self.order[i];
        let (unsettled, verdict) = &mut self.seen[i];
        let root = span.parent_id.is_none();
        unsettled.note(ev, (span.start, span.end));
        if root {
            match span.status {
                // A failed root outweighs another root's OK.
                StatusCode::Error => *verdict = Some(false),
                StatusCode::Ok if verdict.is_none() => *verdict = Some(true),
                _ => {}
            }
        }
        run.outcome = match (*verdict, unsettled.failed()) {
            (Some(true), _) => Outcome::Succeeded,
            (Some(false), _) | (None, true) => Outcome::Failed,
            (None, false) => Outcome::Unknown,
        };
        run.reason = (run.outcome == Outcome::Failed).then_some(OutcomeReason::Error);
        if root && run.task.is_none() {
            run.task = span.input.as_ref().map(|(text, _)| text.clone());
        }
    }
}

/// An ERROR span whose children all show no error (UNSET) failed in one of
/// them without saying so: its last child, unless that child's status is
/// OK, is marked failed, inferred and inherited, with the parent's error.
pub(crate) fn blame_last_child(
    held: &[HeldSpan],
    order: &[(usize, Option<usize>)],
    parents: &[Option<usize>],
    events: &mut [EventOut<'_>],
) {
    // Whether anything below a span failed, filled children first.
    let mut failed_below = vec![false; events.len()];
    let mut last_child: Vec<Option<usize>> = vec![None; events.len()];
    for pos in (0..order.len()).rev() {
        let Some(p) = parents[pos] else { continue };
        failed_below[p] |= failed_below[pos] || !events[pos].action_succeeded;
        last_child[p] = Some(last_child[p].map_or(pos, |c: usize| c.max(pos)));
    }
    for pos in 0..order.len() {
        let stated_error = held[order[pos].0].status == StatusCode::Error;
        let Some(child) = last_child[pos] else {
            continue;
        };
        if !stated_error || failed_below[pos] || held[order[child].0].status != StatusCode::Unset {
            continue;
        }
        spans::inherit_failure(events, pos, child);
    }
}

/// Where an event comes from: its input's name, and the ids the input's
/// events have been given.
pub(crate) struct EventSource<'p, 'u> {
    pub path: &'p str,
    pub used_ids: &'u mut RecentIds,
}

/// The event of one span. `resolved` holds the span's own or inherited agent
/// and run.
pub(crate) fn event_of<'a>(
    span: &'a HeldSpan,
    index: usize,
    resolved: &Resolved<'a>,
    source: EventSource<'a, '_>,
    settings: &DecodeSettings,
) -> EventOut<'a> {
    let run_id: &str = resolved.run.unwrap_or(&span.trace_id);
    let agent_id: &str = resolved
        .agent
        .or(resolved.agent_fallback)
        .or(span.service.as_deref())
        .unwrap_or("unknown");
    let turn = span.turn.unwrap_or_default();
    let tool_name = span
        .tool
        .as_deref()
        .or(span.operation.as_deref().filter(|_| span.kind != "tool"))
        .unwrap_or(&span.name);
    let (succeeded, failure_source) = outcome(span);
    let mut ev = EventOut::new(
        event_id(span, index, source.used_ids),
        run_id,
        turn,
        agent_id,
        tool_name,
        succeeded,
    );
    ev.action_taken = ActionOut {
        tool_name: tool_name.into(),
        tool_input: span.tool_input.as_ref().map(JsonVal::SerdeRef).or_else(|| {
            let (text, _) = span.input.as_ref().filter(|_| span.kind == "tool")?;
            json_in_text(text)
                .filter(Value::is_object)
                .map(JsonVal::Serde)
        }),
    };
    ev.divergence_age = span.divergence_age.as_ref().map(JsonVal::SerdeRef);
    ev.set_time_nanos(span.start);
    ev.failure_classification = span.classification.as_deref().map(Into::into);
    ev.failure_source = failure_source;
    ev.divergence_fields = span.divergence.iter().map(|d| d.as_str().into()).collect();
    ev.latency_ms = latency(span).map(JsonVal::Latency);
    ev.span_id = (!span.span_id.is_empty()).then(|| span.span_id.as_str().into());
    ev.parent_span_id = span.parent_id.as_deref().map(Into::into);
    ev.span_kind = Some(span.kind);
    ev.error = span
        .failure
        .as_ref()
        .map(|(_, e)| e.clone())
        .filter(|e| !succeeded && (e.kind.is_some() || e.message.is_some()));
    if let Some((text, digest)) = &span.input {
        ev.input = Some(text.clone());
        ev.input_digest = Some(digest.clone());
    }
    if let Some((text, digest)) = &span.output {
        ev.output = Some(text.clone());
        ev.output_digest = Some(digest.clone());
    }
    ev.src = span.line.map(|line| Src {
        path: Cow::Borrowed(source.path),
        line,
    });
    if span.unanswered && succeeded && span.stated_success.is_none() {
        mark_inferred(
            &mut ev,
            FailureSource::NoResult,
            "the tool call never returned a result",
        );
    }
    settings.infer_failure(&mut ev);
    ev
}

/// Success as the span states it (`action.succeeded`), else from its
/// status, error type and exceptions; and why it counts as a failure, a
/// label first. A labeled span keeps its stated success, as in the
/// reference: the label alone makes it a failure. UNSET is no error
/// recorded: a success with no `failure_source`.
pub(crate) fn outcome(span: &HeldSpan) -> (bool, Option<FailureSource>) {
    let marked = span.failure.as_ref().map(|(source, _)| *source);
    let succeeded = span.stated_success.unwrap_or(marked.is_none());
    let source = if span.classification.is_some() {
        Some(FailureSource::Label)
    } else if succeeded {
        None
    } else if span.stated_success == Some(false) {
        Some(FailureSource::Status)
    } else {
        marked
    };
    (succeeded, source)
}

/// The span id, unless an earlier span of the input had it (then trace and
/// span id); a span without one is named by its trace and position.
pub(crate) fn event_id<'a>(span: &'a HeldSpan, index: usize, used: &mut RecentIds) -> Cow<'a, str> {
    let id = if span.span_id.is_empty() {
        format!("{}:#{index}", span.trace_id)
    } else if used.contains_hash(span.span_hash) {
        format!("{}:{}", span.trace_id, span.span_id)
    } else {
        // The common case: the span's own id, whose hash is known.
        used.insert_hash(span.span_hash);
        return Cow::Borrowed(&span.span_id);
    };
    if used.contains(&id) {
        let unique = format!("{id}#{index}");
        used.insert(&unique);
        return Cow::Owned(unique);
    }
    used.insert(&id);
    Cow::Owned(id)
}

fn latency(span: &HeldSpan) -> Option<Latency> {
    let latency = Latency {
        llm: span.llm_ms,
        tool: span.tool_ms,
        total: spans::duration_ms(span.start, span.end),
    };
    (latency != Latency::default()).then_some(latency)
}
