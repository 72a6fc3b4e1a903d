//! Grouping failure events into incident patterns, with the reference's
//! recovery semantics, in one pass, as a partial aggregate that merges.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as HashMap;

use crate::plumbing::intern::Interner;
use crate::record::{
    Batch, EventConsumer, EventView, OutOfOrder, Outcome, Pattern, RunRec, Sample, SourceRec,
};
use crate::timestamp::Timestamp;

mod patterns;
mod recovery;

use patterns::*;
pub use patterns::{display_name, pattern_id};
use recovery::*;
pub use recovery::{median_recovery, recovered_within};

/// Samples kept per pattern.
pub(crate) const SAMPLES_PER_PATTERN: usize = 5;
/// Events held for exact recovery whatever their order, before switching to
/// streaming (which assumes each run's events come in turn order).
pub(crate) const DEFAULT_BUFFER_EVENTS: usize = 1 << 20;

const SUCCESS: u32 = u32::MAX;

/// A merged partial's open timeline: (run, agent), its pending failures
/// by pattern id, and its earliest success.
type CarriedTimeline = ((u32, u32), Vec<(i64, String)>, Option<i64>);

/// One timeline's pending failures (turn, pattern) and the earliest
/// successes every shard saw on it.
type OpenParts = (Vec<(i64, u32)>, Vec<i64>);

/// The streaming grouper: feed events (and, to merge shards, partial
/// batches and patterns), then `finish`.
pub struct Grouper {
    window: u64,
    buffer_limit: usize,
    buffered: usize,
    streaming: bool,
    runs: Interner,
    agents: Interner,
    timelines: HashMap<(u32, u32), Timeline>,
    patterns: Vec<PatternAcc>,
    pattern_ids: HashMap<Box<str>, u32>,
    key: String,
    events_total: u64,
    failures_total: u64,
    skipped: u64,
    sources: Vec<SourceRec>,
    first_ts: Option<Timestamp>,
    last_ts: Option<Timestamp>,
    /// Each run's earliest event timestamp, by run number.
    run_first: Vec<Option<Timestamp>>,
    /// What the run records say of each run (outcome, why, task and
    /// trial; no long texts), by run number.
    run_facts: Vec<Option<RunRec>>,
    /// Failure events of each run, by run number.
    run_failures: Vec<u64>,
    /// Whether the batch carries its open timelines (a partial to merge).
    keep_open: bool,
    /// With `keep_open`: each timeline's earliest success turn.
    first_success: HashMap<(u32, u32), i64>,
    /// Open timelines of merged partials: (timeline, pending failures by
    /// pattern id, earliest success).
    carried: Vec<CarriedTimeline>,
}

impl Grouper {
    /// `window`: the recovery window the `recovered` field counts with.
    pub fn new(window: u64) -> Self {
        Grouper::with_buffer(window, DEFAULT_BUFFER_EVENTS)
    }

    pub fn with_buffer(window: u64, buffer_limit: usize) -> Self {
        Grouper {
            window,
            buffer_limit,
            buffered: 0,
            streaming: false,
            runs: Interner::default(),
            agents: Interner::default(),
            timelines: HashMap::default(),
            patterns: Vec::new(),
            pattern_ids: HashMap::default(),
            key: String::new(),
            events_total: 0,
            failures_total: 0,
            skipped: 0,
            sources: Vec::new(),
            first_ts: None,
            last_ts: None,
            run_first: Vec::new(),
            run_facts: Vec::new(),
            run_failures: Vec::new(),
            keep_open: false,
            first_success: HashMap::default(),
            carried: Vec::new(),
        }
    }

    /// Makes the batch a partial that carries its open timelines, so that
    /// a merge recovers failures across shards that cut a run in two
    /// (triage-group; `triage report` needs none).
    pub fn keeping_open_timelines(mut self) -> Self {
        self.keep_open = true;
        self
    }

    /// Takes a `run` record: what a format states of a run, or a shard's
    /// merged record (whose `failure_events` it adds). Statements about
    /// one run merge whatever order they come in ([`RunRec::merge`]).
    pub fn add_run(&mut self, rec: &RunRec) {
        let run = self.runs.intern(&rec.run_id) as usize;
        if run >= self.run_facts.len() {
            self.run_facts.resize(run + 1, None);
        }
        let slim = RunRec {
            failure_events: None,
            task: None,
            expected: None,
            policy: None,
            src: None,
            ..rec.clone()
        };
        match &mut self.run_facts[run] {
            Some(facts) => facts.merge(&slim),
            slot => *slot = Some(slim),
        }
        if let Some(n) = rec.failure_events {
            self.count_run_failures(run, n);
        }
    }

    fn count_run_failures(&mut self, run: usize, n: u64) {
        if run >= self.run_failures.len() {
            self.run_failures.resize(run + 1, 0);
        }
        self.run_failures[run] += n;
    }

    /// Counts `t` into the earliest timestamp of run number `run`.
    fn note_run_time(&mut self, run: u32, t: Timestamp) {
        let i = run as usize;
        if i >= self.run_first.len() {
            self.run_first.resize(i + 1, None);
        }
        let first = &mut self.run_first[i];
        *first = Some(first.map_or(t, |f| f.min(t)));
    }

    /// Adds one event.
    pub fn add_event(&mut self, ev: &EventView<'_>) -> Option<OutOfOrder> {
        let ts = ev.timestamp.as_deref().and_then(Timestamp::parse);
        self.add_event_at(ev, ts)
    }

    /// Adds one event whose timestamp the caller has read already.
    pub(crate) fn add_event_at(
        &mut self,
        ev: &EventView<'_>,
        ts: Option<Timestamp>,
    ) -> Option<OutOfOrder> {
        self.events_total += 1;
        let run = self.runs.intern(&ev.run_id);
        let agent = self.agents.intern(&ev.agent_id);
        if let Some(t) = ts {
            self.first_ts = Some(self.first_ts.map_or(t, |f| f.min(t)));
            self.last_ts = Some(self.last_ts.map_or(t, |l| l.max(t)));
            self.note_run_time(run, t);
        }
        let failure = if ev.is_failure() {
            self.failures_total += 1;
            self.count_run_failures(run as usize, 1);
            Some(self.count_failure(ev, run, ts))
        } else {
            None
        };
        let step = TimelineStep {
            turn: ev.turn,
            failure,
            succeeded: ev.action_succeeded,
        };
        if self.keep_open && ev.action_succeeded {
            let first = self.first_success.entry((run, agent)).or_insert(ev.turn);
            *first = (*first).min(ev.turn);
        }
        if !self.streaming {
            self.buffer_event((run, agent), step);
            if self.buffered > self.buffer_limit {
                self.start_streaming();
            }
            return None;
        }
        self.stream_event((run, agent), step)
    }

    /// Logs an event while buffering, and resolves it at once while its
    /// timeline is in turn order.
    fn buffer_event(&mut self, timeline: (u32, u32), step: TimelineStep) {
        let TimelineStep {
            turn,
            failure,
            succeeded,
        } = step;
        let tl = self.timelines.entry(timeline).or_default();
        let patterns = &mut self.patterns;
        if !tl.unordered && !tl.log.is_empty() && turn < tl.max_turn {
            // Out of order: what the log's events recovered so far is taken
            // back, and the whole log is resolved once sorted.
            tl.unordered = true;
            tl.pending.clear();
            replay_in_order(&tl.log, |p, offset| {
                patterns[p as usize].latencies.remove(offset, 1)
            });
        }
        if let Some(p) = failure {
            tl.log.push((turn, p));
            self.buffered += 1;
        }
        if succeeded {
            tl.log.push((turn, SUCCESS));
            self.buffered += 1;
        }
        if tl.unordered {
            return;
        }
        tl.max_turn = turn;
        tl.advance(true, step, |p, offset| {
            patterns[p as usize].latencies.add(offset, 1)
        });
    }

    fn stream_event(&mut self, timeline: (u32, u32), step: TimelineStep) -> Option<OutOfOrder> {
        let (run, agent) = timeline;
        let turn = step.turn;
        let tl = self.timelines.entry(timeline).or_default();
        let mut warning = None;
        if turn < tl.max_turn && !tl.warned {
            tl.warned = true;
            warning = Some(OutOfOrder {
                run_id: self.runs.name(run).to_string(),
                agent_id: self.agents.name(agent).to_string(),
            });
        }
        tl.max_turn = tl.max_turn.max(turn);
        // Pending failures stay in turn order until one comes back.
        let sorted = !tl.warned;
        let patterns = &mut self.patterns;
        tl.advance(sorted, step, |p, offset| {
            patterns[p as usize].latencies.add(offset, 1)
        });
        // A timeline with nothing pending needs no memory until it fails again.
        if tl.pending.is_empty() && !tl.warned {
            self.timelines.remove(&timeline);
        }
        warning
    }

    /// Resolves every buffered timeline and continues in streaming mode.
    fn start_streaming(&mut self) {
        self.streaming = true;
        let mut timelines = std::mem::take(&mut self.timelines);
        for tl in timelines.values_mut() {
            if std::mem::take(&mut tl.unordered) {
                self.resolve_log(tl);
            } else {
                tl.log = Vec::new();
            }
        }
        timelines.retain(|_, tl| !tl.pending.is_empty());
        self.timelines = timelines;
        self.buffered = 0;
    }

    /// Exact recovery for a buffered timeline whose events went back in
    /// turn order: ordered by turn (stable), the first success at a greater
    /// turn resolves each failure. Failures with none are left pending.
    fn resolve_log(&mut self, tl: &mut Timeline) {
        let mut log = std::mem::take(&mut tl.log);
        log.sort_by_key(|e| e.0);
        let mut next_success: Option<i64> = None;
        let mut i = log.len();
        while i > 0 {
            let turn = log[i - 1].0;
            let mut j = i;
            let mut has_success = false;
            while j > 0 && log[j - 1].0 == turn {
                j -= 1;
                match log[j].1 {
                    SUCCESS => has_success = true,
                    p => match next_success {
                        Some(s) => self.patterns[p as usize]
                            .latencies
                            .add((s - turn) as u64, 1),
                        None => tl.pending.push((turn, p)),
                    },
                }
            }
            if has_success {
                next_success = Some(turn);
            }
            i = j;
        }
        tl.pending.reverse();
        tl.max_turn = log.last().map_or(i64::MIN, |e| e.0);
    }

    fn count_failure(&mut self, ev: &EventView<'_>, run: u32, ts: Option<Timestamp>) -> u32 {
        let class = ev.classification().unwrap_or("unclassified");
        let mut divs: Vec<&str> = ev
            .divergence_fields
            .iter()
            .flatten()
            .map(|d| d.as_ref())
            .collect();
        divs.sort_unstable();
        divs.dedup();
        let p = self.pattern_for(&ev.agent_id, &ev.action_taken.tool_name, class, &divs);
        let acc = &mut self.patterns[p as usize];
        acc.frequency += 1;
        acc.count_run(run, 1);
        if let Some(t) = ts {
            *acc.day_counts.entry(t.day_number()).or_insert(0) += 1;
            *acc.hour_counts.entry(t.hour_number()).or_insert(0) += 1;
        }
        acc.add_sample(ts, || Sample {
            event_id: ev.event_id.to_string(),
            run_id: ev.run_id.to_string(),
            turn: ev.turn,
            step: ev.step,
            text: sample_text(ev),
            timestamp: ts.map(|t| t.to_string()),
        });
        p
    }

    fn pattern_for(&mut self, agent: &str, tool: &str, class: &str, divs: &[&str]) -> u32 {
        self.key.clear();
        for part in [agent, tool, class].into_iter().chain(divs.iter().copied()) {
            self.key.push_str(part);
            self.key.push('\0');
        }
        if let Some(&p) = self.pattern_ids.get(self.key.as_str()) {
            return p;
        }
        let p = self.patterns.len() as u32;
        self.pattern_ids.insert(self.key.as_str().into(), p);
        self.patterns.push(PatternAcc {
            agent_id: agent.to_string(),
            tool_name: tool.to_string(),
            classification: class.to_string(),
            divergence_fields: divs.iter().map(|d| d.to_string()).collect(),
            frequency: 0,
            latencies: LatencyCounts::default(),
            run_counts: Vec::new(),
            day_counts: BTreeMap::new(),
            hour_counts: BTreeMap::new(),
            samples: Vec::new(),
            sample_times: Vec::new(),
        });
        p
    }

    /// Counts a `source` record into the batch.
    pub(crate) fn add_source(&mut self, s: SourceRec) {
        self.skipped += s.skipped;
        self.sources.push(s);
    }

    /// Folds in a partial `batch` from another shard.
    pub fn add_batch(&mut self, b: &Batch) {
        for t in &b.open_timelines {
            let key = (self.runs.intern(&t.run_id), self.agents.intern(&t.agent_id));
            self.carried.push((key, t.pending.clone(), t.first_success));
        }
        for (i, r) in b.run_order.iter().enumerate() {
            let run = self.runs.intern(r);
            let first = b.run_first_timestamps.get(i).cloned().flatten();
            if let Some(t) = first.as_deref().and_then(Timestamp::parse) {
                self.note_run_time(run, t);
            }
        }
        self.events_total += b.events_total;
        self.failures_total += b.failures_total;
        self.skipped += b.skipped;
        self.sources.extend(b.sources.iter().cloned());
        for (ts, pick_min) in [(&b.first_timestamp, true), (&b.last_timestamp, false)] {
            let Some(t) = ts.as_deref().and_then(Timestamp::parse) else {
                continue;
            };
            if pick_min {
                self.first_ts = Some(self.first_ts.map_or(t, |f| f.min(t)));
            } else {
                self.last_ts = Some(self.last_ts.map_or(t, |l| l.max(t)));
            }
        }
    }

    /// Folds in a partial `pattern` from another shard.
    pub fn add_pattern(&mut self, pat: &Pattern) {
        let divs: Vec<&str> = pat.divergence_fields.iter().map(String::as_str).collect();
        let p = self.pattern_for(
            &pat.agent_id,
            &pat.tool_name,
            &pat.failure_classification,
            &divs,
        );
        let runs: Vec<(u32, u64)> = pat
            .run_counts
            .0
            .iter()
            .map(|(r, n)| (self.runs.intern(r), *n))
            .collect();
        let acc = &mut self.patterns[p as usize];
        acc.frequency += pat.frequency;
        for (o, n) in &pat.recovery_latencies {
            acc.latencies.add(*o, *n);
        }
        for (r, n) in runs {
            acc.count_run(r, n);
        }
        for (d, n) in &pat.day_counts {
            let Some(day) = Timestamp::parse(d) else {
                continue;
            };
            *acc.day_counts.entry(day.day_number()).or_insert(0) += n;
        }
        for (h, n) in &pat.hour_counts {
            let Some(hour) = Timestamp::parse(h) else {
                continue;
            };
            *acc.hour_counts.entry(hour.hour_number()).or_insert(0) += n;
        }
        for s in &pat.samples {
            let at = s.timestamp.as_deref().and_then(Timestamp::parse);
            acc.add_sample(at, || s.clone());
        }
    }

    /// Resolves what is left and returns the batch, its runs in time order
    /// ([`time_order`]), and the patterns in the order they first appear
    /// in those runs.
    pub fn finish(self) -> (Batch, Vec<RunRec>, Vec<Pattern>) {
        let (batch, runs, patterns) = self.finish_lazily();
        (batch, runs, patterns.collect())
    }

    /// As [`Grouper::finish`], with each pattern built only when the
    /// iterator reaches it, so a writer holds one at a time beside the
    /// running totals rather than all of them.
    pub(crate) fn finish_lazily(mut self) -> (Batch, Vec<RunRec>, impl Iterator<Item = Pattern>) {
        if !self.streaming {
            self.start_streaming();
        }
        let open_timelines = self.settle_open_timelines();
        // Failures still waiting for a success stay unrecovered; their
        // timelines are not needed any more.
        self.timelines = HashMap::default();
        let runs_total = self.runs.len();
        self.run_first.resize(runs_total, None);
        self.run_facts.resize(runs_total, None);
        self.run_failures.resize(runs_total, 0);
        let order = time_order(&self.run_first, &self.runs);
        let run_records: Vec<RunRec> = order
            .iter()
            .map(|&r| {
                let facts = self.run_facts[r as usize].take();
                RunRec {
                    failure_events: Some(self.run_failures[r as usize]),
                    ..facts.unwrap_or_else(|| RunRec::new(self.runs.name(r), Outcome::Unknown))
                }
            })
            .collect();
        let count = |o: Outcome| run_records.iter().filter(|r| r.outcome == o).count() as u64;
        let mut position = vec![0u32; runs_total];
        for (i, &run) in order.iter().enumerate() {
            position[run as usize] = i as u32;
        }
        let timed = self.run_first.iter().any(Option::is_some);
        let batch = Batch {
            kind: crate::record::BatchKind,
            runs_total: runs_total as u64,
            run_order: order
                .iter()
                .map(|&r| self.runs.name(r).to_string())
                .collect(),
            run_first_timestamps: if timed {
                order
                    .iter()
                    .map(|&r| self.run_first[r as usize].map(|t| t.to_string()))
                    .collect()
            } else {
                Vec::new()
            },
            events_total: self.events_total,
            failures_total: self.failures_total,
            skipped: self.skipped,
            sources: std::mem::take(&mut self.sources),
            first_timestamp: self.first_ts.map(|t| t.to_string()),
            last_timestamp: self.last_ts.map(|t| t.to_string()),
            recovery_window: None,
            runs_failed: count(Outcome::Failed),
            runs_succeeded: count(Outcome::Succeeded),
            open_timelines,
        };
        let window = self.window;
        let runs = self.runs;
        let mut accs = self.patterns;
        for acc in &mut accs {
            acc.run_counts
                .sort_unstable_by_key(|&(r, _)| position[r as usize]);
        }
        // Patterns first seen in the same run follow their earliest kept
        // failure there, then their names: one pass and a merge of shards
        // agree whatever order the inputs came in.
        accs.sort_by_cached_key(|acc| {
            let first = acc.run_counts.first().map(|&(r, _)| r);
            let lead = first.and_then(|r| {
                let name = runs.name(r);
                acc.samples
                    .iter()
                    .zip(&acc.sample_times)
                    .filter(|(s, _)| s.run_id == name)
                    .map(|(s, &t)| (t, s.turn, s.step))
                    .min()
            });
            let name = (
                acc.agent_id.clone(),
                acc.tool_name.clone(),
                acc.classification.clone(),
                acc.divergence_fields.clone(),
            );
            (first.map(|r| position[r as usize]), lead, name)
        });
        let patterns = accs
            .into_iter()
            .map(move |acc| finish_pattern(acc, &runs, &position, window));
        (batch, run_records, patterns)
    }
}

impl Grouper {
    /// Resolves the failures each timeline left waiting against the
    /// earliest success every shard saw on it (exact when the shards cut
    /// runs in turn order, as cutting a file in parts does), and returns
    /// what is still open when the batch is a partial.
    fn settle_open_timelines(&mut self) -> Vec<crate::record::OpenTimeline> {
        if self.carried.is_empty() && !self.keep_open {
            return Vec::new();
        }
        let names: Vec<String> = self
            .patterns
            .iter()
            .map(|a| {
                pattern_id(
                    &a.agent_id,
                    &a.tool_name,
                    &a.classification,
                    &a.divergence_fields,
                )
            })
            .collect();
        let ids: HashMap<&str, u32> = (0..).zip(&names).map(|(i, n)| (n.as_str(), i)).collect();
        // Timeline → (pending failures, successes' earliest turns).
        let mut open: BTreeMap<(u32, u32), OpenParts> = BTreeMap::new();
        for (key, tl) in &self.timelines {
            open.entry(*key).or_default().0.extend(&tl.pending);
        }
        for (key, turn) in &self.first_success {
            open.entry(*key).or_default().1.push(*turn);
        }
        for (key, pending, first) in std::mem::take(&mut self.carried) {
            let e = open.entry(key).or_default();
            e.0.extend(
                pending
                    .iter()
                    .filter_map(|(t, id)| Some((*t, *ids.get(id.as_str())?))),
            );
            e.1.extend(first);
        }
        let mut out = Vec::new();
        for ((run, agent), (pending, successes)) in open {
            let mut left = Vec::new();
            for (t, p) in pending {
                match successes.iter().filter(|s| **s > t).min() {
                    Some(s) => self.patterns[p as usize].latencies.add((s - t) as u64, 1),
                    None => left.push((t, p)),
                }
            }
            if self.keep_open {
                left.sort_unstable();
                out.push(crate::record::OpenTimeline {
                    run_id: self.runs.name(run).to_string(),
                    agent_id: self.agents.name(agent).to_string(),
                    pending: left
                        .into_iter()
                        .map(|(t, p)| (t, names[p as usize].clone()))
                        .collect(),
                    first_success: successes.into_iter().min(),
                });
            }
        }
        out
    }
}

/// Run numbers in time order: by each run's earliest timestamp, runs that
/// started at the same instant by their ids (numbers in ids by value,
/// `task-2` before `task-10`), so the order of files, lines and shards
/// never changes it. A run without a timestamp takes that of the run before
/// it in the input and stays after it: without timestamps, input order is
/// the only order a batch has (and the reference's).
pub(crate) fn time_order(first: &[Option<Timestamp>], runs: &Interner) -> Vec<u32> {
    let mut carried = None;
    let mut keys: Vec<(Option<Timestamp>, bool, u32)> = first
        .iter()
        .enumerate()
        .map(|(i, t)| {
            carried = t.or(carried);
            (carried, t.is_none(), i as u32)
        })
        .collect();
    keys.sort_by(|a, b| {
        (a.0, a.1).cmp(&(b.0, b.1)).then_with(|| {
            if a.1 {
                a.2.cmp(&b.2)
            } else {
                crate::record::natural_cmp(runs.name(a.2), runs.name(b.2))
            }
        })
    });
    keys.into_iter().map(|(.., i)| i).collect()
}

impl EventConsumer for Grouper {
    fn add_source(&mut self, source: SourceRec) {
        Grouper::add_source(self, source);
    }

    fn add_run(&mut self, run: &RunRec) {
        Grouper::add_run(self, run);
    }

    fn add_event_at(&mut self, ev: &EventView<'_>, at: Option<Timestamp>) -> Option<OutOfOrder> {
        Grouper::add_event_at(self, ev, at)
    }
}

#[cfg(test)]
mod tests;
