//! Reading an OTLP request line with the JSON scanner, where it stands and
//! without building a tree of it: the fast path of request lines. A line
//! that is not the plain shape (a field twice, a value of another type,
//! broken JSON) is declined and read by the serde reader, which gives the
//! same spans or says why the line is bad.

use std::borrow::Cow;

use super::{
    AnyValue, AttrList, AttrValue, KeyValue, KeyValueList, Scalar, ValueList, WireEvent, WireSpan,
    WireStatus, held_span,
};
use crate::adapters::DecodeSettings;
use crate::adapters::span_events::HeldSpan;
use crate::io::json_scan::{Field, LineScratch, ScanError, Stepped, Value, visit_object_in};

/// The line is left to the serde reader.
#[derive(Debug)]
pub(super) struct Declined;

type Step = Result<Stepped, ScanError>;

/// Why the scan stopped, when the line is well-formed JSON of a shape the
/// serde reader should judge.
fn no_reason() -> ScanError {
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
    Err(no_reason())
}

/// A member's name, its escapes decoded (as serde compares names).
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
            return Err(no_reason());
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
    let mut resource = AttrList(Vec::new());
    let mut waiting: Vec<(WireSpan<'a>, AttrList<'a>)> = Vec::new();
    let (_, stepped) = field.members(|key, field| match name(&key).as_ref() {
        "resource" => {
            seen.once(0)?;
            match field.starts_with() {
                b'n' => field.skip(),
                b'{' => {
                    let mut seen = Seen::default();
                    let members = field.members(|key, field| match name(&key).as_ref() {
                        "attributes" => {
                            seen.once(0)?;
                            list(field, &mut resource.0, key_value)
                        }
                        _ => field.skip(),
                    });
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
            let resource_known = seen.has(0);
            let mut scopes = Vec::new();
            list(field, &mut scopes, |scope| {
                if scope.starts_with() != b'{' {
                    return Err(no_reason());
                }
                let mut seen = Seen::default();
                let stepped = scope.members(|key, field| match name(&key).as_ref() {
                    "spans" => {
                        seen.once(0)?;
                        each(field, |f| {
                            let (span, attrs, stepped) = wire_span(f)?;
                            if resource_known {
                                held.push(held_span(
                                    span,
                                    &attrs,
                                    &resource,
                                    Some(number),
                                    settings,
                                ));
                            } else {
                                waiting.push((span, attrs));
                            }
                            Ok(stepped)
                        })
                    }
                    _ => field.skip(),
                })?;
                Ok(((), stepped.1))
            })
        }
        _ => field.skip(),
    })?;
    for (span, attrs) in waiting {
        held.push(held_span(span, &attrs, &resource, Some(number), settings));
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
        Value::String { .. } => *out = Some(value.as_str().ok_or_else(no_reason)?),
        _ => return Err(no_reason()),
    }
    Ok(stepped)
}

/// A number, flag or text as [`Scalar`] reads it; null is none.
fn scalar<'a>(field: Field<'_, 'a, '_>, out: &mut Option<Scalar<'a>>) -> Step {
    let (value, stepped) = field.value()?;
    *out = match value {
        Value::Null => None,
        Value::Bool(b) => Some(Scalar::Json(serde_json::Value::Bool(b))),
        Value::String { .. } => Some(Scalar::Text(value.as_str().ok_or_else(no_reason)?)),
        other => Some(Scalar::Json(
            serde_json::from_str(other.raw()).map_err(|_| no_reason())?,
        )),
    };
    Ok(stepped)
}

/// A span, and its attributes apart from it.
fn wire_span<'a>(
    field: Field<'_, 'a, '_>,
) -> Result<(WireSpan<'a>, AttrList<'a>, Stepped), ScanError> {
    if field.starts_with() != b'{' {
        return Err(no_reason());
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
    };
    let mut attrs = AttrList(Vec::new());
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
            attrs.0.reserve(16);
            list(field, &mut attrs.0, key_value)
        }
        "events" => {
            seen.once(7)?;
            optional_list(field, &mut span.events, wire_event)
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
        _ => field.skip(),
    })?;
    Ok((span, attrs, stepped))
}

/// A list that stays `None` when null, as serde's `Option<Vec<_>>`.
fn optional_list<'a, T>(
    field: Field<'_, 'a, '_>,
    out: &mut Option<Vec<T>>,
    item: impl FnMut(Field<'_, 'a, '_>) -> Result<(T, Stepped), ScanError>,
) -> Step {
    if field.starts_with() == b'n' {
        return field.skip();
    }
    list(field, out.get_or_insert_with(Vec::new), item)
}

fn wire_event<'a>(field: Field<'_, 'a, '_>) -> Result<(WireEvent<'a>, Stepped), ScanError> {
    if field.starts_with() != b'{' {
        return Err(no_reason());
    }
    let mut event = WireEvent {
        name: None,
        attributes: None,
    };
    let mut seen = Seen::default();
    let (_, stepped) = field.members(|key, field| match name(&key).as_ref() {
        "name" => {
            seen.once(0)?;
            text(field, &mut event.name)
        }
        "attributes" => {
            seen.once(1)?;
            optional_list(field, &mut event.attributes, wire_key_value)
        }
        _ => field.skip(),
    })?;
    Ok((event, stepped))
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
fn key_value<'a>(
    field: Field<'_, 'a, '_>,
) -> Result<((Cow<'a, str>, AttrValue<'a>), Stepped), ScanError> {
    let (KeyValue { key, value }, stepped) = wire_key_value(field)?;
    let value = value.map_or(
        AttrValue::Json(serde_json::Value::Null),
        AnyValue::into_attr,
    );
    Ok(((key, value), stepped))
}

fn wire_key_value<'a>(field: Field<'_, 'a, '_>) -> Result<(KeyValue<'a>, Stepped), ScanError> {
    if field.starts_with() != b'{' {
        return Err(no_reason());
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
    let key = key.ok_or_else(no_reason)?;
    Ok((KeyValue { key, value }, stepped))
}

fn any_value<'a>(field: Field<'_, 'a, '_>) -> Result<(AnyValue<'a>, Stepped), ScanError> {
    let mut any = AnyValue::default();
    let mut seen = Seen::default();
    let (_, stepped) = field.members(|key, field| match name(&key).as_ref() {
        "stringValue" | "string_value" => {
            seen.once(0)?;
            text(field, &mut any.string)
        }
        "boolValue" | "bool_value" => {
            seen.once(1)?;
            scalar(field, &mut any.boolean)
        }
        "intValue" | "int_value" => {
            seen.once(2)?;
            scalar(field, &mut any.int)
        }
        "doubleValue" | "double_value" => {
            seen.once(3)?;
            scalar(field, &mut any.double)
        }
        "bytesValue" | "bytes_value" => {
            seen.once(4)?;
            text(field, &mut any.bytes)
        }
        // Nested values are rare: serde reads them from their text.
        "arrayValue" | "array_value" => {
            seen.once(5)?;
            let (value, stepped) = field.value()?;
            if value != Value::Null {
                any.array = Some(nested::<ValueList<'a>>(value.raw())?);
            }
            Ok(stepped)
        }
        "kvlistValue" | "kvlist_value" => {
            seen.once(6)?;
            let (value, stepped) = field.value()?;
            if value != Value::Null {
                any.kvlist = Some(nested::<KeyValueList<'a>>(value.raw())?);
            }
            Ok(stepped)
        }
        _ => field.skip(),
    })?;
    Ok((any, stepped))
}

fn nested<'a, T: serde::Deserialize<'a>>(raw: &'a str) -> Result<T, ScanError> {
    serde_json::from_str(raw).map_err(|_| no_reason())
}
