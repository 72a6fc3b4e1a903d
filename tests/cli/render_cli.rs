//! triage-render as users run it: input handling, errors and exit status,
//! every format's content, -o, and escaping in the HTML dashboard.

use crate::common;

use common::{batch, header, ndjson, pattern, render, scored_monday};
use predicates::prelude::*;
use serde_json::json;

fn stdout_of(args: &[&str], input: String) -> String {
    let out = render().args(args).write_stdin(input).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn refuses_a_newer_schema_naming_the_line() {
    let input = ndjson(&[json!({"kind":"header","schema":2,"producer":"future 9"})]);
    render()
        .write_stdin(input)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "triage-render: error: <stdin>:1: schema 2 is newer than this tool reads",
        ));
}

#[test]
fn a_bad_line_is_skipped_with_a_warning_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scored.ndjson");
    std::fs::write(&path, format!("{}\n\n{{\"kind\":\"pattern\"\n", header())).unwrap();
    render()
        .arg(&path)
        .assert()
        .code(0)
        .stderr(predicate::str::contains(format!(
            "triage-render: warning: {}:3:",
            path.display()
        )))
        .stdout(predicate::str::contains("1 input line could not be read"));
    render()
        .arg("--strict")
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "triage-render: error: {}:3:",
            path.display()
        )));
    std::fs::write(&path, "{\"kind\":\"verdict\",\"run_id\":\"r\"}\n").unwrap();
    render()
        .arg(&path)
        .assert()
        .code(0)
        .stderr(predicate::str::contains(
            ":1: missing field \"agent_id\"; skipped",
        ));
}

/// A pattern record with a field of the wrong type is skipped with the
/// field and the reason, and the other patterns are shown; score fields
/// that do not read are not taken for a missing triage-score.
#[test]
fn a_bad_pattern_is_skipped_naming_the_field() {
    let mut bad_frequency = pattern("bad", "t", "agent_error", 1, 9.0);
    bad_frequency["frequency"] = json!("x");
    let mut bad_score = pattern("worse", "t", "agent_error", 1, 8.0);
    bad_score["final_score"] = json!("abc");
    let good = pattern("good", "t", "agent_error", 1, 5.0);
    let input = ndjson(&[header(), batch(2, 0), bad_frequency, bad_score, good]);
    for format in ["md", "table", "html", "json", "csv"] {
        let out = render()
            .args(["-f", format])
            .write_stdin(input.clone())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{format}: {err}");
        assert!(
            err.contains("<stdin>:3: frequency: invalid type: string \"x\", expected a non-negative integer; skipped"),
            "{err}"
        );
        assert!(
            err.contains(
                "<stdin>:4: final_score: invalid type: string \"abc\", expected a number; skipped"
            ),
            "{err}"
        );
        assert!(!err.contains("not scored"), "{err}");
        let out = String::from_utf8_lossy(&out.stdout);
        assert!(out.contains("good") && !out.contains("worse"), "{out}");
    }
    render()
        .arg("--strict")
        .write_stdin(input)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "triage-render: error: <stdin>:3: frequency:",
        ));
}

/// Lines are parsed in parallel but reported in order: under --strict, of
/// several bad lines the first is named, and a second batch is refused at
/// its own line even when a bad line follows it.
#[test]
fn the_first_bad_line_is_the_one_named() {
    let mut lines = vec![header(), batch(2, 0)];
    for i in 0..3000 {
        lines.push(pattern(&format!("agent{i}"), "t", "agent_error", 1, 5.0));
    }
    let good = ndjson(&lines);
    let with = |extra: &str| format!("{good}{extra}");
    render()
        .arg("--strict")
        .write_stdin(with("{\"kind\":\"pattern\"\n{nope\n"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("<stdin>:3003: "))
        .stderr(predicate::str::contains(":3004:").not());
    let second = ndjson(&[batch(2, 0)]);
    render()
        .write_stdin(with(&format!("{second}{{nope\n")))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "<stdin>:3003: a second batch record",
        ));
}

#[test]
fn unknown_kinds_and_fields_are_ignored() {
    let mut p = pattern("a", "t", "agent_error", 1, 5.0);
    p["some_new_field"] = json!(1);
    let input = ndjson(&[
        header(),
        json!({"kind":"event","event_id":"e"}),
        json!({"kind":"alert","x":1}),
        batch(2, 0),
        p,
    ]);
    let md = stdout_of(&[], input.clone());
    assert!(
        md.contains("## #1 - [a] t / agent_error / no-divergence"),
        "{md}"
    );
    let json: serde_json::Value = serde_json::from_str(&stdout_of(&["-f", "json"], input)).unwrap();
    assert_eq!(json["patterns"][0]["some_new_field"], 1);
}

#[test]
fn no_patterns_is_an_all_clear() {
    let clean = |runs| {
        let mut b = batch(runs, 0);
        b["failures_total"] = json!(0);
        b["runs_succeeded"] = json!(runs);
        ndjson(&[header(), b])
    };
    let md = stdout_of(&[], clean(3));
    assert!(md.contains("All clear: no failures in 3 runs."), "{md}");
    assert!(!md.contains("## #"));
    // No failure events, but no run says it succeeded: no all clear.
    let mut unknown = batch(3, 0);
    unknown["failures_total"] = json!(0);
    let md = stdout_of(&[], ndjson(&[header(), unknown]));
    assert!(!md.contains("All clear"), "{md}");
    assert!(
        md.contains("No failure events in 3 runs, but they have no known outcome"),
        "{md}"
    );
    let table = stdout_of(&["-f", "table"], clean(1));
    assert!(
        table.contains("All clear: no failures in 1 run."),
        "{table}"
    );
    // A line the parser could not read may hold a failure: no all clear.
    let mut partial = batch(2, 0);
    partial["failures_total"] = json!(0);
    partial["runs_succeeded"] = json!(2);
    partial["skipped"] = json!(1);
    let md = stdout_of(&[], ndjson(&[header(), partial]));
    assert!(!md.contains("All clear"), "{md}");
    assert!(
        md.contains("No failures in the 2 runs read, but 1 input line could not be read"),
        "{md}"
    );
    // Failures whose patterns were all skipped are no all-clear.
    let md = stdout_of(&[], ndjson(&[header(), batch(3, 0)]));
    assert!(
        md.contains("No patterns to show, though the batch counts 4 failure events"),
        "{md}"
    );
}

#[test]
fn skipped_input_lines_are_reported() {
    let md = stdout_of(&[], ndjson(&[header(), batch(2, 3)]));
    assert!(
        md.contains("3 input lines could not be read; see stderr."),
        "{md}"
    );
    let html = stdout_of(&["-f", "html"], ndjson(&[header(), batch(2, 1)]));
    assert!(html.contains("1 input line could not be read; see stderr."));
}

#[test]
fn top_limits_the_detailed_patterns() {
    let input = ndjson(&[
        header(),
        batch(2, 0),
        pattern("b", "t2", "agent_error", 2, 4.0),
        pattern("a", "t1", "coordination_failure", 1, 9.0),
    ]);
    let md = stdout_of(&["--top", "1"], input.clone());
    assert!(
        md.contains("2 incident patterns, the top one worth your attention."),
        "{md}"
    );
    assert!(
        md.contains("## #1 - [a] t1"),
        "ranked by rank, not input order"
    );
    assert!(!md.contains("## #2"));
    let csv = stdout_of(&["-f", "csv"], input);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 3, "header and every pattern: {csv}");
    assert!(lines[0].starts_with("pattern_id,display_name,"));
    assert!(lines[1].starts_with("a-t1,"));
}

#[test]
fn texts_use_the_configured_scoring_model() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("triage.toml");
    std::fs::write(
        &cfg,
        "[scoring]\nrecovery_window = 5\n[scoring.weights]\nagent_error = 2.0\n",
    )
    .unwrap();
    let input = ndjson(&[
        header(),
        batch(2, 0),
        pattern("a", "t", "agent_error", 1, 5.0),
    ]);
    let md = stdout_of(&["--config", cfg.to_str().unwrap()], input);
    assert!(md.contains("within 5 turns"), "{md}");
    assert!(md.contains("| Severity Score | 7.00 / 30.00 |"), "{md}");
    assert!(!md.contains("within 3 turns"));
}

#[test]
fn unscored_patterns_need_triage_score_except_for_json_and_csv() {
    let mut p = pattern("a", "t", "agent_error", 1, 5.0);
    for k in triage::record::Scores::FIELDS {
        p.as_object_mut().unwrap().remove(k);
    }
    let input = ndjson(&[header(), batch(2, 0), p]);
    render()
        .write_stdin(input.clone())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("triage-score"));
    assert!(stdout_of(&["-f", "csv"], input).contains("a-t"));
}

#[test]
fn output_file_is_written_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.html");
    render()
        .args(["-f", "html", "--refresh", "300", "-o"])
        .arg(&out)
        .write_stdin(scored_monday())
        .assert()
        .success()
        .stdout("");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains(r#"<meta http-equiv="refresh" content="300">"#));
    assert!(html.ends_with("</html>\n"));
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary file left"
    );
    render()
        .args(["--strict", "-o"])
        .arg(&out)
        .write_stdin("not json\n")
        .assert()
        .code(2);
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        html,
        "a failed run keeps the old file"
    );
}

#[test]
fn table_has_no_colour_off_a_terminal() {
    let table = stdout_of(
        &["-f", "table"],
        String::from_utf8(scored_monday()).unwrap(),
    );
    assert!(!table.contains('\u{1b}'));
    assert!(table.contains("dispatch_subtask"));
    let input = ndjson(&[
        header(),
        batch(2, 0),
        pattern(
            "\u{1b}]0;owned\u{7}\u{1b}[31mred",
            "t",
            "agent_error",
            1,
            5.0,
        ),
    ]);
    let table = stdout_of(&["-f", "table"], input);
    assert!(
        !table.contains('\u{1b}'),
        "a trace drove the terminal: {table:?}"
    );
}

#[test]
fn verdicts_findings_and_changes_are_rendered() {
    let verdict = json!({"kind":"verdict","run_id":"r1","agent_id":"planner","step":7,
        "category":"bad_handoff","blame":"agent","confidence":0.8,
        "evidence":["Step 7 dropped the task id."],
        "candidates":[{"agent_id":"planner","step":7,"category":"bad_handoff","detector":"handoff","confidence":0.8}]});
    let finding = json!({"kind":"finding","run_id":"r1","step":9,"agent_id":"executor","category":"error",
        "title":"Tool raised","detector":"errors","confidence":0.5,"symptom":true,"evidence":["It failed."]});
    let change = json!({"kind":"change","scope":"summary","metric":"failure events","before":27,"after":19,"delta":"down 30%"});
    let input = ndjson(&[
        header(),
        batch(2, 0),
        pattern("planner", "t", "agent_error", 1, 5.0),
        verdict,
        finding,
        change,
    ]);
    let md = stdout_of(&[], input.clone());
    assert!(md.contains("## Root causes per failed run"), "{md}");
    assert!(md.contains(
        "| r1 | planner | 7 | bad_handoff | agent | 0.80 | Step 7 dropped the task id. |"
    ));
    assert!(
        md.contains("- run `r1`: planner at step 7"),
        "verdict on the pattern's card: {md}"
    );
    assert!(
        md.contains("| failure events | 27 | 19 | down 30% |"),
        "{md}"
    );
    let html = stdout_of(&["-f", "html"], input.clone());
    assert!(html.contains("Step 7 dropped the task id.") && html.contains("Tool raised"));
    assert!(html.contains("down 30%"));
    let json: serde_json::Value = serde_json::from_str(&stdout_of(&["-f", "json"], input)).unwrap();
    assert_eq!(json["verdicts"][0]["step"], 7);
    assert_eq!(json["findings"][0]["title"], "Tool raised");
    assert_eq!(json["changes"][0]["delta"], "down 30%");
}

#[test]
fn many_patterns_make_a_page_of_cards_and_a_table() {
    let mut records = vec![header(), batch(2, 0)];
    for i in 0..120u64 {
        let name = format!("agent{i}");
        records.push(pattern(&name, "t", "agent_error", i + 1, 100.0 - i as f64));
    }
    // The top 3 are cards by default, at most 50 whatever --top says.
    let html = stdout_of(&["-f", "html"], ndjson(&records));
    assert_eq!(html.matches("<details class=\"card\"").count(), 3);
    assert!(html.contains("117 more patterns"));
    let html = stdout_of(&["-f", "html", "--top", "120"], ndjson(&records));
    assert_eq!(html.matches("<details class=\"card\"").count(), 50);
    assert!(html.contains("70 more patterns"));
    assert!(html.contains("<td>120</td><td>[agent119] t / agent_error / no-divergence</td>"));
}

#[test]
fn long_root_cause_lists_are_capped_and_counted() {
    let mut records = vec![
        header(),
        batch(2, 0),
        pattern("planner", "t", "agent_error", 1, 5.0),
    ];
    for i in 0..30 {
        let agent = if i == 29 { "planner" } else { "other" };
        records.push(
            json!({"kind":"verdict","run_id":"r1","agent_id":agent,"step":i,
            "category":"c","blame":"agent","confidence":0.5,"evidence":[],"candidates":[]}),
        );
    }
    let md = stdout_of(&[], ndjson(&records));
    let card = md.split("**Root causes of its runs:**").nth(1).unwrap();
    let first = card.lines().find(|l| l.starts_with("- run")).unwrap();
    assert!(
        first.contains("planner at step 29"),
        "own agent first: {first}"
    );
    assert!(
        card.contains("and 25 more (all of them in --format json)"),
        "{md}"
    );
    assert!(
        md.contains("and 10 more (all of them in --format json)"),
        "{md}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&stdout_of(&["-f", "json"], ndjson(&records))).unwrap();
    assert_eq!(json["verdicts"].as_array().unwrap().len(), 30);
}

#[test]
fn a_closed_pipe_is_success() {
    let mut records = vec![header(), batch(2, 0)];
    for i in 0..3000u64 {
        records.push(pattern(&format!("a{i}"), "t", "agent_error", i + 1, 1.0));
    }
    let mut child = std::process::Command::new(common::bin("triage-render"))
        .args(["-f", "csv"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(ndjson(&records).as_bytes()).unwrap();
    }
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
}

#[test]
fn changes_alone_make_a_comparison_report() {
    let change = json!({"kind":"change","scope":"pattern","pattern_id":"p","status":"new","before":0,"after":2});
    let md = stdout_of(&[], ndjson(&[header(), change]));
    assert!(md.starts_with("# Triage Comparison Report\n"), "{md}");
    assert!(md.contains("## Changes: pattern"));
}

/// Names a trace could carry to attack whoever opens the dashboard.
const HOSTILE: &[&str] = &[
    "<script>alert(1)</script>",
    "\"><img src=x onerror=alert(2)>",
    "'><svg onload=alert(3)>",
    "</style><script>alert(4)</script>",
];

#[test]
fn html_escapes_every_text_from_a_trace() {
    let mut records = vec![header(), batch(2, 0)];
    for (i, name) in HOSTILE.iter().enumerate() {
        let mut p = pattern(name, name, name, i as u64 + 1, 9.0 - i as f64);
        p["divergence_fields"] = json!([name]);
        p["run_counts"] = json!({ *name: 2 });
        p["day_counts"] = json!({"2026-04-24": 1, "2026-04-25": 1});
        p["samples"][0]["text"] = json!(name);
        p["samples"][0]["run_id"] = json!(name);
        p["narrative"] = json!(name);
        p["fix"] = json!(name);
        records.push(p);
    }
    records.push(json!({"kind":"verdict","run_id":HOSTILE[0],"agent_id":HOSTILE[1],"step":1,
        "category":HOSTILE[2],"blame":HOSTILE[3],"confidence":0.5,"evidence":[HOSTILE[0]],"candidates":[]}));
    records.push(
        json!({"kind":"change","scope":"pattern","status":"new","pattern_id":"p",
        "display_name":HOSTILE[0],"agent_id":HOSTILE[1],"tool_name":HOSTILE[2],
        "failure_classification":HOSTILE[3],"divergence_fields":[],
        "frequency":{"before":0,"after":2,"delta":2,"label":"new"},
        "unrecovered":{"before":0,"after":2,"delta":2,"label":"new"},
        "final_score_before":null,"final_score_after":7.0,"tentative":true}),
    );
    records.push(json!({"kind":"change","scope":HOSTILE[1],"x":HOSTILE[2]}));
    let mut src = batch(2, 0);
    src["sources"][0]["path"] = json!(HOSTILE[1]);
    records[1] = src;
    let md = stdout_of(&["--top", "4"], ndjson(&records)).to_lowercase();
    // Backslash-escaped characters are literal text.
    let md = md.replace(r"\\", "").replace(r"\`", "").replace(r"\<", "");
    for tag in ["<script", "<img", "<svg", "</style"] {
        let outside_code = md.split('`').step_by(2).any(|prose| prose.contains(tag));
        assert!(!outside_code, "{tag} outside a code span in markdown: {md}");
    }
    let html = stdout_of(&["-f", "html", "--top", "4"], ndjson(&records));
    let lower = html.to_lowercase();
    assert!(!lower.contains("<script"), "a script element got through");
    assert!(!lower.contains("<img"), "an img element got through");
    assert!(!lower.contains("<svg onload"), "an svg handler got through");
    assert!(
        !lower.contains("</style><"),
        "the style element was closed early"
    );
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"));
    assert!(
        html.contains("default-src 'none'"),
        "the page forbids scripts"
    );
}

/// triage-explain output alone: the summary counts the runs its verdicts
/// cover instead of claiming no run was read, and evidence sentences stay
/// apart in every format that shows them.
#[test]
fn root_causes_alone_count_their_runs_and_separate_evidence() {
    let verdict = |run: &str| {
        json!({"kind":"verdict","run_id":run,"agent_id":"coder","step":5,
            "category":"bad_tool_call","blame":"agent","confidence":0.45,
            "evidence":["the call, not the tool, was wrong","a later call succeeded"],
            "candidates":[]})
    };
    let finding = json!({"kind":"finding","run_id":"r1","step":5,"agent_id":"coder",
        "category":"bad_tool_call","title":"a refused call","detector":"bad_tool_call",
        "confidence":0.45,"symptom":false,"evidence":["it failed","it was retried"]});
    let input = ndjson(&[header(), verdict("r1"), verdict("r2"), finding]);
    for format in ["md", "table", "html"] {
        let out = stdout_of(&["-f", format], input.clone());
        assert!(
            out.contains("2 runs analyzed, 2 root-cause verdicts."),
            "{format}: {out}"
        );
        for wrong in ["0 runs", "Nothing to report", "All clear"] {
            assert!(!out.contains(wrong), "{format}: {out}");
        }
        assert!(
            out.contains("the call, not the tool, was wrong; a later call succeeded"),
            "{format}: {out}"
        );
        assert!(out.contains("it failed; it was retried"), "{format}: {out}");
    }
    let json: serde_json::Value = serde_json::from_str(&stdout_of(&["-f", "json"], input)).unwrap();
    assert_eq!(json["runs_total"], 2);
    // With run records, the line says how many failed and how many have
    // no known outcome, so a verdict count is never read as the whole.
    let run = |id: &str, outcome: &str| json!({"kind":"run","run_id":id,"outcome":outcome});
    let input = ndjson(&[
        header(),
        run("r1", "failed"),
        run("r2", "failed"),
        run("r3", "unknown"),
        verdict("r1"),
        verdict("r2"),
    ]);
    let out = stdout_of(&["-f", "md"], input);
    assert!(
        out.contains("2 of 3 runs failed") && out.contains("1 with no known outcome"),
        "{out}"
    );
}

/// Text from a trace cannot become markdown markup (a link, emphasis, a
/// table cell) anywhere the markdown report writes it; the report's own
/// markup stays.
#[test]
fn markdown_escapes_every_text_from_a_trace() {
    let evil = "**x** [y](http://evil) | z";
    let mut p = pattern(evil, "t", "agent_error", 1, 5.0);
    p["display_name"] = json!(format!("[{evil}] t / agent_error / no-divergence"));
    let verdict = json!({"kind":"verdict","run_id":"r1","agent_id":evil,"step":1,
        "category":"c","blame":"agent","confidence":0.5,"evidence":[evil],"candidates":[]});
    let md = stdout_of(&[], ndjson(&[header(), batch(2, 0), p, verdict]));
    let escaped = r"\*\*x\*\* [y\](http\://evil) \| z";
    assert!(md.contains(&format!("## #1 - [{escaped}] t /")), "{md}");
    assert!(md.contains(&format!("Agent {escaped} hit")), "{md}");
    assert!(md.contains(&format!("| r1 | {escaped} | 1 |")), "{md}");
    assert!(!md.replace(r"\](", "").contains("]("), "a live link: {md}");
    assert!(md.contains("| Final Score | **5.00** |"), "{md}");
}

/// Runs `shell` under `script`, which gives it a terminal; None where
/// `script` is missing.
fn on_a_terminal(shell: &str) -> Option<String> {
    let which = std::process::Command::new("script")
        .arg("--version")
        .output()
        .ok()?;
    if !which.status.success() {
        return None;
    }
    let out = std::process::Command::new("script")
        .args(["-qec", shell, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    Some(String::from_utf8_lossy(&out.stdout).replace('\r', ""))
}

#[test]
fn every_table_fits_the_terminal_even_one_that_reports_no_size() {
    let parse = common::bin("triage-parse");
    let explain = common::bin("triage-explain");
    let triage = common::bin("triage");
    let dir = tempfile::tempdir().unwrap();
    let explained = dir.path().join("explained.ndjson");
    let made = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "{} -q examples/monday.ndjson | {} -q --unknown-outcome > {}",
            parse.display(),
            explain.display(),
            explained.display()
        ))
        .status()
        .unwrap();
    assert!(made.success());
    let render = common::bin("triage-render");
    // 80 columns is the narrowest the pattern table promises (its numbers
    // never wrap).
    for size in ["cols 80 rows 40", "cols 80 rows 0", "cols 100 rows 30"] {
        let width: usize = size.split(' ').nth(1).unwrap().parse().unwrap();
        for command in [
            format!("{} -f table {}", render.display(), explained.display()),
            format!(
                "{} report -f table examples/monday.ndjson",
                triage.display()
            ),
            format!(
                "{} compare -f table examples/before.ndjson examples/monday.ndjson",
                triage.display()
            ),
        ] {
            let Some(text) = on_a_terminal(&format!("stty {size}; NO_COLOR=1 {command}")) else {
                return;
            };
            assert!(text.contains('│'), "{command}: no table: {text}");
            // Prose wraps in the terminal; a table row that did would break.
            for line in text.lines().filter(|l| l.contains(['│', '─', '═'])) {
                assert!(
                    line.chars().count() <= width,
                    "{command} at {size}: {} columns: {line}",
                    line.chars().count()
                );
            }
        }
    }
}

#[test]
fn csv_of_explain_output_says_it_leaves_the_findings_out() {
    let parse = common::bin("triage-parse");
    let explain = common::bin("triage-explain");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "{} -q examples/monday.ndjson | {} -q --unknown-outcome",
            parse.display(),
            explain.display()
        ))
        .output()
        .unwrap();
    assert!(out.status.success());
    let explained = String::from_utf8(out.stdout).unwrap();
    let findings = explained.matches("\"kind\":\"finding\"").count();
    assert!(findings > 0);
    let out = render()
        .args(["-f", "csv"])
        .write_stdin(explained)
        .output()
        .unwrap();
    assert!(out.status.success());
    let csv = String::from_utf8(out.stdout).unwrap();
    assert!(csv.starts_with("run_id,agent_id,step,category"), "{csv}");
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(&format!(
            "the CSV has one row per verdict and leaves out {findings} findings"
        )),
        "{err}"
    );
}

/// A report states the recovery window its scores were counted with (the
/// batch record carries it), not the default of a render run without the
/// scoring configuration.
#[test]
fn the_report_states_the_window_the_scores_used() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("w1.toml");
    std::fs::write(&config, "[scoring]\nrecovery_window = 1\n").unwrap();
    let monday = std::fs::read("examples/monday.ndjson").unwrap();
    let grouped = common::ok(
        "triage-group",
        &[],
        &common::ok("triage-parse", &[], &monday),
    );
    let scored = common::ok("triage-score", &["-c", config.to_str().unwrap()], &grouped);
    let batch = common::records(&scored)
        .into_iter()
        .find(|r| r["kind"] == "batch")
        .unwrap();
    assert_eq!(batch["recovery_window"], 1);
    let md = stdout_of(&[], String::from_utf8(scored).unwrap());
    assert!(md.contains("within 1 turn"), "{md}");
    assert!(!md.contains("within 3 turns"), "{md}");
}

#[test]
fn a_signal_while_writing_leaves_no_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    // Enough patterns that writing the CSV takes a moment to catch.
    let input = dir.path().join("scored.ndjson");
    let mut text = ndjson(&[header(), batch(2, 0)]);
    for i in 0..20_000 {
        let mut p = pattern(
            &format!("agent{i}"),
            &"t".repeat(500),
            "tool_error",
            i + 1,
            1.0,
        );
        p["display_name"] = json!("x".repeat(500));
        text.push_str(&format!("{p}\n"));
    }
    std::fs::write(&input, text).unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    for signal in ["TERM", "INT"] {
        let mut child = std::process::Command::new(common::bin("triage-render"))
            .args(["-q", "-f", "csv", "-o"])
            .arg(out_dir.join("report.csv"))
            .arg(&input)
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        let names = || -> Vec<String> {
            std::fs::read_dir(&out_dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        };
        while !names().iter().any(|n| n.ends_with(".tmp")) {
            assert!(
                child.try_wait().unwrap().is_none(),
                "finished before the test could signal it"
            );
            assert!(started.elapsed().as_secs() < 120);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let pid = child.id().to_string();
        assert!(
            std::process::Command::new("kill")
                .args([&format!("-{signal}"), &pid])
                .status()
                .unwrap()
                .success()
        );
        let status = child.wait().unwrap();
        assert!(!status.success(), "SIG{signal}: {status:?}");
        assert_eq!(names(), Vec::<String>::new(), "SIG{signal}");
    }
}

#[test]
fn no_format_passes_on_terminal_escapes_or_bidi_overrides() {
    let evil = "fetch\u{1b}]0;pwned\u{7}\u{1b}[2J \u{202e}gpj.exe\u{2066}x\u{2069}";
    let mut p = pattern("planner", "fetch", "tool_error", 1, 9.0);
    p["display_name"] = json!(evil);
    p["samples"][0]["text"] = json!(format!("line one\r\nline\rtwo {evil}"));
    let input = ndjson(&[header(), batch(2, 0), p]);
    for format in ["md", "table", "html", "json", "csv"] {
        let out = stdout_of(&["-f", format], input.clone());
        for c in ['\u{1b}', '\u{7}', '\r', '\u{202e}', '\u{2066}', '\u{2069}'] {
            assert!(!out.contains(c), "{format} keeps {c:?}: {out}");
        }
        assert!(out.contains("gpj.exe"), "{format}: {out}");
    }
    // JSON escapes rather than replaces: the data reads back as it was.
    let doc: serde_json::Value =
        serde_json::from_str(&stdout_of(&["-f", "json"], input.clone())).unwrap();
    assert_eq!(doc["patterns"][0]["display_name"], evil);
    let csv = stdout_of(&["-f", "csv"], input);
    assert!(
        csv.contains("fetch\u{fffd}]0;pwned\u{fffd}\u{fffd}[2J \u{fffd}gpj.exe\u{fffd}x\u{fffd}"),
        "{csv}"
    );
}
