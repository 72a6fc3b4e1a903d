//! `make bench-explain`: runs `triage-parse --format whowhen FILE |
//! triage-explain` over the Who&When runs of a folder and prints how often the
//! verdict names the labelled agent and step, beside baselines, with 95%
//! intervals.
//!
//! Usage: cargo build --release --bins && cargo run --release --example
//! bench_explain [DIR]. The binaries are taken from the folder above this
//! example's own (target/release), or from TRIAGE_BIN_DIR.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::Value;

/// The benchmark's labels and what the tools said about one file.
struct Case {
    /// The cross-validation half (0 or 1), from a hash of the file name.
    half: usize,
    label_agent: String,
    label_step: u64,
    /// Agent per step, from the parsed events.
    agents: Vec<String>,
    /// Per step: true for a tool's output.
    tool_output: Vec<bool>,
    verdict_agent: Option<String>,
    verdict_step: Option<u64>,
    candidate_steps: Vec<u64>,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/data/who-and-when/algorithm-generated")
        });
    let bins = bin_dir()?;
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let started = Instant::now();
    let mut cases = Vec::with_capacity(files.len());
    for f in &files {
        cases.push(run_case(&bins, f)?);
    }
    let elapsed = started.elapsed();
    report(&cases, &dir, elapsed.as_secs_f64());
    cross_validation(&cases);
    Ok(())
}

fn bin_dir() -> Result<PathBuf, Box<dyn std::error::Error>> {
    if let Some(d) = std::env::var_os("TRIAGE_BIN_DIR") {
        return Ok(PathBuf::from(d));
    }
    let exe = std::env::current_exe()?;
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .ok_or("cannot find the target folder")?;
    if !dir.join("triage-explain").exists() {
        return Err(format!(
            "{} has no triage-explain: run cargo build --release --bins first",
            dir.display()
        )
        .into());
    }
    Ok(dir.to_path_buf())
}

/// Parses one file, pipes it through triage-explain and reads the verdict.
fn run_case(bins: &Path, file: &Path) -> Result<Case, Box<dyn std::error::Error>> {
    let raw: Value = serde_json::from_slice(&std::fs::read(file)?)?;
    let label_agent = raw["mistake_agent"].as_str().unwrap_or("").to_string();
    let label_step = match &raw["mistake_step"] {
        Value::String(s) => s.trim().parse()?,
        v => v.as_u64().ok_or("mistake_step is not a number")?,
    };
    let parsed = Command::new(bins.join("triage-parse"))
        .args(["--format", "whowhen"])
        .arg(file)
        .output()?;
    if !parsed.status.success() {
        return Err(format!("triage-parse failed on {}", file.display()).into());
    }
    let mut explain = Command::new(bins.join("triage-explain"))
        .arg("--verdicts-only")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()?;
    explain
        .stdin
        .take()
        .ok_or("no stdin")?
        .write_all(&parsed.stdout)?;
    let explained = explain.wait_with_output()?;
    if !explained.status.success() {
        return Err(format!("triage-explain failed on {}", file.display()).into());
    }
    let mut case = Case {
        half: half_of(file),
        label_agent,
        label_step,
        agents: Vec::new(),
        tool_output: Vec::new(),
        verdict_agent: None,
        verdict_step: None,
        candidate_steps: Vec::new(),
    };
    for line in parsed
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
    {
        let rec: Value = serde_json::from_slice(line)?;
        if rec["kind"] == "event" {
            case.agents
                .push(rec["agent_id"].as_str().unwrap_or("").to_string());
            case.tool_output.push(rec["span_kind"] == "tool");
        }
    }
    for line in explained
        .stdout
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
    {
        let rec: Value = serde_json::from_slice(line)?;
        if rec["kind"] == "verdict" {
            case.verdict_agent = rec["agent_id"].as_str().map(str::to_string);
            case.verdict_step = rec["step"].as_u64();
            case.candidate_steps = rec["candidates"]
                .as_array()
                .map(|c| c.iter().filter_map(|x| x["step"].as_u64()).collect())
                .unwrap_or_default();
        }
    }
    Ok(case)
}

/// The cross-validation half of a file: the low bit of the FNV-1a hash of
/// its name, so the split is stable and knows nothing of the content.
fn half_of(file: &Path) -> usize {
    let name = file
        .file_name()
        .map(|n| n.as_encoded_bytes())
        .unwrap_or(&[]);
    let hash = name.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    (hash & 1) as usize
}

fn agent_ok(c: &Case) -> bool {
    c.verdict_agent.as_deref() == Some(c.label_agent.as_str())
}

fn step_ok(c: &Case) -> bool {
    c.verdict_step == Some(c.label_step)
}

fn top3_ok(c: &Case) -> bool {
    c.candidate_steps.iter().take(3).any(|&s| s == c.label_step)
}

fn near_ok(c: &Case) -> bool {
    c.verdict_step
        .is_some_and(|s| s.abs_diff(c.label_step) <= 1)
}

/// A metric: its name and whether one case meets it.
type Metric = (&'static str, fn(&Case) -> bool);

/// The five metrics, in the order they are printed.
const METRICS: [Metric; 5] = [
    ("agent accuracy", agent_ok),
    ("step accuracy", step_ok),
    ("step within top 3", top3_ok),
    ("step within ±1", near_ok),
    ("agent and step", |c| agent_ok(c) && step_ok(c)),
];

/// Each metric on each half beside the other: the rules were written on
/// the whole set, so a rule fitted to a few files would show as a gap.
fn cross_validation(cases: &[Case]) {
    let halves: [Vec<&Case>; 2] = [0, 1].map(|h| cases.iter().filter(|c| c.half == h).collect());
    println!();
    println!(
        "cross-validation: halves by a hash of the file name (A {} runs, B {} runs)",
        halves[0].len(),
        halves[1].len()
    );
    println!("{:<34} {:<24} {:<24} gap", "metric", "half A", "half B");
    let pos_step = |c: &Case| positional(c).first() == Some(&c.label_step);
    let positional_step: Metric = ("positional: step", pos_step);
    let rows = METRICS.into_iter().chain([positional_step]);
    for (name, ok) in rows {
        let hits = halves
            .each_ref()
            .map(|h| (h.iter().filter(|c| ok(c)).count(), h.len()));
        let pct = hits.map(|(k, n)| 100.0 * k as f64 / n.max(1) as f64);
        println!(
            "{name:<34} {:<24} {:<24} {:+.1}",
            share(hits[0].0, hits[0].1),
            share(hits[1].0, hits[1].1),
            pct[1] - pct[0]
        );
    }
}

/// A proportion with its Wilson 95% interval.
fn share(hits: usize, n: usize) -> String {
    if n == 0 {
        return "n/a".to_string();
    }
    let (p, nf, z) = (hits as f64 / n as f64, n as f64, 1.96_f64);
    let centre = (p + z * z / (2.0 * nf)) / (1.0 + z * z / nf);
    let half = z * ((p * (1.0 - p) + z * z / (4.0 * nf)) / nf).sqrt() / (1.0 + z * z / nf);
    format!(
        "{:5.1}%  [{:4.1}, {:4.1}]",
        100.0 * p,
        100.0 * (centre - half).max(0.0),
        100.0 * (centre + half).min(1.0)
    )
}

/// Steps after the task that are not a tool's output, in order.
fn positional(c: &Case) -> Vec<u64> {
    (1..c.agents.len())
        .filter(|&i| !c.tool_output[i])
        .map(|i| i as u64)
        .collect()
}

fn most_frequent_agent(c: &Case) -> &str {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for (a, tool) in c.agents.iter().zip(&c.tool_output) {
        if !tool {
            *counts.entry(a).or_default() += 1;
        }
    }
    // Ties go to the agent that spoke first, so the result is stable.
    let first = |a: &str| c.agents.iter().position(|x| x == a).unwrap_or(usize::MAX);
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(first(b.0).cmp(&first(a.0))))
        .map_or("", |(a, _)| a)
}

fn report(cases: &[Case], dir: &Path, seconds: f64) {
    let n = cases.len();
    let count = |f: &dyn Fn(&Case) -> bool| cases.iter().filter(|c| f(c)).count();
    println!(
        "triage-explain on {} ({n} runs, {seconds:.2} s for parse + explain)",
        dir.display()
    );
    println!();
    println!("{:<34} share   [95% interval]", "metric");
    for (name, ok) in METRICS {
        println!("{name:<34} {}", share(count(&ok), n));
    }
    println!();
    println!("baselines");
    let random_agent: f64 = cases
        .iter()
        .map(|c| {
            let mut speakers: Vec<&String> = c
                .agents
                .iter()
                .zip(&c.tool_output)
                .filter(|(_, t)| !**t)
                .map(|(a, _)| a)
                .collect();
            speakers.sort();
            speakers.dedup();
            1.0 / speakers.len().max(1) as f64
        })
        .sum::<f64>()
        / n.max(1) as f64;
    let random_step: f64 = cases
        .iter()
        .map(|c| 1.0 / c.agents.len().max(1) as f64)
        .sum::<f64>()
        / n.max(1) as f64;
    println!(
        "{:<34} {:5.1}%",
        "random agent (expected)",
        100.0 * random_agent
    );
    println!(
        "{:<34} {:5.1}%",
        "random step (expected)",
        100.0 * random_step
    );
    println!(
        "{:<34} {}",
        "most frequent agent",
        share(
            count(&|c: &Case| most_frequent_agent(c) == c.label_agent),
            n
        )
    );
    let pos_agent = |c: &Case| {
        positional(c)
            .first()
            .is_some_and(|&s| c.agents[s as usize] == c.label_agent)
    };
    println!(
        "{:<34} {}",
        "positional: agent",
        share(count(&pos_agent), n)
    );
    println!(
        "{:<34} {}",
        "positional: step",
        share(
            count(&|c: &Case| positional(c).first() == Some(&c.label_step)),
            n
        )
    );
    println!(
        "{:<34} {}",
        "positional: step within first 3",
        share(
            count(&|c: &Case| positional(c).iter().take(3).any(|&s| s == c.label_step)),
            n
        )
    );
}
