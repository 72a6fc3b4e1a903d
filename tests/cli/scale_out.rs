//! examples/scale-out.sh run locally: shards mapped with parse | group and
//! reduced with group --merge | score give the one-pass result.

use crate::common;

use common::*;
use serde_json::Value;

#[test]
fn scale_out_script_equals_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let text = String::from_utf8(ok(
        "triage-gen",
        &["-n", "8000", "-r", "16", "--seed", "11"],
        b"",
    ))
    .unwrap();
    // Shard by run, keeping runs whole and in order: 4 runs per shard.
    let mut shards = vec![String::new(); 4];
    for line in text.lines() {
        let run: usize = line.split("\"run-").nth(1).unwrap()[..5].parse().unwrap();
        shards[run / 4].push_str(line);
        shards[run / 4].push('\n');
    }
    let mut paths = Vec::new();
    for (i, s) in shards.iter().enumerate() {
        let p = dir.path().join(format!("shard-{i}.ndjson"));
        std::fs::write(&p, s).unwrap();
        paths.push(p.to_str().unwrap().to_string());
    }
    let out = dir.path().join("out");
    assert!(scale_out(&out, &paths).status.success());
    let strip = |recs: Vec<Value>| -> Vec<Value> {
        recs.into_iter()
            .filter(|r| r["kind"] != "header")
            .map(|mut r| {
                r.as_object_mut().unwrap().remove("sources");
                r
            })
            .collect()
    };
    let merged = strip(records(&std::fs::read(out.join("scored.ndjson")).unwrap()));
    let one_pass = strip(pipeline(text.as_bytes()));
    assert!(merged.len() > 10);
    assert_eq!(merged, one_pass);

    // Run again into the same directory with two shards: the partials of
    // the four-shard run must not join the merge.
    assert!(scale_out(&out, &paths[..2]).status.success());
    let merged = strip(records(&std::fs::read(out.join("scored.ndjson")).unwrap()));
    let first_half: String = shards[..2].concat();
    assert_eq!(merged, strip(pipeline(first_half.as_bytes())));

    // A shard that cannot be read fails the whole run: no result that
    // silently lacks its events.
    let missing = dir.path().join("missing.ndjson");
    let run = scale_out(
        &out,
        &[paths[0].clone(), missing.to_str().unwrap().to_string()],
    );
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(err.contains("missing.ndjson: no such file"), "{err}");
    assert!(err.contains("nothing merged"), "{err}");
    assert!(!out.join("scored.ndjson").exists());
}

/// Runs examples/scale-out.sh into `out` over `shards`, with the tools
/// under test first on PATH.
fn scale_out(out: &std::path::Path, shards: &[String]) -> std::process::Output {
    let bin_dir = bin_dir();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    std::process::Command::new("bash")
        .arg("examples/scale-out.sh")
        .arg(out)
        .args(shards)
        .env("PATH", path)
        .output()
        .unwrap()
}
