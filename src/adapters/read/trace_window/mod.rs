//! Holds what a stream yields (spans, observations, run payloads) until
//! its trace is complete, so that a stream is read in bounded memory: a
//! trace is emitted once its root has ended and nothing of it has come for
//! a window of span time (as the Collector's tail-sampling processor waits
//! `decision_wait`), or when the input ends. [`Window`] is that holding,
//! whatever is held; [`TraceWindow`] holds spans.

use std::collections::VecDeque;

// Keys are ids or digests of them: a bucket collision costs a comparison,
// not a wrong answer, so the fast hash will do.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::adapters::read::span_events::{Carried, Emitter, HeldSpan, warn_repeated};
use crate::adapters::read::spans::id_hash;
use crate::adapters::sink::Sink;

/// A trace without a root (its root span lost or never exported) is
/// emitted after this many windows without a span of it.
const ROOTLESS_WINDOWS: i128 = 4;

/// What a [`Window`] holds trace by trace, and how a complete trace goes
/// out.
pub(crate) trait Traces {
    /// What the input yields, one at a time: a span, an observation.
    type Item;
    /// One trace's items as held.
    type Held: Default;
    /// What an emitted trace hands on to items of it that come late.
    type Carried: Clone;

    /// The id of the trace `item` belongs to.
    fn trace_id(item: &Self::Item) -> &str;
    /// The latest time `item` states, in Unix nanoseconds: the stream's
    /// clock.
    fn time(item: &Self::Item) -> Option<i128>;
    /// Holds `item` with the rest of its trace.
    fn hold(&mut self, trace: &mut Self::Held, item: Self::Item) -> Hold;
    /// Emits a complete trace; `carried` is what the part of it emitted
    /// before hands on. Returns what this part hands on.
    fn emit(
        &mut self,
        trace: Self::Held,
        carried: Option<Self::Carried>,
        sink: &mut Sink<'_>,
    ) -> anyhow::Result<Option<Self::Carried>>;
}

/// What became of an item handed to [`Traces::hold`].
pub(crate) enum Hold {
    /// Dropped: it repeats one held before.
    Repeat,
    /// Held; `ends_root` once the trace's root is known to have ended.
    Kept { ends_root: bool },
    /// Held, and its trace is whole with it: the input gave the trace
    /// with all its items at once (a trace with its observation list), so
    /// there is nothing of it to wait for.
    Completes,
}

/// One trace whose items are held.
struct Open<H, C> {
    id: String,
    held: H,
    /// The stream's clock when its last item came.
    last: Option<i128>,
    root_ended: bool,
    /// The input gave the whole trace (see [`Hold::Completes`]).
    whole: bool,
    /// What an already emitted part of the trace hands on.
    carried: Option<C>,
}

/// Items of an input in arrival order, emitted trace by trace in the order
/// traces first appear.
pub(crate) struct Window<T: Traces> {
    /// None holds every trace until the input ends.
    window: Option<i128>,
    /// The stream's clock: the time of the latest item that came with one.
    /// It follows the stream back as well as forth, so that a stream whose
    /// clock jumps back (a replay, a source with another clock) does not
    /// hold every trace before the jump to its end.
    now: Option<i128>,
    open: VecDeque<Open<T::Held, T::Carried>>,
    /// Trace id to its number; `open[n - front]`.
    index: HashMap<String, u64>,
    front: u64,
    /// Emitted traces, by id hash: what they hand on to items of them that
    /// come late. The last few hundred thousand are kept.
    closed: HashMap<u64, T::Carried>,
    closed_older: HashMap<u64, T::Carried>,
    late: u64,
    traces: T,
}

impl<T: Traces> Window<T> {
    const CLOSED_GENERATION: usize = 1 << 17;

    pub(crate) fn new(window: Option<i128>, traces: T) -> Self {
        Window {
            window,
            now: None,
            open: VecDeque::new(),
            index: HashMap::default(),
            front: 0,
            closed: HashMap::default(),
            closed_older: HashMap::default(),
            late: 0,
            traces,
        }
    }

    /// What the held items are handed to.
    pub(crate) fn traces(&self) -> &T {
        &self.traces
    }

    /// Takes the next item of the input, and emits the traces it completes.
    pub(crate) fn push(&mut self, item: T::Item, sink: &mut Sink<'_>) -> anyhow::Result<()> {
        if let Some(t) = T::time(&item) {
            self.now = Some(t);
        }
        let n = match self.index.get(T::trace_id(&item)) {
            Some(&n) => n,
            None => {
                let id = T::trace_id(&item).to_string();
                let hash = id_hash(&id);
                let carried = self
                    .closed
                    .get(&hash)
                    .or_else(|| self.closed_older.get(&hash))
                    .cloned();
                let n = self.front + self.open.len() as u64;
                self.open.push_back(Open {
                    id: id.clone(),
                    held: T::Held::default(),
                    last: None,
                    root_ended: false,
                    whole: false,
                    carried,
                });
                self.index.insert(id, n);
                n
            }
        };
        let trace = &mut self.open[(n - self.front) as usize];
        let (ends_root, whole) = match self.traces.hold(&mut trace.held, item) {
            Hold::Repeat => return Ok(()),
            Hold::Kept { ends_root } => (ends_root, false),
            Hold::Completes => (true, true),
        };
        if trace.carried.is_some() {
            self.late += 1;
        }
        trace.last = self.now;
        trace.root_ended |= ends_root;
        trace.whole |= whole;
        while self.open.front().is_some_and(|t| self.complete(t)) {
            self.emit_front(sink)?;
        }
        Ok(())
    }

    /// Emits what is held; returns what held it and how many items came
    /// after their trace was emitted.
    pub(crate) fn finish(mut self, sink: &mut Sink<'_>) -> anyhow::Result<(T, u64)> {
        while !self.open.is_empty() {
            self.emit_front(sink)?;
        }
        Ok((self.traces, self.late))
    }

    /// Traces held now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> impl Iterator<Item = &T::Held> {
        self.open.iter().map(|t| &t.held)
    }

    fn complete(&self, trace: &Open<T::Held, T::Carried>) -> bool {
        if trace.whole && self.window.is_some() {
            return true;
        }
        let (Some(window), Some(now), Some(last)) = (self.window, self.now, trace.last) else {
            return false;
        };
        // Items shuffled within the window move the clock back by less
        // than a window, so a trace still coming in is never this far off.
        let quiet = (now - last).abs();
        quiet > window
            && (trace.root_ended || trace.carried.is_some() || quiet > window * ROOTLESS_WINDOWS)
    }

    fn emit_front(&mut self, sink: &mut Sink<'_>) -> anyhow::Result<()> {
        let Some(trace) = self.open.pop_front() else {
            return Ok(());
        };
        self.front += 1;
        self.index.remove(&trace.id);
        let carried = self.traces.emit(trace.held, trace.carried, sink)?;
        if self.window.is_some()
            && let Some(carried) = carried
        {
            if self.closed.len() >= Self::CLOSED_GENERATION {
                self.closed_older = std::mem::take(&mut self.closed);
            }
            self.closed.insert(id_hash(&trace.id), carried);
        }
        Ok(())
    }
}

/// Adds an item to a trace's list, which grows from room for one by
/// doubling: most traces of a stream are small, and a list's first growth
/// (room for four) would hold three items' room empty in each.
pub(crate) fn push_held<T>(list: &mut Vec<T>, item: T) {
    if list.len() == list.capacity() {
        list.reserve_exact(list.len().max(1));
    }
    list.push(item);
}

/// Says how many items (`noun`: "spans") came after their trace was
/// emitted; `one` names one of them ("span").
pub(crate) fn warn_late(
    late: u64,
    kind: &'static str,
    (noun, one): (&str, &str),
    sink: &mut Sink<'_>,
) {
    if late > 0 {
        let path = sink.path().to_string();
        sink.diag.warn(
            kind,
            format_args!(
                "{path}: {late} {noun} came after their trace was emitted (more than --trace-window \
of span time after its last {one}); each is emitted as a continuation of its run"
            ),
        );
    }
}

/// Spans of an input in arrival order, emitted trace by trace.
pub(crate) struct TraceWindow(Window<SpanTraces>);

/// One trace's spans, and hashes of their span ids with what each span
/// was (its name and start), to drop spans sent twice.
#[derive(Default)]
pub(crate) struct HeldSpans {
    spans: Vec<HeldSpan>,
    seen: HashSet<(u64, u64)>,
}

/// How spans are held and emitted: numbered in arrival order, repeats
/// dropped and counted.
#[derive(Default)]
pub(crate) struct SpanTraces {
    seq: usize,
    repeated: u64,
    emitter: Emitter,
}

impl Traces for SpanTraces {
    type Item = HeldSpan;
    type Held = HeldSpans;
    type Carried = Carried;

    fn trace_id(span: &HeldSpan) -> &str {
        span.trace_id()
    }

    fn time(span: &HeldSpan) -> Option<i128> {
        span.latest_nanos()
    }

    fn hold(&mut self, trace: &mut HeldSpans, mut span: HeldSpan) -> Hold {
        // Another span under the same id (not the same name and start) is
        // kept, its event id made unique.
        if !span.span_id().is_empty() && !trace.seen.insert((span.span_hash(), span.identity())) {
            self.repeated += 1;
            return Hold::Repeat;
        }
        self.emitter.note_trace(&span, trace.spans.is_empty());
        let ends_root = span.is_ended_root();
        span.set_seq(self.seq);
        self.seq += 1;
        push_held(&mut trace.spans, span);
        Hold::Kept { ends_root }
    }

    fn emit(
        &mut self,
        trace: HeldSpans,
        carried: Option<Carried>,
        sink: &mut Sink<'_>,
    ) -> anyhow::Result<Option<Carried>> {
        self.emitter.emit_trace(trace.spans, carried, sink)
    }
}

impl TraceWindow {
    pub(crate) fn new(window: Option<i128>) -> Self {
        TraceWindow(Window::new(window, SpanTraces::default()))
    }

    /// Takes the next span of the input, and emits the traces it completes.
    pub(crate) fn push(&mut self, span: HeldSpan, sink: &mut Sink<'_>) -> anyhow::Result<()> {
        self.0.push(span, sink)
    }

    /// Emits what is held, and says what was dropped or came late.
    pub(crate) fn finish(self, sink: &mut Sink<'_>) -> anyhow::Result<()> {
        let (spans, late) = self.0.finish(sink)?;
        warn_repeated(spans.repeated, sink);
        warn_late(late, "late-span", ("spans", "span"), sink);
        let (plumbing, emitted, unlinked) = spans.emitter.counts();
        if plumbing > 0 {
            let path = sink.path().to_string();
            let what =
                "of the runtime's plumbing (messages delivered between agents, agents created)";
            if emitted == 0 {
                // Spans were read, but none is a step: nothing could be.
                sink.skip(
                    None,
                    format_args!("every span ({plumbing}) is {what}: no steps to read"),
                )?;
            } else {
                let spans = if plumbing == 1 { "span" } else { "spans" };
                let are = if plumbing == 1 {
                    "is no step"
                } else {
                    "are no steps"
                };
                // Without links (Zipkin keeps none) the traces a runtime
                // started for one run cannot be joined.
                let unjoined = if unlinked {
                    "; no delivery links its trace to the one it continues, so each trace is a run"
                } else {
                    ""
                };
                sink.diag.note(format_args!(
                    "{path}: {plumbing} {spans} {what} {are}{unjoined}"
                ));
            }
        }
        spans.emitter.finish(sink)
    }

    /// Spans held now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.0.held().map(|t| t.spans.len()).sum()
    }
}

#[cfg(test)]
mod tests;
