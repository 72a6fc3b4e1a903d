//! Properties of the transcript readers (`openai-chat`, `anthropic-messages`)
//! on mutated real files: no input panics them, every event they write is
//! counted in their source record, and the events read are the events
//! grouped and scored (none lost or invented on the way).

use crate::common;

use std::io::Write;
use std::path::Path;

use common::mutation::{apply, mutation};
use proptest::prelude::*;
use triage::adapters::{DecodeSettings, Format, Sink, read_from};
use triage::config::ScoringConfig;
use triage::group::Grouper;
use triage::plumbing::diag::Diag;
use triage::plumbing::framing::RecordWriter;
use triage::record::EventView;

/// The transcript files the tests carry: generated with the SDKs, and a
/// real τ²-bench conversation.
fn fixtures() -> Vec<(&'static str, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    [
        "transcripts/openai-chat-recovered.json",
        "transcripts/openai-chat-runs.jsonl",
        "transcripts/openai-responses-items.json",
        "transcripts/anthropic-messages-refused.json",
        "transcripts/named-cases.json",
        "tracesir/function-calling/tau2-44b4fc5d98b847c49a9d7dec213aa6a2.json",
    ]
    .into_iter()
    .map(|n| (n, std::fs::read(root.join(n)).unwrap()))
    .collect()
}

/// The records one read of `bytes` writes, or the error it stopped with.
fn parse(format: Format, name: &str, bytes: &[u8]) -> Result<Vec<serde_json::Value>, String> {
    let mut out = Vec::new();
    let mut diag = Diag::new("triage-parse", true);
    let result = {
        let writer = RecordWriter::new(Box::new(&mut out) as Box<dyn Write + '_>, false);
        let mut sink = Sink::new(
            writer,
            &mut diag,
            triage::plumbing::diag::OnBadInput::Skip,
            DecodeSettings::default(),
        );
        let r = read_from(name, bytes, format, &mut sink);
        sink.flush().unwrap();
        r
    };
    result.map_err(|e| format!("{e:#}"))?;
    Ok(out
        .split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("every record written is JSON"))
        .collect())
}

/// Checks what one read wrote: each source counts its events, and the
/// events grouped and scored are the events read, failures too.
fn check(format: Format, name: &str, bytes: &[u8]) -> Result<(), TestCaseError> {
    let records = match parse(format, name, bytes) {
        Ok(r) => r,
        // A whole-input error names the input; it is no panic.
        Err(e) => {
            prop_assert!(e.starts_with(name), "{}", e);
            return Ok(());
        }
    };
    let events: Vec<&serde_json::Value> = records.iter().filter(|r| r["kind"] == "event").collect();
    let counted: u64 = records
        .iter()
        .filter(|r| r["kind"] == "source")
        .map(|s| s["events"].as_u64().unwrap())
        .sum();
    prop_assert_eq!(counted, events.len() as u64);

    let mut grouper = Grouper::new(3);
    let lines: Vec<String> = events.iter().map(|e| e.to_string()).collect();
    for line in &lines {
        let view: EventView = serde_json::from_str(line).unwrap();
        grouper.add_event(&view);
    }
    let (batch, _, mut patterns) = grouper.finish();
    triage::score::score(&batch, &mut patterns, &ScoringConfig::default());
    let failures = events
        .iter()
        .filter(|e| e["action_succeeded"] == false || !e["failure_classification"].is_null())
        .count() as u64;
    prop_assert_eq!(batch.events_total, events.len() as u64);
    prop_assert_eq!(batch.failures_total, failures);
    prop_assert_eq!(patterns.iter().map(|p| p.frequency).sum::<u64>(), failures);
    let runs: std::collections::HashSet<&str> = events
        .iter()
        .map(|e| e["run_id"].as_str().unwrap())
        .collect();
    prop_assert_eq!(batch.runs_total, runs.len() as u64);
    Ok(())
}

#[test]
fn every_fixture_reads_whole_and_goes_through_the_pipeline() {
    for (name, bytes) in fixtures() {
        let records = parse(Format::named("auto").unwrap(), name, &bytes).unwrap();
        assert!(
            records
                .iter()
                .all(|r| r["kind"] != "source" || r["skipped"] == 0),
            "{name}"
        );
        assert!(records.iter().any(|r| r["kind"] == "event"), "{name}");
        check(Format::named("auto").unwrap(), name, &bytes).unwrap();
    }
}

/// A transcript-shaped JSON value: messages of every dialect with ids that
/// may or may not pair, in envelopes or not.
fn message() -> impl Strategy<Value = serde_json::Value> {
    let id = prop::sample::select(vec!["a", "b", "c"]);
    let text = prop::sample::select(vec![
        "ok",
        "Error: no such order",
        "{\"error\": \"denied\"}",
        "Traceback (most recent call last):\n  File \"x\"\nKeyError: 'k'",
        "",
    ]);
    prop_oneof![
        (prop::sample::select(vec!["user", "assistant", "system"]), text.clone())
            .prop_map(|(role, t)| serde_json::json!({"role": role, "content": t})),
        (id.clone(), prop::sample::select(vec!["lookup", "finish", "bash"])).prop_map(|(id, name)| {
            serde_json::json!({"role": "assistant", "content": null,
                "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": "{\"q\": 1}"}}]})
        }),
        (id.clone(), text.clone()).prop_map(|(id, t)| serde_json::json!({"role": "tool", "tool_call_id": id, "content": t})),
        (id.clone(), any::<bool>()).prop_map(|(id, e)| {
            serde_json::json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "x", "is_error": e}]})
        }),
        id.clone().prop_map(|id| serde_json::json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "lookup", "input": {}}]})),
        id.clone().prop_map(|id| serde_json::json!({"type": "function_call", "call_id": id, "name": "lookup", "arguments": "{}"})),
        (id, text).prop_map(|(id, t)| serde_json::json!({"type": "function_call_output", "call_id": id, "output": t})),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn mutated_transcripts_never_panic_and_lose_no_event(
        which in 0usize..6,
        edits in proptest::collection::vec(mutation(), 1..4),
    ) {
        let (name, doc) = &fixtures()[which];
        let bytes = apply(doc, &edits);
        for format in [Format::named("auto").unwrap(), Format::named("openai-chat").unwrap(), Format::named("anthropic-messages").unwrap()] {
            check(format, name, &bytes)?;
        }
    }

    #[test]
    fn any_conversation_loses_no_event(
        messages in proptest::collection::vec(message(), 0..12),
        verdict in proptest::option::of(0u8..2),
        lines in any::<bool>(),
    ) {
        let body = if lines {
            messages.iter().map(|m| format!("{m}\n")).collect::<String>()
        } else {
            let mut doc = serde_json::json!({"id": "r", "messages": messages});
            if let Some(v) = verdict {
                doc["reward"] = v.into();
            }
            doc.to_string()
        };
        check(Format::named("auto").unwrap(), "conv.json", body.as_bytes())?;
        check(Format::named("openai-chat").unwrap(), "conv.json", body.as_bytes())?;
    }
}
