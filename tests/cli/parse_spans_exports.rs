//! triage-parse on the span exports of the OpenTelemetry family: Phoenix /
//! OpenInference span JSON, the SDKs' span dumps (Python, JS with the Vercel
//! AI SDK), OpenLLMetry inside OTLP, attribute maps, and the binary files
//! it refuses. Real exports from tests/data/export-samples and
//! synthetic failure cases in tests/fixtures modelled on them.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

fn crate_path(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn export_sample(rel: &str) -> PathBuf {
    let p = crate_path("tests/data/export-samples").join(rel);
    assert!(p.exists(), "{} is missing", p.display());
    p
}

fn fixture(name: &str) -> PathBuf {
    crate_path("tests/fixtures").join(name)
}

struct Parsed {
    records: Vec<Value>,
    stderr: String,
    code: i32,
}

impl Parsed {
    fn events(&self) -> Vec<&Value> {
        self.records
            .iter()
            .filter(|r| r["kind"] == "event")
            .collect()
    }

    /// (run_id, outcome) of each run record.
    fn runs(&self) -> Vec<(String, String)> {
        self.records
            .iter()
            .filter(|r| r["kind"] == "run")
            .map(|r| {
                (
                    r["run_id"].as_str().unwrap().to_string(),
                    r["outcome"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    }

    fn source(&self) -> &Value {
        self.records.iter().find(|r| r["kind"] == "source").unwrap()
    }

    /// One field of every event, in output order.
    fn field(&self, name: &str) -> Vec<Value> {
        self.events().iter().map(|e| e[name].clone()).collect()
    }

    fn tools(&self) -> Vec<String> {
        self.events()
            .iter()
            .map(|e| e["action_taken"]["tool_name"].as_str().unwrap().to_string())
            .collect()
    }

    /// (tool, failure_source, failure_inferred) of each failed event.
    fn failures(&self) -> Vec<(String, Value, bool)> {
        self.events()
            .iter()
            .filter(|e| e["action_succeeded"] == false)
            .map(|e| {
                (
                    e["action_taken"]["tool_name"].as_str().unwrap().to_string(),
                    e["failure_source"].clone(),
                    e["failure_inferred"] == true,
                )
            })
            .collect()
    }
}

fn parse_with(args: &[&str], path: &Path) -> Parsed {
    let mut argv = args.to_vec();
    argv.push(path.to_str().unwrap());
    let (code, stdout, stderr) = common::run("triage-parse", &argv, b"");
    Parsed {
        records: common::records(&stdout),
        stderr,
        code,
    }
}

/// Parses a file that must read cleanly: exit 0, no warnings, nothing skipped.
fn parse_clean(path: &Path, format: &str) -> Parsed {
    let p = parse_with(&[], path);
    assert_eq!(p.code, 0, "{}: {}", path.display(), p.stderr);
    assert!(p.stderr.is_empty(), "{}: {}", path.display(), p.stderr);
    assert_eq!(p.source()["format"], format, "{}", path.display());
    assert_eq!(p.source()["skipped"], 0, "{}", path.display());
    p
}

fn strs(items: &[&str]) -> Vec<Value> {
    items.iter().map(|s| json!(s)).collect()
}

#[test]
fn every_span_export_sample_parses_without_warnings() {
    for (dir, format) in [
        ("any-agent", "otel"),
        ("openinference", "otel"),
        ("openinference/genai-attr-maps", "otel"),
        ("otlp-proto-example", "otlp"),
        ("vs-copilot-otlp", "otlp"),
    ] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(export_sample(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{dir}");
        for file in files {
            let p = parse_clean(&file, format);
            assert!(!p.events().is_empty(), "{}", file.display());
        }
    }
}

#[test]
fn python_sdk_objects_with_128_bit_integer_trace_ids() {
    let p = parse_clean(&export_sample("any-agent/AGNO_trace.json"), "otel");
    // 39712373237291850001929057769826244787, exactly, in hex: never a float.
    assert_eq!(
        p.field("run_id"),
        strs(&["1de0532b350588ff152b1edf6bf358b3"; 6])
    );
    // The agent span comes last in the file and first here, its children
    // after it by start time, all named after the agent.
    assert_eq!(
        p.tools(),
        [
            "invoke_agent",
            "call_llm",
            "get_current_time",
            "call_llm",
            "write_file",
            "call_llm"
        ]
    );
    assert_eq!(p.field("agent_id"), strs(&["any_agent"; 6]));
    assert_eq!(
        p.field("step"),
        (0..6).map(|s| json!(s)).collect::<Vec<_>>()
    );
    assert!(p.failures().is_empty());
    // UNSET and OK are no error recorded: no failure_source is claimed.
    assert!(p.events().iter().all(|e| e.get("failure_source").is_none()));
    // The agent span's status is UNSET: no error recorded, success unproven.
    assert_eq!(
        p.runs(),
        [(
            "1de0532b350588ff152b1edf6bf358b3".to_string(),
            "unknown".to_string()
        )]
    );

    // Span ids of 20 digits are 64-bit: 16 hex digits, parents found.
    let p = parse_clean(&export_sample("any-agent/GOOGLE_trace.json"), "otel");
    assert!(
        p.events()
            .iter()
            .all(|e| e["span_id"].as_str().unwrap().len() == 16 && e["agent_id"] == "any_agent"),
        "{:?}",
        p.field("agent_id")
    );
}

#[test]
fn vercel_ai_sdk_dump_and_attribute_maps() {
    let p = parse_clean(
        &export_sample("openinference/vercel-ai-sdk-v6-all-spans.json"),
        "otel",
    );
    assert_eq!(p.events().len(), 10);
    // Every span's status is UNSET (code 0): nothing failed, nothing proven.
    assert_eq!(p.runs().len(), 10);
    assert!(p.runs().iter().all(|(_, outcome)| outcome == "unknown"));
    assert_eq!(p.events()[0]["agent_id"], "test-generate-text");
    assert_eq!(p.events()[0]["span_kind"], "llm");
    assert_eq!(p.events()[0]["timestamp"], "2026-02-03T15:19:52.242Z");

    let p = parse_clean(
        &export_sample("openinference/genai-attr-maps/otel_genai_tool_execution_span.json"),
        "otel",
    );
    let e = p.events()[0];
    assert_eq!(e["action_taken"]["tool_name"], "get_weather");
    assert_eq!(e["action_taken"]["tool_input"], json!({"city": "New York"}));
    assert_eq!(e["span_kind"], "tool");
    assert!(e.get("timestamp").is_none());
    let p = parse_clean(
        &export_sample("openinference/genai-attr-maps/openinference_client_span_tool_calls.json"),
        "otel",
    );
    assert_eq!(p.events()[0]["span_kind"], "llm");
}

#[test]
fn otlp_exports_keep_their_trees_and_agents() {
    let p = parse_clean(
        &export_sample("vs-copilot-otlp/sample-4_VSGitHubCopilot_traces.jsonl"),
        "otlp",
    );
    assert_eq!(
        p.tools(),
        [
            "invoke_agent",
            "apply_patch",
            "run_build",
            "invoke_agent",
            "file_search"
        ]
    );
    assert_eq!(p.field("agent_id"), strs(&["GitHub Copilot"; 5]));
    assert_eq!(p.field("step"), [0, 1, 2, 0, 1].map(|s| json!(s)));
    let p = parse_clean(&export_sample("otlp-proto-example/trace.json"), "otlp");
    assert_eq!(p.events()[0]["span_id"], "eee19b7ec3c1b174");
}

#[test]
fn phoenix_spans_nested_and_flat_attributes_exception_events() {
    let p = parse_clean(&fixture("phoenix-spans.json"), "otel");
    // Shuffled in the file; parent first, siblings by start time here.
    assert_eq!(
        p.tools(),
        [
            "LangGraph",
            "researcher",
            "ChatOpenAI",
            "web_search",
            "calculator"
        ]
    );
    assert_eq!(
        p.field("span_kind"),
        strs(&["other", "agent", "llm", "tool", "tool"])
    );
    assert_eq!(p.field("run_id"), strs(&["phx-session-1"; 5]));
    assert_eq!(
        p.field("agent_id"),
        strs(&[
            "unknown",
            "researcher",
            "researcher",
            "researcher",
            "researcher"
        ])
    );
    // ISO 8601 with an offset, in UTC.
    assert_eq!(p.events()[2]["timestamp"], "2026-03-01T08:00:01.5Z");
    assert_eq!(
        p.failures(),
        [("web_search".to_string(), json!("status"), false)]
    );
    let search = p.events()[3];
    assert_eq!(
        search["error"],
        json!({"type": "TimeoutError", "message": "search backend timed out"})
    );
    assert_eq!(search["failure_cause"], "timeout");
    // input.value holds JSON encoded twice.
    assert_eq!(
        search["action_taken"]["tool_input"],
        json!({"q": "flights to Oslo"})
    );
}

#[test]
fn python_console_dump_error_parent_and_unanswered_tool() {
    let p = parse_clean(&fixture("python-console-spans.txt"), "otel");
    assert_eq!(
        p.field("run_id"),
        strs(&[
            "4bf92f3577b34da6a3ce929d0e0e4736",
            "4bf92f3577b34da6a3ce929d0e0e4736",
            "4bf92f3577b34da6a3ce929d0e0e4736",
            "0af7651916cd43dd8448eb211c80319c",
            "0af7651916cd43dd8448eb211c80319c",
            "0af7651916cd43dd8448eb211c80319c",
        ])
    );
    assert_eq!(
        p.tools(),
        [
            "invoke_agent",
            "lookup_order",
            "refund",
            "chat",
            "send_email",
            // The agent failed as it ended, after its children.
            "invoke_agent"
        ]
    );
    assert_eq!(
        p.field("agent_id"),
        strs(&[
            "billing", "billing", "billing", "support", "support", "support"
        ])
    );
    assert_eq!(p.events()[1]["parent_span_id"], "53995c3f42cd8ad8");
    assert_eq!(
        p.failures(),
        [
            ("invoke_agent".to_string(), json!("status"), false),
            // Started, never ended: the call never got its result.
            ("refund".to_string(), json!("no_result"), true),
            // An ERROR parent over UNSET children: its last child is blamed,
            // marked as inferred.
            ("send_email".to_string(), json!("inherited"), true),
            ("invoke_agent".to_string(), json!("status"), false),
        ]
    );
    assert_eq!(p.events()[4]["error"]["message"], "support agent gave up");
    assert_eq!(p.events()[5]["error"]["type"], "RuntimeError");
    // The chat call under the failed agent stays a success: UNSET.
    assert_eq!(p.events()[3]["action_succeeded"], true);
    assert!(p.runs().iter().all(|(_, outcome)| outcome == "failed"));
}

#[test]
fn js_readable_spans_with_vercel_ai_attributes() {
    let p = parse_clean(&fixture("js-readable-spans.json"), "otel");
    assert_eq!(
        p.tools(),
        [
            "ai.generateText",
            "ai.generateText.doGenerate",
            "getWeather",
            "bookHotel"
        ]
    );
    assert_eq!(p.field("agent_id"), strs(&["travel-agent"; 4]));
    // [seconds, nanoseconds]
    assert_eq!(p.events()[0]["timestamp"], "2026-02-03T15:19:52.5Z");
    assert_eq!(
        p.failures(),
        [
            ("getWeather".to_string(), json!("output"), true),
            ("bookHotel".to_string(), json!("status"), false),
        ]
    );
    assert_eq!(
        p.events()[2]["error"]["message"],
        "Error: weather service unavailable"
    );
    assert_eq!(
        p.events()[3]["action_taken"]["tool_input"],
        json!({"city": "Oslo", "nights": 2})
    );
}

#[test]
fn openllmetry_attributes_inside_otlp() {
    let p = parse_clean(&fixture("openllmetry-otlp.jsonl"), "otlp");
    // base64 ids (protobuf's JSON mapping) as hex; children on the first line.
    assert_eq!(
        p.field("run_id"),
        strs(&["5b8efff798038103d269b633813fc60c"; 4])
    );
    assert_eq!(
        p.field("span_id"),
        strs(&[
            "eee19b7ec3c1b174",
            "eee19b7ec3c1b175",
            "eee19b7ec3c1b177",
            "eee19b7ec3c1b176"
        ])
    );
    assert_eq!(
        p.tools(),
        [
            "trip_planner.workflow",
            "flight_agent.agent",
            "openai.chat",
            "search_flights"
        ]
    );
    assert_eq!(
        p.field("span_kind"),
        strs(&["other", "agent", "llm", "tool"])
    );
    assert_eq!(
        p.field("agent_id"),
        strs(&[
            "trip-service",
            "flight_agent",
            "flight_agent",
            "flight_agent"
        ])
    );
    assert_eq!(
        p.failures(),
        [("search_flights".to_string(), json!("output"), true)]
    );
    let tool = p.events()[3];
    assert_eq!(
        tool["action_taken"]["tool_input"],
        json!({"inputs": {"from": "OSL", "to": "BCN"}})
    );
    // The output was encoded twice; the error is the text inside.
    assert_eq!(tool["output"], "Error: no flights found for OSL-BCN");
}

#[test]
fn jsonl_of_arrays_with_flat_keys_uuids_and_epoch_milliseconds() {
    let p = parse_clean(&fixture("flat-spans.jsonl"), "otel");
    assert_eq!(p.tools(), ["writer", "file_reader", "file_writer"]);
    assert_eq!(
        p.field("run_id"),
        strs(&["d6f1a3c0-5b1e-4c8e-9f7a-2b3c4d5e6f70"; 3])
    );
    assert_eq!(p.field("agent_id"), strs(&["writer"; 3]));
    assert_eq!(p.events()[0]["timestamp"], "2026-03-02T10:01:39Z");
    assert_eq!(
        p.failures(),
        [("file_reader".to_string(), json!("output"), true)]
    );
}

#[test]
fn format_flag_still_overrides_detection() {
    let p = parse_with(&["--format", "otel"], &fixture("openllmetry-otlp.jsonl"));
    assert_eq!(p.code, 0, "{}", p.stderr);
    assert_eq!(p.source()["format"], "otel");
    assert_eq!(p.events().len(), 4);
}

/// The Collector's protobuf export is refused with what to do; its zstd
/// export (`compression: zstd`) is read as the OTLP JSON it holds.
#[test]
fn collector_protobuf_is_refused_and_its_zstd_export_read() {
    let file = "collector-traces.pb";
    let p = parse_with(&[], &fixture(file));
    assert_eq!(p.code, 2, "nothing could be read: {}", p.stderr);
    assert!(
        p.stderr.contains(file) && p.stderr.contains("format: json"),
        "{}",
        p.stderr
    );
    assert_eq!(p.source()["skipped"], 1);
    assert_eq!(p.source()["format"], "binary");
    assert!(p.events().is_empty());
    let strict = parse_with(&["--strict"], &fixture(file));
    assert_eq!(strict.code, 2);
    assert!(strict.stderr.contains("format: json"), "{}", strict.stderr);
    let zst = parse_with(&[], &fixture("collector-traces.json.zst"));
    assert_eq!(zst.code, 0, "{}", zst.stderr);
    assert_eq!(zst.source()["format"], "otlp");
    assert_eq!(zst.events().len(), 2);
}

/// Strands Agents records message content as GenAI span events, not
/// attributes: each span's input and output, and the run's task, come
/// from them.
#[test]
fn content_recorded_as_genai_events_is_read() {
    let path = format!(
        "{}/tests/data/strands/tool-timeout.otlp.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let recs = common::records(&common::ok("triage-parse", &[&path], b""));
    let tool = recs
        .iter()
        .find(|r| r["kind"] == "event" && r["action_taken"]["tool_name"] == "get_flight")
        .unwrap();
    assert_eq!(tool["input"], r#"{"code": "BA117"}"#);
    assert_eq!(
        tool["output"],
        "Error: TimeoutError - airline API timed out for BA117"
    );
    let run = recs.iter().find(|r| r["kind"] == "run").unwrap();
    assert_eq!(run["task"], "Is BA117 on time?");
}
