//! examples/spark/triage_spark.py under spark-submit in local mode: both
//! ways of sharding give the one-pass result. Ignored by default (it needs
//! Java and pyspark); `make test-spark` runs it where they are, as CI does.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{ok, pipeline, records};
use serde_json::Value;

/// Runs the Spark job over `inputs` and returns its scored records.
fn spark(by: &str, inputs: &[PathBuf], out: &Path) -> Vec<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/spark/triage_spark.py");
    let run = Command::new("spark-submit")
        .args(["--master", "local[2]", "--conf", "spark.ui.enabled=false"])
        .arg(&script)
        .args(["--by", by, "--partitions", "3", "--bin"])
        .arg(common::bin_dir())
        .arg("--out")
        .arg(out)
        .args(inputs)
        .output()
        .expect("cannot run spark-submit (pip install pyspark; it needs Java 17)");
    assert!(
        run.status.success(),
        "spark-submit failed:\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    records(&std::fs::read(out).unwrap())
}

/// Records without the header and the batch's source names, which differ
/// between stdin and files.
fn comparable(recs: Vec<Value>) -> Vec<Value> {
    recs.into_iter()
        .filter(|r| r["kind"] != "header")
        .map(|mut r| {
            r.as_object_mut().unwrap().remove("sources");
            r
        })
        .collect()
}

#[test]
#[ignore = "needs Java and pyspark: make test-spark"]
fn spark_job_equals_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let text = String::from_utf8(ok(
        "triage-gen",
        // 300 runs starting five at a time: ties in time everywhere.
        &["-n", "20000", "-r", "300", "--seed", "9"],
        b"",
    ))
    .unwrap();
    let one_pass = comparable(pipeline(text.as_bytes()));
    assert!(one_pass.len() > 20);

    // Hourly-style chunks: consecutive lines, so runs cross file boundaries.
    let lines: Vec<&str> = text.lines().collect();
    let chunks: Vec<PathBuf> = lines
        .chunks(lines.len().div_ceil(3))
        .enumerate()
        .map(|(i, chunk)| {
            let p = dir.path().join(format!("chunk-{i}.ndjson"));
            std::fs::write(&p, chunk.join("\n") + "\n").unwrap();
            p
        })
        .collect();
    let by_run = comparable(spark("run", &chunks, &dir.path().join("by-run.ndjson")));
    assert_eq!(by_run, one_pass, "--by run differs from one pass");

    // Whole files, each holding whole runs, named out of time order.
    let mut shards = vec![String::new(); 4];
    for line in &lines {
        let run: usize = line.split("\"run-").nth(1).unwrap()[..5].parse().unwrap();
        shards[run % 4].push_str(line);
        shards[run % 4].push('\n');
    }
    let files: Vec<PathBuf> = shards
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let p = dir.path().join(format!("shard-{}.ndjson", 3 - i));
            std::fs::write(&p, s).unwrap();
            p
        })
        .collect();
    let by_file = comparable(spark("file", &files, &dir.path().join("by-file.ndjson")));
    assert_eq!(by_file, one_pass, "--by file differs from one pass");
}
