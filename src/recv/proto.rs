//! OTLP protobuf to OTLP JSON: a decoder of the protobuf wire format for
//! the trace messages of opentelemetry-proto (ExportTraceServiceRequest
//! down to AnyValue), writing the JSON the OTLP spec defines: camelCase
//! names, trace and span ids as lowercase hex, 64-bit integers as decimal
//! strings, enums as integers, other bytes as base64. Unknown fields are
//! skipped, as protobuf requires.

use std::fmt::Write as _;

use base64::Engine as _;
use serde_json::{Map, Value};

/// AnyValue nesting deeper than this is refused rather than recursed into.
const MAX_DEPTH: usize = 64;

/// Why a body is not an ExportTraceServiceRequest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

type Result<T> = std::result::Result<T, DecodeError>;

fn bad(msg: impl Into<String>) -> DecodeError {
    DecodeError(msg.into())
}

/// One field's value as the wire carries it.
enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

/// Reads fields off an encoded message.
struct Fields<'a> {
    buf: &'a [u8],
}

impl<'a> Fields<'a> {
    fn next_field(&mut self) -> Result<Option<(u64, Wire<'a>)>> {
        if self.buf.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let number = key >> 3;
        if number == 0 {
            return Err(bad("field number 0"));
        }
        let value = match key & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => Wire::Fixed64(u64::from_le_bytes(self.fixed::<8>()?)),
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| bad("length too large"))?;
                if len > self.buf.len() {
                    return Err(bad("truncated message"));
                }
                let (bytes, rest) = self.buf.split_at(len);
                self.buf = rest;
                Wire::Bytes(bytes)
            }
            5 => Wire::Fixed32(u32::from_le_bytes(self.fixed::<4>()?)),
            t => return Err(bad(format!("wire type {t} of field {number}"))),
        };
        Ok(Some((number, value)))
    }

    fn varint(&mut self) -> Result<u64> {
        let mut value = 0u64;
        for (i, byte) in self.buf.iter().enumerate().take(10) {
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                self.buf = &self.buf[i + 1..];
                return Ok(value);
            }
        }
        Err(bad("bad varint"))
    }

    fn fixed<const N: usize>(&mut self) -> Result<[u8; N]> {
        let bytes = self.buf.get(..N).ok_or_else(|| bad("truncated message"))?;
        self.buf = &self.buf[N..];
        Ok(bytes.try_into().expect("N bytes"))
    }
}

/// Calls `each` for every field of `msg`.
fn for_fields<'a>(msg: &'a [u8], mut each: impl FnMut(u64, Wire<'a>) -> Result<()>) -> Result<()> {
    let mut fields = Fields { buf: msg };
    while let Some((number, value)) = fields.next_field()? {
        each(number, value)?;
    }
    Ok(())
}

// ---- typed accessors: a known field with the wrong wire type is an error ----

fn bytes<'a>(name: &str, v: Wire<'a>) -> Result<&'a [u8]> {
    match v {
        Wire::Bytes(b) => Ok(b),
        _ => Err(bad(format!("{name}: expected a length-delimited field"))),
    }
}

fn string(name: &str, v: Wire<'_>) -> Result<Value> {
    let b = bytes(name, v)?;
    std::str::from_utf8(b)
        .map(|s| Value::String(s.to_string()))
        .map_err(|_| bad(format!("{name}: not valid UTF-8")))
}

fn varint(name: &str, v: Wire<'_>) -> Result<u64> {
    match v {
        Wire::Varint(n) => Ok(n),
        _ => Err(bad(format!("{name}: expected a varint"))),
    }
}

/// uint32 and enum fields: JSON numbers.
fn number(name: &str, v: Wire<'_>) -> Result<Value> {
    // Enums are int32 on the wire; negative values arrive sign-extended.
    Ok(Value::from(varint(name, v)? as i64 as i32 as i64))
}

/// fixed64 nanosecond timestamps: decimal strings.
fn fixed64(name: &str, v: Wire<'_>) -> Result<Value> {
    match v {
        Wire::Fixed64(n) => Ok(Value::String(n.to_string())),
        _ => Err(bad(format!("{name}: expected a fixed64"))),
    }
}

fn fixed32(name: &str, v: Wire<'_>) -> Result<Value> {
    match v {
        Wire::Fixed32(n) => Ok(Value::from(n)),
        _ => Err(bad(format!("{name}: expected a fixed32"))),
    }
}

/// Trace and span ids: lowercase hex.
fn hex_id(name: &str, v: Wire<'_>) -> Result<Value> {
    let b = bytes(name, v)?;
    let mut s = String::with_capacity(b.len() * 2);
    for byte in b {
        let _ = write!(s, "{byte:02x}");
    }
    Ok(Value::String(s))
}

fn push(obj: &mut Map<String, Value>, key: &str, item: Value) {
    match obj.entry(key).or_insert_with(|| Value::Array(Vec::new())) {
        Value::Array(items) => items.push(item),
        slot => *slot = Value::Array(vec![item]),
    }
}

// ---- the messages ----

/// Decodes an ExportTraceServiceRequest into its OTLP JSON form.
pub fn export_request(msg: &[u8]) -> Result<Value> {
    let mut obj = Map::new();
    // The key is there even for an empty request, as the Collector writes it.
    obj.insert("resourceSpans".into(), Value::Array(Vec::new()));
    for_fields(msg, |n, v| {
        if n == 1 {
            push(
                &mut obj,
                "resourceSpans",
                resource_spans(bytes("resourceSpans", v)?)?,
            );
        }
        Ok(())
    })?;
    Ok(Value::Object(obj))
}

fn resource_spans(msg: &[u8]) -> Result<Value> {
    let mut obj = Map::new();
    for_fields(msg, |n, v| {
        match n {
            1 => {
                obj.insert("resource".into(), resource(bytes("resource", v)?)?);
            }
            // 1000: InstrumentationLibrarySpans, the same shape under its old name.
            2 | 1000 => push(
                &mut obj,
                "scopeSpans",
                scope_spans(bytes("scopeSpans", v)?)?,
            ),
            3 => {
                obj.insert("schemaUrl".into(), string("schemaUrl", v)?);
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(Value::Object(obj))
}

fn resource(msg: &[u8]) -> Result<Value> {
    let mut obj = Map::new();
    for_fields(msg, |n, v| {
        match n {
            1 => push(
                &mut obj,
                "attributes",
                key_value(bytes("attributes", v)?, 0)?,
            ),
            2 => {
                obj.insert(
                    "droppedAttributesCount".into(),
                    number("droppedAttributesCount", v)?,
                );
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(Value::Object(obj))
}

fn scope_spans(msg: &[u8]) -> Result<Value> {
    let mut obj = Map::new();
    for_fields(msg, |n, v| {
        match n {
            1 => {
                obj.insert("scope".into(), scope(bytes("scope", v)?)?);
            }
            2 => push(&mut obj, "spans", span(bytes("spans", v)?)?),
            3 => {
                obj.insert("schemaUrl".into(), string("schemaUrl", v)?);
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(Value::Object(obj))
}

fn scope(msg: &[u8]) -> Result<Value> {
    let mut obj = Map::new();
    for_fields(msg, |n, v| {
        match n {
            1 => {
                obj.insert("name".into(), string("name", v)?);
            }
            2 => {
                obj.insert("version".into(), string("version", v)?);
            }
            3 => push(
                &mut obj,
                "attributes",
                key_value(bytes("attributes", v)?, 0)?,
            ),
            4 => {
                obj.insert(
                    "droppedAttributesCount".into(),
                    number("droppedAttributesCount", v)?,
                );
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(Value::Object(obj))
}

fn span(msg: &[u8]) -> Result<Value> {
    let mut obj = Map::new();
    for_fields(msg, |n, v| {
        let (key, value) = match n {
            1 => ("traceId", hex_id("traceId", v)?),
            2 => ("spanId", hex_id("spanId", v)?),
            3 => ("traceState", string("traceState", v)?),
            4 => ("parentSpanId", hex_id("parentSpanId", v)?),
            5 => ("name", string("name", v)?),
            6 => ("kind", number("kind", v)?),
            7 => ("startTimeUnixNano", fixed64("startTimeUnixNano", v)?),
            8 => ("endTimeUnixNano", fixed64("endTimeUnixNano", v)?),
            9 => {
                push(
                    &mut obj,
                    "attributes",
                    key_value(bytes("attributes", v)?, 0)?,
                );
                return Ok(());
            }
            10 => (
                "droppedAttributesCount",
                number("droppedAttributesCount", v)?,
            ),
            11 => {
                push(&mut obj, "events", event(bytes("events", v)?)?);
                return Ok(());
            }
            12 => ("droppedEventsCount", number("droppedEventsCount", v)?),
            13 => {
                push(&mut obj, "links", link(bytes("links", v)?)?);
                return Ok(());
            }
            14 => ("droppedLinksCount", number("droppedLinksCount", v)?),
            15 => ("status", status(bytes("status", v)?)?),
            16 => ("flags", fixed32("flags", v)?),
            _ => return Ok(()),
        };
        obj.insert(key.into(), value);
        Ok(())
    })?;
    Ok(Value::Object(obj))
}

fn event(msg: &[u8]) -> Result<Value> {
    let mut obj = Map::new();
    for_fields(msg, |n, v| {
        match n {
            1 => {
                obj.insert("timeUnixNano".into(), fixed64("timeUnixNano", v)?);
            }
            2 => {
                obj.insert("name".into(), string("name", v)?);
            }
            3 => push(
                &mut obj,
                "attributes",
                key_value(bytes("attributes", v)?, 0)?,
            ),
            4 => {
                obj.insert(
                    "droppedAttributesCount".into(),
                    number("droppedAttributesCount", v)?,
                );
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(Value::Object(obj))
}

fn link(msg: &[u8]) -> Result<Value> {
    let mut obj = Map::new();
    for_fields(msg, |n, v| {
        let (key, value) = match n {
            1 => ("traceId", hex_id("traceId", v)?),
            2 => ("spanId", hex_id("spanId", v)?),
            3 => ("traceState", string("traceState", v)?),
            4 => {
                push(
                    &mut obj,
                    "attributes",
                    key_value(bytes("attributes", v)?, 0)?,
                );
                return Ok(());
            }
            5 => (
                "droppedAttributesCount",
                number("droppedAttributesCount", v)?,
            ),
            6 => ("flags", fixed32("flags", v)?),
            _ => return Ok(()),
        };
        obj.insert(key.into(), value);
        Ok(())
    })?;
    Ok(Value::Object(obj))
}

fn status(msg: &[u8]) -> Result<Value> {
    let mut obj = Map::new();
    for_fields(msg, |n, v| {
        match n {
            2 => {
                obj.insert("message".into(), string("message", v)?);
            }
            3 => {
                obj.insert("code".into(), number("code", v)?);
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(Value::Object(obj))
}

fn key_value(msg: &[u8], depth: usize) -> Result<Value> {
    let mut obj = Map::new();
    for_fields(msg, |n, v| {
        match n {
            1 => {
                obj.insert("key".into(), string("key", v)?);
            }
            2 => {
                obj.insert("value".into(), any_value(bytes("value", v)?, depth + 1)?);
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok(Value::Object(obj))
}

fn any_value(msg: &[u8], depth: usize) -> Result<Value> {
    if depth > MAX_DEPTH {
        return Err(bad(format!(
            "attribute values nested deeper than {MAX_DEPTH}"
        )));
    }
    let mut obj = Map::new();
    for_fields(msg, |n, v| {
        let (key, value) = match n {
            1 => ("stringValue", string("stringValue", v)?),
            2 => ("boolValue", Value::Bool(varint("boolValue", v)? != 0)),
            3 => (
                "intValue",
                Value::String((varint("intValue", v)? as i64).to_string()),
            ),
            4 => ("doubleValue", double(v)?),
            5 => (
                "arrayValue",
                values_list(bytes("arrayValue", v)?, depth, false)?,
            ),
            6 => (
                "kvlistValue",
                values_list(bytes("kvlistValue", v)?, depth, true)?,
            ),
            7 => (
                "bytesValue",
                Value::String(
                    base64::engine::general_purpose::STANDARD.encode(bytes("bytesValue", v)?),
                ),
            ),
            _ => return Ok(()),
        };
        // A oneof: the last value on the wire wins.
        obj.clear();
        obj.insert(key.into(), value);
        Ok(())
    })?;
    Ok(Value::Object(obj))
}

/// ArrayValue (`values` of AnyValue) or KeyValueList (`values` of KeyValue).
fn values_list(msg: &[u8], depth: usize, key_values: bool) -> Result<Value> {
    let mut obj = Map::new();
    obj.insert("values".into(), Value::Array(Vec::new()));
    for_fields(msg, |n, v| {
        if n == 1 {
            let item = bytes("values", v)?;
            let item = if key_values {
                key_value(item, depth + 1)?
            } else {
                any_value(item, depth + 1)?
            };
            push(&mut obj, "values", item);
        }
        Ok(())
    })?;
    Ok(Value::Object(obj))
}

/// A double; NaN and the infinities as proto3 JSON spells them.
fn double(v: Wire<'_>) -> Result<Value> {
    let Wire::Fixed64(bits) = v else {
        return Err(bad("doubleValue: expected a fixed64"));
    };
    let x = f64::from_bits(bits);
    Ok(match serde_json::Number::from_f64(x) {
        Some(n) => Value::Number(n),
        None if x.is_nan() => Value::String("NaN".into()),
        None if x > 0.0 => Value::String("Infinity".into()),
        None => Value::String("-Infinity".into()),
    })
}

/// The writing side of the wire format, as an exporter encodes a request:
/// for the tests and for load generators that feed triage-recv.
pub mod encode {
    pub fn put_varint(mut n: u64, out: &mut Vec<u8>) {
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }

    fn put_key(field: u64, wire: u64, out: &mut Vec<u8>) {
        put_varint(field << 3 | wire, out);
    }

    /// A length-delimited field: bytes, a string or an encoded message.
    pub fn put_bytes(field: u64, b: &[u8], out: &mut Vec<u8>) {
        put_key(field, 2, out);
        put_varint(b.len() as u64, out);
        out.extend_from_slice(b);
    }

    /// A varint field: integers, enums and bools.
    pub fn put_uint(field: u64, n: u64, out: &mut Vec<u8>) {
        put_key(field, 0, out);
        put_varint(n, out);
    }

    pub fn put_fixed64(field: u64, n: u64, out: &mut Vec<u8>) {
        put_key(field, 1, out);
        out.extend_from_slice(&n.to_le_bytes());
    }

    pub fn put_fixed32(field: u64, n: u32, out: &mut Vec<u8>) {
        put_key(field, 5, out);
        out.extend_from_slice(&n.to_le_bytes());
    }

    /// A message field whose content `build` writes.
    pub fn put_message(field: u64, build: impl FnOnce(&mut Vec<u8>), out: &mut Vec<u8>) {
        let mut inner = Vec::new();
        build(&mut inner);
        put_bytes(field, &inner, out);
    }
}

#[cfg(test)]
mod tests {
    use super::encode::*;
    use super::*;
    use serde_json::json;

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
        let v = export_request(&request()).unwrap();
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
    fn an_empty_body_is_an_empty_request() {
        assert_eq!(export_request(b"").unwrap(), json!({"resourceSpans":[]}));
    }

    #[test]
    fn truncated_or_mistyped_input_is_an_error_not_a_panic() {
        let full = request();
        for cut in 1..full.len() {
            // Every prefix either decodes (a field boundary) or is refused.
            let _ = export_request(&full[..cut]);
        }
        assert!(export_request(&full[..full.len() - 3]).is_err());
        let mut wrong = Vec::new();
        put_uint(1, 5, &mut wrong);
        assert!(
            export_request(&wrong)
                .unwrap_err()
                .0
                .contains("resourceSpans")
        );
        assert!(export_request(&[0xff; 11]).is_err());
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
        assert!(export_request(&req).unwrap_err().0.contains("nested"));
    }
}
