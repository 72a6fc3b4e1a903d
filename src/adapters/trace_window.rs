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

use super::Sink;
use super::span_events::{Emitter, HeldSpan, Inherited, warn_repeated};
use super::spans::id_hash;

/// The window `--trace-window` sets by default: five minutes.
pub(crate) const DEFAULT_WINDOW_NANOS: i128 = 300 * 1_000_000_000;

/// A trace without a root (its root span lost or never exported) is
/// emitted after this many windows without a span of it.
const ROOTLESS_WINDOWS: i128 = 4;

/// What a [`Window`] holds trace by trace, and how a complete trace goes
/// out.
pub(super) trait Traces {
    /// What the input yields, one at a time: a span, an observation.
    type Item;
    /// One trace's items as held.
    type Held: Default;
    /// What an emitted trace hands on to items of it that come late.
    type HandsOn: Clone;

    /// The id of the trace `item` belongs to.
    fn trace_id(item: &Self::Item) -> &str;
    /// The latest time `item` states, in Unix nanoseconds: the stream's
    /// clock.
    fn time(item: &Self::Item) -> Option<i128>;
    /// Holds `item` with the rest of its trace.
    fn hold(&mut self, trace: &mut Self::Held, item: Self::Item) -> Hold;
    /// Emits a complete trace; `continues` is what the part of it emitted
    /// before hands on. Returns what this part hands on.
    fn emit(
        &mut self,
        trace: Self::Held,
        continues: Option<Self::HandsOn>,
        sink: &mut Sink<'_>,
    ) -> anyhow::Result<Option<Self::HandsOn>>;
}

/// What became of an item handed to [`Traces::hold`].
pub(super) enum Hold {
    /// Dropped: it repeats one held before.
    Repeat,
    /// Held; `ends_root` once the trace's root is known to have ended.
    Kept { ends_root: bool },
}

/// One trace whose items are held.
struct Open<H, C> {
    id: String,
    held: H,
    /// The stream's clock when its last item came.
    last: Option<i128>,
    root_ended: bool,
    /// What an already emitted part of the trace hands on.
    continues: Option<C>,
}

/// Items of an input in arrival order, emitted trace by trace in the order
/// traces first appear.
pub(super) struct Window<T: Traces> {
    /// None holds every trace until the input ends.
    window: Option<i128>,
    /// The stream's clock: the time of the latest item that came with one.
    /// It follows the stream back as well as forth, so that a stream whose
    /// clock jumps back (a replay, a source with another clock) does not
    /// hold every trace before the jump to its end.
    now: Option<i128>,
    open: VecDeque<Open<T::Held, T::HandsOn>>,
    /// Trace id to its number; `open[n - front]`.
    index: HashMap<String, u64>,
    front: u64,
    /// Emitted traces, by id hash: what they hand on to items of them that
    /// come late. The last few hundred thousand are kept.
    closed: HashMap<u64, T::HandsOn>,
    closed_older: HashMap<u64, T::HandsOn>,
    late: u64,
    traces: T,
}

impl<T: Traces> Window<T> {
    const CLOSED_GENERATION: usize = 1 << 17;

    pub(super) fn new(window: Option<i128>, traces: T) -> Self {
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
    pub(super) fn traces(&self) -> &T {
        &self.traces
    }

    /// Takes the next item of the input, and emits the traces it completes.
    pub(super) fn push(&mut self, item: T::Item, sink: &mut Sink<'_>) -> anyhow::Result<()> {
        if let Some(t) = T::time(&item) {
            self.now = Some(t);
        }
        let n = match self.index.get(T::trace_id(&item)) {
            Some(&n) => n,
            None => {
                let id = T::trace_id(&item).to_string();
                let hash = id_hash(&id);
                let continues = self
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
                    continues,
                });
                self.index.insert(id, n);
                n
            }
        };
        let trace = &mut self.open[(n - self.front) as usize];
        let Hold::Kept { ends_root } = self.traces.hold(&mut trace.held, item) else {
            return Ok(());
        };
        if trace.continues.is_some() {
            self.late += 1;
        }
        trace.last = self.now;
        trace.root_ended |= ends_root;
        while self.open.front().is_some_and(|t| self.complete(t)) {
            self.emit_front(sink)?;
        }
        Ok(())
    }

    /// Emits what is held; returns what held it and how many items came
    /// after their trace was emitted.
    pub(super) fn finish(mut self, sink: &mut Sink<'_>) -> anyhow::Result<(T, u64)> {
        while !self.open.is_empty() {
            self.emit_front(sink)?;
        }
        Ok((self.traces, self.late))
    }

    /// Traces held now.
    #[cfg(test)]
    pub(super) fn held(&self) -> impl Iterator<Item = &T::Held> {
        self.open.iter().map(|t| &t.held)
    }

    fn complete(&self, trace: &Open<T::Held, T::HandsOn>) -> bool {
        let (Some(window), Some(now), Some(last)) = (self.window, self.now, trace.last) else {
            return false;
        };
        // Items shuffled within the window move the clock back by less
        // than a window, so a trace still coming in is never this far off.
        let quiet = (now - last).abs();
        quiet > window
            && (trace.root_ended || trace.continues.is_some() || quiet > window * ROOTLESS_WINDOWS)
    }

    fn emit_front(&mut self, sink: &mut Sink<'_>) -> anyhow::Result<()> {
        let Some(trace) = self.open.pop_front() else {
            return Ok(());
        };
        self.front += 1;
        self.index.remove(&trace.id);
        let hands_on = self.traces.emit(trace.held, trace.continues, sink)?;
        if self.window.is_some()
            && let Some(hands_on) = hands_on
        {
            if self.closed.len() >= Self::CLOSED_GENERATION {
                self.closed_older = std::mem::take(&mut self.closed);
            }
            self.closed.insert(id_hash(&trace.id), hands_on);
        }
        Ok(())
    }
}

/// Says how many items (`noun`: "spans") came after their trace was
/// emitted; `one` names one of them ("span").
pub(super) fn warn_late(
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

/// One trace's spans, and hashes of their span ids to drop spans sent
/// twice.
#[derive(Default)]
pub(super) struct HeldSpans {
    spans: Vec<HeldSpan>,
    seen: HashSet<u64>,
}

/// How spans are held and emitted: numbered in arrival order, repeats
/// dropped and counted.
#[derive(Default)]
pub(super) struct SpanTraces {
    seq: usize,
    repeated: u64,
    emitter: Emitter,
}

impl Traces for SpanTraces {
    type Item = HeldSpan;
    type Held = HeldSpans;
    type HandsOn = Inherited;

    fn trace_id(span: &HeldSpan) -> &str {
        span.trace_id()
    }

    fn time(span: &HeldSpan) -> Option<i128> {
        span.latest_nanos()
    }

    fn hold(&mut self, trace: &mut HeldSpans, mut span: HeldSpan) -> Hold {
        if !span.span_id().is_empty() && !trace.seen.insert(span.span_hash()) {
            self.repeated += 1;
            return Hold::Repeat;
        }
        span.set_seq(self.seq);
        self.seq += 1;
        let ends_root = span.is_ended_root();
        trace.spans.push(span);
        Hold::Kept { ends_root }
    }

    fn emit(
        &mut self,
        trace: HeldSpans,
        continues: Option<Inherited>,
        sink: &mut Sink<'_>,
    ) -> anyhow::Result<Option<Inherited>> {
        self.emitter.emit_trace(trace.spans, continues, sink)
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
        spans.emitter.finish(sink)
    }

    /// Spans held now.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.0.held().map(|t| t.spans.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::{DecodeSettings, Format, records_with};
    use proptest::prelude::*;
    use serde_json::{Value, json};

    const W: i128 = DEFAULT_WINDOW_NANOS;
    const SEC: i128 = 1_000_000_000;

    /// One span as an OTLP request line.
    #[allow(clippy::too_many_arguments)]
    fn line(
        trace: u64,
        span: u64,
        parent: Option<u64>,
        start: i128,
        end: i128,
        agent: Option<&str>,
        failed: bool,
    ) -> String {
        let mut attrs =
            vec![json!({"key": "run.id", "value": {"stringValue": format!("run-{}", trace % 3)}})];
        if let Some(a) = agent {
            attrs.push(json!({"key": "agent.id", "value": {"stringValue": a}}));
        }
        let mut s = json!({"traceId": format!("{trace:032x}"), "spanId": format!("{span:016x}"),
            "name": format!("tool{}", span % 4), "startTimeUnixNano": start.to_string(),
            "endTimeUnixNano": end.to_string(), "attributes": attrs,
            "status": {"code": if failed { 2 } else { 0 }}});
        if let Some(p) = parent {
            s["parentSpanId"] = json!(format!("{p:016x}"));
        }
        json!({"resourceSpans": [{"scopeSpans": [{"spans": [s]}]}]}).to_string()
    }

    fn read(input: &str, window: Option<i128>) -> Vec<Value> {
        let settings = DecodeSettings {
            trace_window: window,
            ..DecodeSettings::default()
        };
        records_with(Format::Otlp, "t.jsonl", input.as_bytes(), settings)
    }

    /// A trace: (start of the trace, spans as (offset, duration, parent
    /// index, agent, failed)).
    type TraceSpec = (i128, Vec<(i128, i128, usize, bool, bool)>);

    fn traces() -> impl Strategy<Value = (Vec<TraceSpec>, Vec<i128>)> {
        let span = (0..W / 4, 0..W / 4, 0usize..8, any::<bool>(), any::<bool>());
        let trace = (0..3 * W, proptest::collection::vec(span, 1..7));
        proptest::collection::vec(trace, 1..12).prop_flat_map(|ts| {
            let n: usize = ts.iter().map(|(_, s)| s.len()).sum();
            (Just(ts), proptest::collection::vec(0..W / 3, n))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Spans shuffled within the window (each trace's spans lie within
        /// half a window of span time, and each comes at most a third of a
        /// window late) read as the whole file does.
        #[test]
        fn spans_shuffled_within_the_window_read_as_the_whole_file((specs, jitter) in traces()) {
            let mut spans = Vec::new();
            let mut at = 0;
            for (t, (gap, members)) in specs.iter().enumerate() {
                at += gap;
                let trace = t as u64 + 1;
                for (j, (offset, dur, parent, agent, failed)) in members.iter().enumerate() {
                    let span = trace * 100 + j as u64;
                    // The root starts the trace and ends with it.
                    let (start, end) = if j == 0 { (at, at + W / 2) } else { (at + offset, at + offset + dur) };
                    let parent = (j > 0).then(|| trace * 100 + (*parent % j) as u64);
                    let agent = agent.then(|| ["planner", "coder"][j % 2]);
                    spans.push((end, line(trace, span, parent, start, end, agent, *failed)));
                }
            }
            let mut keyed: Vec<(i128, usize, String)> = spans
                .into_iter()
                .zip(&jitter)
                .enumerate()
                .map(|(i, ((end, text), j))| (end + j, i, text))
                .collect();
            keyed.sort();
            let input: String = keyed.iter().map(|(_, _, l)| format!("{l}\n")).collect();
            prop_assert_eq!(read(&input, Some(W)), read(&input, None));
        }
    }

    #[test]
    fn a_late_span_continues_its_run_and_trace() {
        let input = [
            line(1, 10, None, SEC, 2 * SEC, Some("planner"), false),
            line(2, 20, None, 1000 * SEC, 1001 * SEC, Some("coder"), false),
            line(1, 11, Some(10), 1002 * SEC, 1003 * SEC, None, true),
        ]
        .join("\n");
        let events = |recs: Vec<Value>| -> Vec<(String, String, String)> {
            recs.iter()
                .filter(|r| r["kind"] == "event")
                .map(|r| {
                    (
                        r["span_id"].as_str().unwrap()[14..].to_string(),
                        r["run_id"].as_str().unwrap().to_string(),
                        r["agent_id"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        };
        let s = |a: &str, b: &str, c: &str| (a.to_string(), b.to_string(), c.to_string());
        assert_eq!(
            events(read(&input, Some(W))),
            [
                s("0a", "run-1", "planner"),
                s("14", "run-2", "coder"),
                s("0b", "run-1", "planner")
            ]
        );
        assert_eq!(
            events(read(&input, None)),
            [
                s("0a", "run-1", "planner"),
                s("0b", "run-1", "planner"),
                s("14", "run-2", "coder")
            ]
        );
    }

    #[test]
    fn held_spans_stay_within_the_window_on_a_long_stream() {
        let mut input = String::new();
        for t in 0..200u64 {
            // The clock jumps back three days every fifty traces.
            let at = i128::from(t % 50) * 120 * SEC - i128::from(t / 50) * 3 * 86_400 * SEC
                + 10 * 86_400 * SEC;
            input.push_str(&line(t + 1, t * 10, None, at, at + SEC, Some("a"), false));
            input.push('\n');
            for c in 1..5 {
                let s = at + i128::from(c) * SEC;
                input.push_str(&line(
                    t + 1,
                    t * 10 + c,
                    Some(t * 10),
                    s,
                    s + SEC,
                    None,
                    false,
                ));
                input.push('\n');
            }
        }
        let mut out = Vec::new();
        let mut diag = crate::io::diag::Diag::new("test", true);
        let writer = crate::io::ndjson::RecordWriter::new(
            Box::new(&mut out) as Box<dyn std::io::Write + '_>,
            false,
        );
        let mut sink = Sink::new(
            writer,
            &mut diag,
            crate::io::diag::OnBadInput::Skip,
            DecodeSettings::default(),
        );
        sink.begin_source("t.jsonl", "otlp");
        let mut window = TraceWindow::new(Some(W));
        let mut most = 0;
        for l in input.lines() {
            let mut held = Vec::new();
            let req = serde_json::from_str(l).unwrap();
            crate::adapters::otlp::hold_value(req, Some(1), &sink.settings, &mut held).unwrap();
            for span in held {
                window.push(span, &mut sink).unwrap();
            }
            most = most.max(window.held());
        }
        // Traces start two minutes apart and wait five: about four are open.
        assert!(most <= 5 * 5, "{most} spans held");
        window.finish(&mut sink).unwrap();
        drop(sink);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.matches("\"kind\":\"event\"").count(), 1000);
    }
}
