//! The decoder and JSON writer on requests built field by field on the
//! wire, as exporters write them, including what prost must skip or merge.

use prost::encoding::{WireType, encode_key, encode_varint};
use serde_json::{Value, json};

use super::*;

fn put_bytes(field: u32, b: &[u8], out: &mut Vec<u8>) {
    encode_key(field, WireType::LengthDelimited, out);
    encode_varint(b.len() as u64, out);
    out.extend_from_slice(b);
}

fn put_uint(field: u32, n: u64, out: &mut Vec<u8>) {
    encode_key(field, WireType::Varint, out);
    encode_varint(n, out);
}

fn put_fixed64(field: u32, n: u64, out: &mut Vec<u8>) {
    encode_key(field, WireType::SixtyFourBit, out);
    out.extend_from_slice(&n.to_le_bytes());
}

fn put_fixed32(field: u32, n: u32, out: &mut Vec<u8>) {
    encode_key(field, WireType::ThirtyTwoBit, out);
    out.extend_from_slice(&n.to_le_bytes());
}

fn put_message(field: u32, build: impl FnOnce(&mut Vec<u8>), out: &mut Vec<u8>) {
    let mut inner = Vec::new();
    build(&mut inner);
    put_bytes(field, &inner, out);
}

fn decoded(body: &[u8]) -> Result<Value, DecodeError> {
    let mut out = Vec::new();
    export_request(body, &mut out)?;
    Ok(serde_json::from_slice(&out).expect("the decoder writes valid JSON"))
}

fn string_attr(k: &str, v: &str, out: &mut Vec<u8>) {
    put_message(
        9,
        |kv| {
            put_bytes(1, k.as_bytes(), kv);
            put_message(2, |av| put_bytes(1, v.as_bytes(), av), kv);
        },
        out,
    );
}

fn request() -> Vec<u8> {
    let mut out = Vec::new();
    put_message(
        1,
        |rs| {
            put_message(
                1,
                |r| {
                    put_message(
                        1,
                        |kv| {
                            put_bytes(1, b"service.name", kv);
                            put_message(2, |av| put_bytes(1, b"shop", av), kv);
                        },
                        r,
                    )
                },
                rs,
            );
            put_message(
                2,
                |ss| {
                    put_message(1, |s| put_bytes(1, b"lib", s), ss);
                    put_message(
                        2,
                        |s| {
                            put_bytes(1, &[0xab; 16], s);
                            put_bytes(2, &[0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0xff], s);
                            put_bytes(5, b"tool.call", s);
                            put_uint(6, 3, s);
                            put_fixed64(7, 1_700_000_000_123_456_789, s);
                            put_fixed64(8, 1_700_000_001_000_000_000, s);
                            string_attr("agent.id", "planner", s);
                            put_message(
                                9,
                                |kv| {
                                    put_bytes(1, b"turn", kv);
                                    put_message(2, |av| put_uint(3, (-2i64) as u64, av), kv);
                                },
                                s,
                            );
                            put_message(
                                9,
                                |kv| {
                                    put_bytes(1, b"nested", kv);
                                    put_message(
                                        2,
                                        |av| {
                                            put_message(
                                                5,
                                                |arr| {
                                                    put_message(1, |x| put_uint(2, 1, x), arr);
                                                    put_message(
                                                        1,
                                                        |x| put_fixed64(4, 2.5f64.to_bits(), x),
                                                        arr,
                                                    );
                                                    put_message(
                                                        1,
                                                        |x| put_bytes(7, b"\x00\xff", x),
                                                        arr,
                                                    );
                                                },
                                                av,
                                            )
                                        },
                                        kv,
                                    );
                                },
                                s,
                            );
                            put_message(
                                11,
                                |e| {
                                    put_fixed64(1, 5, e);
                                    put_bytes(2, b"exception", e);
                                },
                                s,
                            );
                            put_message(
                                15,
                                |st| {
                                    put_bytes(2, b"boom", st);
                                    put_uint(3, 2, st);
                                },
                                s,
                            );
                            put_fixed32(16, 1, s);
                            // An unknown field is skipped.
                            put_uint(99, 7, s);
                        },
                        ss,
                    );
                },
                rs,
            );
        },
        &mut out,
    );
    out
}

#[test]
fn a_request_becomes_otlp_json() {
    let v = decoded(&request()).unwrap();
    let expected = json!({"resourceSpans":[{
        "resource":{"attributes":[{"key":"service.name","value":{"stringValue":"shop"}}]},
        "scopeSpans":[{"scope":{"name":"lib"},"spans":[{
            "traceId":"abababababababababababababababab",
            "spanId":"01020304050607ff",
            "name":"tool.call",
            "kind":3,
            "startTimeUnixNano":"1700000000123456789",
            "endTimeUnixNano":"1700000001000000000",
            "attributes":[
                {"key":"agent.id","value":{"stringValue":"planner"}},
                {"key":"turn","value":{"intValue":"-2"}},
                {"key":"nested","value":{"arrayValue":{"values":[
                    {"boolValue":true},{"doubleValue":2.5},{"bytesValue":"AP8="}]}}}
            ],
            "events":[{"timeUnixNano":"5","name":"exception"}],
            "status":{"message":"boom","code":2},
            "flags":1
        }]}]
    }]});
    assert_eq!(v, expected);
}

#[test]
fn scattered_repeats_gather_and_the_last_of_a_oneof_wins() {
    let mut req = Vec::new();
    put_message(
        1,
        |rs| {
            put_message(
                2,
                |ss| {
                    put_message(
                        2,
                        |s| {
                            string_attr("a", "1", s);
                            put_bytes(5, b"first", s);
                            put_message(
                                9,
                                |kv| {
                                    put_bytes(1, b"b", kv);
                                    put_message(
                                        2,
                                        |av| {
                                            put_bytes(1, b"text", av);
                                            put_fixed64(4, f64::NAN.to_bits(), av);
                                        },
                                        kv,
                                    );
                                },
                                s,
                            );
                            put_bytes(5, b"second", s);
                        },
                        ss,
                    )
                },
                rs,
            )
        },
        &mut req,
    );
    let span = &decoded(&req).unwrap()["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
    assert_eq!(span["name"], "second");
    assert_eq!(
        span["attributes"],
        json!([{"key":"a","value":{"stringValue":"1"}},{"key":"b","value":{"doubleValue":"NaN"}}])
    );
}

#[test]
fn an_empty_body_is_an_empty_request() {
    assert_eq!(decoded(b"").unwrap(), json!({"resourceSpans":[]}));
}

#[test]
fn truncated_or_mistyped_input_is_an_error_not_a_panic() {
    let full = request();
    for cut in 1..full.len() {
        // Every prefix either decodes (a field boundary) or is refused.
        let _ = decoded(&full[..cut]);
    }
    assert!(decoded(&full[..full.len() - 3]).is_err());
    let mut wrong = Vec::new();
    put_uint(1, 5, &mut wrong);
    assert!(decoded(&wrong).unwrap_err().0.contains("resource_spans"));
    assert!(decoded(&[0xff; 11]).is_err());
}

#[test]
fn deep_nesting_is_refused() {
    let mut value = Vec::new();
    put_bytes(1, b"leaf", &mut value);
    for _ in 0..200 {
        let mut outer = Vec::new();
        put_message(5, |arr| put_bytes(1, &value, arr), &mut outer);
        value = outer;
    }
    let mut req = Vec::new();
    put_message(
        1,
        |rs| {
            put_message(
                2,
                |ss| {
                    put_message(
                        2,
                        |s| {
                            put_message(
                                9,
                                |kv| {
                                    put_bytes(1, b"k", kv);
                                    put_bytes(2, &value, kv);
                                },
                                s,
                            )
                        },
                        ss,
                    )
                },
                rs,
            )
        },
        &mut req,
    );
    assert!(decoded(&req).unwrap_err().0.contains("recursion limit"));
}

#[test]
fn spans_under_the_old_instrumentation_library_field_are_read() {
    let mut req = Vec::new();
    put_message(
        1,
        |rs| {
            put_message(
                1000,
                |ss| put_message(2, |s| put_bytes(5, b"old", s), ss),
                rs,
            )
        },
        &mut req,
    );
    let v = decoded(&req).unwrap();
    assert_eq!(
        v["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"],
        "old"
    );
}

#[test]
fn what_prost_encodes_reads_back_the_same() {
    let span = trace::Span {
        trace_id: vec![1; 16],
        span_id: vec![2; 8],
        name: "llm.call".into(),
        status: Some(trace::Status {
            message: String::new(),
            code: 2,
        }),
        ..Default::default()
    };
    let request = ExportTraceServiceRequest {
        resource_spans: vec![trace::ResourceSpans {
            scope_spans: vec![trace::ScopeSpans {
                spans: vec![span],
                ..Default::default()
            }],
            ..Default::default()
        }],
    };
    let v = decoded(&request.encode_to_vec()).unwrap();
    assert_eq!(
        v,
        json!({"resourceSpans":[{"scopeSpans":[{"spans":[{
            "traceId":"01010101010101010101010101010101",
            "spanId":"0202020202020202",
            "name":"llm.call",
            "status":{"code":2}
        }]}]}]})
    );
}
