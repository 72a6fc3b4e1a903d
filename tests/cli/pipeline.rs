//! parse | group | score end to end on the examples and on the reference's
//! behavioural cases, with bad input, configuration and exit status.

use crate::common;

use common::*;
use serde_json::Value;

fn patterns(recs: &[Value]) -> Vec<&Value> {
    of_kind(recs, "pattern")
}

#[test]
fn monday_example_scores_as_the_reference_published() {
    let recs = pipeline(&std::fs::read("examples/monday.ndjson").unwrap());
    let ps = patterns(&recs);
    let got: Vec<(String, String, u64)> = ps
        .iter()
        .map(|p| {
            (
                p["display_name"].as_str().unwrap().to_string(),
                format!("{:.2}", p["final_score"].as_f64().unwrap()),
                p["frequency"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("[planner] dispatch_subtask / coordination_failure / retriever_state+task_queue_head".into(), "13.00".into(), 11),
            ("[executor] call_external_api / agent_error / no-divergence".into(), "7.03".into(), 2),
            ("[retriever] fetch_documents / information_lag / index_version".into(), "5.18".into(), 6),
        ]
    );
    assert_eq!(ps[0]["severity_score"], 15.0);
    assert_eq!(ps[0]["tail_unrecovered"], 11);
    // The reference says "new": its three runs started at one instant, so
    // which of them is "recent" is a matter of order, and triage says so.
    assert_eq!(ps[1]["trend"], "started together");
    assert_eq!(ps[1]["confidence_label"], "medium");
    assert_eq!(ps[2]["recovery_rate"], 1.0);
    assert_eq!(ps[2]["median_recovery_latency"], 2.0);
    let batch = of_kind(&recs, "batch")[0];
    assert_eq!(batch["runs_total"], 3);
    assert_eq!(batch["skipped"], 0);
}

#[test]
fn single_failure_has_severity_ten_and_a_half() {
    let recs = pipeline(&lines(&[event("r", "a", 0, false, Some("agent_error"))]));
    let p = patterns(&recs)[0];
    assert_eq!(p["severity_score"], 10.5);
    assert_eq!(p["recovery_rate"], 0.0);
    assert_eq!(p["confidence_label"], "low");
    assert_eq!(p["trend"], "insufficient data");
}

#[test]
fn recovery_at_offset_three_counts_and_four_does_not() {
    let three = pipeline(&lines(&[
        event("r", "a", 0, false, None),
        event("r", "a", 3, true, None),
    ]));
    assert_eq!(patterns(&three)[0]["recovery_rate"], 1.0);
    assert_eq!(patterns(&three)[0]["median_recovery_latency"], 3.0);
    let four = pipeline(&lines(&[
        event("r", "a", 0, false, None),
        event("r", "a", 4, true, None),
    ]));
    assert_eq!(patterns(&four)[0]["recovery_rate"], 0.0);
    assert_eq!(patterns(&four)[0]["tail_unrecovered"], 0);
}

#[test]
fn no_success_within_ten_turns_is_tail_risk() {
    let ten = pipeline(&lines(&[
        event("r", "a", 0, false, None),
        event("r", "a", 10, true, None),
    ]));
    assert_eq!(patterns(&ten)[0]["tail_unrecovered"], 0);
    let eleven = pipeline(&lines(&[
        event("r", "a", 0, false, None),
        event("r", "a", 11, true, None),
    ]));
    assert_eq!(patterns(&eleven)[0]["tail_unrecovered"], 1);
}

#[test]
fn trend_over_runs_in_first_appearance_order() {
    let runs = ["r1", "r2", "r3", "r4", "r5", "r6"];
    let mut evs: Vec<String> = runs.iter().map(|r| event(r, "a", 0, true, None)).collect();
    evs.push(event("r5", "a", 1, false, None));
    assert_eq!(patterns(&pipeline(&lines(&evs)))[0]["trend"], "new");
    let mut evs: Vec<String> = runs.iter().map(|r| event(r, "a", 0, true, None)).collect();
    evs.push(event("r2", "a", 1, false, None));
    assert_eq!(patterns(&pipeline(&lines(&evs)))[0]["trend"], "resolved");
}

#[test]
fn confidence_labels_at_one_two_four_five() {
    for (n, label) in [(1, "low"), (2, "medium"), (4, "high"), (5, "high")] {
        let evs: Vec<String> = (0..n).map(|t| event("r", "a", t, false, None)).collect();
        assert_eq!(
            patterns(&pipeline(&lines(&evs)))[0]["confidence_label"],
            label,
            "{n}"
        );
    }
}

#[test]
fn counts_in_equal_counts_out_and_bad_lines_are_counted() {
    let text = ok(
        "triage-gen",
        &["-n", "3000", "-r", "9", "--messy", "--seed", "5"],
        b"",
    );
    let bad = String::from_utf8_lossy(&text)
        .lines()
        .filter(|l| {
            l.contains("\"broken\"") || l.contains("\"no-run\"") || l.contains("\"bad-turn\"")
        })
        .count();
    assert!(bad > 0, "the messy generator writes bad lines");
    let (code, events, err) = run("triage-parse", &[], &text);
    assert_eq!(code, 0);
    assert!(err.contains("<stdin>:"), "warnings name the line: {err}");
    let n_events = of_kind(&records(&events), "event").len();
    assert_eq!(n_events, 3000);
    let recs = records(&ok("triage-score", &[], &ok("triage-group", &[], &events)));
    let batch = of_kind(&recs, "batch")[0];
    assert_eq!(batch["events_total"], 3000);
    assert_eq!(batch["skipped"], bad as u64);
    let freq: u64 = patterns(&recs)
        .iter()
        .map(|p| p["frequency"].as_u64().unwrap())
        .sum();
    assert_eq!(batch["failures_total"], freq);
}

#[test]
fn strict_stops_at_the_first_bad_line() {
    let input = format!("{}\nnot json\n", event("r", "a", 0, true, None));
    let (code, _, err) = run("triage-parse", &["--strict"], input.as_bytes());
    assert_eq!(code, 2);
    assert!(
        err.contains("triage-parse: error: <stdin>:2: not valid JSON"),
        "{err}"
    );
}

#[test]
fn a_newer_schema_is_refused() {
    let input = br#"{"kind":"header","schema":99,"producer":"triage-parse 9.0"}
"#;
    for bin in ["triage-group", "triage-score"] {
        let (code, _, err) = run(bin, &[], input);
        assert_eq!(code, 2, "{bin}");
        assert!(
            err.contains("<stdin>:1: schema 99 is newer"),
            "{bin}: {err}"
        );
    }
}

#[test]
fn config_typo_is_an_error_naming_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("triage.toml");
    std::fs::write(
        &cfg,
        "[scoring]\nrecovery_window = 3\nno_recovery_multipler = 2\n",
    )
    .unwrap();
    let groups = ok(
        "triage-group",
        &[],
        &ok(
            "triage-parse",
            &[],
            &lines(&[event("r", "a", 0, false, None)]),
        ),
    );
    let (code, _, err) = run(
        "triage-score",
        &["--config", cfg.to_str().unwrap()],
        &groups,
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("triage.toml:3:") && err.contains("no_recovery_multipler"),
        "{err}"
    );
}

/// triage-score decodes patterns in parallel batches, yet its error is the
/// first bad line's, in input order, and scores come out as one by one.
#[test]
fn score_reads_many_patterns_in_order_and_names_the_first_bad_one() {
    let mut recs = vec![header(), batch(2, 0)];
    for i in 0..2000 {
        recs.push(pattern(&format!("agent{i}"), "t", "agent_error", 1, 5.0));
    }
    let good = ndjson(&recs);
    let scored = records(&ok("triage-score", &[], good.as_bytes()));
    let ids: Vec<&str> = scored
        .iter()
        .filter(|r| r["kind"] == "pattern")
        .map(|r| r["agent_id"].as_str().unwrap())
        .collect();
    // Equal scores keep the input order.
    let want: Vec<String> = (0..2000).map(|i| format!("agent{i}")).collect();
    assert_eq!(ids, want);
    let bad = format!(
        "{}{{\"kind\":\"pattern\",\"frequency\":\"x\"}}\n{}",
        good,
        ndjson(&[batch(2, 0)])
    );
    let (code, _, err) = run("triage-score", &["--strict"], bad.as_bytes());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("triage-score: error: <stdin>:2003: bad pattern record"),
        "{err}"
    );
}

/// A pattern record that does not read is skipped with a warning naming
/// the line and the field, and counted in the batch; --strict makes it the
/// error.
#[test]
fn score_skips_a_bad_pattern_with_a_warning() {
    let mut bad = pattern("bad", "t", "agent_error", 1, 5.0);
    bad["frequency"] = serde_json::json!("x");
    let input = ndjson(&[
        header(),
        batch(2, 1),
        bad,
        pattern("good", "t", "agent_error", 2, 5.0),
    ]);
    let (code, out, err) = run("triage-score", &[], input.as_bytes());
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "triage-score: warning: <stdin>:3: bad pattern record: frequency: invalid type: \
             string \"x\", expected a non-negative integer; skipped"
        ),
        "{err}"
    );
    let recs = records(&out);
    let scored = patterns(&recs);
    assert_eq!(scored.len(), 1);
    assert_eq!(scored[0]["agent_id"], "good");
    assert_eq!(of_kind(&recs, "batch")[0]["skipped"], 2);
    let (code, _, err) = run("triage-score", &["--strict"], input.as_bytes());
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("triage-score: error: <stdin>:3: bad pattern record: frequency:"),
        "{err}"
    );
}

#[test]
fn configured_window_and_weights_change_the_scores() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("triage.toml");
    std::fs::write(
        &cfg,
        "[scoring]\nrecovery_window = 5\n[scoring.weights]\nagent_error = 0.9\n",
    )
    .unwrap();
    let evs = lines(&[
        event("r", "a", 0, false, Some("agent_error")),
        event("r", "a", 4, true, None),
    ]);
    let groups = ok("triage-group", &[], &ok("triage-parse", &[], &evs));
    let recs = records(&ok("triage-score", &["-c", cfg.to_str().unwrap()], &groups));
    let p = patterns(&recs)[0];
    assert_eq!(p["recovery_rate"], 1.0);
    assert_eq!(p["severity_score"], 9.0);
}

#[test]
fn other_kinds_pass_through_in_order() {
    let input = format!(
        "{}\n{{\"kind\":\"note\",\"text\":\"keep me\"}}\n",
        event("r", "a", 0, false, None)
    );
    let events = ok("triage-parse", &[], input.as_bytes());
    let grouped = records(&ok("triage-group", &[], &events));
    let kinds: Vec<&str> = grouped
        .iter()
        .map(|r| r["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["header", "header", "note", "batch", "run", "pattern"]
    );
    assert_eq!(
        grouped[1]["producer"].as_str().unwrap().split(' ').next(),
        Some("triage-parse")
    );
}

#[test]
fn merged_shards_equal_one_pass() {
    let text = String::from_utf8(ok(
        "triage-gen",
        &["-n", "4000", "-r", "8", "--seed", "9"],
        b"",
    ))
    .unwrap();
    let (a, b): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| {
        let run: u32 = l.split("\"run-").nth(1).unwrap()[..5].parse().unwrap();
        run < 5
    });
    let dir = tempfile::tempdir().unwrap();
    let mut partials = Vec::new();
    for (i, shard) in [a.clone(), b.clone()].iter().enumerate() {
        let body = format!("{}\n", shard.join("\n"));
        let grouped = ok(
            "triage-group",
            &[],
            &ok("triage-parse", &[], body.as_bytes()),
        );
        let path = dir.path().join(format!("part{i}.ndjson"));
        std::fs::write(&path, grouped).unwrap();
        partials.push(path.to_str().unwrap().to_string());
    }
    let mut args = vec!["--merge"];
    args.extend(partials.iter().map(String::as_str));
    let merged = records(&ok("triage-score", &[], &ok("triage-group", &args, b"")));
    let one_pass = pipeline(format!("{}\n{}\n", a.join("\n"), b.join("\n")).as_bytes());
    let strip = |recs: &[Value]| -> Vec<Value> {
        recs.iter()
            .filter(|r| r["kind"] == "pattern" || r["kind"] == "batch")
            .map(|r| {
                let mut r = r.clone();
                r.as_object_mut().unwrap().remove("sources");
                r
            })
            .collect()
    };
    assert_eq!(strip(&merged), strip(&one_pass));
}

#[test]
fn broken_pipe_is_success() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let mut generator = Command::new(bin("triage-gen"))
        .args(["-n", "300000"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut parse = Command::new(bin("triage-parse"))
        .stdin(generator.stdout.take().unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(parse.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("\"kind\":\"header\""));
    let out = parse.wait_with_output().unwrap();
    let _ = generator.wait();
    assert!(out.status.success(), "exit {:?}", out.status.code());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn since_and_until_keep_a_time_range() {
    let evs: Vec<String> = (0..6)
        .map(|h| {
            format!(
                r#"{{"event_id":"e{h}","run_id":"r","turn":{h},"agent_id":"a","timestamp":"2026-04-25T{h:02}:00:00Z","action_taken":{{"tool_name":"t"}},"action_succeeded":false}}"#
            )
        })
        .collect();
    let out = ok(
        "triage-parse",
        &[
            "--since",
            "2026-04-25T02:00:00Z",
            "--until",
            "2026-04-25T04:00:00+00:00",
        ],
        &lines(&evs),
    );
    let ids: Vec<String> = of_kind(&records(&out), "event")
        .iter()
        .map(|e| e["event_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids, ["e2", "e3"]);
    let (code, _, err) = run("triage-parse", &["--since", "yesterday"], b"");
    assert_eq!(code, 2);
    assert!(err.contains("not a date-time"), "{err}");
}

#[test]
fn a_terminal_on_stdin_with_no_file_is_a_usage_error() {
    // `script` gives the tool a terminal on stdin; skip where it is missing.
    let Ok(which) = std::process::Command::new("script")
        .arg("--version")
        .output()
    else {
        return;
    };
    if !which.status.success() {
        return;
    }
    let bin = bin("triage-group");
    let out = std::process::Command::new("script")
        .args([
            "-qec",
            &format!("{} < /dev/tty", bin.display()),
            "/dev/null",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("no input: name a FILE or pipe records into stdin"),
        "{text}"
    );
    assert_eq!(out.status.code(), Some(2), "{text}");
}

#[test]
fn the_number_of_decoding_threads_changes_nothing_in_the_output() {
    // Several 1 MiB chunks, with bad lines among the good.
    let text = ok(
        "triage-gen",
        &["-n", "20000", "-r", "40", "--messy", "--seed", "8"],
        b"",
    );
    let (code, one, warnings) = run("triage-parse", &["-j", "1"], &text);
    assert_eq!(code, 0);
    assert!(one.len() > 4 << 20, "several chunks: {} bytes", one.len());
    for threads in [None, Some("2"), Some("5")] {
        let args: Vec<&str> = threads.into_iter().flat_map(|j| ["--threads", j]).collect();
        let (code, out, err) = run("triage-parse", &args, &text);
        assert_eq!(code, 0);
        assert!(out == one, "{args:?}: other records than with -j 1");
        assert_eq!(err, warnings, "{args:?}");
    }
    let (code, _, err) = run("triage-parse", &["-j", "0"], &text);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn triage_group_reads_the_same_on_any_number_of_threads() {
    let text = ok(
        "triage-gen",
        &["-n", "20000", "-r", "40", "--seed", "9"],
        b"",
    );
    let events = ok("triage-parse", &[], &text);
    // Every 997th record cut short: bad lines spread over several chunks.
    let mut records = Vec::new();
    for (i, line) in events.split_inclusive(|b| *b == b'\n').enumerate() {
        let cut = if i % 997 == 500 {
            &line[..line.len() / 2]
        } else {
            line
        };
        records.extend_from_slice(cut);
        if !records.ends_with(b"\n") {
            records.push(b'\n');
        }
    }
    let group_on = |threads: &str| {
        let (code, out, err) = run_env(
            "triage-group",
            &[],
            &[("RAYON_NUM_THREADS", threads)],
            &records,
        );
        assert_eq!(code, 0, "{threads} threads: {err}");
        (out, err)
    };
    let (one, warnings) = group_on("1");
    assert!(warnings.contains("skipped"), "{warnings}");
    for threads in ["2", "5"] {
        let (out, err) = group_on(threads);
        assert!(out == one, "{threads} threads: other records than with one");
        assert_eq!(err, warnings, "{threads} threads");
    }
}

/// An empty input file is no error for any stage: triage-score writes its
/// header and the empty batch triage-group writes for no events; patterns
/// without a batch stay an error. (Nothing at all on stdin is an error:
/// tests/report_structure.rs.)
#[test]
fn empty_input_is_an_empty_batch_and_patterns_need_one() {
    let (code, group, err) = run("triage-group", &["/dev/null"], b"");
    assert_eq!(code, 0, "{err}");
    let (code, score, err) = run("triage-score", &["/dev/null"], b"");
    assert_eq!(code, 0, "{err}");
    let batch_of = |out: &[u8]| of_kind(&records(out), "batch")[0].clone();
    let recs = records(&score);
    assert_eq!(recs.len(), 2, "header and batch");
    assert_eq!(
        recs[0]["producer"],
        format!("triage-score {}", env!("CARGO_PKG_VERSION"))
    );
    // The same batch, with the window triage-score counted with added.
    let mut scored_batch = batch_of(&score);
    assert_eq!(scored_batch["recovery_window"], 3);
    scored_batch
        .as_object_mut()
        .unwrap()
        .remove("recovery_window");
    assert_eq!(scored_batch, batch_of(&group));
    let orphan = ndjson(&[pattern("a", "t", "agent_error", 1, 5.0)]);
    let (code, _, err) = run("triage-score", &[], orphan.as_bytes());
    assert_eq!(code, 2);
    assert!(err.contains("pattern records but no batch record"), "{err}");
}

/// The scoring configuration owns the recovery window: patterns grouped
/// with another window are recounted (with a warning), so `recovered` and
/// `recovery_rate` never contradict each other.
#[test]
fn recovered_and_recovery_rate_agree_whatever_window_grouped_them() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("rw1.toml");
    std::fs::write(&cfg, "[scoring]\nrecovery_window = 1\n").unwrap();
    let cfg = cfg.to_str().unwrap();
    let events = ok("triage-parse", &["examples/monday.ndjson"], b"");
    let grouped = ok("triage-group", &["-c", cfg], &events);
    for (args, warns) in [(vec![], true), (vec!["-c", cfg], false)] {
        let (code, out, err) = run("triage-score", &args, &grouped);
        assert_eq!(code, 0, "{err}");
        assert_eq!(err.contains("recovery window"), warns, "{args:?}: {err}");
        for p in patterns(&records(&out)) {
            let (freq, recovered) = (
                p["frequency"].as_u64().unwrap(),
                p["recovered"].as_u64().unwrap(),
            );
            assert_eq!(
                p["recovery_rate"].as_f64().unwrap(),
                recovered as f64 / freq as f64,
                "{args:?}: {p}"
            );
        }
    }
}
