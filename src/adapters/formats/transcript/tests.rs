//! Tests of `transcript`.

use crate::adapters::split_records;
use serde_json::{Value, json};

fn records(input: &str) -> (Vec<Value>, Vec<Value>, Value) {
    split_records(
        crate::adapters::formats::openai_chat::FORMAT,
        "conv.json",
        input,
    )
}

fn tools(evs: &[Value]) -> Vec<&str> {
    evs.iter()
        .map(|e| e["action_taken"]["tool_name"].as_str().unwrap())
        .collect()
}

#[test]
fn envelope_keys_give_the_run_its_id_task_and_verdict() {
    let conv = json!({"oid": "r1", "task": "fix MMS", "gold_score": 0, "messages": [
        {"role": "system", "content": "policy"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": null, "reasoning_content": "look them up",
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": "{\"phone\": \"555\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "{\"id\": \"C1\"}"},
        {"role": "assistant", "content": "found you"}]});
    let (evs, runs, source) = records(&conv.to_string());
    assert_eq!(tools(&evs), ["message", "lookup", "message"]);
    assert_eq!(
        evs[1]["action_taken"]["tool_input"],
        json!({"phone": "555"})
    );
    assert_eq!(evs[1]["output"], "{\"id\": \"C1\"}");
    assert_eq!(evs[1]["message_context"]["reasoning"], "look them up");
    assert_eq!(evs[1]["turn"], 2);
    assert!(evs.iter().all(|e| e["action_succeeded"] == true));
    assert_eq!(
        runs,
        [
            json!({"kind": "run", "run_id": "r1", "outcome": "failed", "reason": "low_score", "score": 0.0, "task": "fix MMS", "policy": "policy"})
        ]
    );
    assert_eq!(source["skipped"], 0);
    assert_eq!(source["format"], "openai-chat");
}

#[test]
fn results_pair_by_id_whatever_their_order_and_by_position_without_one() {
    let conv = json!([
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [
            {"id": "a", "function": {"name": "first", "arguments": "{}"}},
            {"id": "b", "function": {"name": "second", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "b", "content": "Error: no such thing"},
        {"role": "tool", "tool_call_id": "a", "content": "ok"},
        {"role": "assistant", "function_call": {"name": "legacy", "arguments": "{}"}},
        {"role": "function", "name": "legacy", "content": "legacy done"},
        {"role": "tool", "tool_call_id": "zz", "content": "Error: parse error in your last reply"},
        {"role": "assistant", "content": "done"}]);
    let (evs, runs, _) = records(&conv.to_string());
    assert_eq!(
        tools(&evs),
        [
            "message",
            "first",
            "second",
            "legacy",
            "tool_result",
            "message"
        ]
    );
    assert_eq!(evs[1]["output"], "ok");
    assert_eq!(evs[2]["action_succeeded"], false);
    assert_eq!(evs[2]["failure_source"], "output");
    assert_eq!(evs[3]["output"], "legacy done");
    // The harness's reply to no call is kept, and carries its failure.
    assert_eq!(evs[4]["action_succeeded"], false);
    assert_eq!(evs[4]["agent_id"], "assistant");
    assert_eq!(runs[0]["run_id"], "conv");
    assert_eq!(runs[0]["outcome"], "unknown");
    assert_eq!(runs[0]["task"], "go");
}

#[test]
fn an_unanswered_call_fails_unless_it_ends_the_episode() {
    let conv = json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "bash", "arguments": "{}"}}]},
        {"role": "assistant", "tool_calls": [{"id": "b", "function": {"name": "bash", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "b", "content": "fine"},
        {"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "report_back", "arguments": "{\"answer\": 4}"}}]}]});
    let (evs, runs, _) = records(&conv.to_string());
    assert_eq!(evs[1]["failure_source"], "no_result");
    assert_eq!(evs[1]["failure_inferred"], true);
    assert_eq!(evs[2]["action_succeeded"], true);
    assert_eq!(
        evs[3]["action_succeeded"], true,
        "the last call ends the run"
    );
    assert_eq!(runs[0]["outcome"], "unknown");
}

#[test]
fn hosted_tool_calls_carry_their_own_result_and_bookkeeping_is_no_step() {
    let items = json!([
        {"role": "user", "content": "search"},
        {"type": "mcp_list_tools", "id": "l1", "server_label": "s", "tools": []},
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}},
        {"type": "mcp_call", "id": "mcp_1", "name": "get_page", "server_label": "s", "arguments": "{}", "error": "upstream 502", "output": null},
        {"type": "custom_tool_call", "call_id": "ct_1", "name": "apply", "input": "diff"},
        {"type": "custom_tool_call_output", "call_id": "ct_1", "output": "applied"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}]);
    let (evs, _, source) = records(&items.to_string());
    assert_eq!(source["skipped"], 0);
    assert_eq!(
        tools(&evs),
        ["message", "web_search", "get_page", "apply", "message"]
    );
    assert_eq!(evs[1]["action_succeeded"], true);
    assert_eq!(evs[2]["action_succeeded"], false);
    assert_eq!(evs[2]["error"]["message"], "upstream 502");
    assert_eq!(evs[3]["output"], "applied");
}

/// Claude Code's transcript lines and the Agent SDK's stream: the API
/// message under `message`, a run per session, a sub-agent's lines as
/// its own agent, an error result failing the run.
#[test]
fn session_logs_unwrap_their_messages_per_session() {
    let lines = [
        json!({"type": "summary", "summary": "Fix tests", "leafUuid": "u3"}),
        json!({"parentUuid": null, "isSidechain": false, "sessionId": "s1", "type": "user", "uuid": "u1",
               "timestamp": "2025-06-01T10:00:00.000Z", "message": {"role": "user", "content": "run the tests"}}),
        json!({"parentUuid": "u1", "isSidechain": false, "sessionId": "s1", "type": "assistant", "uuid": "u2",
               "timestamp": "2025-06-01T10:00:05.000Z",
               "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
                           "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "pytest"}}]}}),
        json!({"parentUuid": "u2", "isSidechain": true, "sessionId": "s1", "type": "user", "uuid": "u3",
               "timestamp": "2025-06-01T10:00:09.000Z",
               "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "Exit code 1\nFAILED test_x", "is_error": true}]}}),
        json!({"type": "system", "subtype": "init", "session_id": "s2", "tools": []}),
        json!({"type": "assistant", "session_id": "s2", "parent_tool_use_id": null,
               "message": {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}}),
        json!({"type": "result", "subtype": "error_max_turns", "is_error": true, "session_id": "s2", "num_turns": 9}),
    ];
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let (evs, runs, source) = split_records(
        crate::adapters::formats::anthropic_messages::FORMAT,
        "claude.jsonl",
        &body,
    );
    assert_eq!(source["skipped"], 0, "{source}");
    assert_eq!(tools(&evs), ["message", "Bash", "message"]);
    assert_eq!(evs[1]["action_succeeded"], false);
    assert_eq!(evs[1]["timestamp"], "2025-06-01T10:00:05Z");
    let outcomes: Vec<(&str, &str)> = runs
        .iter()
        .map(|r| {
            (
                r["run_id"].as_str().unwrap(),
                r["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(outcomes, [("s1", "failed"), ("s2", "failed")]);
    assert_eq!(
        crate::adapters::detect(None, body.as_bytes()),
        crate::adapters::formats::anthropic_messages::FORMAT
    );
    // A hook's feedback in the user's place is the harness's, no turn of
    // the user.
    let hook = json!({"parentUuid": "u3", "isSidechain": false, "sessionId": "s1", "type": "user",
        "uuid": "u4", "isMeta": true,
        "message": {"role": "user", "content": "Stop hook feedback: check your work before exiting"}});
    let with_hook = format!(
        "{}{hook}\n",
        lines[..4]
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    );
    let (evs, _, _) = split_records(
        crate::adapters::formats::anthropic_messages::FORMAT,
        "claude.jsonl",
        &with_hook,
    );
    assert_eq!(tools(&evs), ["message", "Bash"]);
    assert!(
        evs.iter()
            .all(|e| !e["output"].as_str().unwrap_or("").contains("Stop hook"))
    );
}

#[test]
fn conversations_one_per_line_and_messages_one_per_line() {
    let a = json!({"id": "a", "reward": 1.0, "messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "x"}]});
    let b = json!({"messages": [{"role": "user", "content": "q2"}], "scores": {"exact": {"value": 1}, "judge": false}});
    let (evs, runs, _) = records(&format!("{a}\n{b}\n[1]\n"));
    assert_eq!(evs.len(), 3);
    assert_eq!(runs[0]["outcome"], "succeeded");
    assert_eq!(runs[1]["run_id"], "conv#2");
    assert_eq!(runs[1]["outcome"], "failed");
    let (_, _, source) = records(&format!("{a}\n[1]\n"));
    assert_eq!(source["skipped"], 1);
    let lines =
        "{\"role\": \"user\", \"content\": \"q\"}\n{\"role\": \"assistant\", \"content\": \"a\"}\n";
    let (evs, runs, _) = records(lines);
    assert_eq!(evs.len(), 2);
    assert_eq!(runs.len(), 1);
    assert_eq!(evs[1]["src"]["line"], 2);
}

#[test]
fn a_rejected_approval_fails_its_call_and_a_pending_one_does_not() {
    let items = serde_json::json!([
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "delete the old branches"}]},
        {"type": "mcp_approval_request", "id": "apr_1", "name": "delete_branch", "server_label": "git", "arguments": "{\"name\":\"old\"}"},
        {"type": "mcp_approval_response", "approval_request_id": "apr_1", "approve": false},
        {"type": "mcp_approval_request", "id": "apr_2", "name": "delete_branch", "server_label": "git", "arguments": "{\"name\":\"older\"}"}
    ]);
    let (evs, _, _) = split_records(
        crate::adapters::formats::openai_chat::FORMAT,
        "items.json",
        &items.to_string(),
    );
    let calls: Vec<bool> = evs
        .iter()
        .filter(|e| e["action_taken"]["tool_name"] == "delete_branch")
        .map(|e| e["action_succeeded"].as_bool().unwrap())
        .collect();
    assert_eq!(calls, [false, true]);
}

#[test]
fn a_log_naming_every_speaker_states_its_task_first_whatever_role_it_gives() {
    // AG2's chat history, seen from the agent that started the chat.
    let named = json!([
        {"role": "assistant", "name": "proxy", "content": "Sum the column."},
        {"role": "user", "name": "coder", "content": "```python\nprint(1/0)\n```"},
        {"role": "assistant", "name": "proxy",
         "content": "exitcode: 1 (execution failed)\nCode output: \nZeroDivisionError: division by zero"}]);
    let (evs, runs, _) = records(&named.to_string());
    assert_eq!(runs[0]["task"], "Sum the column.");
    assert_eq!(tools(&evs), ["message", "message", "code_execution"]);
    assert_eq!(evs[2]["action_succeeded"], false);
    assert_eq!(evs[2]["input"], "print(1/0)\n", "the code the reply ran");
    // Without names, an assistant's greeting is no task: the user's is.
    let unnamed = json!([
        {"role": "assistant", "content": "Hi! How can I help?"},
        {"role": "user", "content": "Cancel my order."}]);
    let (_, runs, _) = records(&unnamed.to_string());
    assert_eq!(runs[0]["task"], "Cancel my order.");
}

#[test]
fn a_call_s_content_written_as_python_s_none_says_nothing() {
    let conv = json!([
        {"role": "user", "name": "runner", "content": "Weather in Oslo?"},
        {"role": "assistant", "name": "planner", "content": "None",
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "fetch", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Sunny"},
        {"role": "assistant", "name": "planner", "content": "None"}]);
    let (evs, _, _) = records(&conv.to_string());
    assert_eq!(
        tools(&evs),
        ["message", "fetch", "message"],
        "a message saying None alone is still said"
    );
}

/// A tool message flagged as an error fails its call whatever its text;
/// a run whose own status is an error failed, one that completed is not
/// thereby a success.
#[test]
fn flagged_replies_and_an_errored_status() {
    let conv = |status: &str, flag: bool| {
        json!({"run_id": "r", "status": status, "messages": [
            {"role": "user", "content": "weather in Atlantis?"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\": \"Atlantis\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "Unknown city", "tool_call_error": flag},
            {"role": "assistant", "content": "I could not find it."}]})
        .to_string()
    };
    let (evs, runs, _) = records(&conv("COMPLETED", true));
    assert_eq!(evs[1]["action_succeeded"], false);
    assert_eq!(runs[0]["outcome"], "unknown");
    let (evs, runs, _) = records(&conv("ERROR", false));
    assert_eq!(evs[1]["action_succeeded"], true);
    assert_eq!(runs[0]["outcome"], "failed");
}
