//! Recovery as the reference counts it: each run's timeline of failures and
//! successes, replayed in turn order, and the latencies to recovery.

use std::collections::BTreeMap;

use super::SUCCESS;

/// One (run, agent) timeline: what is needed to find, for each failure, the
/// first later turn of the same agent that succeeded.
#[derive(Default)]
pub(super) struct Timeline {
    /// Every event while buffering: (turn, pattern or SUCCESS).
    pub(super) log: Vec<(i64, u32)>,
    /// Failures that no later success has resolved yet: once buffering has
    /// stopped, and while buffering as long as the log is in turn order.
    pub(super) pending: Vec<(i64, u32)>,
    pub(super) max_turn: i64,
    pub(super) warned: bool,
    /// While buffering: an event went back in turn order, so the log is
    /// sorted and resolved when buffering stops. A log in order is resolved
    /// as it grows, which is the same result: resolving a million events'
    /// logs after the input ended was most of triage-group's tail.
    pub(super) unordered: bool,
}

/// What a timeline takes in from one event.
#[derive(Clone, Copy)]
pub(super) struct TimelineStep {
    pub(super) turn: i64,
    /// The pattern the event counts as a failure of.
    pub(super) failure: Option<u32>,
    pub(super) succeeded: bool,
}

impl Timeline {
    /// Takes an event in: a success resolves the pending failures of
    /// earlier turns (`sorted`: they are in turn order), handing each
    /// one's pattern and offset to `recovered`; then a failure waits for
    /// its own.
    pub(super) fn advance(
        &mut self,
        sorted: bool,
        step: TimelineStep,
        recovered: impl FnMut(u32, u64),
    ) {
        if step.succeeded {
            resolve_pending(&mut self.pending, sorted, step.turn, recovered);
        }
        if let Some(p) = step.failure {
            self.pending.push((step.turn, p));
        }
    }
}

/// What resolving a log in turn order as it grew recovered: each
/// failure's pattern and offset, handed to `recovered`.
pub(super) fn replay_in_order(log: &[(i64, u32)], mut recovered: impl FnMut(u32, u64)) {
    let mut pending = Vec::new();
    for &(turn, what) in log {
        if what == SUCCESS {
            resolve_pending(&mut pending, true, turn, &mut recovered);
        } else {
            pending.push((turn, what));
        }
    }
}

/// Resolves the failures in `pending` that a success at `turn` recovers
/// (those of an earlier turn), handing each one's pattern and offset to
/// `recovered`. When `pending` is `sorted` by turn, as it is while its
/// timeline comes in turn order, they are a prefix, found by bisection: a
/// scan of all of them per success made one agent failing and succeeding
/// at one turn quadratic (300k events: 3.4 s against 9 ms).
pub(super) fn resolve_pending(
    pending: &mut Vec<(i64, u32)>,
    sorted: bool,
    turn: i64,
    mut recovered: impl FnMut(u32, u64),
) {
    if sorted {
        let end = pending.partition_point(|&(t, _)| t < turn);
        for (t, p) in pending.drain(..end) {
            recovered(p, (turn - t) as u64);
        }
        return;
    }
    pending.retain(|&(t, p)| {
        if t < turn {
            recovered(p, (turn - t) as u64);
            false
        } else {
            true
        }
    });
}

/// Failures per recovery offset in turns. Offsets below [`Self::DENSE`],
/// nearly all of them, are counted in a vector: a map lookup per recovered
/// failure was most of the time triage-group spends after its last event.
#[derive(Default)]
pub(super) struct LatencyCounts {
    dense: Vec<u64>,
    sparse: BTreeMap<u64, u64>,
}

impl LatencyCounts {
    pub(super) const DENSE: u64 = 64;

    pub(super) fn add(&mut self, offset: u64, n: u64) {
        if offset >= Self::DENSE {
            *self.sparse.entry(offset).or_insert(0) += n;
            return;
        }
        let i = offset as usize;
        if i >= self.dense.len() {
            self.dense.resize(i + 1, 0);
        }
        self.dense[i] += n;
    }

    /// Takes back what [`LatencyCounts::add`] counted.
    pub(super) fn remove(&mut self, offset: u64, n: u64) {
        if offset >= Self::DENSE {
            if let Some(count) = self.sparse.get_mut(&offset) {
                *count -= n;
                if *count == 0 {
                    self.sparse.remove(&offset);
                }
            }
            return;
        }
        if let Some(count) = self.dense.get_mut(offset as usize) {
            *count -= n;
        }
    }

    pub(super) fn into_map(self) -> BTreeMap<u64, u64> {
        let dense = (0..).zip(self.dense).filter(|&(_, n)| n > 0);
        let mut map = self.sparse;
        map.extend(dense);
        map
    }
}

/// Median offset of the failures recovered within `window` turns, as
/// Python's statistics.median gives it (mean of the middle two for an even
/// count); none when nothing recovered.
pub fn median_recovery(latencies: &BTreeMap<u64, u64>, window: u64) -> Option<f64> {
    let n = recovered_within(latencies, window);
    if n == 0 {
        return None;
    }
    let nth = |k: u64| {
        let mut seen = 0;
        latencies
            .range(1..=window)
            .find(|(_, c)| {
                seen += **c;
                k < seen
            })
            .map_or(0, |(o, _)| *o)
    };
    Some(if n % 2 == 1 {
        nth(n / 2) as f64
    } else {
        (nth(n / 2 - 1) + nth(n / 2)) as f64 / 2.0
    })
}

/// Failures whose first later success came within `window` turns.
pub fn recovered_within(latencies: &BTreeMap<u64, u64>, window: u64) -> u64 {
    latencies.range(..=window).map(|(_, n)| n).sum()
}
