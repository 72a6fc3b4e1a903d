//! The reference's value rules for a TraceEvent's members: lax integers
//! and booleans, strict strings, timestamps, and Python's `str()` of a
//! value.

use std::borrow::Cow;

use crate::adapters::read::lax::Scalar;
use crate::adapters::unreadable::Unreadable;
use crate::plumbing::json_scan::{Value, object_members, pick};
use crate::record::ErrorInfo;
use crate::timestamp::Timestamp;

pub(super) fn is_string(v: &Value<'_>) -> bool {
    matches!(v, Value::String { .. })
}

pub(super) fn is_empty_object(raw: &str) -> bool {
    raw[1..raw.len() - 1].trim().is_empty()
}

/// `action_taken`: an object with a string `tool_name` and, optionally, an
/// object `tool_input`.
#[inline(always)]
pub(super) fn action<'c>(
    v: Value<'c>,
    [tool, input]: [Option<Value<'c>>; 2],
) -> Result<(Value<'c>, Option<&'c str>), Unreadable> {
    let Value::Object(_) = v else {
        return Err(Unreadable::mistyped(
            "action_taken",
            "an object",
            describe(&v),
        ));
    };
    let tool = tool.ok_or(Unreadable::Missing("action_taken.tool_name".into()))?;
    let tool = strict_str(tool, "action_taken.tool_name")?;
    let input = match input {
        None => None,
        Some(Value::Object(raw)) => Some(raw).filter(|raw| !is_empty_object(raw)),
        Some(v) => {
            return Err(Unreadable::mistyped(
                "action_taken.tool_input",
                "an object",
                describe(&v),
            ));
        }
    };
    Ok((tool, input))
}

/// Which members of an object field must hold lax integers.
pub(super) enum IntKeys<const N: usize> {
    All,
    Some([&'static str; N]),
}

/// An object field that may be absent; present, it must be an object whose
/// named members hold lax integers. Returns its JSON text.
#[inline(always)]
pub(super) fn object_field<'c, const N: usize>(
    v: Option<(Value<'c>, bool)>,
    name: &str,
    ints: IntKeys<N>,
) -> Result<Option<&'c str>, Unreadable> {
    match v {
        None => Ok(None),
        Some((Value::Object(raw), plain)) => {
            // Members that all hold plain digits pass whichever keys must be
            // integers, so the keys need reading only when one does not.
            if !plain {
                check_int_members(raw, name, ints)?;
            }
            Ok(Some(raw))
        }
        Some((v, _)) => Err(Unreadable::mistyped(
            name.to_string(),
            "an object",
            describe(&v),
        )),
    }
}

/// Checks that the members `ints` names of object field `name` hold lax
/// integers.
#[cold]
pub(super) fn check_int_members<const N: usize>(
    object: &str,
    name: &str,
    ints: IntKeys<N>,
) -> Result<(), Unreadable> {
    let mut members = Vec::new();
    object_members(object, &mut members).map_err(|e| Unreadable::Json(e.to_string()))?;
    let members = members.as_slice();
    match ints {
        IntKeys::All => {
            for (k, v) in members {
                lax_int_member(v, name, || k.as_str().unwrap_or_default())?;
            }
        }
        IntKeys::Some(keys) => {
            for (key, v) in keys.iter().zip(pick(members, &keys)) {
                if let Some(v) = v {
                    lax_int_member(&v, name, || Cow::Borrowed(*key))?;
                }
            }
        }
    }
    Ok(())
}

/// Plain digits, short enough for an i64: an integer without parsing.
#[inline]
pub(super) fn is_plain_digits(v: &Value<'_>) -> bool {
    matches!(v, Value::Number(n) if n.len() < 19 && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Checks that member `key` of object field `name` holds a lax integer.
#[inline]
pub(super) fn lax_int_member<'k>(
    v: &Value<'_>,
    name: &str,
    key: impl FnOnce() -> Cow<'k, str>,
) -> Result<(), Unreadable> {
    if is_plain_digits(v) {
        return Ok(());
    }
    lax_int_slow(v, name, &key())
}

/// [`lax_int_member`] past plain digits; the member is only named when
/// its value is refused.
#[cold]
pub(super) fn lax_int_slow(v: &Value<'_>, name: &str, key: &str) -> Result<(), Unreadable> {
    Scalar::from(v)
        .int("")
        .map(|_| ())
        .map_err(|_| Scalar::from(v).int(&format!("{name}.{key}")).unwrap_err())
}

/// The classification and its JSON text; null, "" and "null" mean none, and
/// a non-string reads as Python's `str()` of it, as in the reference.
pub(super) fn classification(v: Option<Value<'_>>) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
    match v? {
        Value::Null => None,
        v @ Value::String { raw, .. } => {
            let text = v.as_str()?;
            (!text.is_empty() && text != "null").then_some((text, Cow::Borrowed(raw)))
        }
        other => {
            let text = python_str(&other);
            let raw = serde_json::to_string(&text).unwrap_or_default();
            Some((Cow::Owned(text), Cow::Owned(raw)))
        }
    }
}

/// The `error` member's type and message, when it is an object.
pub(super) fn error_info(
    v: Value<'_>,
    [kind, message]: [Option<Value<'_>>; 2],
) -> Option<ErrorInfo> {
    let Value::Object(_) = v else { return None };
    let text = |v: Option<Value<'_>>| v.and_then(|v| v.as_str()).map(Cow::into_owned);
    Some(ErrorInfo {
        kind: text(kind),
        message: text(message),
    })
}

pub(super) fn describe(v: &Value<'_>) -> String {
    Scalar::from(v).describe()
}

/// A string, and nothing else (pydantic does not turn numbers into strings).
#[inline(always)]
pub(super) fn strict_str<'c>(v: Value<'c>, name: &str) -> Result<Value<'c>, Unreadable> {
    match v {
        Value::String { .. } => Ok(v),
        other => Err(Unreadable::mistyped(
            name.to_string(),
            "a string",
            describe(&other),
        )),
    }
}

// The lax readers below go straight to the spelling nearly every trace
// uses (plain digits, a JSON boolean, a string without escapes) before the
// general rules, whose dispatch cost about 100 instructions a value.

#[inline(always)]
pub(super) fn lax_int(v: &Value<'_>, name: &str) -> Result<i64, Unreadable> {
    if let Value::Number(digits) = v
        && is_plain_digits(v)
    {
        return Ok(digits.bytes().fold(0, |n, d| n * 10 + i64::from(d - b'0')));
    }
    Scalar::from(v).int(name)
}

#[inline(always)]
pub(super) fn lax_bool(v: &Value<'_>, name: &str) -> Result<bool, Unreadable> {
    if let Value::Bool(b) = v {
        return Ok(*b);
    }
    Scalar::from(v).bool(name)
}

/// The timestamp and, when the input spelled it in UTC, its text for
/// [`TraceEvent::utc_text`].
pub(super) fn lax_timestamp<'c>(v: &Value<'c>) -> Result<(Timestamp, Option<&'c str>), Unreadable> {
    if let Value::String {
        raw,
        escaped: false,
    } = v
        && let Some((t, text)) = Timestamp::parse_utc(&raw[1..raw.len() - 1])
    {
        return Ok((t, Some(text)));
    }
    Scalar::from(v).timestamp().map(|t| (t, None))
}

pub(super) fn python_str(v: &Value<'_>) -> String {
    match v {
        Value::Array(raw) | Value::Object(raw) => raw.to_string(),
        _ => Scalar::from(v).python_str(),
    }
}
