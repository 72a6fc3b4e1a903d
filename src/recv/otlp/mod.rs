//! OTLP protobuf to OTLP JSON: prost decodes an ExportTraceServiceRequest
//! into the types generated from OpenTelemetry's protos (`generated.rs`),
//! and this writes the JSON the OTLP spec defines: camelCase names, trace
//! and span ids as lowercase hex, 64-bit integers as decimal strings,
//! enums as integers, other bytes as base64, default values left out.

use base64::Engine as _;
use prost::Message as _;

#[allow(clippy::all, clippy::pedantic, missing_docs, unreachable_pub, dead_code)]
#[rustfmt::skip]
mod generated;

pub use generated::opentelemetry::proto::collector::trace::v1::ExportTraceServiceRequest;
pub use generated::opentelemetry::proto::common::v1 as common;
pub use generated::opentelemetry::proto::resource::v1 as resource;
pub use generated::opentelemetry::proto::trace::v1 as trace;

use common::{AnyValue, InstrumentationScope, KeyValue, any_value};

/// Why a body is not an ExportTraceServiceRequest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DecodeError(pub String);

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A request as exporters before OTLP 0.19 wrote it: spans under
/// `instrumentation_library_spans` (field 1000, now reserved), which has
/// the shape of today's ScopeSpans.
#[derive(Clone, PartialEq, prost::Message)]
struct LegacyRequest {
    #[prost(message, repeated, tag = "1")]
    resource_spans: Vec<LegacyResourceSpans>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct LegacyResourceSpans {
    #[prost(message, repeated, tag = "1000")]
    instrumentation_library_spans: Vec<trace::ScopeSpans>,
}

/// Decodes an ExportTraceServiceRequest and writes its OTLP JSON form to
/// `out` (one line, no newline). Returns how many ResourceSpans it holds.
pub(crate) fn export_request(msg: &[u8], out: &mut Vec<u8>) -> Result<usize, DecodeError> {
    let mut request =
        ExportTraceServiceRequest::decode(msg).map_err(|e| DecodeError(e.to_string()))?;
    if request
        .resource_spans
        .iter()
        .any(|rs| rs.scope_spans.is_empty())
    {
        let legacy = LegacyRequest::decode(msg).map_err(|e| DecodeError(e.to_string()))?;
        for (rs, old) in request.resource_spans.iter_mut().zip(legacy.resource_spans) {
            rs.scope_spans.extend(old.instrumentation_library_spans);
        }
    }
    let mut w = JsonWriter { out };
    w.request(&request);
    Ok(request.resource_spans.len())
}

/// Writes the generated types as OTLP JSON objects, leaving out fields
/// at their default value as proto3's JSON mapping does.
struct JsonWriter<'a> {
    out: &'a mut Vec<u8>,
}

impl JsonWriter<'_> {
    fn request(&mut self, r: &ExportTraceServiceRequest) {
        // The key is there even for an empty request, as the Collector writes it.
        self.raw("{\"resourceSpans\":");
        self.list(&r.resource_spans, |w, rs| {
            let mut o = w.object();
            if let Some(res) = &rs.resource {
                o.key("resource");
                let mut ro = o.w.object();
                ro.attributes(&res.attributes);
                ro.number(
                    "droppedAttributesCount",
                    res.dropped_attributes_count.into(),
                );
                ro.end();
            }
            o.list("scopeSpans", &rs.scope_spans, |w, ss| {
                let mut o = w.object();
                if let Some(scope) = &ss.scope {
                    o.key("scope");
                    o.w.scope(scope);
                }
                o.list("spans", &ss.spans, JsonWriter::span);
                o.string("schemaUrl", &ss.schema_url);
                o.end();
            });
            o.string("schemaUrl", &rs.schema_url);
            o.end();
        });
        self.raw("}");
    }

    fn scope(&mut self, s: &InstrumentationScope) {
        let mut o = self.object();
        o.string("name", &s.name);
        o.string("version", &s.version);
        o.attributes(&s.attributes);
        o.number("droppedAttributesCount", s.dropped_attributes_count.into());
        o.end();
    }

    fn span(&mut self, s: &trace::Span) {
        let mut o = self.object();
        o.hex("traceId", &s.trace_id);
        o.hex("spanId", &s.span_id);
        o.string("traceState", &s.trace_state);
        o.hex("parentSpanId", &s.parent_span_id);
        o.number("flags", s.flags.into());
        o.string("name", &s.name);
        o.number("kind", s.kind.into());
        o.quoted("startTimeUnixNano", s.start_time_unix_nano);
        o.quoted("endTimeUnixNano", s.end_time_unix_nano);
        o.attributes(&s.attributes);
        o.number("droppedAttributesCount", s.dropped_attributes_count.into());
        o.list("events", &s.events, |w, e| {
            let mut o = w.object();
            o.quoted("timeUnixNano", e.time_unix_nano);
            o.string("name", &e.name);
            o.attributes(&e.attributes);
            o.number("droppedAttributesCount", e.dropped_attributes_count.into());
            o.end();
        });
        o.number("droppedEventsCount", s.dropped_events_count.into());
        o.list("links", &s.links, |w, l| {
            let mut o = w.object();
            o.hex("traceId", &l.trace_id);
            o.hex("spanId", &l.span_id);
            o.string("traceState", &l.trace_state);
            o.attributes(&l.attributes);
            o.number("droppedAttributesCount", l.dropped_attributes_count.into());
            o.number("flags", l.flags.into());
            o.end();
        });
        o.number("droppedLinksCount", s.dropped_links_count.into());
        if let Some(status) = &s.status {
            o.key("status");
            let mut so = o.w.object();
            so.string("message", &status.message);
            so.number("code", status.code.into());
            so.end();
        }
        o.end();
    }

    fn key_value(&mut self, kv: &KeyValue) {
        let mut o = self.object();
        o.key("key");
        o.w.str(&kv.key);
        if let Some(v) = &kv.value {
            o.key("value");
            o.w.any_value(v);
        }
        o.end();
    }

    fn any_value(&mut self, v: &AnyValue) {
        use any_value::Value;
        let mut o = self.object();
        match &v.value {
            Some(Value::StringValue(s)) => {
                o.key("stringValue");
                o.w.str(s);
            }
            Some(Value::BoolValue(b)) => {
                o.key("boolValue");
                o.w.raw(if *b { "true" } else { "false" });
            }
            Some(Value::IntValue(n)) => {
                o.key("intValue");
                o.w.raw("\"");
                o.w.raw(itoa::Buffer::new().format(*n));
                o.w.raw("\"");
            }
            Some(Value::DoubleValue(x)) => {
                o.key("doubleValue");
                o.w.double(*x);
            }
            Some(Value::ArrayValue(a)) => {
                o.key("arrayValue");
                let mut ao = o.w.object();
                ao.list("values", &a.values, JsonWriter::any_value);
                ao.end();
            }
            Some(Value::KvlistValue(kvs)) => {
                o.key("kvlistValue");
                let mut ko = o.w.object();
                ko.list("values", &kvs.values, JsonWriter::key_value);
                ko.end();
            }
            Some(Value::BytesValue(b)) => {
                o.key("bytesValue");
                o.w.str(&base64::engine::general_purpose::STANDARD.encode(b));
            }
            // An index into a profile's string table means nothing in a
            // trace; the spec asks for the value to be read as empty.
            Some(Value::StringValueStrindex(_)) | None => {}
        }
        o.end();
    }

    fn raw(&mut self, s: &str) {
        self.out.extend_from_slice(s.as_bytes());
    }

    fn str(&mut self, s: &str) {
        // Writing a str into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *self.out, s);
    }

    /// A double; NaN and the infinities as proto3 JSON spells them.
    fn double(&mut self, x: f64) {
        if x.is_finite() {
            let _ = serde_json::to_writer(&mut *self.out, &x);
        } else if x.is_nan() {
            self.raw("\"NaN\"");
        } else if x > 0.0 {
            self.raw("\"Infinity\"");
        } else {
            self.raw("\"-Infinity\"");
        }
    }

    fn list<T>(&mut self, items: &[T], mut each: impl FnMut(&mut Self, &T)) {
        self.raw("[");
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.raw(",");
            }
            each(self, item);
        }
        self.raw("]");
    }

    fn object(&mut self) -> Object<'_> {
        self.raw("{");
        Object {
            w: JsonWriter {
                out: &mut *self.out,
            },
            first: true,
        }
    }
}

/// An open JSON object: its fields, each left out at its default value.
struct Object<'o> {
    w: JsonWriter<'o>,
    first: bool,
}

impl<'o> Object<'o> {
    fn key(&mut self, name: &str) {
        if !self.first {
            self.w.raw(",");
        }
        self.first = false;
        self.w.str(name);
        self.w.raw(":");
    }

    fn string(&mut self, name: &str, value: &str) {
        if !value.is_empty() {
            self.key(name);
            self.w.str(value);
        }
    }

    fn hex(&mut self, name: &str, bytes: &[u8]) {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        if bytes.is_empty() {
            return;
        }
        self.key(name);
        self.w.out.push(b'"');
        for b in bytes {
            self.w.out.push(DIGITS[usize::from(b >> 4)]);
            self.w.out.push(DIGITS[usize::from(b & 15)]);
        }
        self.w.out.push(b'"');
    }

    /// uint32, fixed32 and enums: a JSON number.
    fn number(&mut self, name: &str, n: i64) {
        if n != 0 {
            self.key(name);
            self.w.raw(itoa::Buffer::new().format(n));
        }
    }

    /// fixed64 (nanosecond times): a decimal string.
    fn quoted(&mut self, name: &str, n: u64) {
        if n != 0 {
            self.key(name);
            self.w.raw("\"");
            self.w.raw(itoa::Buffer::new().format(n));
            self.w.raw("\"");
        }
    }

    fn attributes(&mut self, kvs: &[KeyValue]) {
        self.list("attributes", kvs, JsonWriter::key_value);
    }

    fn list<T>(&mut self, name: &str, items: &[T], each: impl FnMut(&mut JsonWriter<'o>, &T)) {
        if !items.is_empty() {
            self.key(name);
            self.w.list(items, each);
        }
    }

    fn end(mut self) {
        self.w.raw("}");
    }
}

#[cfg(test)]
mod tests;
