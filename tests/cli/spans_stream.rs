//! Spans as a stream: `triage-gen --format otlp` writes the same events as
//! its NDJSON, and the span reader reads them back to the same report.

use crate::common;

use common::*;
use serde_json::Value;

/// A record without what names where an event came from: its id (a span
/// id in OTLP, `r0-t1` in NDJSON), the file's path, format and producer,
/// and the batch's counts of failed and succeeded runs (spans state
/// outcomes, NDJSON events none).
fn unplaced(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| {
                    !matches!(
                        k.as_str(),
                        "event_id"
                            | "path"
                            | "format"
                            | "producer"
                            | "runs_failed"
                            | "runs_succeeded"
                    )
                })
                .map(|(k, v)| (k.clone(), unplaced(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(unplaced).collect()),
        other => other.clone(),
    }
}

/// parse | group | score, with the run records spans state (NDJSON
/// events state none) left out.
fn scored(input: &[u8]) -> Vec<Value> {
    pipeline(input)
        .iter()
        .filter(|r| r["kind"] != "run")
        .map(unplaced)
        .collect()
}

#[test]
fn otlp_from_the_generator_scores_as_its_ndjson() {
    for (n, runs, per_request) in [
        ("3000", "7", "50"),
        ("500", "40", "1"),
        ("1200", "1", "333"),
    ] {
        let args = ["-n", n, "-r", runs, "--seed", "11", "--failure-rate", "0.2"];
        let ndjson = ok("triage-gen", &args, b"");
        let mut otlp_args = args.to_vec();
        otlp_args.extend(["--format", "otlp", "--spans-per-request", per_request]);
        let otlp = ok("triage-gen", &otlp_args, b"");
        let text = String::from_utf8(otlp.clone()).unwrap();
        let first = text.lines().next().unwrap();
        assert!(first.starts_with("{\"resourceSpans\""), "{first}");
        if let Some(second) = text.lines().nth(1) {
            assert!(second.starts_with("{\"resource_spans\""), "{second}");
        }
        let want = scored(&ndjson);
        assert!(want.iter().filter(|r| r["kind"] == "pattern").count() > 3);
        assert_eq!(scored(&otlp), want, "-n {n} -r {runs}");
    }
}

#[test]
fn generator_refuses_messy_otlp() {
    let (code, _, err) = run("triage-gen", &["--format", "otlp", "--messy"], b"");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--messy"), "{err}");
}
