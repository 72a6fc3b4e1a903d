//! Helpers the integration tests share: running the real binaries (`run`,
//! `ok`, `cmd`, `bin`), reading their records, building records for
//! triage-render, and comparing with golden files (`assert_golden`).
#![allow(dead_code)]

pub mod golden;
pub mod mutation;

pub use golden::{assert_golden, line_diff};

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::{Value, json};

/// The path of one of this package's binaries (`triage`, `triage-parse`,
/// ...), built by cargo for the tests: for a `std::process::Command` that
/// streams, or a shell script that runs it.
pub fn bin(name: &str) -> PathBuf {
    assert_cmd::cargo::cargo_bin(name)
}

/// The directory of the built binaries, to put first on a script's PATH.
pub fn bin_dir() -> PathBuf {
    bin("triage").parent().unwrap().to_path_buf()
}

/// One of this package's binaries as an `assert_cmd` command, for a test
/// that sets its environment or directory or asserts with predicates; the
/// plain case is [`run`].
pub fn cmd(name: &str) -> Command {
    Command::new(bin(name))
}

/// Runs a binary with `args` and `stdin`; returns (exit code, stdout, stderr).
pub fn run(bin: &str, args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    run_env(bin, args, &[], stdin)
}

/// [`run`] with `env` set for the binary.
pub fn run_env(
    bin: &str,
    args: &[&str],
    env: &[(&str, &str)],
    stdin: &[u8],
) -> (i32, Vec<u8>, String) {
    let out = cmd(bin)
        .args(args)
        .envs(env.iter().copied())
        .write_stdin(stdin.to_vec())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs a binary that must succeed; returns stdout.
pub fn ok(bin: &str, args: &[&str], stdin: &[u8]) -> Vec<u8> {
    let (code, out, err) = run(bin, args, stdin);
    assert_eq!(code, 0, "{bin} {args:?} failed: {err}");
    out
}

/// triage-parse -q FILE | triage-group | triage-score: the scored records.
pub fn scored(file: &str) -> Vec<u8> {
    let events = ok("triage-parse", &["-q", file], b"");
    ok("triage-score", &[], &ok("triage-group", &[], &events))
}

/// parse | group | score on the given trace text.
pub fn pipeline(traces: &[u8]) -> Vec<Value> {
    let events = ok("triage-parse", &[], traces);
    let groups = ok("triage-group", &[], &events);
    records(&ok("triage-score", &[], &groups))
}

pub fn records(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

pub fn of_kind<'a>(recs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    recs.iter().filter(|r| r["kind"] == kind).collect()
}

/// One agent-triage TraceEvent line.
pub fn event(run: &str, agent: &str, turn: i64, ok: bool, class: Option<&str>) -> String {
    let class = class.map_or("null".to_string(), |c| format!("\"{c}\""));
    format!(
        r#"{{"event_id":"{run}-{agent}-{turn}","run_id":"{run}","turn":{turn},"agent_id":"{agent}","action_taken":{{"tool_name":"act"}},"action_succeeded":{ok},"failure_classification":{class}}}"#
    )
}

pub fn lines(events: &[String]) -> Vec<u8> {
    let mut s = events.join("\n");
    s.push('\n');
    s.into_bytes()
}

/// 2026-04-25 08:38 UTC, the date of the reference's published reports.
pub const EPOCH: &str = "1777106280";

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// examples/monday.ndjson (the reference's example) through the real
/// triage-parse | triage-group | triage-score: the scored records.
pub fn scored_monday() -> Vec<u8> {
    let events = ok("triage-parse", &["examples/monday.ndjson"], b"");
    let groups = ok("triage-group", &[], &events);
    ok("triage-score", &[], &groups)
}

/// triage-diff of the reference's example batches: before.ndjson against
/// monday.ndjson.
pub fn changes_before_monday() -> Vec<u8> {
    ok(
        "triage-diff",
        &["examples/before.ndjson", "examples/monday.ndjson"],
        b"",
    )
}

/// triage-render with a fixed date, no colour and no configuration from
/// the environment.
pub fn render() -> Command {
    let mut render = cmd("triage-render");
    render
        .env("SOURCE_DATE_EPOCH", EPOCH)
        .env("NO_COLOR", "1")
        .env_remove("TRIAGE_CONFIG");
    render
}

/// Records as NDJSON text.
pub fn ndjson(records: &[Value]) -> String {
    records.iter().map(|r| format!("{r}\n")).collect()
}

pub fn header() -> Value {
    json!({"kind":"header","schema":1,"producer":"test 0"})
}

pub fn batch(runs: u64, skipped: u64) -> Value {
    let run_order: Vec<String> = (1..=runs).map(|i| format!("r{i}")).collect();
    json!({"kind":"batch","runs_total":runs,"run_order":run_order,"events_total":10,
        "failures_total":4,"skipped":skipped,
        "sources":[{"kind":"source","path":"t.ndjson","format":"ndjson","events":10,"runs":runs,"skipped":skipped}],
        "first_timestamp":null,"last_timestamp":null})
}

/// A scored pattern of `agent` on `tool` at `rank`.
pub fn pattern(agent: &str, tool: &str, class: &str, rank: u64, final_score: f64) -> Value {
    json!({"kind":"pattern","pattern_id":format!("{agent}-{tool}"),
        "display_name":format!("[{agent}] {tool} / {class} / no-divergence"),
        "agent_id":agent,"tool_name":tool,"failure_classification":class,"divergence_fields":[],
        "frequency":2,"recovered":1,"tail_unrecovered":1,"recovery_latencies":{"2":1},
        "run_counts":{"r1":1,"r2":1},"samples":[{"event_id":"e1","run_id":"r1","turn":3,"step":4,"text":format!("{tool} failed")}],
        "frequency_score":10.0,"severity_score":7.0,"recovery_rate":0.5,"final_score":final_score,
        "confidence":0.4,"confidence_label":"medium","median_recovery_latency":2.0,
        "runs_seen":2,"runs_total":2,"trend":"insufficient data","rank":rank})
}
