//! Every format of the format table has samples with their expected
//! readings (tests/expected/parse/SAMPLES.tsv): each sample is detected as
//! its format, triage-parse reads it as its expected records say
//! (regenerate with `UPDATE_GOLDEN=1`), and `triage report` on it prints
//! what the four-stage pipeline prints.

use std::collections::BTreeSet;
use std::path::Path;

use crate::common::{self, assert_golden, ok, run_env};

/// (format, sample path) per line of the manifest.
fn samples() -> Vec<(String, String)> {
    let manifest = std::fs::read_to_string("tests/expected/parse/SAMPLES.tsv").unwrap();
    manifest
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (format, path) = l.split_once('\t').expect("format<TAB>path");
            (format.to_string(), path.to_string())
        })
        .collect()
}

fn expected_path(format: &str, sample: &str) -> String {
    let name = Path::new(sample).file_name().unwrap().to_str().unwrap();
    format!("tests/expected/parse/{format}/{name}.ndjson")
}

#[test]
fn every_format_has_a_sample() {
    let covered: BTreeSet<String> = samples().into_iter().map(|(f, _)| f).collect();
    let missing: Vec<&str> = triage::adapters::FORMATS
        .iter()
        .map(|f| f.name)
        .filter(|n| *n != "auto" && !covered.contains(*n))
        .collect();
    assert!(missing.is_empty(), "formats without a sample: {missing:?}");
}

#[test]
fn each_sample_is_detected_and_read_as_expected() {
    for (format, sample) in samples() {
        let out = ok("triage-parse", &["-q", &sample], b"");
        let records = common::records(&out);
        let formats: BTreeSet<&str> = records
            .iter()
            .filter(|r| r["kind"] == "source")
            .filter_map(|r| r["format"].as_str())
            .collect();
        assert_eq!(
            formats,
            BTreeSet::from([format.as_str()]),
            "{sample} was not read as {format}"
        );
        assert!(
            records.iter().any(|r| r["kind"] == "event"),
            "{sample}: no events"
        );
        assert_golden(expected_path(&format, &sample), out);
    }
}

#[test]
fn the_report_of_each_sample_is_the_pipelines() {
    let dated = [("SOURCE_DATE_EPOCH", "1777000000")];
    for (_, sample) in samples() {
        let scored = common::scored(&sample);
        for format in ["json", "md"] {
            let (code, one, err) = run_env(
                "triage",
                &["report", "-q", "--format", format, &sample],
                &dated,
                b"",
            );
            assert_eq!(code, 0, "{sample}: {err}");
            let (_, four, _) = run_env("triage-render", &["--format", format], &dated, &scored);
            assert!(
                one == four,
                "{sample} ({format}): report and pipeline differ:\n{}",
                common::line_diff(
                    &String::from_utf8_lossy(&four),
                    &String::from_utf8_lossy(&one)
                )
            );
        }
    }
}

/// What a reading says of one run: its outcome, agents, steps and failed
/// steps (tool and agent, in order).
#[derive(Debug, PartialEq, Default)]
struct RunReading {
    id: String,
    outcome: String,
    agents: String,
    steps: usize,
    failed: Vec<String>,
}

/// The runs a reading file states (its `#` lines are notes), and how many
/// runs the file holds.
fn reading_of(text: &str) -> (usize, Vec<RunReading>) {
    let mut runs: Vec<RunReading> = Vec::new();
    let mut total = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (key, value) = line.split_once(' ').unwrap_or((line, ""));
        let value = value.trim();
        match key {
            "runs:" => total = value.parse().unwrap(),
            "run" => runs.push(RunReading {
                id: value.to_string(),
                ..RunReading::default()
            }),
            "outcome:" => runs.last_mut().unwrap().outcome = value.to_string(),
            "agents:" => runs.last_mut().unwrap().agents = value.to_string(),
            "steps:" => runs.last_mut().unwrap().steps = value.parse().unwrap(),
            "fail" => {
                let (who, _why) = value.split_once(':').unwrap_or((value, ""));
                runs.last_mut().unwrap().failed.push(who.trim().to_string());
            }
            _ => {}
        }
    }
    (total, runs)
}

/// The same, as triage-parse's records say it.
fn reading_of_records(records: &[serde_json::Value]) -> (usize, Vec<RunReading>) {
    let mut ids: Vec<String> = Vec::new();
    for r in records
        .iter()
        .filter(|r| r["kind"] == "event" || r["kind"] == "run")
    {
        let id = r["run_id"].as_str().unwrap().to_string();
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    let runs = ids
        .iter()
        .map(|id| {
            let events: Vec<&serde_json::Value> = records
                .iter()
                .filter(|r| r["kind"] == "event" && r["run_id"] == id.as_str())
                .collect();
            let run = records
                .iter()
                .find(|r| r["kind"] == "run" && r["run_id"] == id.as_str());
            let outcome = match run {
                Some(r) => [r["outcome"].as_str(), r["reason"].as_str()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(" "),
                None => "unknown".to_string(),
            };
            let agents: BTreeSet<&str> = events
                .iter()
                .filter_map(|e| e["agent_id"].as_str())
                .collect();
            RunReading {
                id: id.clone(),
                outcome,
                agents: agents.into_iter().collect::<Vec<_>>().join(", "),
                steps: events.len(),
                failed: events
                    .iter()
                    .filter(|e| e["action_succeeded"] == false)
                    .map(|e| {
                        format!(
                            "{} {}",
                            e["action_taken"]["tool_name"].as_str().unwrap(),
                            e["agent_id"].as_str().unwrap()
                        )
                    })
                    .collect(),
            }
        })
        .collect();
    (ids.len(), runs)
}

/// Each sample read as its reading, written by hand from the file itself
/// (tests/expected/readings): its runs, their outcomes, agents, steps and
/// failed steps. A reading may give the first runs only.
#[test]
fn each_sample_is_read_as_a_person_reads_it() {
    let mut wrong = Vec::new();
    for (format, sample) in samples() {
        let name = Path::new(&sample).file_name().unwrap().to_str().unwrap();
        let path = format!("tests/expected/readings/{format}/{name}.reading");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("no reading: {path}"));
        let (total, stated) = reading_of(&text);
        let out = ok("triage-parse", &["-q", &sample], b"");
        let (read_total, read) = reading_of_records(&common::records(&out));
        if read_total != total {
            wrong.push(format!("{sample}: {read_total} runs, not {total}"));
        }
        for (want, got) in stated.iter().zip(&read) {
            if got != want {
                wrong.push(format!("{sample}:\n  read   {got:?}\n  reading {want:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// triage-explain reads each sample's records: every run the sample states
/// failed gets a verdict, and no verdict names a run the sample lacks.
#[test]
fn each_failed_run_of_each_sample_is_explained() {
    for (_, sample) in samples() {
        let parsed = ok("triage-parse", &["-q", &sample], b"");
        let records = common::records(&parsed);
        let runs: BTreeSet<&str> = records
            .iter()
            .filter(|r| r["kind"] == "event" || r["kind"] == "run")
            .filter_map(|r| r["run_id"].as_str())
            .collect();
        let failed: BTreeSet<&str> = records
            .iter()
            .filter(|r| r["kind"] == "run" && r["outcome"] == "failed")
            .filter_map(|r| r["run_id"].as_str())
            .collect();
        let explained = ok("triage-explain", &["--verdicts-only"], &parsed);
        let verdicts = common::records(&explained);
        let named: BTreeSet<&str> = verdicts
            .iter()
            .filter(|r| r["kind"] == "verdict")
            .filter_map(|r| r["run_id"].as_str())
            .collect();
        assert!(
            named.is_subset(&runs),
            "{sample}: verdicts for runs it lacks"
        );
        assert!(
            failed.is_subset(&named),
            "{sample}: failed runs without a verdict: {:?}",
            failed.difference(&named).collect::<Vec<_>>()
        );
    }
}
