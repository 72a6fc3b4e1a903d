//! A deterministic generator of agent-triage-schema NDJSON traces, for
//! benchmarks, load tests and checks against the reference.

use std::io::{self, Write};

/// What to generate.
#[derive(Debug, Clone)]
pub struct GenSpec {
    pub events: u64,
    pub runs: u64,
    pub agents: u32,
    pub seed: u64,
    /// Share of events that fail.
    pub failure_rate: f64,
    /// Lax values, unknown labels, unreadable lines, shuffled and interleaved runs.
    pub messy: bool,
}

/// splitmix64: small, fast and the same on every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability p.
    pub fn chance(&mut self, p: f64) -> bool {
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
pub fn generate(spec: &GenSpec, out: &mut dyn Write) -> io::Result<()> {
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
            let a = rng.below(agents) as usize;
            if stuck[a] == 0 && rng.chance(spec.failure_rate) {
                stuck[a] = 1 + rng.below(6) + if rng.chance(0.2) { 12 } else { 0 };
            }
            let failed = stuck[a] > 0 && rng.chance(0.7);
            stuck[a] = stuck[a].saturating_sub(1);
            buf.clear();
            write_event(&mut buf, &mut rng, spec, r, turn, a, failed);
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

fn write_event(
    buf: &mut String,
    rng: &mut Rng,
    spec: &GenSpec,
    run: u64,
    turn: u64,
    a: usize,
    failed: bool,
) {
    use std::fmt::Write as _;
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
    let (h, m, s) = ((secs / 3600) % 24, (secs / 60) % 60, secs % 60);
    let day = 25 + (secs / 86_400) % 3;
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
    let divs_text = divs
        .iter()
        .map(|d| format!("\"{d}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let _ = write!(
        buf,
        "{{\"event_id\": \"r{run}-t{turn}\", \"run_id\": \"run-{run:05}\", \"turn\": {turn_text}, \"agent_id\": \"{agent}\", \
\"timestamp\": \"2026-04-{day:02}T{h:02}:{m:02}:{s:02}+00:00\", \"latency_ms\": {{\"llm\": {}, \"tool\": {}, \"total\": {}}}, \
\"action_taken\": {{\"tool_name\": \"{tool}\", \"tool_input\": {{}}}}, \"action_succeeded\": {ok_text}, \
\"divergence_fields\": [{divs_text}], \"divergence_age\": {{}}, \"failure_classification\": {class_text}, \
\"usage\": {{\"input_tokens\": {}, \"output_tokens\": {}}}, \"message_context\": {{}}}}",
        400 + rng.below(800),
        rng.below(300),
        700 + rng.below(900),
        500 + rng.below(1500),
        20 + rng.below(200),
    );
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
        };
        let text = run(&spec);
        assert!(text.lines().count() >= 5000);
        assert!(text.contains("\"yes\"") || text.contains("\"no\""));
    }
}
