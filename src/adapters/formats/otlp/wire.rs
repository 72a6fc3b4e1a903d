//! The OTLP/JSON wire shapes as serde reads them (camelCase as the spec
//! writes them, snake_case too), and their attributes as the span model
//! reads them.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::adapters::read::span_events::{AttrRef, AttrSource, SpanEvents};
use crate::adapters::read::spans::StatusCode;
use crate::adapters::read::{span_events, spans};

// Texts borrow from the request where they hold no escapes: a request's
// keys and values were each an allocation, the largest cost of reading it.

#[derive(Deserialize)]
pub(super) struct ExportRequest<'a> {
    #[serde(rename = "resourceSpans", alias = "resource_spans", default, borrow)]
    pub(super) resource_spans: Option<Vec<ResourceSpans<'a>>>,
}

#[derive(Deserialize)]
pub(super) struct ResourceSpans<'a> {
    #[serde(default, borrow)]
    pub(super) resource: Option<Resource<'a>>,
    #[serde(
        rename = "scopeSpans",
        alias = "scope_spans",
        alias = "instrumentationLibrarySpans",
        alias = "instrumentation_library_spans",
        default,
        borrow
    )]
    pub(super) scope_spans: Option<Vec<ScopeSpans<'a>>>,
}

#[derive(Deserialize)]
pub(super) struct Resource<'a> {
    #[serde(default, borrow)]
    pub(super) attributes: Option<Vec<KeyValue<'a>>>,
}

#[derive(Deserialize)]
pub(super) struct ScopeSpans<'a> {
    #[serde(default, borrow)]
    pub(super) spans: Option<Vec<WireSpan<'a>>>,
}

#[derive(Deserialize)]
pub(super) struct WireSpan<'a> {
    #[serde(rename = "traceId", alias = "trace_id", default, borrow)]
    pub(super) trace_id: Option<Cow<'a, str>>,
    #[serde(rename = "spanId", alias = "span_id", default, borrow)]
    pub(super) span_id: Option<Cow<'a, str>>,
    #[serde(rename = "parentSpanId", alias = "parent_span_id", default, borrow)]
    pub(super) parent_span_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) name: Option<Cow<'a, str>>,
    #[serde(
        rename = "startTimeUnixNano",
        alias = "start_time_unix_nano",
        default,
        borrow
    )]
    pub(super) start: Option<Scalar<'a>>,
    #[serde(
        rename = "endTimeUnixNano",
        alias = "end_time_unix_nano",
        default,
        borrow
    )]
    pub(super) end: Option<Scalar<'a>>,
    #[serde(default, borrow)]
    pub(super) attributes: Option<Vec<KeyValue<'a>>>,
    #[serde(default, borrow)]
    pub(super) events: Option<Vec<WireEvent<'a>>>,
    #[serde(default, borrow)]
    pub(super) status: Option<WireStatus<'a>>,
    #[serde(default, borrow)]
    pub(super) links: Option<Vec<WireLink<'a>>>,
}

/// A span's link to a span of another trace: only its trace is read.
#[derive(Deserialize)]
pub(super) struct WireLink<'a> {
    #[serde(rename = "traceId", alias = "trace_id", default, borrow)]
    pub(super) trace_id: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
pub(super) struct WireEvent<'a> {
    #[serde(default, borrow)]
    pub(super) name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) attributes: Option<Vec<KeyValue<'a>>>,
}

#[derive(Deserialize)]
pub(super) struct WireStatus<'a> {
    #[serde(default, borrow)]
    pub(super) code: Option<Scalar<'a>>,
    #[serde(default)]
    pub(super) message: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct KeyValue<'a> {
    #[serde(borrow)]
    pub(super) key: Cow<'a, str>,
    #[serde(default, borrow)]
    pub(super) value: Option<AnyValue<'a>>,
}

/// OTLP's AnyValue: exactly one of its fields is set.
#[derive(Deserialize, Default)]
pub(super) struct AnyValue<'a> {
    #[serde(rename = "stringValue", alias = "string_value", default, borrow)]
    pub(super) string: Option<Cow<'a, str>>,
    #[serde(rename = "boolValue", alias = "bool_value", default, borrow)]
    pub(super) boolean: Option<Scalar<'a>>,
    #[serde(rename = "intValue", alias = "int_value", default, borrow)]
    pub(super) int: Option<Scalar<'a>>,
    #[serde(rename = "doubleValue", alias = "double_value", default, borrow)]
    pub(super) double: Option<Scalar<'a>>,
    #[serde(rename = "arrayValue", alias = "array_value", default, borrow)]
    pub(super) array: Option<ValueList<'a>>,
    #[serde(rename = "kvlistValue", alias = "kvlist_value", default, borrow)]
    pub(super) kvlist: Option<KeyValueList<'a>>,
    #[serde(rename = "bytesValue", alias = "bytes_value", default, borrow)]
    pub(super) bytes: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
pub(super) struct ValueList<'a> {
    #[serde(default, borrow)]
    pub(super) values: Option<Vec<AnyValue<'a>>>,
}

#[derive(Deserialize)]
pub(super) struct KeyValueList<'a> {
    #[serde(default, borrow)]
    pub(super) values: Option<Vec<KeyValue<'a>>>,
}

/// A JSON scalar as a request writes numbers and flags: as themselves or
/// as text (int64s are text in OTLP/JSON). Anything else is kept as JSON.
pub(super) enum Scalar<'a> {
    Text(Cow<'a, str>),
    Json(Value),
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor(std::marker::PhantomData))
    }
}

struct ScalarVisitor<'a>(std::marker::PhantomData<&'a ()>);

impl<'de: 'a, 'a> serde::de::Visitor<'de> for ScalarVisitor<'a> {
    type Value = Scalar<'a>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Text(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Text(Cow::Owned(v.to_string())))
    }
    fn visit_string<E>(self, v: String) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Text(Cow::Owned(v)))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Json(Value::Bool(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Json(Value::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Json(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Json(Value::from(v)))
    }
    fn visit_unit<E>(self) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Json(Value::Null))
    }
    fn visit_none<E>(self) -> Result<Scalar<'a>, E> {
        Ok(Scalar::Json(Value::Null))
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Scalar<'a>, D::Error> {
        Scalar::deserialize(d)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Scalar<'a>, A::Error> {
        Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq)).map(Scalar::Json)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Scalar<'a>, A::Error> {
        Value::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Scalar::Json)
    }
}

/// An attribute's value as the span model reads it.
pub(super) enum AttrValue<'a> {
    Text(Cow<'a, str>),
    Json(Value),
}

impl AttrValue<'_> {
    fn into_json(self) -> Value {
        match self {
            AttrValue::Text(s) => Value::String(s.into_owned()),
            AttrValue::Json(v) => v,
        }
    }
}

impl<'a> AnyValue<'a> {
    /// The value: int64 text becomes a number, bytes stay base64 text, a
    /// key/value list becomes an object. One field is set; were there more,
    /// the first in this order counts.
    fn into_attr(self) -> AttrValue<'a> {
        if let Some(s) = self.string {
            return AttrValue::Text(s);
        }
        if let Some(b) = self.boolean {
            return bool_attr(b);
        }
        if let Some(n) = self.int.or(self.double) {
            return number_attr(n);
        }
        if let Some(list) = self.array {
            return array_attr(list);
        }
        if let Some(kv) = self.kvlist {
            return kvlist_attr(kv);
        }
        self.bytes
            .map_or(AttrValue::Json(Value::Null), AttrValue::Text)
    }

    pub(super) fn into_json(self) -> Value {
        self.into_attr().into_json()
    }
}

pub(super) fn bool_attr(b: Scalar<'_>) -> AttrValue<'_> {
    match b {
        Scalar::Text(s) => match span_events::bool_from_text(&s) {
            Some(b) => AttrValue::Json(Value::Bool(b)),
            None => AttrValue::Text(s),
        },
        Scalar::Json(other) => AttrValue::Json(other),
    }
}

pub(super) fn number_attr(n: Scalar<'_>) -> AttrValue<'_> {
    match n {
        Scalar::Text(s) => match number_from_text(&s) {
            Some(n) => AttrValue::Json(n),
            None => AttrValue::Text(s),
        },
        Scalar::Json(other) => AttrValue::Json(other),
    }
}

pub(super) fn array_attr(list: ValueList<'_>) -> AttrValue<'_> {
    AttrValue::Json(Value::Array(
        list.values
            .unwrap_or_default()
            .into_iter()
            .map(AnyValue::into_json)
            .collect(),
    ))
}

pub(super) fn kvlist_attr(kv: KeyValueList<'_>) -> AttrValue<'_> {
    AttrValue::Json(Value::Object(attributes(kv.values).into_map()))
}

/// Attributes as a request lists them.
pub(super) struct AttrList<'a> {
    pub(super) items: Vec<Attr<'a>>,
}

pub(super) type Attr<'a> = (Cow<'a, str>, AttrValue<'a>);

impl<'a> AttrList<'a> {
    pub(super) fn new(items: Vec<Attr<'a>>) -> Self {
        AttrList { items }
    }

    fn into_map(self) -> Map<String, Value> {
        self.items
            .into_iter()
            .map(|(k, v)| (k.into_owned(), v.into_json()))
            .collect()
    }

    /// The text of the last attribute named `key`.
    pub(super) fn text(&self, key: &str) -> Option<String> {
        let (_, v) = self.items.iter().rev().find(|(k, _)| k == key)?;
        attr_ref(v).as_str().map(str::to_string)
    }
}

pub(super) fn attr_ref<'s>(v: &'s AttrValue<'_>) -> AttrRef<'s> {
    match v {
        AttrValue::Text(s) => AttrRef::Text(s),
        AttrValue::Json(v) => AttrRef::Json(v),
    }
}

impl AttrSource for AttrList<'_> {
    fn each<'s>(&'s self, f: &mut dyn FnMut(&str, AttrRef<'s>)) {
        for (k, v) in &self.items {
            f(k, attr_ref(v));
        }
    }
}

/// OTLP key/value attributes met outside a request (spans copied out of
/// one) as a plain map; None when `v` is no such list.
pub(crate) fn key_values(v: Value) -> Option<Map<String, Value>> {
    Vec::<KeyValue<'static>>::deserialize(v)
        .ok()
        .map(|list| attributes(Some(list)).into_map())
}

pub(super) fn attributes(list: Option<Vec<KeyValue<'_>>>) -> AttrList<'_> {
    AttrList::new(
        list.unwrap_or_default()
            .into_iter()
            .map(|kv| {
                let v = kv
                    .value
                    .map_or(AttrValue::Json(Value::Null), AnyValue::into_attr);
                (kv.key, v)
            })
            .collect(),
    )
}

pub(super) fn number_from_text(s: &str) -> Option<Value> {
    let t = s.trim();
    if let Ok(n) = t.parse::<i64>() {
        return Some(Value::from(n));
    }
    if let Ok(n) = t.parse::<u64>() {
        return Some(Value::from(n));
    }
    t.parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map(Value::Number)
}

pub(super) fn nanos_of(v: Option<&Scalar<'_>>) -> Option<i128> {
    match v? {
        Scalar::Json(Value::Number(n)) => n
            .as_u64()
            .map(i128::from)
            .or_else(|| n.as_f64().map(|f| f as i128)),
        Scalar::Text(s) => spans::nanos_from_text(s),
        Scalar::Json(_) => None,
    }
}

pub(super) fn status_code_of(v: Option<&Scalar<'_>>) -> StatusCode {
    match v {
        None | Some(Scalar::Json(Value::Null)) => StatusCode::Unset,
        Some(Scalar::Text(s)) => StatusCode::from_name(s),
        Some(Scalar::Json(Value::Number(n))) => n
            .as_f64()
            .map_or(StatusCode::Unknown, StatusCode::from_number),
        Some(Scalar::Json(_)) => StatusCode::Unknown,
    }
}

// ---- one span, as the shared span model reads it ----

/// What a span's events say (see [`SpanEvents`]).
pub(super) fn span_events(events: Option<Vec<WireEvent<'_>>>) -> SpanEvents {
    let mut found = SpanEvents::default();
    for event in events.unwrap_or_default() {
        let Some(name) = event.name.filter(|n| SpanEvents::reads(n)) else {
            continue;
        };
        let attrs = attributes(event.attributes);
        found.note(&name, |k| attrs.text(k));
    }
    found
}
