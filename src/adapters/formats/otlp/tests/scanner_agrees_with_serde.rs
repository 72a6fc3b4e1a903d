//! The scanner's fast path reads what serde reads: generated request
//! lines of every shape, read both ways.

use super::super::scan;
use super::*;
use crate::plumbing::json_scan::LineScratch;
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
    let link = object_of(
        vec![
            either(["traceId", "trace_id"], text()),
            field("spanId", text()),
        ],
        2,
    );
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
            field(
                "links",
                mostly(proptest::collection::vec(link, 0..3).prop_map(list).boxed()),
            ),
            field("kind", junk()),
        ],
        10,
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
fn both(line: &str) -> (Option<String>, Result<String, Unreadable>) {
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

#[test]
fn attributes_read_alike_compact_or_spaced() {
    // Compact, as exporters write them, each is read in one pass; spaced
    // out, member by member. Both as serde reads them.
    for attr in [
        r#"{"key":"turn","value":{"intValue":"3"}}"#,
        r#"{"key":"turn","value":{"intValue":-3}}"#,
        r#"{"key":"agent.id","value":{"stringValue":"planner"}}"#,
        r#"{"key":"agent.id","value":{"stringValue":"caf\u00e9"}}"#,
        r#"{"key":"action.succeeded","value":{"boolValue":false}}"#,
        r#"{"key":"action.succeeded","value":{"boolValue":"true"}}"#,
        r#"{"key":"latency.llm_ms","value":{"doubleValue":12.5}}"#,
        r#"{"key":"latency.llm_ms","value":{"doubleValue":"12"}}"#,
        r#"{"key":"turn","value":{"intValue":18446744073709551616}}"#,
        r#"{"key":"turn","value":{"intValue":"7","stringValue":"x"}}"#,
        r#"{"key":"turn","value":{"intValue":null}}"#,
    ] {
        let spaced = attr.replace(',', ", ").replace("\":", "\": ");
        let read = |attr: &str| {
            let line = format!(
                r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"t","spanId":"s","attributes":[{attr}]}}]}}]}}]}}"#
            );
            let (scanned, serde) = both(&line);
            assert_eq!(scanned.clone().map(Ok), Some(serde), "{line}");
            scanned
        };
        assert_eq!(read(attr), read(&spaced), "{attr}");
    }
}
