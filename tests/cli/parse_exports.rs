//! triage-parse on the exports of the tools users trace with: Langfuse,
//! LangSmith, Claude Managed Agents session events and ATIF trajectories.
//! The real exports in tests/data/export-samples, and synthetic
//! failure cases in tests/fixtures modelled on their shapes.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

fn samples(rel: &str) -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/export-samples")
        .join(rel);
    assert!(p.exists(), "{} is missing from tests/data", p.display());
    p
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

/// What triage-parse wrote for some files, which must have gone without a
/// word on stderr.
struct Parsed(Vec<Value>);

fn parse(args: &[&str], files: &[PathBuf]) -> Parsed {
    let mut argv = args.to_vec();
    argv.extend(files.iter().map(|f| f.to_str().unwrap()));
    let (code, stdout, stderr) = common::run("triage-parse", &argv, b"");
    assert_eq!(code, 0, "exit {code}: {stderr}");
    assert!(stderr.is_empty(), "warnings: {stderr}");
    Parsed(common::records(&stdout))
}

impl Parsed {
    fn of_kind(&self, kind: &str) -> Vec<&Value> {
        self.0.iter().filter(|r| r["kind"] == kind).collect()
    }
    fn events(&self) -> Vec<&Value> {
        self.of_kind("event")
    }
    /// One field of every event, as text.
    fn column(&self, pointer: &str) -> Vec<String> {
        self.events()
            .iter()
            .map(|e| match e.pointer(pointer) {
                Some(Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => String::new(),
            })
            .collect()
    }
    fn failed(&self) -> Vec<&Value> {
        self.events()
            .into_iter()
            .filter(|e| e["action_succeeded"] == false)
            .collect()
    }
    fn steps_are_in_order(&self) {
        let mut next: std::collections::HashMap<&str, u64> = Default::default();
        for e in self.events() {
            let step = next.entry(e["run_id"].as_str().unwrap()).or_default();
            assert_eq!(e["step"], *step, "{e}");
            *step += 1;
        }
    }
}

#[test]
fn every_langfuse_and_langsmith_sample_reads_without_warnings() {
    let mut files = files_in(&samples("langfuse/trpc-trace-with-observations"));
    files.extend(files_in(&samples("langfuse/ui-download-merged")));
    files.extend(files_in(&samples("langsmith/runs-post-patch")));
    files.extend(files_in(&samples(
        "langsmith/anthropic-managed-agent-events",
    )));
    let p = parse(&[], &files);
    let sources = p.of_kind("source");
    assert_eq!(sources.len(), files.len());
    for s in &sources {
        assert_eq!(s["skipped"], 0, "{s}");
        assert!(s["events"].as_u64().unwrap() > 0, "{s}");
        assert_eq!(s["runs"], 1, "{s}");
    }
    let formats: Vec<_> = sources
        .iter()
        .map(|s| s["format"].as_str().unwrap())
        .collect();
    assert_eq!(formats.iter().filter(|f| **f == "langfuse").count(), 23);
    assert_eq!(formats.iter().filter(|f| **f == "langsmith").count(), 3);
    assert_eq!(formats.iter().filter(|f| **f == "managed-agent").count(), 2);
    // One tool call failed (its output's status says so; see
    // langfuse_tool_result_with_an_error_status_is_a_failure); no success
    // is claimed either.
    let failed: Vec<_> = p
        .failed()
        .iter()
        .map(|e| e["action_taken"]["tool_name"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["get_custom_report"]);
    // That failure fails its run, as a span's error status would; no other
    // run records one.
    let failed_runs = p
        .of_kind("run")
        .iter()
        .filter(|r| r["outcome"] != "unknown")
        .count();
    assert_eq!(failed_runs, 1);
    assert!(p.of_kind("run").iter().all(|r| r["outcome"] != "succeeded"));
}

#[test]
fn langfuse_google_adk_trace_names_its_agent_and_tool() {
    let p = parse(
        &[],
        &[samples(
            "langfuse/trpc-trace-with-observations/google-adk-2025-08-28.trace.json",
        )],
    );
    assert_eq!(
        p.column("/agent_id"),
        [
            "unknown",
            "hello_agent",
            "hello_agent",
            "hello_agent",
            "hello_agent"
        ]
    );
    assert_eq!(
        p.column("/action_taken/tool_name"),
        [
            "invocation [hello_app]",
            "agent_run [hello_agent]",
            "call_llm",
            "say_hello",
            "call_llm"
        ]
    );
    assert_eq!(
        p.column("/span_kind"),
        ["other", "agent", "llm", "tool", "llm"]
    );
    assert_eq!(p.column("/run_id"), ["b82a0bdc1994fc5d1c8576ca032543f7"; 5]);
    // The tool call sits under the LLM call that made it, after it.
    assert_eq!(p.events()[3]["parent_span_id"], p.events()[2]["span_id"]);
    p.steps_are_in_order();
}

#[test]
fn langfuse_pydantic_ai_agents_and_prefixed_tool_names() {
    let p = parse(
        &[],
        &[samples(
            "langfuse/trpc-trace-with-observations/pydantic-ai-tools-2025-12-04.trace.json",
        )],
    );
    let agents = p.column("/agent_id");
    assert_eq!(agents.iter().filter(|a| *a == "joke_agent").count(), 9);
    assert_eq!(agents.iter().filter(|a| *a == "evaluator_agent").count(), 2);
    let tools: Vec<_> = p
        .events()
        .iter()
        .filter(|e| e["span_kind"] == "tool")
        .map(|e| e["action_taken"]["tool_name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        tools,
        [
            "get_pun_suggestion",
            "get_dad_joke_suggestion",
            "get_one_liner_suggestion"
        ]
    );
    // Observations come parent first, then by start time, not by array position.
    let times = p.column("/timestamp");
    assert_eq!(times.first().unwrap(), "2025-12-04T14:51:22.049Z");
}

#[test]
fn langfuse_tool_result_with_an_error_status_is_a_failure() {
    // The tool observation's level is DEFAULT; only its output says the
    // call failed: {"response_status":"Error","message":"ERROR: No data…"}.
    let p = parse(
        &[],
        &[samples(
            "langfuse/trpc-trace-with-observations/csharp-agent-with-gemini-2026-03-09.trace.json",
        )],
    );
    let failed = p.failed();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["action_taken"]["tool_name"], "get_custom_report");
    assert_eq!(failed[0]["failure_source"], "output");
    assert!(
        failed[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("No data found")
    );
}

#[test]
fn langfuse_nested_agent_spans_belong_to_the_outer_agent() {
    let p = parse(
        &[],
        &[samples(
            "langfuse/trpc-trace-with-observations/openai-agents-2025-09-30.trace.json",
        )],
    );
    assert_eq!(
        p.column("/agent_id"),
        [
            "Agent workflow",
            "Hello world",
            "Hello world",
            "Hello world",
            "Hello world"
        ]
    );
    assert_eq!(p.column("/action_taken/tool_name")[3], "get_weather");
    let ui = parse(
        &[],
        &[samples(
            "langfuse/ui-download-merged/openai-agents-2025-09-30.json",
        )],
    );
    assert_eq!(ui.column("/agent_id"), p.column("/agent_id"));
    assert_eq!(
        ui.column("/action_taken/tool_name"),
        p.column("/action_taken/tool_name")
    );
    let bee = parse(
        &[],
        &[samples(
            "langfuse/trpc-trace-with-observations/beeai-2025-08-01.trace.json",
        )],
    );
    assert!(
        bee.column("/agent_id")
            .iter()
            .all(|a| a == "beeai-framework-main")
    );
    let lg = parse(
        &[],
        &[samples(
            "langfuse/trpc-trace-with-observations/langgraph-python-2025-08-22.trace.json",
        )],
    );
    assert_eq!(
        lg.column("/agent_id"),
        [
            "unknown", "agent", "agent", "agent", "tools", "tools", "agent", "agent", "agent"
        ]
    );
}

#[test]
fn langsmith_create_and_update_payloads_merge() {
    let p = parse(
        &[],
        &[samples(
            "langsmith/runs-post-patch/langsmith_js_wrap_openai_default.json",
        )],
    );
    let e = p.events()[0];
    assert_eq!(e["run_id"], "dc34609e-3eeb-459d-bc2a-6fedb01d2e6e");
    assert_eq!(e["span_kind"], "llm");
    assert_eq!(e["action_taken"]["tool_name"], "ChatOpenAI");
    // The update (which carries no id) brought the output and the end time.
    assert_eq!(e["output"], "Howdy! How can I assist you today?");
    assert_eq!(e["latency_ms"]["total"], 1114);
    assert_eq!(e["timestamp"], "2024-10-13T07:05:37.170001Z");
    let run = p.of_kind("run")[0];
    assert_eq!(run["outcome"], "unknown");
}

#[test]
fn managed_agent_sample_pairs_tool_uses_with_results() {
    let p = parse(
        &[],
        &[samples(
            "langsmith/anthropic-managed-agent-events/anthropic_managed_mcp_tools.jsonl",
        )],
    );
    assert_eq!(p.column("/run_id"), ["sesn_01FYL2vWeckHzjuCjjpAudtE"; 5]);
    assert_eq!(
        p.column("/agent_id"),
        [
            "user",
            "Exa assistant",
            "Exa assistant",
            "Exa assistant",
            "Exa assistant"
        ]
    );
    assert_eq!(
        p.column("/action_taken/tool_name"),
        [
            "message",
            "web_search_exa",
            "model_request",
            "message",
            "model_request"
        ]
    );
    let tool = p.events()[1];
    assert_eq!(tool["action_taken"]["tool_input"]["numResults"], 5);
    assert!(
        tool["output"]
            .as_str()
            .unwrap()
            .starts_with("Title: langchain-ai/langsmith-sdk")
    );
    let run = p.of_kind("run")[0];
    assert_eq!(
        run["task"],
        "How many stars does langchain-ai/langsmith-sdk have? Use MCP and Exa"
    );
}

#[test]
fn langfuse_blob_export_failures() {
    let p = parse(&[], &[fixture("langfuse-blob-export.jsonl")]);
    assert_eq!(p.of_kind("source")[0]["format"], "langfuse");
    assert_eq!(
        p.column("/event_id"),
        // A failed agent observation spanning its children's times comes
        // after them: it failed as it ended.
        ["a0", "a2", "a3", "a4", "a1", "b0", "b1", "c1", "c2", "c0"]
    );
    assert_eq!(
        p.column("/agent_id"),
        [
            "travel-planner",
            "booker",
            "booker",
            "booker",
            "booker",
            "researcher",
            "researcher",
            "writer",
            "writer",
            "writer"
        ]
    );
    assert_eq!(
        p.column("/turn"),
        ["0", "1", "2", "3", "4", "0", "1", "0", "1", "2"]
    );
    assert_eq!(p.column("/action_taken/tool_name")[2], "book_hotel");
    assert_eq!(p.column("/action_taken/tool_name")[6], "search_flights");
    let failed: Vec<_> = p
        .failed()
        .iter()
        .map(|e| {
            (
                e["event_id"].as_str().unwrap(),
                e["failure_source"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        failed,
        [
            ("a3", "output"),
            ("a1", "status"),
            ("b1", "status"),
            ("c2", "inherited"),
            ("c0", "status")
        ]
    );
    let booker = p.events()[4];
    assert_eq!(
        booker["error"]["message"],
        "booking failed after 2 attempts"
    );
    assert!(booker.get("failure_inferred").is_none());
    let hotel = p.events()[2];
    assert_eq!(hotel["failure_inferred"], true);
    assert_eq!(
        hotel["action_taken"]["tool_input"],
        json!({"city": "Lisbon", "nights": 2})
    );
    let flights = p.events()[6];
    assert_eq!(
        flights["error"],
        json!({"type": "TimeoutError", "message": "TimeoutError: flight API did not answer in 30s"})
    );
    assert_eq!(flights["failure_cause"], "timeout");
    // WARNING is not a failure.
    assert_eq!(p.events()[3]["action_succeeded"], true);
    // +01:00 offsets are read; twice-encoded input is decoded.
    assert_eq!(p.events()[0]["timestamp"], "2026-03-02T09:00:00Z");
    let runs = p.of_kind("run");
    assert_eq!(runs[0]["task"], "Book two nights in Lisbon");
    assert_eq!(runs[0]["outcome"], "failed");
    assert_eq!(runs[1]["run_id"], "0b9e8d7c6b5a49382716f5e4d3c2b1a0");
    // An ERROR agent whose children recorded nothing: its last child, the
    // LLM call that overflowed, inherits the failure as inferred.
    let writer: Vec<_> = p
        .events()
        .into_iter()
        .filter(|e| e["run_id"] == "5c4d3e2f1a0b49c8b7a6f5e4d3c2b1a9")
        .collect();
    assert_eq!(writer[1]["failure_inferred"], true);
    assert_eq!(writer[1]["failure_cause"], "context_overflow");
    assert_eq!(writer[1]["usage"]["total"], 916);
    assert_eq!(writer[0]["action_succeeded"], true);
    assert_eq!(writer[2]["span_kind"], "agent");
    assert_eq!(runs[2]["outcome"], "failed");
    p.steps_are_in_order();
}

#[test]
fn langsmith_run_errors_on_updates() {
    let p = parse(&[], &[fixture("langsmith-runs.jsonl")]);
    assert_eq!(p.of_kind("source")[0]["format"], "langsmith");
    assert_eq!(
        p.column("/action_taken/tool_name"),
        [
            "support_agent",
            "ChatOpenAI",
            "check_inventory",
            "check_inventory"
        ]
    );
    assert_eq!(p.column("/agent_id"), ["support"; 4]);
    assert_eq!(p.events()[1]["output"], "Let me check the inventory.");
    let failed: Vec<_> = p
        .failed()
        .iter()
        .map(|e| e["failure_source"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["error", "status"]);
    let e = p.failed()[0];
    assert_eq!(e["error"]["type"], "ConnectionError");
    assert_eq!(
        e["action_taken"]["tool_input"],
        json!({"sku": "KETTLE-BLUE"})
    );
    assert_eq!(p.of_kind("run")[0]["task"], "Is the blue kettle in stock?");
}

#[test]
fn managed_agent_tool_errors_denials_and_unanswered_calls() {
    let p = parse(&[], &[fixture("managed-agent-failures.jsonl")]);
    assert_eq!(p.of_kind("source")[0]["format"], "managed-agent");
    assert_eq!(
        p.column("/action_taken/tool_name"),
        [
            "message",
            "bash",
            "model_request",
            "delete_directory",
            "list_artifacts"
        ]
    );
    let failed: Vec<_> = p
        .failed()
        .iter()
        .map(|e| e["failure_source"].as_str().unwrap())
        .collect();
    assert_eq!(failed, ["error", "status", "no_result"]);
    let denied = p.failed()[1];
    assert_eq!(
        denied["error"],
        json!({"type": "permission_denied", "message": "Deleting /srv is not allowed"})
    );
    assert_eq!(p.failed()[2]["failure_inferred"], true);
    let run = p.of_kind("run")[0];
    assert_eq!(run["outcome"], "failed");
    assert_eq!(run["task"], "Clean up the old build artifacts");
}

#[test]
fn atif_delegation_and_a_trajectory_without_an_answer() {
    let p = parse(
        &[],
        &[
            fixture("atif-delegation.json"),
            fixture("atif-no-answer.json"),
        ],
    );
    let sources = p.of_kind("source");
    assert!(sources.iter().all(|s| s["format"] == "atif"));
    let lead: Vec<_> = p
        .events()
        .into_iter()
        .filter(|e| e["run_id"] == "lead-7f3a")
        .collect();
    let who: Vec<_> = lead
        .iter()
        .map(|e| {
            format!(
                "{}:{}",
                e["agent_id"].as_str().unwrap(),
                e["action_taken"]["tool_name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        who,
        [
            "user:message",
            "terminus:bash",
            "terminus:delegate",
            "user:message",
            "debugger:bash",
            "debugger:message",
            "terminus:message"
        ]
    );
    // The Python traceback the sub-agent read in the app's log is what it
    // read, not its command failing.
    assert!(lead[4]["failure_source"].is_null(), "{}", lead[4]);
    let stuck: Vec<_> = p
        .events()
        .into_iter()
        .filter(|e| e["run_id"] == "stuck-42")
        .collect();
    let sources: Vec<_> = stuck
        .iter()
        .map(|e| e["failure_source"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(sources, ["", "", "output", "no_result"]);
    let runs = p.of_kind("run");
    let outcomes: Vec<_> = runs
        .iter()
        .map(|r| {
            (
                r["run_id"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(outcomes, [("lead-7f3a", "unknown"), ("stuck-42", "failed")]);
    p.steps_are_in_order();
}

#[test]
fn format_flag_reads_exports_from_stdin() {
    let body = std::fs::read(fixture("langsmith-runs.jsonl")).unwrap();
    let out = common::cmd("triage-parse")
        .args(["--format", "langsmith"])
        .write_stdin(body)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines()
            .filter(|l| l.contains("\"kind\":\"event\""))
            .count(),
        4
    );
}

/// A Terminus-2 trajectory in the shape Harbor writes (its golden file for
/// a response the harness could not parse): results carry no call id, the
/// harness's complaint answers no call, and `mark_task_complete` ends the
/// run without a result. The one failure is the parse error.
#[test]
fn atif_terminus2_parse_error_is_the_one_failure() {
    let p = parse(&[], &[fixture("atif-terminus2-parse-error.json")]);
    let failed = p.failed();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["action_taken"]["tool_name"], "observation");
    assert_eq!(failed[0]["agent_id"], "terminus-2");
    assert!(
        failed[0]["output"]
            .as_str()
            .unwrap()
            .contains("ERROR: Missing required fields: analysis, plan")
    );
    assert_eq!(
        p.column("/action_taken/tool_name"),
        [
            "message",
            "message",
            "observation",
            "message",
            "bash_command",
            "message",
            "mark_task_complete",
            "message",
            "mark_task_complete"
        ]
    );
    assert!(p.column("/output")[4].contains("printf 'Hello, world!"));
    assert_eq!(p.of_kind("run")[0]["outcome"], "unknown");
}
