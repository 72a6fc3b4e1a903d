//! The `openai-agents` format: the OpenAI Agents SDK's `RunState`
//! snapshots (`RunState.to_json()`, `to_string()`), saved to pause a run
//! for a human's approval and resume it. One document is one run: its
//! input, then the items the run generated (messages, tool calls and
//! their outputs, handoffs), each spoken by the agent it names. A call
//! the approver rejected is a failed step; a call still awaiting approval
//! is not (the run is paused, its outcome unknown). A tool that raised
//! answers with the SDK's error text, which fails its call; a tripped
//! guardrail fails the run.

use std::collections::HashSet;
use std::io::Read;

use serde_json::{Value, json};

use crate::adapters::formats::Format;
use crate::adapters::formats::transcript::{self, Conversation};
use crate::adapters::read::document::{document_reason, not_utf8, read_document};
use crate::adapters::read::shape::Shape;
use crate::adapters::read::value::{describe, str_of};
use crate::adapters::sink::Sink;
use crate::record::{OutcomeReason, RunRec};

/// The `openai-agents` row of the format table.
pub(crate) const FORMAT: Format = Format {
    name: "openai-agents",
    help: "OpenAI Agents SDK RunState snapshots (RunState.to_json()): one run per snapshot.",
    claims: Some(claims),
    read: |r, _, sink| read(r, sink),
};

/// A snapshot: its schema version beside the run's own keys.
fn claims(shape: &Shape<'_>) -> bool {
    !shape.top_is_list
        && shape.has("$schemaVersion")
        && [
            "current_agent",
            "generated_items",
            "model_responses",
            "original_input",
        ]
        .iter()
        .any(|k| shape.has(k))
}

/// What the SDK's default tool error handler answers in a tool's stead.
const TOOL_ERROR: &str = "An error occurred while running the tool";
/// What the SDK answers a call the approver rejected with (its
/// `DEFAULT_APPROVAL_REJECTION_MESSAGE`): once the run resumed, the
/// decision is no longer in `context.approvals` (schema 1.22).
const REJECTED: &str = "Tool execution was not approved.";

pub(crate) fn read(r: impl Read, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let data = read_document(r, sink)?;
    if let Some((line, reason)) = not_utf8(&data) {
        return sink.skip(line, &reason);
    }
    let state: Value = match serde_json::from_slice(&data) {
        Ok(v) => v,
        Err(e) => {
            let line = Some(e.line() as u64).filter(|l| *l > 0);
            return sink.skip(line, document_reason(&e));
        }
    };
    if !state.is_object() {
        let reason = format!("expected a RunState object, got {}", describe(&state));
        return sink.skip(Some(1), &reason);
    }
    let conv = conversation(&state, sink);
    transcript::emit_all(&[conv], sink)
}

/// The run a snapshot holds, as a conversation of Responses items.
fn conversation(state: &Value, sink: &mut Sink<'_>) -> Conversation {
    let mut conv = Conversation::bare(1, Vec::new());
    conv.id = str_of(state.get("conversation_id"))
        .or_else(|| state.get("trace").and_then(|t| str_of(t.get("trace_id"))));
    match state.get("original_input") {
        Some(Value::String(text)) => {
            conv.task = Some(text.clone());
            conv.messages
                .push((1, json!({"role": "user", "content": text})));
        }
        Some(Value::Array(items)) => {
            conv.messages.extend(items.iter().cloned().map(|i| (1, i)));
        }
        _ => {}
    }
    let items = state
        .get("generated_items")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let rejected = decided(state, "rejected");
    let mut answered = HashSet::new();
    for item in items {
        let Some(message) = message_of(item, &rejected, sink) else {
            continue;
        };
        if let Some(id) = str_of(message.get("call_id")).filter(|_| is_output(&message)) {
            answered.insert(id);
        }
        conv.messages.push((1, message));
    }
    // A call the approver rejected that the run did not answer yet.
    for item in items {
        let call = item.get("raw_item");
        let Some(id) = call.and_then(|c| str_of(c.get("call_id"))) else {
            continue;
        };
        let tool = call.and_then(|c| str_of(c.get("name"))).unwrap_or_default();
        if !answered.contains(&id) && is_rejected(&rejected, &tool, &id) {
            answered.insert(id.clone());
            conv.messages
                .push((1, output(&id, "rejected by the approver", true)));
        }
    }
    let paused = state
        .get("current_step")
        .and_then(|s| s.get("type"))
        .and_then(Value::as_str)
        == Some("next_step_interruption");
    if paused {
        let waiting = state
            .pointer("/current_step/data/interruptions")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for call in waiting.iter().filter_map(|i| i.get("raw_item")) {
            let Some(id) = str_of(call.get("call_id")) else {
                continue;
            };
            if answered.insert(id.clone()) {
                // Not a failure: the run waits for a decision.
                conv.messages
                    .push((1, output(&id, "awaiting approval", false)));
            }
        }
    }
    if tripped_guardrail(state) {
        conv.verdict = Some(RunRec::failed(String::new(), OutcomeReason::Error));
    }
    conv
}

/// One generated item as a message of the transcript, spoken by its agent.
fn message_of(item: &Value, rejected: &Decisions, sink: &mut Sink<'_>) -> Option<Value> {
    let kind = item.get("type").and_then(Value::as_str).unwrap_or("");
    let agent = item
        .pointer("/agent/name")
        .and_then(Value::as_str)
        .unwrap_or("assistant");
    let raw = item.get("raw_item").cloned().unwrap_or(Value::Null);
    match kind {
        "message_output_item" | "reasoning_item" => {
            let mut m = raw;
            if let Some(obj) = m.as_object_mut() {
                obj.insert("name".to_string(), Value::from(agent));
            }
            Some(m)
        }
        "tool_call_item" | "handoff_call_item" => {
            // A Chat Completions message carries the speaker's name beside
            // the call, which a Responses call item has no room for.
            let name = str_of(raw.get("name")).unwrap_or_else(|| "tool".to_string());
            let args = raw.get("arguments").cloned().unwrap_or(Value::Null);
            let id = str_of(raw.get("call_id")).or_else(|| str_of(raw.get("id")));
            Some(json!({
                "role": "assistant",
                "name": agent,
                "tool_calls": [{"id": id, "type": "function",
                                "function": {"name": name, "arguments": args}}],
            }))
        }
        "tool_call_output_item" | "handoff_output_item" => {
            let id = str_of(raw.get("call_id"))?;
            let text = str_of(raw.get("output"))
                .or_else(|| str_of(item.get("output")))
                .unwrap_or_default();
            let tool = str_of(item.get("tool_name")).unwrap_or_default();
            let failed = text.starts_with(TOOL_ERROR)
                || text.trim() == REJECTED
                || is_rejected(rejected, &tool, &id);
            Some(output(&id, &text, failed))
        }
        // The call awaiting approval (schema 1.22 lists it among the
        // items too): read from its call item, its wait from the
        // interruption.
        "tool_approval_item" => None,
        _ => {
            sink.not_read(&format!("an item of type \"{kind}\""));
            None
        }
    }
}

fn is_output(message: &Value) -> bool {
    message.get("type").and_then(Value::as_str) == Some("function_call_output")
}

/// A Responses call output, failed or not.
fn output(call_id: &str, text: &str, failed: bool) -> Value {
    let mut o = json!({"type": "function_call_output", "call_id": call_id, "output": text});
    if failed {
        o["status"] = Value::from("failed");
    }
    o
}

/// The approver's decisions of one kind, per tool: every call (`true`,
/// "always"), or these call ids.
struct Decisions {
    always: HashSet<String>,
    calls: HashSet<String>,
}

fn decided(state: &Value, which: &str) -> Decisions {
    let mut d = Decisions {
        always: HashSet::new(),
        calls: HashSet::new(),
    };
    let approvals = state
        .pointer("/context/approvals")
        .and_then(Value::as_object);
    for (tool, decision) in approvals.into_iter().flatten() {
        match decision.get(which) {
            Some(Value::Bool(true)) => {
                d.always.insert(tool.clone());
            }
            Some(Value::Array(ids)) => d.calls.extend(ids.iter().filter_map(|i| str_of(Some(i)))),
            _ => {}
        }
    }
    d
}

fn is_rejected(rejected: &Decisions, tool: &str, call_id: &str) -> bool {
    rejected.calls.contains(call_id) || rejected.always.contains(tool)
}

/// Whether a guardrail's tripwire stopped the run.
fn tripped_guardrail(state: &Value) -> bool {
    [
        "input_guardrail_results",
        "output_guardrail_results",
        "tool_input_guardrail_results",
        "tool_output_guardrail_results",
    ]
    .iter()
    .filter_map(|k| state.get(*k)?.as_array())
    .flatten()
    .any(|r| {
        r.pointer("/output/tripwire_triggered")
            .and_then(Value::as_bool)
            == Some(true)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::split_records;

    fn state(extra: Value) -> String {
        let mut s = json!({
            "$schemaVersion": "1.16",
            "current_agent": {"name": "mailer"},
            "original_input": "email alice and bob",
            "conversation_id": "conv-1",
            "context": {"approvals": {}},
            "generated_items": [],
            "current_step": null,
        });
        for (k, v) in extra.as_object().unwrap() {
            s[k] = v.clone();
        }
        s.to_string()
    }

    fn call(id: &str) -> Value {
        json!({"type": "tool_call_item", "agent": {"name": "mailer"}, "tool_name": "send_email",
               "raw_item": {"type": "function_call", "name": "send_email", "call_id": id,
                            "arguments": "{\"to\": \"x\"}"}})
    }

    fn succeeded(events: &[Value], tool: &str) -> Vec<bool> {
        events
            .iter()
            .filter(|e| e["action_taken"]["tool_name"] == tool)
            .map(|e| e["action_succeeded"].as_bool().unwrap())
            .collect()
    }

    #[test]
    fn a_rejected_call_fails_and_a_pending_one_does_not() {
        let doc = state(json!({
            "generated_items": [call("c1"), call("c2")],
            "context": {"approvals": {"send_email": {"approved": [], "rejected": ["c1"]}}},
            "current_step": {"type": "next_step_interruption", "data": {"interruptions": [
                {"type": "tool_approval_item", "agent": {"name": "mailer"}, "tool_name": "send_email",
                 "raw_item": {"type": "function_call", "name": "send_email", "call_id": "c2"}}]}},
        }));
        assert_eq!(
            crate::adapters::detect(None, doc.as_bytes()).name,
            "openai-agents"
        );
        let (events, runs, _) = split_records(FORMAT, "state.json", &doc);
        assert_eq!(succeeded(&events, "send_email"), vec![false, true]);
        assert!(events.iter().all(|e| e["run_id"] == "conv-1"));
        let calls: Vec<&Value> = events
            .iter()
            .filter(|e| e["action_taken"]["tool_name"] == "send_email")
            .collect();
        assert_eq!(calls[0]["agent_id"], "mailer");
        assert_eq!(
            runs[0]["outcome"], "unknown",
            "a paused run has no outcome yet"
        );
        assert_eq!(runs[0]["task"], "email alice and bob");
    }

    #[test]
    fn a_tool_that_raised_fails_its_call_and_a_tripped_guardrail_the_run() {
        let doc = state(json!({
            "generated_items": [call("c1"), {"type": "tool_call_output_item", "agent": {"name": "mailer"},
                "tool_name": "send_email", "output": "x",
                "raw_item": {"type": "function_call_output", "call_id": "c1",
                             "output": "An error occurred while running the tool. Please try again. Error: SMTP down"}}],
            "output_guardrail_results": [{"output": {"tripwire_triggered": true}}],
        }));
        let (events, runs, _) = split_records(FORMAT, "state.json", &doc);
        assert_eq!(succeeded(&events, "send_email"), vec![false]);
        assert_eq!(runs[0]["outcome"], "failed");
    }

    #[test]
    fn a_document_with_a_trace_key_is_not_taken_for_langfuse() {
        let doc = state(json!({"trace": null}));
        assert_eq!(
            crate::adapters::detect(None, doc.as_bytes()).name,
            "openai-agents"
        );
    }
}
