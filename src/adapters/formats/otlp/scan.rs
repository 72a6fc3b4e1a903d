//! Reading an OTLP request line with the JSON scanner, where it stands and
//! without building a tree of it: the fast path of request lines. A line
//! that is not the plain shape (a field twice, a value of another type,
//! broken JSON) is declined and read by the serde reader, which gives the
//! same spans or says why the line is bad.

use std::borrow::Cow;

use super::held_span;
use super::wire::{
    Attr, AttrList, AttrValue, KeyValueList, Scalar, ValueList, WireLink, WireSpan, WireStatus,
    array_attr, bool_attr, kvlist_attr, number_attr,
};
use crate::adapters::read::span_events::{HeldSpan, SharedAttrs, SpanEvents};
use crate::adapters::settings::DecodeSettings;
use crate::plumbing::json_scan::{
    Exact, Field, LineScratch, ScanError, Stepped, Value, visit_object_in,
};

/// The line is left to the serde reader.
#[derive(Debug)]
pub(super) struct Declined;

type Step = Result<Stepped, ScanError>;

/// The scan stops: the line is (so far) well-formed JSON of a shape the
/// serde reader should judge.
fn other_shape() -> ScanError {
    ScanError::new("not the shape read", 0)
}

/// Holds the spans of the request on `line` (whose chunk from the line's
/// start on is `tail`), or declines it, holding nothing.
pub(super) fn hold_line(
    line: &str,
    tail: &[u8],
    scratch: &mut LineScratch,
    number: u64,
    settings: &DecodeSettings,
    held: &mut Vec<HeldSpan>,
) -> Result<(), Declined> {
    let before = held.len();
    let mut seen = Seen::default();
    let scanned = visit_object_in(line, tail, scratch, |key, field| {
        match name(&key).as_ref() {
            "resourceSpans" | "resource_spans" => {
                seen.once(0)?;
                if field.starts_with() != b'[' {
                    return declined();
                }
                let items = field.items(|rs| resource_spans(rs, number, settings, held));
                Ok(items?.1)
            }
            _ => field.skip(),
        }
    });
    // Without resourceSpans the serde reader says what the line lacks.
    if scanned.is_err() || !seen.has(0) {
        held.truncate(before);
        return Err(Declined);
    }
    Ok(())
}

fn declined() -> Step {
    Err(other_shape())
}

/// A member's name, its escapes decoded (as serde compares names).
#[inline(always)]
fn name<'a>(key: &Value<'a>) -> Cow<'a, str> {
    key.as_str().unwrap_or_default()
}

/// The fields of one object met so far: serde refuses a field given twice,
/// under one name or two of its aliases.
#[derive(Default)]
struct Seen(u32);

impl Seen {
    fn once(&mut self, bit: u32) -> Result<(), ScanError> {
        if self.has(bit) {
            return Err(other_shape());
        }
        self.0 |= 1 << bit;
        Ok(())
    }

    fn has(&self, bit: u32) -> bool {
        self.0 & (1 << bit) != 0
    }
}

/// One element of `resourceSpans`. Its spans are held as they are read
/// once its resource's attributes are known, as exporters write them;
/// spans before the resource wait for it.
fn resource_spans<'a>(
    field: Field<'_, 'a, '_>,
    number: u64,
    settings: &DecodeSettings,
    held: &mut Vec<HeldSpan>,
) -> Step {
    if field.starts_with() != b'{' {
        return declined();
    }
    let mut seen = Seen::default();
    let mut resource = AttrList::new(Vec::new());
    let mut waiting: Vec<ScannedSpan<'a>> = Vec::new();
    let (_, stepped) = field.members(|key, field| match name(&key).as_ref() {
        "resource" => {
            seen.once(0)?;
            match field.starts_with() {
                b'n' => field.skip(),
                b'{' => {
                    let mut seen = Seen::default();
                    let mut attrs = Vec::new();
                    let members = field.members(|key, field| match name(&key).as_ref() {
                        "attributes" => {
                            seen.once(0)?;
                            list(field, &mut attrs, key_value)
                        }
                        _ => field.skip(),
                    });
                    resource = AttrList::new(attrs);
                    Ok(members?.1)
                }
                _ => declined(),
            }
        }
        "scopeSpans"
        | "scope_spans"
        | "instrumentationLibrarySpans"
        | "instrumentation_library_spans" => {
            seen.once(1)?;
            let resource_known = seen.has(0).then(|| SharedAttrs::new(&resource));
            each(field, |scope| {
                if scope.starts_with() != b'{' {
                    return declined();
                }
                let mut seen = Seen::default();
                let (_, stepped) = scope.members(|key, field| match name(&key).as_ref() {
                    "spans" => {
                        seen.once(0)?;
                        each(field, |f| {
                            let (span, stepped) = wire_span(f)?;
                            if let Some(resource) = &resource_known {
                                held.push(span.held(resource, number, settings));
                            } else {
                                waiting.push(span);
                            }
                            Ok(stepped)
                        })
                    }
                    _ => field.skip(),
                })?;
                Ok(stepped)
            })
        }
        _ => field.skip(),
    })?;
    let shared = SharedAttrs::new(&resource);
    for span in waiting {
        held.push(span.held(&shared, number, settings));
    }
    Ok(stepped)
}

/// Each element of a list; null is no list.
fn each<'a>(field: Field<'_, 'a, '_>, mut item: impl FnMut(Field<'_, 'a, '_>) -> Step) -> Step {
    match field.starts_with() {
        b'n' => field.skip(),
        b'[' => Ok(field.items(&mut item)?.1),
        _ => declined(),
    }
}

/// A list of `item`s into `out`; null is no list.
fn list<'a, T>(
    field: Field<'_, 'a, '_>,
    out: &mut Vec<T>,
    mut item: impl FnMut(Field<'_, 'a, '_>) -> Result<(T, Stepped), ScanError>,
) -> Step {
    each(field, |f| {
        let (t, stepped) = item(f)?;
        out.push(t);
        Ok(stepped)
    })
}

/// A text or null.
fn text<'a>(field: Field<'_, 'a, '_>, out: &mut Option<Cow<'a, str>>) -> Step {
    let (value, stepped) = field.value()?;
    match value {
        Value::Null => {}
        Value::String { .. } => *out = Some(value.as_str().ok_or_else(other_shape)?),
        _ => return Err(other_shape()),
    }
    Ok(stepped)
}

/// A number, flag or text as [`Scalar`] reads it; null is none.
fn scalar<'a>(field: Field<'_, 'a, '_>, out: &mut Option<Scalar<'a>>) -> Step {
    let (value, stepped) = field.value()?;
    *out = match value {
        Value::Null => None,
        Value::Bool(b) => Some(Scalar::Json(serde_json::Value::Bool(b))),
        Value::String { .. } => Some(Scalar::Text(value.as_str().ok_or_else(other_shape)?)),
        Value::Number(raw) => Some(Scalar::Json(number(raw)?)),
        other => Some(Scalar::Json(
            serde_json::from_str(other.raw()).map_err(|_| other_shape())?,
        )),
    };
    Ok(stepped)
}

/// A JSON number as serde_json reads it: an integer when it fits 64 bits
/// (unsigned first), else a float.
fn number(raw: &str) -> Result<serde_json::Value, ScanError> {
    if let Ok(n) = raw.parse::<u64>() {
        return Ok(n.into());
    }
    if let Ok(n) = raw.parse::<i64>() {
        return Ok(n.into());
    }
    serde_json::from_str(raw).map_err(|_| other_shape())
}

/// A span as scanned: its attributes and what its events say read apart
/// from it.
struct ScannedSpan<'a> {
    span: WireSpan<'a>,
    attrs: AttrList<'a>,
    events: SpanEvents,
}

impl ScannedSpan<'_> {
    fn held(self, resource: &SharedAttrs<'_>, number: u64, settings: &DecodeSettings) -> HeldSpan {
        held_span(
            self.span,
            &self.attrs,
            self.events,
            resource,
            Some(number),
            settings,
        )
    }
}

fn wire_span<'a>(field: Field<'_, 'a, '_>) -> Result<(ScannedSpan<'a>, Stepped), ScanError> {
    if field.starts_with() != b'{' {
        return Err(other_shape());
    }
    let mut span = WireSpan {
        trace_id: None,
        span_id: None,
        parent_span_id: None,
        name: None,
        start: None,
        end: None,
        attributes: None,
        events: None,
        status: None,
        links: None,
    };
    let mut attrs = Vec::new();
    let mut events = SpanEvents::default();
    let mut seen = Seen::default();
    let (_, stepped) = field.members(|key, field| match name(&key).as_ref() {
        "traceId" | "trace_id" => {
            seen.once(0)?;
            text(field, &mut span.trace_id)
        }
        "spanId" | "span_id" => {
            seen.once(1)?;
            text(field, &mut span.span_id)
        }
        "parentSpanId" | "parent_span_id" => {
            seen.once(2)?;
            text(field, &mut span.parent_span_id)
        }
        "name" => {
            seen.once(3)?;
            text(field, &mut span.name)
        }
        "startTimeUnixNano" | "start_time_unix_nano" => {
            seen.once(4)?;
            scalar(field, &mut span.start)
        }
        "endTimeUnixNano" | "end_time_unix_nano" => {
            seen.once(5)?;
            scalar(field, &mut span.end)
        }
        "attributes" => {
            seen.once(6)?;
            // A span has a dozen or so: room for them at once.
            attrs.reserve(16);
            list(field, &mut attrs, key_value)
        }
        "events" => {
            seen.once(7)?;
            each(field, |event| {
                let (event_name, attrs, stepped) = span_event(event)?;
                if let Some(name) = event_name.filter(|n| SpanEvents::reads(n)) {
                    events.note(&name, |k| attrs.text(k));
                }
                Ok(stepped)
            })
        }
        "status" => {
            seen.once(8)?;
            match field.starts_with() {
                b'n' => field.skip(),
                b'{' => {
                    let (status, stepped) = wire_status(field)?;
                    span.status = Some(status);
                    Ok(stepped)
                }
                _ => declined(),
            }
        }
        "links" => {
            seen.once(9)?;
            let mut links = Vec::new();
            let stepped = list(field, &mut links, wire_link)?;
            span.links = Some(links);
            Ok(stepped)
        }
        _ => field.skip(),
    })?;
    let span = ScannedSpan {
        span,
        attrs: AttrList::new(attrs),
        events,
    };
    Ok((span, stepped))
}

/// An event's name and attributes.
fn span_event<'a>(
    field: Field<'_, 'a, '_>,
) -> Result<(Option<Cow<'a, str>>, AttrList<'a>, Stepped), ScanError> {
    if field.starts_with() != b'{' {
        return Err(other_shape());
    }
    let mut event_name = None;
    let mut attrs = Vec::new();
    let mut seen = Seen::default();
    let (_, stepped) = field.members(|key, field| match name(&key).as_ref() {
        "name" => {
            seen.once(0)?;
            text(field, &mut event_name)
        }
        "attributes" => {
            seen.once(1)?;
            list(field, &mut attrs, key_value)
        }
        _ => field.skip(),
    })?;
    Ok((event_name, AttrList::new(attrs), stepped))
}

fn wire_link<'a>(field: Field<'_, 'a, '_>) -> Result<(WireLink<'a>, Stepped), ScanError> {
    if field.starts_with() != b'{' {
        return Err(other_shape());
    }
    let mut link = WireLink { trace_id: None };
    let mut seen = Seen::default();
    let (_, stepped) = field.members(|key, field| match name(&key).as_ref() {
        "traceId" | "trace_id" => {
            seen.once(0)?;
            text(field, &mut link.trace_id)
        }
        _ => field.skip(),
    })?;
    Ok((link, stepped))
}

fn wire_status<'a>(field: Field<'_, 'a, '_>) -> Result<(WireStatus<'a>, Stepped), ScanError> {
    let mut status = WireStatus {
        code: None,
        message: None,
    };
    let mut seen = Seen::default();
    let (_, stepped) = field.members(|key, field| match name(&key).as_ref() {
        "code" => {
            seen.once(0)?;
            scalar(field, &mut status.code)
        }
        "message" => {
            seen.once(1)?;
            let mut message = None;
            let stepped = text(field, &mut message)?;
            status.message = message.map(Cow::into_owned);
            Ok(stepped)
        }
        _ => field.skip(),
    })?;
    Ok((status, stepped))
}

/// An attribute, its value read as the span model reads it.
fn key_value<'a>(field: Field<'_, 'a, '_>) -> Result<(Attr<'a>, Stepped), ScanError> {
    if let Some(read) = compact_key_value(&field) {
        return Ok(read);
    }
    if field.starts_with() != b'{' {
        return Err(other_shape());
    }
    let mut key = None;
    let mut value = None;
    let mut seen = Seen::default();
    let (_, stepped) = field.members(|k, field| match name(&k).as_ref() {
        "key" => {
            seen.once(0)?;
            text(field, &mut key)
        }
        "value" => {
            seen.once(1)?;
            match field.starts_with() {
                b'n' => field.skip(),
                b'{' => {
                    let (any, stepped) = any_value(field)?;
                    value = Some(any);
                    Ok(stepped)
                }
                _ => declined(),
            }
        }
        _ => field.skip(),
    })?;
    // A key is required (serde refuses a key/value without one).
    let key = key.ok_or_else(other_shape)?;
    let value = value
        .flatten()
        .unwrap_or(AttrValue::Json(serde_json::Value::Null));
    Ok(((key, value), stepped))
}

/// An attribute as exporters write it, `{"key":"…","value":{"intValue":…}}`
/// with a string, int, double or bool value, compact and without escapes:
/// read in one pass, as [`key_value`] reads it. None for any other
/// spelling, which [`key_value`] reads member by member.
#[inline(always)]
fn compact_key_value<'a>(field: &Field<'_, 'a, '_>) -> Option<(Attr<'a>, Stepped)> {
    field.exact(2, |e| {
        e.expect(b"{\"key\":")?;
        let key = e.plain_string()?;
        e.expect(b",\"value\":{\"")?;
        let number = |e: &mut Exact<'_, 'a, '_>| {
            Some(if e.peek() == b'"' {
                number_attr(Scalar::Text(Cow::Borrowed(e.plain_string()?)))
            } else {
                number_attr(Scalar::Json(number(e.number()?).ok()?))
            })
        };
        let value = match e.peek() {
            b's' => {
                e.expect(b"stringValue\":")?;
                AttrValue::Text(Cow::Borrowed(e.plain_string()?))
            }
            b'i' => {
                e.expect(b"intValue\":")?;
                number(e)?
            }
            b'd' => {
                e.expect(b"doubleValue\":")?;
                number(e)?
            }
            b'b' => {
                e.expect(b"boolValue\":")?;
                let b = match e.peek() {
                    b't' => e.expect(b"true").map(|()| true)?,
                    _ => e.expect(b"false").map(|()| false)?,
                };
                AttrValue::Json(serde_json::Value::Bool(b))
            }
            _ => return None,
        };
        e.expect(b"}}")?;
        Some((Cow::Borrowed(key), value))
    })
}

/// An AnyValue's value, as [`AnyValue::into_attr`] reads it: of the fields
/// set, the first in its order counts (each field's rank below).
fn any_value<'a>(field: Field<'_, 'a, '_>) -> Result<(Option<AttrValue<'a>>, Stepped), ScanError> {
    let mut best: Option<(u32, AttrValue<'a>)> = None;
    let mut seen = Seen::default();
    let mut offer = |rank: u32, value: AttrValue<'a>| {
        if best.as_ref().is_none_or(|(r, _)| rank < *r) {
            best = Some((rank, value));
        }
    };
    let (_, stepped) = field.members(|key, field| {
        let rank = match name(&key).as_ref() {
            "stringValue" | "string_value" => 0,
            "boolValue" | "bool_value" => 1,
            "intValue" | "int_value" => 2,
            "doubleValue" | "double_value" => 3,
            "arrayValue" | "array_value" => 4,
            "kvlistValue" | "kvlist_value" => 5,
            "bytesValue" | "bytes_value" => 6,
            _ => return field.skip(),
        };
        seen.once(rank)?;
        match rank {
            0 | 6 => {
                let mut s = None;
                let stepped = text(field, &mut s)?;
                if let Some(s) = s {
                    offer(rank, AttrValue::Text(s));
                }
                Ok(stepped)
            }
            1..=3 => {
                let mut v = None;
                let stepped = scalar(field, &mut v)?;
                if let Some(v) = v {
                    offer(
                        rank,
                        if rank == 1 {
                            bool_attr(v)
                        } else {
                            number_attr(v)
                        },
                    );
                }
                Ok(stepped)
            }
            // Nested values are rare: serde reads them from their text.
            _ => {
                let (value, stepped) = field.value()?;
                if value != Value::Null {
                    let raw = value.raw();
                    offer(
                        rank,
                        if rank == 4 {
                            array_attr(nested::<ValueList<'a>>(raw)?)
                        } else {
                            kvlist_attr(nested::<KeyValueList<'a>>(raw)?)
                        },
                    );
                }
                Ok(stepped)
            }
        }
    })?;
    Ok((best.map(|(_, v)| v), stepped))
}

fn nested<'a, T: serde::Deserialize<'a>>(raw: &'a str) -> Result<T, ScanError> {
    serde_json::from_str(raw).map_err(|_| other_shape())
}
