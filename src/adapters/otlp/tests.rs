//! Tests of `otlp`.

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
    let mut recs =
        super::super::records_of(super::super::Format::Otlp, "t.jsonl", input.as_bytes());
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
    let mut recs = super::super::records_of(super::super::Format::Otlp, "t.jsonl", &bytes);
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

// ---- the scanner's fast path reads what serde reads ----

mod scanner_agrees_with_serde {
    use super::super::scan;
    use super::*;
    use crate::io::json_scan::LineScratch;
    use proptest::prelude::*;

    type Member = (String, String);

    fn object(members: Vec<Member>) -> String {
        let body: Vec<String> = members
            .iter()
            .map(|(k, v)| format!("{}:{v}", serde_json::to_string(k).unwrap()))
            .collect();
        format!("{{{}}}", body.join(","))
    }

    fn list(items: Vec<String>) -> String {
        format!("[{}]", items.join(","))
    }

    fn pick(options: &'static [&'static str]) -> BoxedStrategy<String> {
        proptest::sample::select(options)
            .prop_map(str::to_string)
            .boxed()
    }

    /// An object of some of `fields` in any order, now and then with one
    /// field given twice.
    fn object_of(fields: Vec<BoxedStrategy<Member>>, most: usize) -> BoxedStrategy<String> {
        object_with(Vec::new(), fields, most)
    }

    /// An object of `required` and some of `optional`, in any order, now
    /// and then with one field given twice.
    fn object_with(
        required: Vec<BoxedStrategy<Member>>,
        optional: Vec<BoxedStrategy<Member>>,
        most: usize,
    ) -> BoxedStrategy<String> {
        let all: Vec<_> = required.iter().chain(&optional).cloned().collect();
        let n = optional.len();
        let chosen = proptest::sample::subsequence((0..n).collect::<Vec<_>>(), 0..=most.min(n))
            .prop_flat_map(move |picked| {
                required
                    .iter()
                    .cloned()
                    .chain(picked.into_iter().map(|i| optional[i].clone()))
                    .collect::<Vec<_>>()
            });
        let again = proptest::option::weighted(0.004, proptest::strategy::Union::new(all));
        (chosen, again)
            .prop_map(|(mut members, again)| {
                members.extend(again);
                members
            })
            .prop_shuffle()
            .prop_map(object)
            .boxed()
    }

    fn field(name: &'static str, value: BoxedStrategy<String>) -> BoxedStrategy<Member> {
        value.prop_map(move |v| (name.to_string(), v)).boxed()
    }

    /// A field under either of its names (OTLP/JSON's or protobuf's).
    fn either(names: [&'static str; 2], value: BoxedStrategy<String>) -> BoxedStrategy<Member> {
        (proptest::sample::select(names.to_vec()), value)
            .prop_map(|(n, v)| (n.to_string(), v))
            .boxed()
    }

    /// Now and then a value of the wrong shape instead of `good`.
    fn mostly(good: BoxedStrategy<String>) -> BoxedStrategy<String> {
        prop_oneof![300 => good, 1 => junk()].boxed()
    }

    /// Values of the wrong shape for any field.
    fn junk() -> BoxedStrategy<String> {
        pick(&[
            "null",
            "1",
            "\"x\"",
            "[]",
            "{}",
            "{\"a\":[1,{\"b\":null}]}",
            "true",
            "-0.5e3",
        ])
    }

    fn text() -> BoxedStrategy<String> {
        mostly(pick(&[
            "\"0000000100000000\"",
            "\"C69A4710966AB62F0000000000000001\"",
            "\"planner\"",
            "\"run-1\"",
            "\"\"",
            "\"a\\\"b\"",
            "\"caf\\u00e9\"",
            "\"line\\nbreak\"",
            "\"{\\\"k\\\": \\\"v\\\"}\"",
            "\"execute_tool pay\"",
            "\"ERROR\"",
            "null",
        ]))
    }

    fn scalar() -> BoxedStrategy<String> {
        pick(&[
            "\"1777259200000000000\"",
            "1777259200000000000",
            "\"12\"",
            "-3",
            "1.5",
            "true",
            "\"true\"",
            "\"ERROR\"",
            "2",
            "null",
            "\"STATUS_CODE_OK\"",
            "{}",
            "[1]",
            "\"x\"",
            "18446744073709551616",
        ])
    }

    fn key_name() -> BoxedStrategy<String> {
        mostly(pick(&[
            "\"agent.id\"",
            "\"run.id\"",
            "\"action.tool\"",
            "\"turn\"",
            "\"gen_ai.operation.name\"",
            "\"error.type\"",
            "\"input.value\"",
            "\"exception.type\"",
            "\"exception.message\"",
            "\"action.succeeded\"",
            "\"divergence.fields\"",
            "\"tool_input\"",
            "\"service.name\"",
            "\"openinference.span.kind\"",
            "\"latency.llm_ms\"",
        ]))
    }

    fn any_value() -> BoxedStrategy<String> {
        let fields = vec![
            either(["stringValue", "string_value"], text()),
            either(["boolValue", "bool_value"], scalar()),
            either(["intValue", "int_value"], scalar()),
            either(["doubleValue", "double_value"], scalar()),
            either(["bytesValue", "bytes_value"], text()),
            field(
                "arrayValue",
                pick(&[
                    "null",
                    "{\"values\":[{\"intValue\":1},{\"stringValue\":\"two\"}]}",
                    "{}",
                    "[]",
                ]),
            ),
            field(
                "kvlistValue",
                pick(&[
                    "null",
                    "{\"values\":[{\"key\":\"k\",\"value\":{\"boolValue\":true}}]}",
                    "{\"values\":[{}]}",
                ]),
            ),
            field("other", junk()),
        ];
        // Mostly one field, as exporters write it.
        prop_oneof![
            60 => proptest::sample::select(fields.clone()).prop_flat_map(|f| f).prop_map(|m| object(vec![m])),
            10 => object_of(fields, 3),
            1 => junk(),
        ]
        .boxed()
    }

    fn key_value() -> BoxedStrategy<String> {
        let plain = (key_name(), any_value())
            .prop_map(|(k, v)| object(vec![("key".to_string(), k), ("value".to_string(), v)]));
        let odd = object_of(
            vec![
                field("key", key_name()),
                field("value", any_value()),
                field("note", junk()),
            ],
            3,
        );
        prop_oneof![20000 => plain, 2 => odd, 1 => junk()].boxed()
    }

    fn attributes() -> BoxedStrategy<String> {
        mostly(
            proptest::collection::vec(key_value(), 0..8)
                .prop_map(list)
                .boxed(),
        )
    }

    fn span() -> BoxedStrategy<String> {
        let event = object_of(
            vec![
                field("name", pick(&["\"exception\"", "\"log\"", "null"])),
                field("attributes", attributes()),
            ],
            2,
        );
        let status = object_of(vec![field("code", scalar()), field("message", text())], 2);
        object_with(
            vec![
                either(["traceId", "trace_id"], text()),
                either(["spanId", "span_id"], text()),
            ],
            vec![
                either(["parentSpanId", "parent_span_id"], text()),
                field("name", text()),
                either(["startTimeUnixNano", "start_time_unix_nano"], scalar()),
                either(["endTimeUnixNano", "end_time_unix_nano"], scalar()),
                field("attributes", attributes()),
                field(
                    "events",
                    mostly(
                        proptest::collection::vec(event, 0..3)
                            .prop_map(list)
                            .boxed(),
                    ),
                ),
                field("status", mostly(status)),
                field("kind", junk()),
            ],
            9,
        )
    }

    fn request() -> BoxedStrategy<String> {
        let scope = object_with(
            vec![field(
                "spans",
                mostly(
                    proptest::collection::vec(span(), 1..6)
                        .prop_map(list)
                        .boxed(),
                ),
            )],
            vec![field("scope", junk())],
            1,
        );
        let resource = mostly(
            attributes()
                .prop_map(|a| object(vec![("attributes".to_string(), a)]))
                .boxed(),
        );
        let resource_spans = object_with(
            vec![
                (
                    proptest::sample::select(vec![
                        "scopeSpans",
                        "scope_spans",
                        "instrumentationLibrarySpans",
                        "instrumentation_library_spans",
                    ]),
                    mostly(
                        proptest::collection::vec(scope, 1..3)
                            .prop_map(list)
                            .boxed(),
                    ),
                )
                    .prop_map(|(n, v)| (n.to_string(), v))
                    .boxed(),
            ],
            vec![field("resource", resource), field("schemaUrl", junk())],
            3,
        );
        object_with(
            vec![field(
                "resourceSpans",
                mostly(
                    proptest::collection::vec(resource_spans, 1..3)
                        .prop_map(list)
                        .boxed(),
                ),
            )],
            vec![field("resource_spans", junk()), field("extra", junk())],
            1,
        )
    }

    /// The spans each reader holds, as text; the scanner's is None when it
    /// declines the line.
    fn both(line: &str) -> (Option<String>, Result<String, String>) {
        let settings = DecodeSettings::default();
        let mut scratch = LineScratch::default();
        let mut held = Vec::new();
        let scanned = scan::hold_line(line, line.as_bytes(), &mut scratch, 7, &settings, &mut held)
            .ok()
            .map(|()| format!("{held:?}"));
        let serde = decode_request(line.as_bytes()).map(|req| {
            let mut held = Vec::new();
            hold(req, Some(7), &settings, &mut held);
            format!("{held:?}")
        });
        (scanned, serde)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        /// Any line the scanner reads, serde reads to the same spans.
        #[test]
        fn a_line_the_scanner_reads_serde_reads_alike(line in request()) {
            let (scanned, serde) = both(&line);
            if let Some(scanned) = scanned {
                prop_assert_eq!(Ok(scanned), serde, "{}", line);
            }
        }
    }

    #[test]
    fn the_scanner_reads_lines_as_exporters_write_them() {
        let line = super::request(
            &[("service.name", json!("shop"))],
            vec![
                super::span(
                    "t1",
                    "c2",
                    "root",
                    30,
                    "execute_tool pay",
                    &[("agent.id", json!("payer"))],
                ),
                super::span(
                    "t1",
                    "root",
                    "",
                    10,
                    "invoke_agent planner",
                    &[("turn", json!(3))],
                ),
            ],
        );
        let (scanned, serde) = both(&line);
        assert_eq!(scanned.map(Ok), Some(serde));
    }

    #[test]
    fn a_value_with_many_fields_set_reads_alike() {
        // Invalid OTLP, but read the same way: the first field in
        // AnyValue's order counts.
        for value in [
            r#"{"doubleValue":2.5,"intValue":"7","bytesValue":"QQ=="}"#,
            r#"{"bytesValue":"QQ==","doubleValue":2.5}"#,
            r#"{"kvlistValue":{"values":[]},"arrayValue":{"values":[{"intValue":1}]}}"#,
            r#"{"boolValue":"true","stringValue":"s","intValue":1}"#,
        ] {
            let line = format!(
                r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"t","spanId":"s","attributes":[{{"key":"turn","value":{value}}},{{"key":"agent.id","value":{value}}}]}}]}}]}}]}}"#
            );
            let (scanned, serde) = both(&line);
            assert!(scanned.is_some(), "{line}");
            assert_eq!(scanned.map(Ok), Some(serde), "{line}");
        }
    }

    #[test]
    fn the_scanner_declines_what_serde_refuses() {
        for line in [
            r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"a","trace_id":"b"}]}]}]}"#,
            r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":1}]}]}]}"#,
            r#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"attributes":[{"value":{}}]}]}]}]}"#,
            r#"{"resourceSpans":null}"#,
            r#"{"resourceSpans":[]"#,
        ] {
            let (scanned, serde) = both(line);
            assert_eq!(scanned, None, "{line}");
            assert!(serde.is_err(), "{line}");
        }
    }
}
