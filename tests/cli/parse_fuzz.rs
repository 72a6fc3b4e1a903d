//! Bad input never panics an adapter: arbitrary bytes and mutated valid
//! documents go through every format via the library API, and what cannot
//! be read is counted as skipped (or, under --strict, is an error naming the
//! input).

use crate::common;

use std::io::Write;
use std::path::Path;

use common::mutation::{apply, mutation};
use proptest::prelude::*;
use triage::adapters::{DecodeSettings, FORMATS, Format, Sink, read_from};
use triage::plumbing::diag::{Diag, OnBadInput};
use triage::plumbing::framing::RecordWriter;

/// What one adapter made of an input: the records it wrote, the source
/// record's counts, or the error it stopped with.
struct Outcome {
    events: u64,
    skipped: u64,
    /// Records other than events and the source record (runs, passed-through lines).
    others: usize,
    error: Option<String>,
}

fn run(format: Format, name: &str, bytes: &[u8], strict: bool) -> Outcome {
    let mut out = Vec::new();
    let mut diag = Diag::new("triage-parse", true);
    let result = {
        let writer = RecordWriter::new(Box::new(&mut out) as Box<dyn Write + '_>, false);
        let mut sink = Sink::new(
            writer,
            &mut diag,
            OnBadInput::strict(strict),
            DecodeSettings::default(),
        );
        let r = read_from(name, bytes, format, &mut sink);
        sink.flush().unwrap();
        r
    };
    let records: Vec<serde_json::Value> = out
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("every record written is JSON"))
        .collect();
    if let Err(e) = result {
        return Outcome {
            events: 0,
            skipped: 0,
            others: 0,
            error: Some(format!("{e:#}")),
        };
    }
    let source = records.last().expect("a source record ends every input");
    assert_eq!(source["kind"], "source");
    let events = records.iter().filter(|r| r["kind"] == "event").count() as u64;
    assert_eq!(source["events"], events);
    Outcome {
        events,
        skipped: source["skipped"].as_u64().unwrap(),
        others: records.len() - 1 - events as usize,
        error: None,
    }
}

/// True when every non-blank line, and the whole input, are not JSON (nor
/// JSON values one after another): every adapter must then report something
/// as skipped.
fn surely_unreadable(bytes: &[u8]) -> bool {
    let not_json = |b: &[u8]| serde_json::from_slice::<serde::de::IgnoredAny>(b).is_err();
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let lines: Vec<&[u8]> = body
        .split(|b| *b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .collect();
    // Values one after another (pretty-printed span dumps) are readable too.
    let not_json_values = serde_json::Deserializer::from_slice(body)
        .into_iter::<serde::de::IgnoredAny>()
        .any(|v| v.is_err());
    not_json(body) && not_json_values && !lines.is_empty() && lines.iter().all(|l| not_json(l))
}

fn check(format: Format, name: &str, bytes: &[u8]) -> Outcome {
    let got = run(format, name, bytes, false);
    assert!(got.error.is_none(), "{format:?} {name}: {:?}", got.error);
    if surely_unreadable(bytes) {
        assert!(
            got.skipped >= 1,
            "{format:?} {name}: unreadable input not counted"
        );
        let strict = run(format, name, bytes, true);
        let err = strict.error.expect("--strict stops at unreadable input");
        assert!(err.starts_with(name), "{format:?}: {err}");
    }
    got
}

fn examples() -> Vec<(&'static str, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    [
        "otlp-shop.jsonl",
        "otel-spans.json",
        "taubench-airline.json",
    ]
    .into_iter()
    .map(|n| (n, std::fs::read(dir.join(n)).unwrap()))
    .chain(
        // The exports of tracing platforms and agent logs, modelled on real ones.
        [
            "langfuse-blob-export.jsonl",
            "langsmith-runs.jsonl",
            "managed-agent-failures.jsonl",
            "atif-delegation.json",
            "atif-terminus2-parse-error.json",
        ]
        .into_iter()
        .map(|n| (n, std::fs::read(fixtures.join(n)).unwrap())),
    )
    .chain(
        // A real mini-SWE-agent run (TraceSIR) and a real Inspect AI log.
        [
            "tracesir/coding/pydata__xarray-3151.json",
            "inspect-ai/arithmetic.json",
        ]
        .into_iter()
        .map(|n| (n, std::fs::read(data.join(n)).unwrap())),
    )
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        for &format in FORMATS {
            check(format, "fuzz.json", &bytes);
        }
        check(Format::named("auto").unwrap(), "fuzz.jsonl", &bytes);
    }

    #[test]
    fn json_like_text_never_panics(text in "[\\[\\]{}\",:0-9a-zA-Z_. \n\r\t\\\\-]{0,300}") {
        for &format in FORMATS {
            check(format, "fuzz.json", text.as_bytes());
        }
    }

    #[test]
    fn mutated_examples_never_panic(which in 0usize..10, edits in proptest::collection::vec(mutation(), 1..4)) {
        let (name, doc) = &examples()[which];
        let bytes = apply(doc, &edits);
        for &format in FORMATS {
            let got = check(format, name, &bytes);
            let blank = bytes.iter().all(u8::is_ascii_whitespace);
            if format == Format::named("auto").unwrap() && !blank && bytes.len() < doc.len() / 2 && !name.ends_with(".jsonl") {
                // A whole-document format cut in half cannot be read whole.
                prop_assert!(got.skipped >= 1 || got.events + got.others as u64 > 0);
            }
        }
    }
}

#[test]
fn deep_nesting_is_skipped_for_every_format() {
    for open in ["[", "{\"a\":", "{\"resourceSpans\":["] {
        let deep = open.repeat(100_000);
        for &format in FORMATS {
            let got = check(format, "deep.json", deep.as_bytes());
            assert_eq!(got.skipped, 1, "{format:?} {open}");
        }
        let balanced = format!("{}{}", "[".repeat(50_000), "]".repeat(50_000));
        for &format in FORMATS {
            let got = check(format, "deep.json", balanced.as_bytes());
            assert_eq!((got.events, got.skipped), (0, 1), "{format:?}");
        }
    }
}

#[test]
fn truncated_examples_are_counted_as_skipped() {
    for (name, doc) in examples() {
        for cut in [1, doc.len() / 3, doc.len() - 2] {
            let got = check(Format::named("auto").unwrap(), name, &doc[..cut]);
            assert!(got.skipped >= 1, "{name} cut at {cut}");
        }
    }
}

#[test]
fn bom_crlf_and_invalid_utf8_in_every_example() {
    for (name, doc) in examples() {
        let clean = check(Format::named("auto").unwrap(), name, &doc);
        assert_eq!(clean.skipped, 0, "{name}");
        let mut dos = b"\xEF\xBB\xBF".to_vec();
        dos.extend(
            String::from_utf8(doc.clone())
                .unwrap()
                .replace('\n', "\r\n")
                .into_bytes(),
        );
        let got = check(Format::named("auto").unwrap(), name, &dos);
        assert_eq!((got.events, got.skipped), (clean.events, 0), "{name}");
        let mut latin1 = doc.clone();
        let at = latin1.iter().position(|b| *b == b'a').unwrap();
        latin1[at] = 0xE9;
        let got = check(Format::named("auto").unwrap(), name, &latin1);
        assert!(got.skipped >= 1, "{name}");
    }
}

/// The span exports in tests/fixtures, modelled on real ones: Phoenix, the
/// Python and JS SDKs' dumps, OpenLLMetry in OTLP, flat JSONL of arrays.
fn span_exports() -> Vec<(&'static str, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    [
        "phoenix-spans.json",
        "python-console-spans.txt",
        "js-readable-spans.json",
        "openllmetry-otlp.jsonl",
        "flat-spans.jsonl",
    ]
    .into_iter()
    .map(|n| (n, std::fs::read(dir.join(n)).unwrap()))
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    #[test]
    fn mutated_span_exports_never_panic(which in 0usize..5, edits in proptest::collection::vec(mutation(), 1..4)) {
        let (name, doc) = &span_exports()[which];
        let bytes = apply(doc, &edits);
        for &format in FORMATS {
            check(format, name, &bytes);
        }
    }
}

#[test]
fn span_exports_read_whole_with_crlf_and_count_a_cut() {
    for (name, doc) in span_exports() {
        let clean = check(Format::named("auto").unwrap(), name, &doc);
        assert_eq!(clean.skipped, 0, "{name}");
        assert!(clean.events > 0, "{name}");
        let dos = String::from_utf8(doc.clone())
            .unwrap()
            .replace('\n', "\r\n");
        let got = check(Format::named("auto").unwrap(), name, dos.as_bytes());
        assert_eq!((got.events, got.skipped), (clean.events, 0), "{name}");
        let cut = check(Format::named("auto").unwrap(), name, &doc[..doc.len() - 3]);
        assert!(cut.skipped >= 1, "{name}");
    }
}

/// The span ids of the events triage-parse makes of `bytes`, in output order.
fn span_ids(name: &str, bytes: &[u8]) -> Vec<String> {
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
        read_from(name, bytes, Format::named("auto").unwrap(), &mut sink).unwrap();
        sink.flush().unwrap();
    }
    out.split(|b| *b == b'\n')
        .filter_map(|l| serde_json::from_slice::<serde_json::Value>(l).ok())
        .filter(|r| r["kind"] == "event")
        .map(|r| r["span_id"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn phoenix_spans() -> Vec<serde_json::Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/phoenix-spans.json");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    doc["data"].as_array().unwrap().clone()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Spans come out parent first, siblings by start time, whatever order
    /// the file holds them in, and whether it is a list or JSONL.
    #[test]
    fn span_order_never_depends_on_file_order(shuffled in Just(phoenix_spans()).prop_shuffle()) {
        let expected = span_ids("spans.json", &serde_json::to_vec(&phoenix_spans()).unwrap());
        prop_assert_eq!(expected.len(), 5);
        let list = serde_json::to_vec(&shuffled).unwrap();
        prop_assert_eq!(&span_ids("spans.json", &list), &expected);
        let jsonl: String = shuffled.iter().map(|s| format!("{s}\n")).collect();
        prop_assert_eq!(&span_ids("spans.jsonl", jsonl.as_bytes()), &expected);
    }
}
