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
