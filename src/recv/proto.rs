//! OTLP protobuf to OTLP JSON: a decoder of the protobuf wire format for
//! the trace messages of opentelemetry-proto (ExportTraceServiceRequest
//! down to AnyValue), writing the JSON the OTLP spec defines: camelCase
//! names, trace and span ids as lowercase hex, 64-bit integers as decimal
//! strings, enums as integers, other bytes as base64. Unknown fields are
//! skipped, as protobuf requires.

use base64::Engine as _;

/// Messages nested deeper than this (attribute values in values…) are
/// refused rather than recursed into.
const MAX_DEPTH: usize = 64;

/// Why a body is not an ExportTraceServiceRequest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DecodeError(pub String);

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
#[derive(Clone, Copy)]
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

// ---- the messages, as tables: field number, JSON name, how to read it ----

/// How a field's value is read and written as JSON.
#[derive(Clone, Copy)]
enum Kind {
    /// string: a JSON string (UTF-8 checked).
    Str,
    /// Trace and span ids: lowercase hex.
    Hex,
    /// Other bytes: base64.
    Base64,
    /// uint32 and enums: JSON numbers.
    Number,
    Bool,
    /// int64: a decimal string.
    Int64,
    /// fixed64 (nanosecond timestamps): a decimal string.
    Fixed64,
    Fixed32,
    Double,
    Message(&'static Message),
    /// A repeated message field: a JSON array.
    Repeated(&'static Message),
}

/// A message's known fields. In a oneof only the last field set counts.
struct Message {
    fields: &'static [(u64, &'static str, Kind)],
    oneof: bool,
}

const fn message(fields: &'static [(u64, &'static str, Kind)]) -> Message {
    Message {
        fields,
        oneof: false,
    }
}

use Kind::*;

static REQUEST: Message = message(&[(1, "resourceSpans", Repeated(&RESOURCE_SPANS))]);
static RESOURCE_SPANS: Message = message(&[
    (1, "resource", Message(&RESOURCE)),
    (2, "scopeSpans", Repeated(&SCOPE_SPANS)),
    (3, "schemaUrl", Str),
    // InstrumentationLibrarySpans: the same shape under its old name.
    (1000, "scopeSpans", Repeated(&SCOPE_SPANS)),
]);
static RESOURCE: Message = message(&[
    (1, "attributes", Repeated(&KEY_VALUE)),
    (2, "droppedAttributesCount", Number),
]);
static SCOPE_SPANS: Message = message(&[
    (1, "scope", Message(&SCOPE)),
    (2, "spans", Repeated(&SPAN)),
    (3, "schemaUrl", Str),
]);
static SCOPE: Message = message(&[
    (1, "name", Str),
    (2, "version", Str),
    (3, "attributes", Repeated(&KEY_VALUE)),
    (4, "droppedAttributesCount", Number),
]);
static SPAN: Message = message(&[
    (1, "traceId", Hex),
    (2, "spanId", Hex),
    (3, "traceState", Str),
    (4, "parentSpanId", Hex),
    (5, "name", Str),
    (6, "kind", Number),
    (7, "startTimeUnixNano", Fixed64),
    (8, "endTimeUnixNano", Fixed64),
    (9, "attributes", Repeated(&KEY_VALUE)),
    (10, "droppedAttributesCount", Number),
    (11, "events", Repeated(&EVENT)),
    (12, "droppedEventsCount", Number),
    (13, "links", Repeated(&LINK)),
    (14, "droppedLinksCount", Number),
    (15, "status", Message(&STATUS)),
    (16, "flags", Fixed32),
]);
static EVENT: Message = message(&[
    (1, "timeUnixNano", Fixed64),
    (2, "name", Str),
    (3, "attributes", Repeated(&KEY_VALUE)),
    (4, "droppedAttributesCount", Number),
]);
static LINK: Message = message(&[
    (1, "traceId", Hex),
    (2, "spanId", Hex),
    (3, "traceState", Str),
    (4, "attributes", Repeated(&KEY_VALUE)),
    (5, "droppedAttributesCount", Number),
    (6, "flags", Fixed32),
]);
static STATUS: Message = message(&[(2, "message", Str), (3, "code", Number)]);
static KEY_VALUE: Message = message(&[(1, "key", Str), (2, "value", Message(&ANY_VALUE))]);
static ANY_VALUE: Message = Message {
    fields: &[
        (1, "stringValue", Str),
        (2, "boolValue", Bool),
        (3, "intValue", Int64),
        (4, "doubleValue", Double),
        (5, "arrayValue", Message(&ARRAY_VALUE)),
        (6, "kvlistValue", Message(&KEY_VALUE_LIST)),
        (7, "bytesValue", Base64),
    ],
    oneof: true,
};
static ARRAY_VALUE: Message = message(&[(1, "values", Repeated(&ANY_VALUE))]);
static KEY_VALUE_LIST: Message = message(&[(1, "values", Repeated(&KEY_VALUE))]);

/// Decodes an ExportTraceServiceRequest and writes its OTLP JSON form to
/// `out` (one line, no newline). Returns how many ResourceSpans it holds.
pub(crate) fn export_request(msg: &[u8], out: &mut Vec<u8>) -> Result<usize> {
    let fields = fields_of(msg)?;
    let resource_spans = fields.iter().filter(|(n, _)| *n == 1).count();
    // The key is there even for an empty request, as the Collector writes it.
    if resource_spans == 0 {
        out.extend_from_slice(br#"{"resourceSpans":[]}"#);
        return Ok(0);
    }
    write_message(&fields, &REQUEST, 0, out)?;
    Ok(resource_spans)
}

/// Every field of `msg`, in wire order.
fn fields_of(msg: &[u8]) -> Result<Vec<(u64, Wire<'_>)>> {
    let mut fields = Fields { buf: msg };
    let mut all = Vec::new();
    while let Some(field) = fields.next_field()? {
        all.push(field);
    }
    Ok(all)
}

/// Writes a message as a JSON object, its known fields in the schema's
/// order: a repeated field's values gathered into one array wherever they
/// were on the wire, the last value of a singular field (and of a oneof).
fn write_message(
    fields: &[(u64, Wire<'_>)],
    schema: &Message,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    if depth > MAX_DEPTH {
        return Err(bad(format!("messages nested deeper than {MAX_DEPTH}")));
    }
    let last_of_oneof = schema
        .oneof
        .then(|| {
            fields
                .iter()
                .rev()
                .find(|(n, _)| schema.fields.iter().any(|(k, _, _)| k == n))
        })
        .flatten()
        .map(|(n, _)| *n);
    out.push(b'{');
    let mut first = true;
    for &(number, name, kind) in schema.fields {
        if last_of_oneof.is_some_and(|n| n != number) {
            continue;
        }
        let mut values = fields
            .iter()
            .filter(|(n, _)| *n == number)
            .map(|(_, w)| w)
            .peekable();
        let Some(&last_value) = values.peek() else {
            continue;
        };
        if !first {
            out.push(b',');
        }
        first = false;
        write_str(name, out);
        out.push(b':');
        if let Repeated(_) = kind {
            out.push(b'[');
            for (i, w) in values.enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(name, kind, w, depth, out)?;
            }
            out.push(b']');
        } else {
            let last = values.last().unwrap_or(last_value);
            write_value(name, kind, last, depth, out)?;
        }
    }
    out.push(b'}');
    Ok(())
}

fn write_value(
    name: &str,
    kind: Kind,
    wire: &Wire<'_>,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<()> {
    let mistyped = |expected: &str| bad(format!("{name}: expected {expected}"));
    match (kind, *wire) {
        (Str, Wire::Bytes(b)) => {
            let text =
                std::str::from_utf8(b).map_err(|_| bad(format!("{name}: not valid UTF-8")))?;
            write_str(text, out);
        }
        (Hex, Wire::Bytes(b)) => {
            const DIGITS: &[u8; 16] = b"0123456789abcdef";
            out.push(b'"');
            for byte in b {
                out.push(DIGITS[usize::from(byte >> 4)]);
                out.push(DIGITS[usize::from(byte & 15)]);
            }
            out.push(b'"');
        }
        (Base64, Wire::Bytes(b)) => {
            write_str(&base64::engine::general_purpose::STANDARD.encode(b), out);
        }
        (Message(m) | Repeated(m), Wire::Bytes(b)) => {
            write_message(&fields_of(b)?, m, depth + 1, out)?
        }
        // Enums are int32 on the wire; negative values arrive sign-extended.
        (Number, Wire::Varint(n)) => write_int(i64::from(n as i64 as i32), false, out),
        (Bool, Wire::Varint(n)) => out.extend_from_slice(if n != 0 { b"true" } else { b"false" }),
        (Int64, Wire::Varint(n)) => write_int(n as i64, true, out),
        (Fixed64, Wire::Fixed64(n)) => {
            out.push(b'"');
            out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
            out.push(b'"');
        }
        (Fixed32, Wire::Fixed32(n)) => write_int(i64::from(n), false, out),
        (Double, Wire::Fixed64(bits)) => write_double(f64::from_bits(bits), out),
        (Str | Hex | Base64 | Message(_) | Repeated(_), _) => {
            return Err(mistyped("a length-delimited field"));
        }
        (Number | Bool | Int64, _) => return Err(mistyped("a varint")),
        (Fixed64 | Double, _) => return Err(mistyped("a fixed64")),
        (Fixed32, _) => return Err(mistyped("a fixed32")),
    }
    Ok(())
}

fn write_str(s: &str, out: &mut Vec<u8>) {
    // Writing a str into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

fn write_int(n: i64, quoted: bool, out: &mut Vec<u8>) {
    if quoted {
        out.push(b'"');
    }
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    if quoted {
        out.push(b'"');
    }
}

/// A double; NaN and the infinities as proto3 JSON spells them.
fn write_double(x: f64, out: &mut Vec<u8>) {
    if x.is_finite() {
        let _ = serde_json::to_writer(&mut *out, &x);
    } else if x.is_nan() {
        out.extend_from_slice(b"\"NaN\"");
    } else if x > 0.0 {
        out.extend_from_slice(b"\"Infinity\"");
    } else {
        out.extend_from_slice(b"\"-Infinity\"");
    }
}

/// The writing side of the wire format, as an exporter encodes a request:
/// for the tests and for load generators that feed triage-recv.
pub mod encode {
    pub(crate) fn put_varint(mut n: u64, out: &mut Vec<u8>) {
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

    #[cfg(test)]
    pub(crate) fn put_fixed32(field: u64, n: u32, out: &mut Vec<u8>) {
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
    use serde_json::{Value, json};

    /// The JSON a body decodes to, or the decoder's error.
    fn decoded(body: &[u8]) -> Result<Value> {
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
        assert!(decoded(&wrong).unwrap_err().0.contains("resourceSpans"));
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
        assert!(decoded(&req).unwrap_err().0.contains("nested"));
    }
}
