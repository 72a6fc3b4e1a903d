//! Tests of `otlp`.

use super::wire::AnyValue;
use super::*;
use serde_json::json;

fn kv(key: &str, value: Value) -> Value {
    let any = match value {
        Value::String(s) => json!({"stringValue": s}),
        Value::Bool(b) => json!({"boolValue": b}),
        Value::Number(n) if n.is_i64() => json!({"intValue": n.to_string()}),
        Value::Number(n) => json!({"doubleValue": n}),
        other => other,
    };
    json!({"key": key, "value": any})
}

/// A span in camelCase OTLP/JSON with string attributes.
fn span(
    trace: &str,
    id: &str,
    parent: &str,
    start: u64,
    name: &str,
    attrs: &[(&str, Value)],
) -> Value {
    json!({"traceId": trace, "spanId": id, "parentSpanId": parent, "name": name,
           "startTimeUnixNano": start.to_string(), "endTimeUnixNano": (start + 2_000_000).to_string(),
           "attributes": attrs.iter().map(|(k, v)| kv(k, v.clone())).collect::<Vec<_>>()})
}

fn request(resource: &[(&str, Value)], spans: Vec<Value>) -> String {
    json!({"resourceSpans": [{"resource": {"attributes": resource.iter().map(|(k, v)| kv(k, v.clone())).collect::<Vec<_>>()},
           "scopeSpans": [{"scope": {}, "spans": spans}]}]})
    .to_string()
}

fn events(input: &str) -> (Vec<Value>, Value) {
    let mut recs = crate::adapters::records_of(FORMAT, "t.jsonl", input.as_bytes());
    let source = recs.pop().unwrap();
    recs.retain(|r| r["kind"] == "event");
    (recs, source)
}

fn field<'a>(evs: &'a [Value], name: &str) -> Vec<&'a Value> {
    evs.iter().map(|e| &e[name]).collect()
}

#[test]
fn spans_come_out_in_tree_preorder_with_inherited_agents() {
    // Exported as a collector does: children before their parents,
    // later siblings first, across two lines.
    let line1 = request(
        &[("service.name", json!("shop"))],
        vec![
            span(
                "t1",
                "c2",
                "root",
                30,
                "execute_tool pay",
                &[
                    ("gen_ai.tool.name", json!("pay")),
                    ("gen_ai.operation.name", json!("execute_tool")),
                ],
            ),
            span(
                "t1",
                "g1",
                "c1",
                15,
                "chat gpt",
                &[("gen_ai.operation.name", json!("chat"))],
            ),
        ],
    );
    let line2 = request(
        &[("service.name", json!("shop"))],
        vec![
            span(
                "t1",
                "c1",
                "root",
                10,
                "invoke_agent searcher",
                &[
                    ("gen_ai.agent.name", json!("searcher")),
                    ("gen_ai.operation.name", json!("invoke_agent")),
                ],
            ),
            span(
                "t1",
                "root",
                "",
                5,
                "invoke_agent planner",
                &[
                    ("gen_ai.agent.name", json!("planner")),
                    ("gen_ai.conversation.id", json!("conv-1")),
                ],
            ),
        ],
    );
    let (evs, source) = events(&format!("{line1}\n{line2}\n"));
    assert_eq!(field(&evs, "span_id"), ["root", "c1", "g1", "c2"]);
    assert_eq!(
        field(&evs, "agent_id"),
        ["planner", "searcher", "searcher", "planner"]
    );
    assert_eq!(field(&evs, "run_id"), ["conv-1"; 4]);
    assert_eq!(field(&evs, "turn"), [0, 1, 2, 3]);
    assert_eq!(field(&evs, "step"), [0, 1, 2, 3]);
    assert_eq!(field(&evs, "span_kind"), ["other", "agent", "llm", "tool"]);
    let tools: Vec<_> = evs
        .iter()
        .map(|e| &e["action_taken"]["tool_name"])
        .collect();
    assert_eq!(
        tools,
        ["invoke_agent planner", "invoke_agent", "chat", "pay"]
    );
    assert_eq!(evs[0]["timestamp"], "1970-01-01T00:00:00.000000005Z");
    assert_eq!(evs[3]["src"]["line"], 1);
    assert_eq!(source["events"], 4);
    assert_eq!(source["skipped"], 0);
}

#[test]
fn agent_spans_without_an_agent_name_are_named_after_the_span() {
    let (evs, _) = events(&request(
        &[],
        vec![
            span(
                "t",
                "a",
                "",
                1,
                "invoke_agent reviewer",
                &[("gen_ai.operation.name", json!("invoke_agent"))],
            ),
            span(
                "t",
                "b",
                "a",
                2,
                "Critic",
                &[("openinference.span.kind", json!("AGENT"))],
            ),
            span(
                "t",
                "c",
                "b",
                3,
                "lookup",
                &[
                    ("openinference.span.kind", json!("TOOL")),
                    ("tool.name", json!("lookup")),
                ],
            ),
        ],
    ));
    assert_eq!(field(&evs, "agent_id"), ["reviewer", "Critic", "Critic"]);
}

#[test]
fn run_id_prefers_run_then_conversation_then_trace() {
    let (evs, _) = events(&request(
        &[],
        vec![
            span(
                "t1",
                "a",
                "",
                1,
                "x",
                &[("run.id", json!("r-1")), ("session.id", json!("s"))],
            ),
            span("t2", "b", "", 2, "x", &[("session.id", json!("s-2"))]),
            span("t3", "c", "", 3, "x", &[]),
        ],
    ));
    assert_eq!(field(&evs, "run_id"), ["r-1", "s-2", "t3"]);
    assert_eq!(field(&evs, "agent_id"), ["unknown"; 3]);
}

/// `span` with links to spans of other traces.
fn linked(mut span: Value, traces: &[&str]) -> Value {
    span["links"] = traces
        .iter()
        .map(|t| json!({"traceId": t, "spanId": "00"}))
        .collect();
    span
}

/// A message delivered by a runtime: the root of the trace that handles
/// it, linked to the sender's span, with a step below it.
fn delivery(trace: &str, links: &[&str], root_attrs: &[(&str, Value)]) -> Vec<Value> {
    let mut attrs = vec![("messaging.operation", json!("process"))];
    attrs.extend(root_attrs.iter().cloned());
    let root = linked(
        span(trace, &format!("{trace}-d"), "", 1, "process", &attrs),
        links,
    );
    let step = span(
        trace,
        &format!("{trace}-s"),
        &format!("{trace}-d"),
        2,
        "step",
        &[],
    );
    vec![root, step]
}

#[test]
fn traces_a_delivery_links_to_are_one_run() {
    // t3 continues t2, which continues t1, whose delivery names run R-1:
    // one run R-1. t5 links to a trace nobody exported; t6's root is no
    // delivery, so its link joins nothing; t7 and t8 link to each other
    // (a cycle): one run, named after the least.
    let mut spans = Vec::new();
    spans.extend(delivery("t3", &["t2"], &[]));
    spans.extend(delivery("t1", &[], &[("session.id", json!("R-1"))]));
    spans.extend(delivery("t2", &["t1", "t5"], &[]));
    spans.extend(delivery("t5", &["t9"], &[]));
    spans.push(linked(span("t6", "f", "", 6, "x", &[]), &["t1"]));
    spans.extend(delivery("t8", &["t7"], &[]));
    spans.extend(delivery("t7", &["t8"], &[]));
    let (evs, _) = events(&request(&[], spans));
    assert_eq!(
        field(&evs, "run_id"),
        ["R-1", "R-1", "R-1", "t5", "t6", "t7", "t7"]
    );
    // The steps below a delivery hang under nothing emitted: no parent.
    assert!(evs.iter().all(|e| e.get("parent_span_id").is_none()));
}

#[test]
fn runtime_plumbing_is_no_step() {
    // AutoGen's runtime traces each message it delivers (OpenTelemetry
    // messaging attributes) and each agent it creates; the agent's turn
    // below a delivery and its tool call are the steps.
    let delivery = [("messaging.operation", json!("process"))];
    let (evs, _) = events(&request(
        &[("service.name", json!("desk"))],
        vec![
            span(
                "t1",
                "a",
                "",
                1,
                "create_agent clerk",
                &[
                    ("gen_ai.operation.name", json!("create_agent")),
                    ("gen_ai.agent.name", json!("clerk")),
                ],
            ),
            span("t2", "p", "", 2, "autogen process clerk", &delivery),
            span(
                "t2",
                "i",
                "p",
                3,
                "invoke_agent clerk",
                &[
                    ("gen_ai.operation.name", json!("invoke_agent")),
                    ("gen_ai.agent.name", json!("clerk")),
                ],
            ),
            span(
                "t2",
                "x",
                "i",
                4,
                "execute_tool lookup",
                &[
                    ("gen_ai.operation.name", json!("execute_tool")),
                    ("gen_ai.tool.name", json!("lookup")),
                ],
            ),
            span("t2", "q", "i", 5, "autogen create output_topic", &delivery),
        ],
    ));
    assert_eq!(field(&evs, "agent_id"), ["clerk", "clerk"]);
    assert_eq!(
        evs.iter()
            .map(|e| e["action_taken"]["tool_name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["invoke_agent", "lookup"]
    );
    // What a delivery states (its run, its agent) its steps inherit, and a
    // step below one hangs under the nearest span emitted.
    let (evs, _) = events(&request(
        &[],
        vec![
            span(
                "t4",
                "r",
                "",
                1,
                "run",
                &[("gen_ai.agent.name", json!("desk"))],
            ),
            span(
                "t4",
                "p",
                "r",
                2,
                "autogen process clerk",
                &[
                    ("messaging.operation", json!("process")),
                    ("session.id", json!("S-9")),
                ],
            ),
            span(
                "t4",
                "c",
                "p",
                3,
                "lookup",
                &[("tool.name", json!("lookup"))],
            ),
        ],
    ));
    assert_eq!(field(&evs, "run_id"), ["t4", "S-9"]);
    assert_eq!(evs[1]["agent_id"], "desk");
    assert_eq!(evs[1]["parent_span_id"], "r");
    // A delivery or a creation that failed stays: its failure is the run's.
    let mut failed = span("t3", "f", "", 6, "autogen send clerk", &delivery);
    failed["status"] = json!({"code": 2, "message": "no such agent"});
    let (evs, _) = events(&request(&[], vec![failed]));
    assert_eq!(evs.len(), 1);
    assert_eq!(evs[0]["action_succeeded"], false);
}

#[test]
fn a_failure_passed_up_the_tree_is_the_childs_alone() {
    // An exception leaving the tool, then the agent: each span records it.
    let failed = |mut s: Value, message: &str| {
        s["status"] = json!({"code": 2, "message": message});
        s
    };
    let (evs, _) = events(&request(
        &[],
        vec![
            failed(
                span(
                    "t1",
                    "a",
                    "",
                    1,
                    "invoke_agent clerk",
                    &[("gen_ai.agent.name", json!("clerk"))],
                ),
                "KeyError: 'A-17'",
            ),
            failed(
                span(
                    "t1",
                    "b",
                    "a",
                    2,
                    "lookup",
                    &[("tool.name", json!("lookup"))],
                ),
                "KeyError: 'A-17'",
            ),
            span("t1", "c", "a", 3, "chat", &[]),
            // The agent raising an error of its own is a failure of its own.
            failed(
                span(
                    "t2",
                    "d",
                    "",
                    4,
                    "invoke_agent clerk",
                    &[("gen_ai.agent.name", json!("clerk"))],
                ),
                "GaveUp",
            ),
            failed(
                span(
                    "t2",
                    "e",
                    "d",
                    5,
                    "lookup",
                    &[("tool.name", json!("lookup"))],
                ),
                "KeyError: 'A-17'",
            ),
        ],
    ));
    let ok: Vec<&Value> = evs.iter().map(|e| &e["action_succeeded"]).collect();
    assert_eq!(ok, [true, false, true, false, false]);
    assert!(evs[0].get("error").is_none());
    assert_eq!(evs[1]["error"]["message"], "KeyError: 'A-17'");
}

#[test]
fn reference_receiver_attributes() {
    let (evs, _) = events(&request(
        &[("agent.id", json!("resource-agent")), ("turn", json!(9))],
        vec![
            span(
                "t",
                "a",
                "",
                1,
                "n",
                &[
                    ("agent.id", json!("coder")),
                    ("run.id", json!("r")),
                    ("turn", json!(4)),
                    ("action.tool", json!("edit")),
                    ("action.succeeded", json!("false")),
                    ("divergence.fields", json!("plan, files")),
                ],
            ),
            span(
                "t",
                "b",
                "",
                2,
                "n",
                &[
                    ("action.succeeded", json!(true)),
                    ("failure.classification", json!("agent_error")),
                ],
            ),
        ],
    ));
    assert_eq!(evs[0]["agent_id"], "coder");
    assert_eq!(evs[0]["turn"], 4);
    assert_eq!(evs[0]["action_taken"]["tool_name"], "edit");
    assert_eq!(evs[0]["action_succeeded"], false);
    assert_eq!(evs[0]["failure_source"], "status");
    assert_eq!(evs[0]["divergence_fields"], json!(["plan", "files"]));
    // Resource attributes fill in what the span does not say.
    assert_eq!(evs[1]["agent_id"], "resource-agent");
    assert_eq!(evs[1]["turn"], 9);
    assert_eq!(evs[1]["action_succeeded"], true);
    assert_eq!(evs[1]["failure_classification"], "agent_error");
    assert_eq!(evs[1]["failure_source"], "label");
}

#[test]
fn status_error_type_and_exceptions_mark_failure() {
    let mut failed = span("t", "s", "", 1, "call", &[]);
    failed["status"] = json!({"code": "STATUS_CODE_ERROR", "message": "upstream timed out"});
    let typed = span(
        "t",
        "e",
        "",
        2,
        "call",
        &[("error.type", json!("RateLimitError"))],
    );
    let mut thrown = span("t", "x", "", 3, "call", &[]);
    thrown["events"] = json!([{"name": "exception", "attributes": [
        {"key": "exception.type", "value": {"stringValue": "KeyError"}},
        {"key": "exception.message", "value": {"stringValue": "unknown tool 'serch'"}}]}]);
    let mut ok = span("t", "o", "", 4, "call", &[]);
    ok["status"] = json!({"code": 1});
    let soft = span(
        "t",
        "f",
        "",
        5,
        "execute_tool",
        &[
            ("tool.name", json!("grep")),
            ("output.value", json!("Error: no such file")),
        ],
    );
    let (evs, _) = events(&request(&[], vec![failed, typed, thrown, ok, soft]));
    assert_eq!(
        field(&evs, "action_succeeded"),
        [false, false, false, true, false]
    );
    assert_eq!(
        field(&evs, "failure_source"),
        [
            &json!("status"),
            &json!("error"),
            &json!("exception"),
            &Value::Null,
            &json!("output")
        ]
    );
    assert_eq!(evs[0]["error"], json!({"message": "upstream timed out"}));
    assert_eq!(evs[0]["failure_classification"], "environment_constraint");
    assert_eq!(evs[0]["failure_cause"], "timeout");
    assert_eq!(evs[1]["error"], json!({"type": "RateLimitError"}));
    assert_eq!(evs[1]["failure_cause"], "rate_limit");
    assert_eq!(
        evs[2]["error"],
        json!({"type": "KeyError", "message": "unknown tool 'serch'"})
    );
    assert_eq!(evs[2]["failure_cause"], "unknown_tool");
    assert!(evs[3].get("error").is_none());
    assert_eq!(evs[4]["span_kind"], "tool");
}

#[test]
fn snake_case_numbers_and_enum_names() {
    let line = json!({"resource_spans": [{"scope_spans": [{"spans": [{
        "trace_id": "t", "span_id": "s", "parent_span_id": null, "name": "n", "kind": "SPAN_KIND_INTERNAL",
        "start_time_unix_nano": 1_544_712_660_000_000_000u64, "status": {"code": 2},
        "attributes": [{"key": "turn", "value": {"int_value": 3}},
                       {"key": "openinference.span.kind", "value": {"string_value": "RETRIEVER"}},
                       {"key": "agent.name", "value": {"string_value": "finder"}}]}]}]}]});
    let (evs, _) = events(&line.to_string());
    assert_eq!(evs[0]["turn"], 3);
    assert_eq!(evs[0]["span_kind"], "retrieval");
    assert_eq!(evs[0]["agent_id"], "finder");
    assert_eq!(evs[0]["action_succeeded"], false);
    assert_eq!(evs[0]["timestamp"], "2018-12-13T14:51:00Z");
}

#[test]
fn any_values_of_every_type() {
    let any = AnyValue::deserialize(json!({"kvlistValue": {"values": [
        {"key": "s", "value": {"stringValue": "x"}},
        {"key": "i", "value": {"intValue": "-12"}},
        {"key": "d", "value": {"doubleValue": 1.5}},
        {"key": "b", "value": {"boolValue": "true"}},
        {"key": "y", "value": {"bytesValue": "AAE="}},
        {"key": "a", "value": {"arrayValue": {"values": [{"intValue": 1}, {"stringValue": "two"}]}}},
        {"key": "n", "value": {}}]}}))
    .unwrap();
    assert_eq!(
        any.into_json(),
        json!({"s": "x", "i": -12, "d": 1.5, "b": true, "y": "AAE=", "a": [1, "two"], "n": null})
    );
}

#[test]
fn one_pretty_printed_request_per_file() {
    let pretty = serde_json::to_string_pretty(
        &serde_json::from_str::<Value>(&request(
            &[],
            vec![
                span("t", "a", "", 1, "first", &[]),
                span("t", "b", "a", 2, "second", &[]),
            ],
        ))
        .unwrap(),
    )
    .unwrap();
    let (evs, source) = events(&format!("\u{feff}\n{pretty}\n"));
    assert_eq!(field(&evs, "span_id"), ["a", "b"]);
    assert_eq!(evs[0]["src"]["line"], 2);
    assert_eq!(source["skipped"], 0);
    let (evs, source) = events(&pretty[..pretty.len() / 2]);
    assert!(evs.is_empty());
    assert_eq!(source["skipped"], 1);
}

#[test]
fn bad_lines_are_skipped_and_counted() {
    let good = request(&[], vec![span("t", "a", "", 1, "n", &[])]);
    let other = request(&[], vec![span("t", "b", "", 2, "n", &[])]);
    let input = format!(
        "{good}\r\nnot json\n{{\"foo\":1}}\n[1]\n\u{fffd}\n{{\"resourceSpans\":[{{\"scopeSpans\":[{{\"spans\":[{{\"name\":7}}]}}]}}]}}\n{other}"
    );
    let mut bytes = input.into_bytes();
    let bad = bytes.iter().position(|b| *b == 0xEF).unwrap();
    bytes[bad] = 0xFF; // invalid UTF-8 on its own line
    let mut recs = crate::adapters::records_of(FORMAT, "t.jsonl", &bytes);
    let source = recs.pop().unwrap();
    recs.retain(|r| r["kind"] == "event");
    let evs = recs;
    assert_eq!(evs.len(), 2);
    assert_eq!(source["skipped"], 5);
}

#[test]
fn parent_cycles_and_missing_parents_still_emit_every_span() {
    let (evs, _) = events(&request(
        &[],
        vec![
            span("t", "a", "b", 1, "n", &[]),
            span("t", "b", "a", 2, "n", &[]),
            span("t", "c", "gone", 3, "n", &[]),
            span("t", "d", "d", 0, "n", &[]),
        ],
    ));
    let mut ids: Vec<_> = evs.iter().map(|e| e["span_id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 4);
    ids.sort();
    assert_eq!(ids, ["a", "b", "c", "d"]);
}

#[test]
fn event_ids_never_collide() {
    let (evs, _) = events(&request(
        &[],
        vec![
            span("t1", "s", "", 1, "n", &[]),
            span("t2", "s", "", 2, "n", &[]),
            json!({"traceId": "t3", "name": "no id"}),
        ],
    ));
    assert_eq!(field(&evs, "event_id"), ["s", "t2:s", "t3:#2"]);
}

mod scanner_agrees_with_serde;
