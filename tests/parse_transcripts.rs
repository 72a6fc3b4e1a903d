//! triage-parse on chat transcripts (`openai-chat`, `anthropic-messages`):
//! the real TraceSIR function-calling runs, fixtures from real files, and
//! the outcome and failures each one must give.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

fn crate_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

struct Parsed {
    records: Vec<Value>,
    stderr: String,
}

impl Parsed {
    fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.records.iter().filter(|r| r["kind"] == kind).collect()
    }

    fn events(&self) -> Vec<&Value> {
        self.of_kind("event")
    }

    fn failed(&self) -> Vec<&Value> {
        self.events()
            .into_iter()
            .filter(|e| e["action_succeeded"] == false)
            .collect()
    }
}

fn parse(args: &[&str], files: &[&Path]) -> Parsed {
    let out = Command::cargo_bin("triage-parse")
        .unwrap()
        .args(args)
        .args(files)
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    let records = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    Parsed { records, stderr }
}

fn tracesir_function_calling() -> Vec<PathBuf> {
    let dir = crate_path("tests/data/tracesir/function-calling");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 50, "{} is incomplete", dir.display());
    files
}

/// Every TraceSIR τ²-bench conversation reads as one openai-chat run, with
/// no warning, failed as its `gold_score` 0 says; each tool call (the
/// agent's and the simulated user's) is one event answered by its reply,
/// and exactly the replies that are errors fail their call.
#[test]
fn every_tracesir_function_calling_run_reads_whole_with_its_verdict() {
    for file in tracesir_function_calling() {
        let doc: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        let messages = doc["messages"].as_array().unwrap();
        let calls = messages
            .iter()
            .filter_map(|m| m["tool_calls"].as_array())
            .map(Vec::len)
            .sum::<usize>();
        let errors = messages
            .iter()
            .filter(|m| m["role"] == "tool")
            .filter(|m| {
                m["content"]
                    .as_str()
                    .is_some_and(|c| c.starts_with("Error"))
            })
            .count();

        let p = parse(&[], &[&file]);
        let name = file.file_name().unwrap().to_string_lossy();
        assert!(p.stderr.is_empty(), "{name}: {}", p.stderr);
        let src = p.of_kind("source")[0];
        assert_eq!(src["format"], "openai-chat", "{name}");
        assert_eq!(
            (src["skipped"].as_u64(), src["runs"].as_u64()),
            (Some(0), Some(1))
        );
        let runs = p.of_kind("run");
        assert_eq!(runs[0]["run_id"], doc["oid"], "{name}");
        assert_eq!(runs[0]["outcome"], "failed", "{name}");
        assert_eq!(runs[0]["task"], doc["task"], "{name}");
        let tools: Vec<&Value> = p
            .events()
            .into_iter()
            .filter(|e| e["span_kind"] == "tool")
            .collect();
        assert_eq!(tools.len(), calls, "{name}");
        assert!(
            tools.iter().all(|e| e["output"].is_string()),
            "{name}: a call without its reply"
        );
        assert_eq!(p.failed().len(), errors, "{name}");
    }
}
