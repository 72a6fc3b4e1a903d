//! Helpers the integration tests share: running the real binaries and
//! reading their records.
#![allow(dead_code)]

use assert_cmd::Command;
use serde_json::Value;

/// Runs a binary with `args` and `stdin`; returns (exit code, stdout, stderr).
pub fn run(bin: &str, args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    let out = Command::cargo_bin(bin)
        .unwrap()
        .args(args)
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
