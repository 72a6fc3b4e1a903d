//! A byte-mutation fuzzer per reader: every trace format (through the
//! library, as triage-parse reads it) and the record reader every stage
//! shares, fed mutants of the real sample files in examples/, tests/data
//! and tests/fixtures. A reader must never panic, must write only JSON
//! records, and must not fail without --strict. Every input that ever
//! broke a reader is kept in tests/fuzz-regressions/ and replayed here.
//!
//! `make fuzz` runs the ignored `fuzz_*` tests for TRIAGE_FUZZ_SECONDS
//! (default 60) each; the short `mutants_*` tests run in `make test`. A
//! crash is written to target/fuzz-crashes/ for a regression file.

use std::io::{Cursor, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use triage::adapters::{DecodeSettings, FORMATS, Format, Sink, read_from};
use triage::plumbing::diag::{Diag, OnBadInput};
use triage::plumbing::framing::RecordWriter;

/// Seeds longer than this are cut (at a random point): a mutant of a 4 MB
/// file costs as much to read as thousands of small ones.
const MAX_SEED: usize = 64 * 1024;

/// The readers fuzzed: every row of the format table, and the stages'
/// record reader (`records`).
fn targets() -> Vec<(&'static str, Option<Format>)> {
    FORMATS
        .iter()
        .map(|f| (f.name, Some(*f)))
        .chain([("records", None)])
        .collect()
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The sample files: every JSON, JSONL and NDJSON file of the repository's
/// examples and test data, read once.
fn seeds() -> Vec<Vec<u8>> {
    let mut files = Vec::new();
    for dir in ["examples", "tests/data", "tests/fixtures"] {
        walk(&root().join(dir), &mut files);
    }
    files.sort();
    let mut seeds: Vec<Vec<u8>> = files
        .iter()
        .filter_map(|f| std::fs::read(f).ok())
        .map(|mut b| {
            b.truncate(MAX_SEED);
            b
        })
        .collect();
    // The stages' records: what triage-parse writes for the examples.
    seeds.push(parsed(&root().join("examples/monday.ndjson")));
    seeds
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| x == "json" || x == "jsonl" || x == "ndjson")
        {
            out.push(p);
        }
    }
}

/// triage-parse's records for `file`, through the library.
fn parsed(file: &Path) -> Vec<u8> {
    let bytes = std::fs::read(file).unwrap();
    let mut out = Vec::new();
    let mut diag = Diag::new("triage-parse", true);
    {
        let writer = RecordWriter::new(Box::new(&mut out) as Box<dyn Write + '_>, false);
        let mut sink = Sink::new(
            writer,
            &mut diag,
            OnBadInput::Skip,
            DecodeSettings::default(),
        );
        read_from(
            "seed",
            &bytes[..],
            Format::named("ndjson").unwrap(),
            &mut sink,
        )
        .unwrap();
        sink.flush().unwrap();
    }
    out
}

/// xorshift64*: reproducible from its seed, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes and tokens that JSON readers trip on.
const TOKENS: [&[u8]; 24] = [
    b"\\ud800",
    b"\\udfff",
    b"\\ud83d\\ude00",
    b"1e400",
    b"-1e400",
    b"18446744073709551616",
    b"-0",
    b"0.0000000000000000000001",
    b"null",
    b"true",
    b"\"\"",
    b"[]",
    b"{}",
    b"[[[[[[[[[[[[[[[[",
    b"{\"a\":{\"a\":{\"a\":",
    b"\\u0000",
    b"\\\"",
    b"\xEF\xBB\xBF",
    b"\xff\xfe",
    b"\xc3",
    b"\r\n",
    b"\n",
    b"\"kind\":\"event\",",
    b"\"run_id\":\"\\ud800\",",
];

/// Single bytes that change JSON's structure.
const PUNCTUATION: &[u8] = b"\"\\{}[],:0-e\x00\xff\n";

/// One to four edits of `seed`, sometimes spliced with `other`.
fn mutate(rng: &mut Rng, seed: &[u8], other: &[u8]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(b.len() + 1);
        match rng.below(8) {
            0 => b.truncate(at),
            1 => {
                let end = (at + 1 + rng.below(64)).min(b.len());
                b.drain(at..end);
            }
            2 | 3 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                b.splice(at..at, t.iter().copied());
            }
            4 if at < b.len() => b[at] = PUNCTUATION[rng.below(PUNCTUATION.len())],
            5 if at < b.len() => b[at] ^= 1 << rng.below(8),
            6 => {
                let start = rng.below(b.len());
                let end = (start + rng.below(256)).min(b.len());
                let piece = b[start..end].to_vec();
                b.splice(at..at, piece);
            }
            _ => {
                let start = rng.below(other.len());
                let end = (start + rng.below(512)).min(other.len());
                b.splice(at..at, other[start..end].iter().copied());
            }
        }
    }
    b
}

/// Reads `bytes` with one target's reader; Err says what went wrong.
fn read_with(format: Option<Format>, bytes: &[u8]) -> Result<(), String> {
    let mut out = Vec::new();
    let mut diag = Diag::new("fuzz", true);
    let result = match format {
        Some(format) => {
            let writer = RecordWriter::new(Box::new(&mut out) as Box<dyn Write + '_>, false);
            let mut sink = Sink::new(
                writer,
                &mut diag,
                OnBadInput::Skip,
                DecodeSettings::default(),
            );
            let r = read_from("mutant", bytes, format, &mut sink);
            sink.flush().map_err(|e| e.to_string())?;
            r
        }
        None => triage::stream::read_records_from(
            "mutant",
            Cursor::new(bytes.to_vec()),
            None,
            &mut diag,
            OnBadInput::Skip,
            triage::stream::Kindless::TRACE_FILE,
            |rec, _, _| {
                // The stage's side: what it would pass on must be JSON.
                if let triage::stream::Record::Other { line, .. } = rec {
                    out.extend_from_slice(line);
                    out.push(b'\n');
                }
                Ok(())
            },
        )
        .map(|_| ()),
    };
    match result {
        // A newer schema in a header is refused on purpose.
        Err(e) if format.is_none() && format!("{e:#}").contains("schema") => return Ok(()),
        Err(e) => return Err(format!("failed without --strict: {e:#}")),
        Ok(()) => {}
    }
    for line in out.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        serde_json::from_slice::<serde::de::IgnoredAny>(line).map_err(|e| {
            format!(
                "wrote a record that is not JSON ({e}): {}",
                String::from_utf8_lossy(line)
            )
        })?;
    }
    Ok(())
}

/// Reads `bytes` with `target`, a panic caught; on failure the input is
/// kept in target/fuzz-crashes/ and the failure returned.
fn try_one(target: &str, format: Option<Format>, bytes: &[u8]) -> Result<(), String> {
    let outcome = catch_unwind(AssertUnwindSafe(|| read_with(format, bytes))).unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        Err(format!("panicked: {msg}"))
    });
    outcome.map_err(|why| {
        let dir = root().join("target/fuzz-crashes");
        let _ = std::fs::create_dir_all(&dir);
        let name = format!("{target}-{:016x}", fnv(bytes));
        let _ = std::fs::write(dir.join(&name), bytes);
        format!("{target}: {why} (input kept as target/fuzz-crashes/{name})")
    })
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Mutants of the seeds for `target` until `budget` runs out or `most` are
/// read; returns how many were read.
fn fuzz(target: &str, budget: Duration, most: u64) -> u64 {
    let format = targets().into_iter().find(|t| t.0 == target).unwrap().1;
    let seeds = seeds();
    let start_seed = std::env::var("TRIAGE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_0000 ^ fnv(target.as_bytes()));
    let mut rng = Rng(start_seed | 1);
    let start = Instant::now();
    let mut n = 0;
    while n < most && start.elapsed() < budget {
        let seed = &seeds[rng.below(seeds.len())];
        let other = &seeds[rng.below(seeds.len())];
        let mutant = mutate(&mut rng, seed, other);
        if let Err(why) = try_one(target, format, &mutant) {
            panic!("{why}; after {n} mutants from seed {start_seed}");
        }
        n += 1;
    }
    n
}

/// TRIAGE_FUZZ_SECONDS, default 60.
fn budget() -> Duration {
    let secs = std::env::var("TRIAGE_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    Duration::from_secs(secs)
}

/// Every input kept in tests/fuzz-regressions/TARGET/ is read again by
/// its target (and, for `any`, by every one).
#[test]
fn every_kept_crash_stays_fixed() {
    let dir = root().join("tests/fuzz-regressions");
    let mut read = 0;
    for (target, format) in targets().into_iter().chain([("any", None)]) {
        let Ok(entries) = std::fs::read_dir(dir.join(target)) else {
            continue;
        };
        for e in entries.flatten() {
            let bytes = std::fs::read(e.path()).unwrap();
            if target == "any" {
                for (t, f) in targets() {
                    try_one(t, f, &bytes)
                        .unwrap_or_else(|why| panic!("{}: {why}", e.path().display()));
                }
            } else {
                try_one(target, format, &bytes)
                    .unwrap_or_else(|why| panic!("{}: {why}", e.path().display()));
            }
            read += 1;
        }
    }
    assert!(read >= 5, "the regression inputs are missing ({read} read)");
}

#[test]
fn the_mutator_is_reproducible_and_changes_its_input() {
    let seed = br#"{"run_id":"r","turn":1}"#;
    let a = mutate(&mut Rng(7), seed, seed);
    let b = mutate(&mut Rng(7), seed, seed);
    assert_eq!(a, b);
    let changed = (1..50)
        .filter(|s| mutate(&mut Rng(*s), seed, seed) != seed)
        .count();
    assert!(changed > 40, "{changed} of 49 mutants differ");
}

/// A short run of every reader, in `make test`.
#[test]
fn mutants_of_every_reader() {
    for (target, _) in targets() {
        assert!(fuzz(target, Duration::from_secs(20), 60) > 0, "{target}");
    }
}

/// `make fuzz`: TRIAGE_FUZZ_SECONDS of mutants for every reader.
#[test]
#[ignore = "long-running: make fuzz"]
#[allow(
    clippy::print_stderr,
    reason = "make fuzz reports how many mutants each reader took"
)]
fn fuzz_every_reader() {
    for (target, _) in targets() {
        let n = fuzz(target, budget(), u64::MAX);
        eprintln!("{target}: {n} mutants, no failure");
    }
}
