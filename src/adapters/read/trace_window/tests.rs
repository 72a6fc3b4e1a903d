//! Tests of `trace_window`: the held, late and shuffled cases.

use super::*;
use crate::adapters::{DecodeSettings, Format, records_with};
use proptest::prelude::*;
use serde_json::{Value, json};

const W: i128 = crate::adapters::settings::DEFAULT_WINDOW_NANOS;
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
    read_as(crate::adapters::formats::otlp::FORMAT, input, window)
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

/// One observation of a trace: its trace and own number, its parent's,
/// its times, and whether it names an agent and failed.
struct Member {
    trace: u64,
    id: u64,
    parent: Option<u64>,
    start: i128,
    end: i128,
    agent: Option<&'static str>,
    failed: bool,
}

/// Where span times start in the observation formats, which read
/// small epoch numbers as seconds.
const EPOCH: i128 = 1_700_000_000 * SEC;

/// A LangSmith run's create payload (at its start) and update payload
/// (at its end).
fn langsmith_lines(m: &Member) -> [(i128, String); 2] {
    let id = |n: u64| format!("r{n}");
    let run_type = ["chain", "tool", "llm"][(m.id % 3) as usize];
    let mut create = json!({"id": id(m.id), "trace_id": format!("t{}", m.trace),
        "name": format!("tool{}", m.id % 4), "run_type": run_type,
        "start_time": (EPOCH + m.start).to_string(), "inputs": {"q": format!("ask {}", m.id)}});
    if let Some(p) = m.parent {
        create["parent_run_id"] = json!(id(p));
    }
    if let Some(a) = m.agent {
        create["extra"] = json!({"metadata": {"lc_agent_name": a}});
    }
    let mut update = json!({"id": id(m.id), "end_time": (EPOCH + m.end).to_string(),
        "outputs": {"answer": format!("done {}", m.id)}, "status": "success"});
    if m.failed {
        update["error"] = json!("ValueError: boom");
        update["status"] = json!("error");
    }
    [(m.start, create.to_string()), (m.end, update.to_string())]
}

/// A Langfuse blob-export observation line, at its end.
fn langfuse_line(m: &Member) -> (i128, String) {
    let ty = ["SPAN", "TOOL", "GENERATION"][(m.id % 3) as usize];
    let mut o = json!({"id": format!("o{}", m.id), "trace_id": format!("t{}", m.trace),
        "parent_observation_id": m.parent.map(|p| format!("o{p}")), "type": ty, "name": format!("tool{}", m.id % 4),
        "start_time": (EPOCH + m.start).to_string(), "end_time": (EPOCH + m.end).to_string(),
        "level": if m.failed { "ERROR" } else { "DEFAULT" }});
    if let Some(a) = m.agent {
        o["metadata"] = json!({"attributes": {"gen_ai.agent.name": a}});
    }
    (m.end, o.to_string())
}

fn read_as(format: Format, input: &str, window: Option<i128>) -> Vec<Value> {
    let settings = DecodeSettings {
        trace_window: window,
        ..DecodeSettings::default()
    };
    records_with(format, "t.jsonl", input.as_bytes(), settings)
}

/// The members of the traces `specs` gives: each trace's root starts it
/// and ends half a window later.
fn members(specs: &[TraceSpec]) -> Vec<Member> {
    let mut out = Vec::new();
    let mut at = 0;
    for (t, (gap, spans)) in specs.iter().enumerate() {
        at += gap;
        let trace = t as u64 + 1;
        for (j, (offset, dur, parent, agent, failed)) in spans.iter().enumerate() {
            let (start, end) = if j == 0 {
                (at, at + W / 2)
            } else {
                (at + offset, at + offset + dur)
            };
            out.push(Member {
                trace,
                id: trace * 100 + j as u64,
                parent: (j > 0).then(|| trace * 100 + (*parent % j) as u64),
                start,
                end,
                agent: agent.then(|| ["planner", "coder"][j % 2]),
                failed: *failed,
            });
        }
    }
    out
}

/// Lines in the order of their times, each moved later by its jitter.
fn shuffled(lines: Vec<(i128, String)>, jitter: &[i128]) -> String {
    let mut keyed: Vec<(i128, usize, String)> = lines
        .into_iter()
        .zip(jitter.iter().cycle())
        .enumerate()
        .map(|(i, ((at, text), j))| (at + j, i, text))
        .collect();
    keyed.sort();
    keyed.iter().map(|(_, _, l)| format!("{l}\n")).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Spans shuffled within the window (each trace's spans lie within
    /// half a window of span time, and each comes at most a third of a
    /// window late) read as the whole file does.
    #[test]
    fn spans_shuffled_within_the_window_read_as_the_whole_file((specs, jitter) in traces()) {
        let lines = members(&specs)
            .iter()
            .map(|m| {
                let line = line(m.trace, m.id, m.parent, m.start, m.end, m.agent, m.failed);
                (m.end, line)
            })
            .collect();
        let input = shuffled(lines, &jitter);
        prop_assert_eq!(read(&input, Some(W)), read(&input, None));
    }

    /// LangSmith payloads and Langfuse observations shuffled so read
    /// as the whole file does too.
    #[test]
    fn observations_shuffled_within_the_window_read_as_the_whole_file((specs, jitter) in traces()) {
        let members = members(&specs);
        let payloads = members.iter().flat_map(langsmith_lines).collect();
        let input = shuffled(payloads, &jitter);
        prop_assert_eq!(
            read_as(crate::adapters::formats::langsmith::FORMAT, &input, Some(W)),
            read_as(crate::adapters::formats::langsmith::FORMAT, &input, None)
        );
        let input = shuffled(members.iter().map(langfuse_line).collect(), &jitter);
        prop_assert_eq!(
            read_as(crate::adapters::formats::langfuse::FORMAT, &input, Some(W)),
            read_as(crate::adapters::formats::langfuse::FORMAT, &input, None)
        );
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

/// A run payload or observation that comes after its trace was
/// emitted continues its run: the root's agent, and the run's record
/// again with the verdict of both parts.
#[test]
fn a_late_observation_continues_its_run() {
    let m = |trace, id, parent, start, agent, failed| Member {
        trace,
        id,
        parent,
        start: start * SEC,
        end: (start + 1) * SEC,
        agent,
        failed,
    };
    let members = [
        m(1, 100, None, 1, Some("planner"), false),
        m(2, 200, None, 1000, Some("coder"), false),
        m(1, 101, Some(100), 1002, None, true),
    ];
    let summary = |recs: Vec<Value>| -> Vec<String> {
        recs.iter()
            .filter_map(|r| match r["kind"].as_str()? {
                "event" => Some(format!("{} {}", r["event_id"], r["agent_id"])),
                "run" => Some(format!("{} {}", r["run_id"], r["outcome"])),
                _ => None,
            })
            .collect()
    };
    let langsmith: String = members
        .iter()
        .flat_map(langsmith_lines)
        .map(|(_, l)| l + "\n")
        .collect();
    let langfuse: String = members.iter().map(|m| langfuse_line(m).1 + "\n").collect();
    // A LangSmith root that states success is its run's verdict; a
    // Langfuse run fails with any observation.
    for (format, input, prefix, ok, failed) in [
        (
            crate::adapters::formats::langsmith::FORMAT,
            langsmith,
            "r",
            "succeeded",
            "succeeded",
        ),
        (
            crate::adapters::formats::langfuse::FORMAT,
            langfuse,
            "o",
            "unknown",
            "failed",
        ),
    ] {
        let ev = |id: u64, agent: &str| format!("\"{prefix}{id}\" \"{agent}\"");
        let run = |t: u64, outcome: &str| format!("\"t{t}\" \"{outcome}\"");
        let (planner, coder) = (ev(100, "planner"), ev(200, "coder"));
        let late = ev(101, "planner");
        assert_eq!(
            summary(read_as(format, &input, None)),
            [&planner, &late, &run(1, failed), &coder, &run(2, ok)].map(String::as_str),
            "{format:?}"
        );
        assert_eq!(
            summary(read_as(format, &input, Some(W))),
            [
                &planner,
                &run(1, ok),
                &coder,
                &run(2, ok),
                &late,
                &run(1, failed)
            ]
            .map(String::as_str),
            "{format:?}"
        );
    }
}

/// An input that counts the bytes read from it.
struct Counted<'a> {
    rest: &'a [u8],
    read: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl std::io::Read for Counted<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.rest.read(buf)?;
        self.read.fetch_add(n, std::sync::atomic::Ordering::SeqCst);
        Ok(n)
    }
}

/// For each event, how much of the input had been read when it came.
struct ReadAt {
    read: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    events: Vec<(String, usize)>,
}

impl crate::record::EventConsumer for ReadAt {
    fn add_source(&mut self, _: crate::record::SourceRec) {}
    fn add_run(&mut self, _: &crate::record::RunRec) {}
    fn add_event_at(
        &mut self,
        ev: &crate::record::EventView<'_>,
        _: Option<crate::timestamp::Timestamp>,
    ) -> Option<crate::record::OutOfOrder> {
        let read = self.read.load(std::sync::atomic::Ordering::SeqCst);
        self.events.push((ev.run_id.to_string(), read));
        None
    }
}

/// A trace of runs or observations is emitted once complete, long
/// before the input ends: what is held is a window, not the file.
#[test]
fn observation_traces_are_emitted_before_the_input_ends() {
    // Two hundred traces two minutes apart, each of five members with
    // 10 kB of input: 10 MB, ten chunks.
    let members: Vec<Member> = (0..200u64)
        .flat_map(|t| {
            (0..5u64).map(move |j| Member {
                trace: t + 1,
                id: (t + 1) * 100 + j,
                parent: (j > 0).then_some((t + 1) * 100),
                start: i128::from(t) * 120 * SEC + i128::from(j) * SEC,
                end: i128::from(t) * 120 * SEC + i128::from(j + 1) * SEC,
                agent: None,
                failed: false,
            })
        })
        .collect();
    let pad = |l: String| l.replacen('{', &format!("{{\"pad\":\"{}\",", "x".repeat(10_000)), 1);
    let langsmith: String = members
        .iter()
        .flat_map(langsmith_lines)
        .map(|(_, l)| pad(l) + "\n")
        .collect();
    let langfuse: String = members
        .iter()
        .map(|m| pad(langfuse_line(m).1) + "\n")
        .collect();
    for (format, input) in [
        (crate::adapters::formats::langsmith::FORMAT, langsmith),
        (crate::adapters::formats::langfuse::FORMAT, langfuse),
    ] {
        let (events, total) = events_read_at(format, &input);
        assert_eq!(events.len(), 1000, "{format:?}");
        let (run, at) = &events[0];
        assert_eq!(run, "t1");
        assert!(
            *at < total / 4,
            "{format:?}: the first trace came after {at} of {total} bytes"
        );
    }
}

/// A trace given with all its observations (the Langfuse API's and UI's
/// shape) is emitted as soon as it is read, even when the clock stands
/// still: nothing of it is left to wait for.
#[test]
fn a_trace_given_whole_is_emitted_at_once() {
    let input: String = (1..=200u64)
        .map(|t| {
            let observations: Vec<Value> = (0..5u64)
                .map(|j| {
                    json!({"id": format!("o{t}-{j}"), "traceId": format!("t{t}"),
                        "parentObservationId": (j > 0).then(|| format!("o{t}-0")),
                        "type": "SPAN", "name": format!("step{j}"),
                        "startTime": "2025-01-01T00:00:00Z", "endTime": "2025-01-01T00:00:01Z",
                        "input": "x".repeat(10_000)})
                })
                .collect();
            let trace = json!({"id": format!("t{t}"), "timestamp": "2025-01-01T00:00:00Z"});
            json!({"trace": trace, "observations": observations}).to_string() + "\n"
        })
        .collect();
    let (events, total) = events_read_at(crate::adapters::formats::langfuse::FORMAT, &input);
    assert_eq!(events.len(), 1000);
    assert_eq!(events[0].0, "t1");
    assert!(
        events[0].1 < total / 4,
        "the first trace came after {} of {total} bytes",
        events[0].1
    );
    // Its observations are emitted together, in tree order.
    assert!(events[..5].iter().all(|(run, _)| run == "t1"));
}

/// Reads `input` as `format`; returns each event's run with how much of
/// the input had been read when it came, and the input's size.
fn events_read_at(format: Format, input: &str) -> (Vec<(String, usize)>, usize) {
    let read = std::sync::Arc::default();
    let mut seen = ReadAt {
        read: std::sync::Arc::clone(&read),
        events: Vec::new(),
    };
    let mut other = Vec::new();
    let mut diag = crate::plumbing::diag::Diag::new("test", true);
    let mut sink = Sink::in_process(
        &mut seen,
        &mut other,
        &mut diag,
        crate::plumbing::diag::OnBadInput::Skip,
        DecodeSettings::default(),
    );
    let counted = Counted {
        rest: input.as_bytes(),
        read: std::sync::Arc::clone(&read),
    };
    crate::adapters::read_from("t.jsonl", counted, format, &mut sink).unwrap();
    drop(sink);
    let total = read.load(std::sync::atomic::Ordering::SeqCst);
    (seen.events, total)
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
    let mut diag = crate::plumbing::diag::Diag::new("test", true);
    let writer = crate::plumbing::framing::RecordWriter::new(
        Box::new(&mut out) as Box<dyn std::io::Write + '_>,
        false,
    );
    let mut sink = Sink::new(
        writer,
        &mut diag,
        crate::plumbing::diag::OnBadInput::Skip,
        DecodeSettings::default(),
    );
    sink.begin_source("t.jsonl", "otlp");
    let mut window = TraceWindow::new(Some(W));
    let mut most = 0;
    for l in input.lines() {
        let mut held = Vec::new();
        let req = serde_json::from_str(l).unwrap();
        crate::adapters::formats::otlp::hold_value(req, Some(1), &sink.settings, &mut held)
            .unwrap();
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
