//! What a team acts on in one report: runs in time order, patterns joined
//! to samples and root causes, a per-agent view, time buckets, and stages
//! that fail closed when the stage before them wrote nothing.

mod common;

use common::*;
use serde_json::Value;

fn dated(bin: &str, args: &[&str], stdin: &[u8]) -> (i32, Vec<u8>, String) {
    run_env(
        bin,
        args,
        &[("SOURCE_DATE_EPOCH", EPOCH), ("NO_COLOR", "1")],
        stdin,
    )
}

fn json_report(args: &[&str]) -> Value {
    let mut all = vec!["report", "--format", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = dated("triage", &all, b"");
    assert_eq!(code, 0, "{err}");
    serde_json::from_slice(&out).unwrap()
}

/// (display name, trend) of every pattern, and the batch's run order.
fn trends(report: &Value) -> (Vec<(String, String)>, Value) {
    let patterns = report["patterns"].as_array().unwrap();
    let trends = patterns
        .iter()
        .map(|p| {
            (
                p["display_name"].as_str().unwrap().to_string(),
                p["trend"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (trends, report["batch"]["run_order"].clone())
}

#[test]
fn trend_follows_time_whichever_file_comes_first() {
    let forward = json_report(&["examples/before.ndjson", "examples/monday.ndjson"]);
    let backward = json_report(&["examples/monday.ndjson", "examples/before.ndjson"]);
    assert_eq!(trends(&forward), trends(&backward));
    let (trends, order) = trends(&forward);
    // monday.ndjson's runs are the older ones (April 24th, before.ndjson's
    // the 25th): from them to the later ones the dispatch failures grew.
    assert_eq!(order[0], "seed201", "{order}");
    assert!(
        trends.contains(&(
            "[planner] dispatch_subtask / coordination_failure / retriever_state+task_queue_head"
                .to_string(),
            "increasing".to_string()
        )),
        "{trends:?}"
    );
    let patterns = |r: &Value| r["patterns"].clone();
    assert_eq!(patterns(&forward), patterns(&backward));
}
