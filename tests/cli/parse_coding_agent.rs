//! triage-parse on coding agents' trajectories: the TraceSIR mini-SWE-agent
//! runs in tests/data (every one a failure by the benchmark's verdict), and
//! the property that what is parsed is what the group and score stages
//! count.

use crate::common;

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::Value;

fn coding_runs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracesir/coding");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

fn run(bin: &str, args: &[&Path], stdin: &[u8]) -> (Vec<u8>, String) {
    let args: Vec<&str> = args.iter().map(|p| p.to_str().unwrap()).collect();
    let (code, stdout, stderr) = common::run(bin, &args, stdin);
    assert_eq!(code, 0, "{bin}: exit {code}: {stderr}");
    (stdout, stderr)
}

fn records(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn of_kind<'a>(recs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    recs.iter().filter(|r| r["kind"] == kind).collect()
}

#[test]
fn every_tracesir_coding_run_reads_without_a_warning_and_failed() {
    let files = coding_runs();
    assert_eq!(files.len(), 50);
    let args: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let (out, err) = run("triage-parse", &args, b"");
    assert!(err.is_empty(), "warnings: {err}");
    let recs = records(&out);
    let sources = of_kind(&recs, "source");
    assert!(sources.iter().all(|s| s["format"] == "coding-agent"));
    assert!(sources.iter().all(|s| s["skipped"] == 0 && s["runs"] == 1));
    let runs = of_kind(&recs, "run");
    assert_eq!(runs.len(), files.len());
    // gold_score 0 is the benchmark's verdict on every run.
    assert!(runs.iter().all(|r| r["outcome"] == "failed"));
    assert!(
        runs.iter()
            .all(|r| r["task"].as_str().unwrap().starts_with("<pr_description>"))
    );
    let events = of_kind(&recs, "event");
    let failed: Vec<_> = events
        .iter()
        .filter(|e| e["action_succeeded"] == false)
        .collect();
    // Commands that exit non-zero, and turns the harness refused.
    assert!(failed.iter().any(|e| {
        e["failure_source"] == "status"
            && e["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("exit code ")
    }));
    // A turn the harness refused (no single action in it) is stated by the
    // harness, and says so.
    assert!(failed.iter().any(|e| {
        e["action_taken"]["tool_name"] == "message"
            && e["failure_source"] == "status"
            && e["error"]["type"] == "refused by the harness"
    }));
    // Most commands succeed: a reply that exits 0 is no failure. (Turns
    // the harness refused are apart: one run had its every turn refused.)
    let commands = |evs: &[&&Value]| {
        evs.iter()
            .filter(|e| e["action_taken"]["tool_name"] == "bash")
            .count()
    };
    let failed_commands = commands(&failed);
    let all_commands = commands(&events.iter().collect::<Vec<_>>());
    assert!(
        failed_commands * 5 < all_commands,
        "{failed_commands} of {all_commands}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    /// Events in = events out: every event parsed from any set of the runs
    /// is counted by triage-group and triage-score, and every failure is in
    /// a pattern.
    #[test]
    fn events_in_equal_events_out_through_group_and_score(
        picks in proptest::sample::subsequence((0..23usize).collect::<Vec<_>>(), 1..6)
    ) {
        let files = coding_runs();
        let args: Vec<&Path> = picks.iter().map(|&i| files[i].as_path()).collect();
        let (parsed, _) = run("triage-parse", &args, b"");
        let events = of_kind(&records(&parsed), "event").len() as u64;
        let failures = of_kind(&records(&parsed), "event")
            .iter()
            .filter(|e| e["action_succeeded"] == false)
            .count() as u64;
        let (grouped, _) = run("triage-group", &[], &parsed);
        let (scored, _) = run("triage-score", &[], &grouped);
        let recs = records(&scored);
        let batch = of_kind(&recs, "batch")[0];
        prop_assert_eq!(batch["events_total"].as_u64(), Some(events));
        prop_assert_eq!(batch["runs_total"].as_u64(), Some(picks.len() as u64));
        prop_assert_eq!(batch["failures_total"].as_u64(), Some(failures));
        let in_patterns: u64 = of_kind(&recs, "pattern")
            .iter()
            .map(|p| p["frequency"].as_u64().unwrap())
            .sum();
        prop_assert_eq!(in_patterns, failures);
    }
}

/// mini-SWE-agent's own trajectory as it wrote it before and after its
/// fence changed (```bash, then ```mswea_bash_command), a bare list of
/// messages: the same commands, the same failed ones, in both.
#[test]
fn mini_swe_agent_reads_alike_across_its_fences() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mini-swe-agent");
    let read = |file: &str| {
        let out = common::ok("triage-parse", &[&format!("{dir}/{file}")], b"");
        let recs = common::records(&out);
        let source = recs.iter().find(|r| r["kind"] == "source").unwrap().clone();
        let steps: Vec<(String, bool)> = recs
            .iter()
            .filter(|r| r["kind"] == "event")
            .map(|r| {
                (
                    r["action_taken"]["tool_name"].as_str().unwrap().to_string(),
                    r["action_succeeded"].as_bool().unwrap(),
                )
            })
            .collect();
        (source, steps)
    };
    let (old, old_steps) = read("github-issue-bash-fence.traj.json");
    let (new, new_steps) = read("github-issue-mswea-fence.traj.json");
    for s in [&old, &new] {
        assert_eq!(s["format"], "coding-agent", "{s}");
        assert_eq!(s["skipped"], 0, "{s}");
    }
    assert_eq!(old_steps, new_steps);
    // The `cat` of a missing file (exit 1) is a failed command.
    assert!(
        new_steps
            .iter()
            .filter(|(t, ok)| t == "bash" && !ok)
            .count()
            >= 2,
        "{new_steps:?}"
    );
}

#[test]
fn mini_swe_agent_tool_calls_are_commands_and_an_api_error_ends_the_run_on_the_environment() {
    // mini-SWE-agent 2 calls a `bash` tool instead of fencing commands in
    // its text; the run died of the model API's error.
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/mini-swe-agent/tool-calls-api-error.traj.json");
    let (out, err) = run("triage-parse", &[&file], b"");
    assert!(err.is_empty(), "warnings: {err}");
    let recs = records(&out);
    let events = of_kind(&recs, "event");
    let commands: Vec<&str> = events
        .iter()
        .filter(|e| e["action_taken"]["tool_name"] == "bash")
        .map(|e| e["input"].as_str().unwrap())
        .collect();
    assert_eq!(commands.len(), 4, "{commands:?}");
    assert_eq!(commands[0], "ls -la /testbed");
    // Each reply is its own call's: the listing of /testbed, not the agent's.
    let first = events
        .iter()
        .find(|e| e["input"] == "ls -la /testbed")
        .unwrap();
    assert!(first["output"].as_str().unwrap().contains("setup.py"));
    let last = events.last().unwrap();
    assert_eq!(last["action_succeeded"], false);
    assert_eq!(last["error"]["type"], "InternalServerError");
    let run_rec = of_kind(&recs, "run")[0];
    assert_eq!(
        (run_rec["outcome"].as_str(), run_rec["reason"].as_str()),
        (Some("failed"), Some("error"))
    );
    // The verdict: the environment, at the failed model call; no agent
    // step is blamed for numbers it read from a listing.
    let (explained, _) = run("triage-explain", &[], &out);
    let verdicts = records(&explained);
    let v = of_kind(&verdicts, "verdict")[0];
    assert_eq!(
        (v["step"].as_u64(), v["blame"].as_str()),
        (last["turn"].as_u64(), Some("environment"))
    );
    assert!(
        !verdicts
            .iter()
            .any(|r| r["kind"] == "finding" && r["detector"] == "unsourced_values"),
        "{verdicts:?}"
    );
}

/// SWE-agent's own `.traj` files, 0.x and 1.x: the task is the issue
/// after the demonstration, the run is a coding agent's, and the first run
/// of the script the agent wrote to reproduce the issue is no bad call.
#[test]
fn swe_agent_trajectories_read_their_issue_and_a_reproduction_is_no_bad_call() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/swe-agent");
    let old = dir.join("pydicom__pydicom-1458.traj");
    let new = dir.join("6e44b9__sweagenttestrepo-1c2844.traj");
    let (out, err) = run("triage-parse", &[&old, &new], b"");
    assert!(err.is_empty(), "warnings: {err}");
    let recs = records(&out);
    let runs = of_kind(&recs, "run");
    let ids: Vec<&str> = runs.iter().map(|r| r["run_id"].as_str().unwrap()).collect();
    // 1.x names its problem in replay_config; 0.x has only the file name.
    assert_eq!(ids, ["pydicom__pydicom-1458", "SWE-agent__test-repo-i1"]);
    for r in &runs {
        let task = r["task"].as_str().unwrap();
        assert!(
            task.starts_with("We're currently solving the following issue"),
            "{task}"
        );
        assert!(!task.contains("DEMONSTRATION"), "{task}");
        // Submitted is no verdict on the fix.
        assert_eq!(r["outcome"], "unknown");
    }
    let reproduce = of_kind(&recs, "event")
        .into_iter()
        .find(|e| e["input"] == "python reproduce_bug.py")
        .unwrap();
    assert_eq!(reproduce["action_succeeded"], false);
    let (explained, _) = run("triage-explain", &[Path::new("--unknown-outcome")], &out);
    let recs = records(&explained);
    let blamed: Vec<u64> = of_kind(&recs, "finding")
        .iter()
        .filter(|f| f["category"] == "bad_tool_call")
        .map(|f| f["step"].as_u64().unwrap())
        .collect();
    assert!(!blamed.is_empty(), "the linter's refusals are the agent's");
    assert!(
        !blamed.contains(&reproduce["step"].as_u64().unwrap()),
        "{blamed:?}"
    );
    let verdict = of_kind(&recs, "verdict")[0];
    assert_eq!(verdict["system"], "coding agent");
    assert_eq!(verdict["outcome"], "unknown");
    assert_ne!(verdict["step"], reproduce["step"]);
}

#[test]
fn openhands_trajectories_of_four_generations_read_as_coding_runs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/openhands");
    let names = [
        "basic.json",
        "basic_gui_mode.json",
        "basic_interactions.json",
        "wrong_initial_state.json",
        "resolver-output.jsonl",
        "gorilla-output-line1.jsonl",
    ];
    let files: Vec<PathBuf> = names.iter().map(|n| dir.join(n)).collect();
    let args: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let (out, err) = run("triage-parse", &args, b"");
    assert!(err.is_empty(), "warnings: {err}");
    let recs = records(&out);
    let sources = of_kind(&recs, "source");
    assert!(
        sources
            .iter()
            .all(|s| s["format"] == "openhands" && s["skipped"] == 0)
    );
    let runs = of_kind(&recs, "run");
    let outcomes: Vec<(&str, &str)> = runs
        .iter()
        .map(|r| {
            (
                r["run_id"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    // The exported sessions state no verdict; the resolver's rows say
    // success, the benchmark's row says the answer was wrong.
    assert_eq!(
        outcomes,
        [
            ("basic", "unknown"),
            ("basic_gui_mode", "unknown"),
            ("basic_interactions", "unknown"),
            ("wrong_initial_state", "unknown"),
            ("neubig/pr-viewer#5", "succeeded"),
            ("neubig/pr-viewer#1", "succeeded"),
            ("1", "failed"),
        ]
    );
    assert!(runs.iter().all(|r| !r["task"].as_str().unwrap().is_empty()));
    let events = of_kind(&recs, "event");
    // Each session's first step is its user's request, in every generation.
    let firsts: Vec<&&Value> = events.iter().filter(|e| e["turn"] == 0).collect();
    assert_eq!(firsts.len(), runs.len());
    assert!(firsts.iter().all(|e| e["agent_id"] == "user"));
    // The editor's refusals (a syntax error, a text to replace that is not
    // in the file) are failed steps the run got past; the server left
    // running (no exit code) is no failure.
    let failed: Vec<_> = events
        .iter()
        .filter(|e| e["action_succeeded"] == false)
        .collect();
    assert_eq!(failed.len(), 11);
    assert!(
        failed.iter().all(|e| e["run_id"] == "neubig/pr-viewer#1"
            && e["error"]["type"] == "refused by the harness")
    );
    let server = events
        .iter()
        .find(|e| {
            e["input"]
                .as_str()
                .is_some_and(|i| i.contains("http.server"))
        })
        .unwrap();
    assert_eq!(server["action_succeeded"], true);
    assert_eq!(server["action_taken"]["tool_name"], "execute_bash");
    // A file edit names its file, so explain sees the edit.
    assert!(events.iter().any(|e| {
        e["action_taken"]["tool_name"] == "edit"
            && e["input"]
                .as_str()
                .unwrap()
                .contains("\"path\":\"/workspace/")
    }));
}

#[test]
fn openhands_sdk_events_piped_one_file_after_another_make_one_run() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/openhands/sdk-1.49.1-events");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 11);
    // As `cat events/*.json | triage-parse` gives them.
    let stdin: Vec<u8> = files
        .iter()
        .flat_map(|f| std::fs::read(f).unwrap())
        .collect();
    let (out, err) = run("triage-parse", &[], &stdin);
    assert!(err.is_empty(), "warnings: {err}");
    let recs = records(&out);
    assert_eq!(of_kind(&recs, "source")[0]["format"], "openhands");
    let runs = of_kind(&recs, "run");
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["task"], "hello");
    let events = of_kind(&recs, "event");
    let tools: Vec<&str> = events
        .iter()
        .map(|e| e["action_taken"]["tool_name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "message",
            "terminal",
            "read",
            "read_file",
            "no_such_tool",
            "finish"
        ]
    );
    // The call of a tool the agent does not have failed, and says so.
    let failed: Vec<_> = events
        .iter()
        .filter(|e| e["action_succeeded"] == false)
        .collect();
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0]["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Tool 'no_such_tool' not found")
    );
    // It finished: no verdict on the run, and explain says it is a coding
    // agent's run of unknown outcome.
    assert_eq!(runs[0]["outcome"], "unknown");
    let (explained, _) = run("triage-explain", &[Path::new("--unknown-outcome")], &out);
    let verdict = of_kind(&records(&explained), "verdict")[0].clone();
    assert_eq!(verdict["system"], "coding agent");
    assert_eq!(verdict["outcome"], "unknown");
}

#[test]
fn an_openhands_row_that_failed_with_a_diff_is_no_empty_submission() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/openhands/resolver-output.jsonl");
    // The same rows judged failed: their agents changed files (a shell
    // `touch`, edits in Python cells) that only the row's diff shows.
    let failed = std::fs::read_to_string(file)
        .unwrap()
        .replace("\"success\":true", "\"success\":false");
    let (out, err) = run("triage-parse", &[], failed.as_bytes());
    assert!(err.is_empty(), "warnings: {err}");
    let recs = records(&out);
    let finishes: Vec<&Value> = of_kind(&recs, "event")
        .into_iter()
        .filter(|e| e["action_taken"]["tool_name"] == "finish")
        .collect();
    assert_eq!(finishes.len(), 2);
    assert!(
        finishes
            .iter()
            .all(|e| e["output"].as_str().unwrap().starts_with("diff --git a/"))
    );
    let (explained, _) = run("triage-explain", &[], &out);
    let recs = records(&explained);
    let verdicts = of_kind(&recs, "verdict");
    assert_eq!(verdicts.len(), 2);
    assert!(
        verdicts.iter().all(|v| v["category"] != "empty_submission"),
        "{verdicts:?}"
    );
}
