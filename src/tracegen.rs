//! A deterministic generator of agent traces, for benchmarks, load tests
//! and checks against the reference: agent-triage-schema NDJSON, or the
//! same events as OTLP JSON spans the way a Collector's file exporter
//! writes them.

use std::io::{self, Write};

/// What to generate.
#[derive(Debug, Clone)]
pub(crate) struct GenSpec {
    pub events: u64,
    pub runs: u64,
    pub agents: u32,
    pub seed: u64,
    /// Share of events that fail.
    pub failure_rate: f64,
    /// Lax values, unknown labels, unreadable lines, shuffled and interleaved runs.
    pub messy: bool,
    pub format: GenFormat,
    /// OTLP spans per request line.
    pub spans_per_request: usize,
}

/// What the generator writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum GenFormat {
    /// One agent-triage event per line.
    #[default]
    Ndjson,
    /// One OTLP/JSON `ExportTraceServiceRequest` per line.
    Otlp,
}

/// splitmix64: small, fast and the same on every machine.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in [0, n).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability p.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

const AGENTS: &[&str] = &[
    "planner",
    "retriever",
    "executor",
    "critic",
    "router",
    "writer",
    "coder",
    "tester",
];
const TOOLS: &[&[&str]] = &[
    &["dispatch_subtask", "observe", "replan"],
    &["fetch_documents", "search_index", "observe"],
    &["call_external_api", "write_file", "run_code"],
    &["review", "score_answer", "observe"],
    &["route", "handoff", "observe"],
    &["draft", "edit", "observe"],
    &["run_code", "read_file", "write_file"],
    &["run_tests", "observe", "report"],
];
const CLASSES: &[&str] = &[
    "coordination_failure",
    "agent_error",
    "information_lag",
    "environment_constraint",
];
const FIELDS: &[&str] = &[
    "task_queue_head",
    "retriever_state",
    "index_version",
    "budget",
    "plan_step",
];

/// One generated line before it is written.
struct Line {
    run: u64,
    text: String,
}

/// Writes the traces to `out`.
pub(crate) fn generate(spec: &GenSpec, out: &mut dyn Write) -> io::Result<()> {
    match spec.format {
        GenFormat::Ndjson => generate_ndjson(spec, out),
        GenFormat::Otlp => generate_otlp(spec, out),
    }
}

fn generate_ndjson(spec: &GenSpec, out: &mut dyn Write) -> io::Result<()> {
    let mut rng = Rng::new(spec.seed);
    let runs = spec.runs.max(1);
    let agents = spec.agents.clamp(1, AGENTS.len() as u32) as u64;
    let per_run = spec.events / runs;
    let extra = spec.events % runs;
    let mut pending: Vec<Line> = Vec::new();
    let mut buf = String::new();
    for r in 0..runs {
        let n = per_run + u64::from(r < extra);
        // Each agent fails in streaks that last a few turns.
        let mut stuck = vec![0u64; agents as usize];
        for turn in 0..n {
            let (a, failed) = next_turn(&mut rng, spec, &mut stuck);
            buf.clear();
            draw_event(&mut rng, spec, r, turn, a, failed).write_ndjson(&mut buf);
            pending.push(Line {
                run: r,
                text: buf.clone(),
            });
            if spec.messy && rng.chance(0.002) {
                pending.push(Line {
                    run: r,
                    text: bad_line(&mut rng),
                });
            }
        }
        // Messy output interleaves three runs at a time and shuffles lines.
        if !spec.messy || r % 3 == 2 || r + 1 == runs {
            if spec.messy {
                shuffle_nearby(&mut pending, &mut rng);
            }
            for l in pending.drain(..) {
                let _ = l.run;
                out.write_all(l.text.as_bytes())?;
                out.write_all(b"\n")?;
            }
        }
    }
    Ok(())
}

/// The agent of the next turn and whether it fails: each agent fails in
/// streaks that last a few turns.
fn next_turn(rng: &mut Rng, spec: &GenSpec, stuck: &mut [u64]) -> (usize, bool) {
    let a = rng.below(stuck.len() as u64) as usize;
    if stuck[a] == 0 && rng.chance(spec.failure_rate) {
        stuck[a] = 1 + rng.below(6) + if rng.chance(0.2) { 12 } else { 0 };
    }
    let failed = stuck[a] > 0 && rng.chance(0.7);
    stuck[a] = stuck[a].saturating_sub(1);
    (a, failed)
}

/// One generated event, before it is written in either format.
struct Event {
    run: u64,
    turn: u64,
    agent: &'static str,
    tool: &'static str,
    failed: bool,
    class: Option<&'static str>,
    divs: Vec<&'static str>,
    /// Unix seconds.
    secs: u64,
    llm_ms: u64,
    tool_ms: u64,
    total_ms: u64,
    input_tokens: u64,
    output_tokens: u64,
    /// How messy NDJSON spells turn, success and label.
    turn_text: String,
    ok_text: String,
    class_text: String,
}

fn draw_event(rng: &mut Rng, spec: &GenSpec, run: u64, turn: u64, a: usize, failed: bool) -> Event {
    let agent = AGENTS[a];
    let tools = TOOLS[a];
    let tool = tools[rng.below(tools.len() as u64) as usize];
    let class = if failed {
        if spec.messy && rng.chance(0.05) {
            Some("hallucination")
        } else if rng.chance(0.15) {
            None
        } else {
            Some(CLASSES[(a + rng.below(2) as usize) % CLASSES.len()])
        }
    } else if rng.chance(0.01) {
        Some("information_lag")
    } else {
        None
    };
    let divs: Vec<&str> = if failed && rng.chance(0.5) {
        let i = (a + rng.below(2) as usize) % FIELDS.len();
        if rng.chance(0.3) {
            vec![FIELDS[i], FIELDS[(i + 1) % FIELDS.len()]]
        } else {
            vec![FIELDS[i]]
        }
    } else {
        vec![]
    };
    let secs = 1_777_000_000 + run * 3600 + turn * 7;
    let turn_text = if spec.messy && rng.chance(0.05) {
        format!("\"{turn}\"")
    } else if spec.messy && rng.chance(0.05) {
        format!("{turn}.0")
    } else {
        turn.to_string()
    };
    let ok_text = if spec.messy && rng.chance(0.1) {
        ["\"yes\"", "\"no\"", "1", "0", "\"true\"", "\"false\""]
            [(rng.below(2) as usize) * 2 + usize::from(failed)]
        .to_string()
    } else {
        (!failed).to_string()
    };
    let class_text = match class {
        Some(c) => format!("\"{c}\""),
        None if spec.messy && rng.chance(0.3) => {
            ["\"\"", "\"null\""][rng.below(2) as usize].to_string()
        }
        None => "null".to_string(),
    };
    Event {
        run,
        turn,
        agent,
        tool,
        failed,
        class,
        divs,
        secs,
        llm_ms: 400 + rng.below(800),
        tool_ms: rng.below(300),
        total_ms: 700 + rng.below(900),
        input_tokens: 500 + rng.below(1500),
        output_tokens: 20 + rng.below(200),
        turn_text,
        ok_text,
        class_text,
    }
}

impl Event {
    /// The Unix time the NDJSON timestamp states: its day cycles through
    /// three days from 2026-04-25, its time of day is that of `secs`.
    fn stated_secs(&self) -> u64 {
        const APRIL_24: u64 = 1_776_988_800;
        let day = 1 + (self.secs / 86_400) % 3;
        APRIL_24 + day * 86_400 + self.secs % 86_400
    }

    fn write_ndjson(&self, buf: &mut String) {
        use std::fmt::Write as _;
        let Event {
            run,
            turn,
            agent,
            tool,
            secs,
            ..
        } = self;
        let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
        let day = 25 + (secs / 86_400) % 3;
        let divs_text = self
            .divs
            .iter()
            .map(|d| format!("\"{d}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = write!(
            buf,
            "{{\"event_id\": \"r{run}-t{turn}\", \"run_id\": \"run-{run:05}\", \"turn\": {}, \"agent_id\": \"{agent}\", \
\"timestamp\": \"2026-04-{day:02}T{h:02}:{m:02}:{s:02}+00:00\", \"latency_ms\": {{\"llm\": {}, \"tool\": {}, \"total\": {}}}, \
\"action_taken\": {{\"tool_name\": \"{tool}\", \"tool_input\": {{}}}}, \"action_succeeded\": {}, \
\"divergence_fields\": [{divs_text}], \"divergence_age\": {{}}, \"failure_classification\": {}, \
\"usage\": {{\"input_tokens\": {}, \"output_tokens\": {}}}, \"message_context\": {{}}}}",
            self.turn_text,
            self.llm_ms,
            self.tool_ms,
            self.total_ms,
            self.ok_text,
            self.class_text,
            self.input_tokens,
            self.output_tokens,
        );
    }
}

// ---- OTLP: the same events as spans ----

/// How a request line spells its JSON: the Collector's file exporter
/// writes camelCase with int64 as text; protobuf's JSON printer with
/// field names preserved writes snake_case.
#[derive(Clone, Copy)]
struct Dialect {
    snake: bool,
}

impl Dialect {
    /// Odd lines are snake_case.
    fn of_line(requests: u64) -> Dialect {
        Dialect {
            snake: requests % 2 == 1,
        }
    }

    fn key(self, camel: &'static str, snake: &'static str) -> &'static str {
        if self.snake { snake } else { camel }
    }
}

/// Writes the events as OTLP/JSON requests, `spans_per_request` spans a
/// line. A run is one trace: its first turn's span is the root and the
/// others its children. Lines alternate camelCase with the reference
/// receiver's attributes (`agent.id`, `action.tool`, `action.succeeded`)
/// and snake_case with the GenAI conventions' (`gen_ai.agent.name`,
/// `gen_ai.tool.name`, `gen_ai.operation.name`), both with a status code.
fn generate_otlp(spec: &GenSpec, out: &mut dyn Write) -> io::Result<()> {
    let mut rng = Rng::new(spec.seed);
    let runs = spec.runs.max(1);
    let agents = spec.agents.clamp(1, AGENTS.len() as u32) as usize;
    let per_run = spec.events / runs;
    let extra = spec.events % runs;
    let per_request = spec.spans_per_request.max(1);
    let trace_base = Rng::new(spec.seed ^ 0x0074_7261_6365).next_u64();
    let mut spans: Vec<String> = Vec::with_capacity(per_request);
    let mut line = String::new();
    let mut requests = 0u64;
    for r in 0..runs {
        let n = per_run + u64::from(r < extra);
        let mut stuck = vec![0u64; agents];
        for turn in 0..n {
            let (a, failed) = next_turn(&mut rng, spec, &mut stuck);
            let ev = draw_event(&mut rng, spec, r, turn, a, failed);
            if spans.len() == per_request {
                write_request(&mut line, &mut requests, &mut spans, out)?;
            }
            let mut text = String::new();
            ev.write_span(&mut text, Dialect::of_line(requests), trace_base);
            spans.push(text);
        }
    }
    write_request(&mut line, &mut requests, &mut spans, out)
}

/// Writes `spans` as request line number `requests` (counted from 0) and
/// empties them.
fn write_request(
    line: &mut String,
    requests: &mut u64,
    spans: &mut Vec<String>,
    out: &mut dyn Write,
) -> io::Result<()> {
    if spans.is_empty() {
        return Ok(());
    }
    let d = Dialect::of_line(*requests);
    *requests += 1;
    line.clear();
    request_text(line, d, spans);
    spans.clear();
    out.write_all(line.as_bytes())?;
    out.write_all(b"\n")
}

fn request_text(buf: &mut String, d: Dialect, spans: &[String]) {
    use std::fmt::Write as _;
    let _ = write!(
        buf,
        "{{\"{}\":[{{\"resource\":{{\"attributes\":[{{\"key\":\"service.name\",\"value\":{{\"{}\":\"triage-gen\"}}}}]}},\
\"{}\":[{{\"scope\":{{\"name\":\"triage-gen\"}},\"spans\":[",
        d.key("resourceSpans", "resource_spans"),
        d.key("stringValue", "string_value"),
        d.key("scopeSpans", "scope_spans"),
    );
    for (i, span) in spans.iter().enumerate() {
        if i > 0 {
            buf.push(',');
        }
        buf.push_str(span);
    }
    buf.push_str("]}]}]}");
}

impl Event {
    fn write_span(&self, buf: &mut String, d: Dialect, trace_base: u64) {
        use std::fmt::Write as _;
        let k = |camel, snake| d.key(camel, snake);
        let s = k("stringValue", "string_value");
        let start = u128::from(self.stated_secs()) * 1_000_000_000;
        let end = start + u128::from(self.total_ms) * 1_000_000;
        let _ = write!(
            buf,
            "{{\"{}\":\"{trace_base:016x}{:016x}\",\"{}\":\"{:08x}{:08x}\",",
            k("traceId", "trace_id"),
            self.run + 1,
            k("spanId", "span_id"),
            self.run + 1,
            self.turn,
        );
        if self.turn > 0 {
            let _ = write!(
                buf,
                "\"{}\":\"{:08x}{:08x}\",",
                k("parentSpanId", "parent_span_id"),
                self.run + 1,
                0
            );
        }
        // camelCase writes int64 as text (proto3 JSON); snake_case as numbers.
        let int = |n: u128| {
            if d.snake {
                n.to_string()
            } else {
                format!("\"{n}\"")
            }
        };
        let name = if d.snake {
            format!("execute_tool {}", self.tool)
        } else {
            self.tool.to_string()
        };
        let _ = write!(
            buf,
            "\"name\":\"{name}\",\"kind\":{},\"{}\":{},\"{}\":{},\"attributes\":[",
            if d.snake {
                "\"SPAN_KIND_INTERNAL\""
            } else {
                "1"
            },
            k("startTimeUnixNano", "start_time_unix_nano"),
            int(start),
            k("endTimeUnixNano", "end_time_unix_nano"),
            int(end),
        );
        let i = k("intValue", "int_value");
        let mut attrs: Vec<String> = Vec::new();
        let mut text = |key: &str, value: &str| {
            attrs.push(format!(
                "{{\"key\":\"{key}\",\"value\":{{\"{s}\":\"{value}\"}}}}"
            ))
        };
        if d.snake {
            text("gen_ai.operation.name", "execute_tool");
            text("gen_ai.agent.name", self.agent);
            text("gen_ai.tool.name", self.tool);
            text("gen_ai.conversation.id", &format!("run-{:05}", self.run));
        } else {
            text("agent.id", self.agent);
            text("action.tool", self.tool);
            text("run.id", &format!("run-{:05}", self.run));
        }
        if let Some(c) = self.class {
            text("failure.classification", c);
        }
        if !self.divs.is_empty() {
            if d.snake {
                let items: Vec<String> = self
                    .divs
                    .iter()
                    .map(|f| format!("{{\"{s}\":\"{f}\"}}"))
                    .collect();
                attrs.push(format!(
                    "{{\"key\":\"divergence.fields\",\"value\":{{\"array_value\":{{\"values\":[{}]}}}}}}",
                    items.join(",")
                ));
            } else {
                text("divergence.fields", &self.divs.join(","));
            }
        }
        let mut int_attr = |key: &str, n: u64| {
            attrs.push(format!(
                "{{\"key\":\"{key}\",\"value\":{{\"{i}\":{}}}}}",
                int(u128::from(n))
            ))
        };
        int_attr("turn", self.turn);
        int_attr("latency.llm_ms", self.llm_ms);
        int_attr("latency.tool_ms", self.tool_ms);
        int_attr("gen_ai.usage.input_tokens", self.input_tokens);
        int_attr("gen_ai.usage.output_tokens", self.output_tokens);
        if !d.snake {
            attrs.push(format!(
                "{{\"key\":\"action.succeeded\",\"value\":{{\"boolValue\":{}}}}}",
                !self.failed
            ));
        }
        buf.push_str(&attrs.join(","));
        // A failed span says so in its status; a succeeded one is OK, but
        // a root leaves it unset (no error recorded), so that the run's
        // outcome is read from its events alone.
        let code = match (self.failed, self.turn) {
            (true, _) => Some(("STATUS_CODE_ERROR", 2)),
            (false, 0) => None,
            (false, _) => Some(("STATUS_CODE_OK", 1)),
        };
        buf.push(']');
        if let Some((name, number)) = code {
            let _ = if d.snake {
                write!(buf, ",\"status\":{{\"code\":\"{name}\"}}")
            } else {
                write!(buf, ",\"status\":{{\"code\":{number}}}")
            };
        }
        buf.push('}');
    }
}

fn bad_line(rng: &mut Rng) -> String {
    match rng.below(3) {
        0 => "{\"event_id\": \"broken\", \"run_id\": ".to_string(),
        1 => "{\"event_id\": \"no-run\", \"turn\": 1, \"agent_id\": \"x\", \"action_taken\": {\"tool_name\": \"t\"}, \"action_succeeded\": true}".to_string(),
        _ => "{\"event_id\": \"bad-turn\", \"run_id\": \"r\", \"turn\": \"soon\", \"agent_id\": \"x\", \"action_taken\": {\"tool_name\": \"t\"}, \"action_succeeded\": true}".to_string(),
    }
}

/// Swaps lines with near neighbours so some come out of turn order.
fn shuffle_nearby(lines: &mut [Line], rng: &mut Rng) {
    let n = lines.len() as u64;
    for i in 0..lines.len() {
        if rng.chance(0.2) {
            let j = (i as u64 + rng.below(8)).min(n - 1) as usize;
            lines.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(spec: &GenSpec) -> String {
        let mut out = Vec::new();
        generate(spec, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn same_seed_same_output_and_the_asked_size() {
        let spec = GenSpec {
            events: 1000,
            runs: 7,
            agents: 4,
            seed: 3,
            failure_rate: 0.1,
            messy: false,
            format: GenFormat::Ndjson,
            spans_per_request: 50,
        };
        let a = run(&spec);
        assert_eq!(a, run(&spec));
        assert_eq!(a.lines().count(), 1000);
        assert!(a.contains("\"action_succeeded\": false"));
        let other = run(&GenSpec { seed: 4, ..spec });
        assert_ne!(a, other);
    }

    #[test]
    fn messy_output_has_every_event_plus_bad_lines() {
        let spec = GenSpec {
            events: 5000,
            runs: 10,
            agents: 3,
            seed: 1,
            failure_rate: 0.1,
            messy: true,
            format: GenFormat::Ndjson,
            spans_per_request: 50,
        };
        let text = run(&spec);
        assert!(text.lines().count() >= 5000);
        assert!(text.contains("\"yes\"") || text.contains("\"no\""));
    }

    #[test]
    fn otlp_requests_hold_the_asked_spans_in_alternating_dialects() {
        let spec = GenSpec {
            events: 120,
            runs: 3,
            agents: 4,
            seed: 5,
            failure_rate: 0.3,
            messy: false,
            format: GenFormat::Otlp,
            spans_per_request: 50,
        };
        let text = run(&spec);
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3);
        let spans = |l: &serde_json::Value, rs: &str, ss: &str| {
            l[rs][0][ss][0]["spans"].as_array().unwrap().len()
        };
        assert_eq!(spans(&lines[0], "resourceSpans", "scopeSpans"), 50);
        assert_eq!(spans(&lines[1], "resource_spans", "scope_spans"), 50);
        assert_eq!(spans(&lines[2], "resourceSpans", "scopeSpans"), 20);
        let first = &lines[0]["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
        let hex = |v: &serde_json::Value, n: usize| {
            let s = v.as_str().unwrap();
            s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit())
        };
        assert!(hex(&first["traceId"], 32) && hex(&first["spanId"], 16));
        assert!(first.get("parentSpanId").is_none());
        assert_eq!(text, run(&spec));
    }
}
