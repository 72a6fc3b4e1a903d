//! triage-diff end to end: the reference's published comparison, the label
//! edge cases, the sides it accepts and its exit status.

use crate::common;

use common::*;
use serde_json::Value;

fn changes(out: &[u8]) -> Vec<Value> {
    records(out)
        .into_iter()
        .filter(|r| r["kind"] == "change")
        .collect()
}

fn summary(cs: &[Value]) -> &Value {
    cs.iter().find(|c| c["scope"] == "summary").unwrap()
}

#[test]
fn reference_example_gives_the_published_summary() {
    let out = ok(
        "triage-diff",
        &["examples/before.ndjson", "examples/monday.ndjson"],
        b"",
    );
    let cs = changes(&out);
    let s = summary(&cs);
    assert_eq!(
        (
            s["failure_events"]["before"].as_u64(),
            s["failure_events"]["after"].as_u64()
        ),
        (Some(27), Some(19))
    );
    assert_eq!(s["failure_events"]["label"], "down 30%");
    assert_eq!(s["coordination_failure_events"]["label"], "down 39%");
    assert_eq!(s["unrecovered_events"]["label"], "down 52%");
    assert_eq!(
        format!("{:.2}", s["mean_final_score"]["before"].as_f64().unwrap()),
        "7.10"
    );
    assert_eq!(
        format!("{:.2}", s["mean_final_score"]["after"].as_f64().unwrap()),
        "8.40"
    );
    assert_eq!(s["mean_final_score"]["label"], "+1.30");
    assert_eq!(s["top_final_score"]["label"], "stable");
    let lag = cs
        .iter()
        .find(|c| c["classification"] == "information_lag")
        .unwrap();
    assert_eq!(lag["frequency"]["label"], "stable");
    assert_eq!(lag["unrecovered"]["label"], "resolved");
    assert_eq!(lag["latency_label"], "new (2 turns)");
    // Reported although the frequency did not change (the reference drops it).
    let heads: Vec<&str> = s["headlines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h.as_str().unwrap())
        .collect();
    assert!(
        heads.contains(&"Information Lag unrecovered: resolved (6 → 0)"),
        "{heads:?}"
    );
    let statuses: Vec<&str> = cs
        .iter()
        .filter(|c| c["scope"] == "pattern")
        .map(|c| c["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["new", "resolved", "persisting", "persisting"]);
}

#[test]
fn identical_batches_have_no_changes_and_pass_every_gate() {
    let (code, out, _) = run(
        "triage-diff",
        &[
            "--fail-on",
            "new",
            "--fail-on",
            "regression",
            "examples/monday.ndjson",
            "examples/monday.ndjson",
        ],
        b"",
    );
    assert_eq!(code, 0);
    let cs = changes(&out);
    assert!(summary(&cs)["headlines"].as_array().unwrap().is_empty());
    assert!(
        cs.iter()
            .filter(|c| c["scope"] == "pattern")
            .all(|c| c["status"] == "persisting")
    );
}

#[test]
fn gates_exit_one_when_they_hold() {
    let args = ["examples/before.ndjson", "examples/monday.ndjson"];
    let with = |cond: &str| {
        run(
            "triage-diff",
            &[&["--fail-on", cond][..], &args[..]].concat(),
            b"",
        )
        .0
    };
    assert_eq!(with("new"), 1);
    // Two agent errors in three runs where there were none: within noise
    // for `regression` (p = 0.25); `new` is the gate that sees them.
    assert_eq!(with("regression"), 0, "two events in three runs");
    assert_eq!(with("score>=13"), 1);
    assert_eq!(with("score>=13.5"), 0);
    let (code, _, err) = run("triage-diff", &["--fail-on", "score>x", "a", "b"], b"");
    assert_eq!(code, 2, "{err}");
}

#[test]
fn tolerance_allows_small_growth() {
    let before = lines(
        &(0..10)
            .map(|t| event("r", "a", t, false, Some("agent_error")))
            .collect::<Vec<_>>(),
    );
    // Three times the failures in the same run: beyond noise.
    let after = lines(
        &(0..30)
            .map(|t| event("r", "a", t, false, Some("agent_error")))
            .collect::<Vec<_>>(),
    );
    let dir = tempfile::tempdir().unwrap();
    let (b, a) = (dir.path().join("b.ndjson"), dir.path().join("a.ndjson"));
    std::fs::write(&b, before).unwrap();
    std::fs::write(&a, after).unwrap();
    let (b, a) = (b.to_str().unwrap(), a.to_str().unwrap());
    assert_eq!(
        run("triage-diff", &["--fail-on", "regression", b, a], b"").0,
        1
    );
    assert_eq!(
        run(
            "triage-diff",
            &["--fail-on", "regression", "--tolerance", "250", b, a],
            b""
        )
        .0,
        0
    );
}

#[test]
fn empty_side_and_both_empty() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.ndjson");
    std::fs::write(&empty, "").unwrap();
    let e = empty.to_str().unwrap();
    let cs = changes(&ok("triage-diff", &[e, "examples/monday.ndjson"], b""));
    let s = summary(&cs);
    assert_eq!(s["failure_events"]["label"], "new");
    assert_eq!(s["top_final_score"]["before"], 0.0);
    let cs = changes(&ok("triage-diff", &[e, e], b""));
    assert_eq!(summary(&cs)["failure_events"]["label"], "stable");
    assert_eq!(cs.len(), 2, "nothing but the summary and the pass rates");
    assert_eq!(cs[1]["scope"], "pass_rate");
    assert_eq!(cs[1]["test"], "none");
}

/// A candidate that wrote no traces does not pass a CI gate: the
/// comparison is still written, with a warning, and a gate exits 2.
#[test]
fn an_empty_after_batch_cannot_pass_a_gate() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.ndjson");
    std::fs::write(&empty, "").unwrap();
    let e = empty.to_str().unwrap();
    let (code, out, err) = run("triage-diff", &["examples/before.ndjson", e], b"");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        summary(&changes(&out))["failure_events"]["label"],
        "resolved"
    );
    assert!(
        err.contains("no runs were read, so every pattern of BEFORE counts as resolved"),
        "{err}"
    );
    for tool in [&["triage-diff"][..], &["triage", "compare"][..]] {
        let mut args: Vec<&str> = tool[1..].to_vec();
        args.extend(["--fail-on", "regression", "examples/before.ndjson", e]);
        let (code, _, err) = run(tool[0], &args, b"");
        assert_eq!(code, 2, "{tool:?}: {err}");
        assert!(
            err.contains("--fail-on cannot judge a comparison whose AFTER batch has no runs"),
            "{err}"
        );
    }
}

/// An empty baseline (a CI job whose BEFORE came out empty) is no
/// regression of the candidate: the gate exits 2, as for an empty AFTER.
#[test]
fn an_empty_before_batch_cannot_pass_a_gate() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.ndjson");
    std::fs::write(&empty, "").unwrap();
    let e = empty.to_str().unwrap();
    let (code, _, err) = run("triage-diff", &[e, "examples/monday.ndjson"], b"");
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("no runs were read, so every pattern of AFTER counts as new"),
        "{err}"
    );
    let (code, _, err) = run(
        "triage-diff",
        &["--fail-on", "new", e, "examples/monday.ndjson"],
        b"",
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--fail-on cannot judge a comparison whose BEFORE batch has no runs"),
        "{err}"
    );
}

#[test]
fn sides_can_be_directories_stdin_or_any_stage_records() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy("examples/monday.ndjson", dir.path().join("1.ndjson")).unwrap();
    let d = dir.path().to_str().unwrap();
    let from_dir = changes(&ok("triage-diff", &["examples/before.ndjson", d], b""));
    // What a directory holds besides trace files is named, not skipped silently.
    std::fs::write(dir.path().join("spans.txt"), "x").unwrap();
    let (code, with_txt, err) = run("triage-diff", &["examples/before.ndjson", d], b"");
    assert_eq!(code, 0, "{err}");
    assert_eq!(changes(&with_txt), from_dir);
    assert!(
        err.contains("left out ") && err.contains("spans.txt"),
        "{err}"
    );
    let scored = scored("examples/monday.ndjson");
    let from_stdin = changes(&ok(
        "triage-diff",
        &["examples/before.ndjson", "-"],
        &scored,
    ));
    let strip = |cs: &[Value]| -> Vec<Value> {
        cs.iter()
            .filter(|c| c["scope"] != "summary")
            .cloned()
            .collect()
    };
    assert_eq!(strip(&from_dir), strip(&from_stdin));
    assert_eq!(summary(&from_stdin)["failure_events"]["label"], "down 30%");
    let (code, _, err) = run(
        "triage-diff",
        &["examples/before.ndjson", "no-such-file.ndjson"],
        b"",
    );
    assert_eq!(code, 2);
    assert!(err.contains("no-such-file.ndjson: no such file"), "{err}");
}

/// A batch with far fewer failures in every classification is no
/// regression, although its top scores may rise: scores are scaled to each
/// batch's most frequent pattern. The reverse change is one.
#[test]
fn regression_is_more_failures_not_a_rescaled_score() {
    let dir = tempfile::tempdir().unwrap();
    let batch = |name: &str, seed: &str, rate: &str| {
        let p = dir.path().join(name);
        let text = ok(
            "triage-gen",
            &[
                "-n",
                "5000",
                "-r",
                "50",
                "--seed",
                seed,
                "--failure-rate",
                rate,
            ],
            b"",
        );
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let (worse, better) = (
        batch("worse.ndjson", "2", "0.2"),
        batch("better.ndjson", "1", "0.02"),
    );
    let cs = changes(&ok("triage-diff", &[&worse, &better], b""));
    let rose = cs
        .iter()
        .filter(|c| c["scope"] == "classification")
        .filter(|c| c["top_score_after"].as_f64() > c["top_score_before"].as_f64())
        .count();
    assert!(rose > 0, "the case this guards: some top score rises");
    let gate = |b: &str, a: &str| run("triage-diff", &["--fail-on", "regression", b, a], b"");
    let (code, _, err) = gate(&worse, &better);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = gate(&better, &worse);
    assert_eq!(code, 1);
    assert!(err.contains("failure events per run rose"), "{err}");
}

/// A side that holds records of no use to a comparison, or input that
/// could not be read, is refused rather than compared as an empty batch;
/// an empty file is an empty batch.
#[test]
fn a_side_with_nothing_to_compare_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let events = ok("triage-parse", &["examples/monday.ndjson"], b"");
    let explained = dir.path().join("explained.ndjson");
    std::fs::write(
        &explained,
        ok("triage-explain", &["--unknown-outcome"], &events),
    )
    .unwrap();
    let x = explained.to_str().unwrap();
    let (code, _, err) = run("triage-diff", &["--fail-on", "regression", x, x], b"");
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("nothing to compare"), "{err}");
    assert!(err.contains("only finding, verdict records"), "{err}");
    let changes_out = ok(
        "triage-diff",
        &["examples/before.ndjson", "examples/monday.ndjson"],
        b"",
    );
    let (code, _, err) = run(
        "triage-diff",
        &["-", "examples/monday.ndjson"],
        &changes_out,
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("-: nothing to compare") && err.contains("change records"),
        "{err}"
    );
    let garbage = dir.path().join("garbage.ndjson");
    std::fs::write(&garbage, "not json\n").unwrap();
    let (code, _, err) = run(
        "triage-diff",
        &[garbage.to_str().unwrap(), "examples/monday.ndjson"],
        b"",
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("could not be read"), "{err}");
    let empty = dir.path().join("empty.ndjson");
    std::fs::write(&empty, "").unwrap();
    assert_eq!(
        run(
            "triage-diff",
            &[empty.to_str().unwrap(), "examples/monday.ndjson"],
            b""
        )
        .0,
        0
    );
}
