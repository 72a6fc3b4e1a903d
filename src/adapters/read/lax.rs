//! agent-triage 0.1.0's lax value rules (pydantic's lax mode) over one view
//! of a JSON scalar, whichever parser read it: the scanner of the ndjson
//! hot path or simd-json's tree in the document formats.

use std::borrow::Cow;

use simd_json::{BorrowedValue, StaticNode};

use crate::adapters::unreadable::Unreadable;
use crate::plumbing::json_scan;
use crate::timestamp::Timestamp;

/// A JSON value as the lax rules see it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar<'a> {
    Null,
    Bool(bool),
    Int(i64),
    /// An integer too large for 64 bits, as written.
    BigInt(Cow<'a, str>),
    Float(f64),
    Str(Cow<'a, str>),
    List,
    Object,
}

impl<'a> From<&json_scan::Value<'a>> for Scalar<'a> {
    fn from(v: &json_scan::Value<'a>) -> Self {
        use json_scan::Value as V;
        match v {
            V::Null => Scalar::Null,
            V::Bool(b) => Scalar::Bool(*b),
            V::Number(n) if !n.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')) => {
                match n.parse() {
                    Ok(i) => Scalar::Int(i),
                    Err(_) => Scalar::BigInt(Cow::Borrowed(n)),
                }
            }
            V::Number(n) => Scalar::Float(n.parse().unwrap_or(f64::NAN)),
            V::String { .. } => Scalar::Str(v.as_str().unwrap_or_default()),
            V::Array(_) => Scalar::List,
            V::Object(_) => Scalar::Object,
        }
    }
}

impl<'a> From<&'a BorrowedValue<'a>> for Scalar<'a> {
    fn from(v: &'a BorrowedValue<'a>) -> Self {
        match v {
            BorrowedValue::Static(StaticNode::Null) => Scalar::Null,
            BorrowedValue::Static(StaticNode::Bool(b)) => Scalar::Bool(*b),
            BorrowedValue::Static(StaticNode::I64(n)) => Scalar::Int(*n),
            BorrowedValue::Static(StaticNode::U64(n)) => i64::try_from(*n)
                .map_or_else(|_| Scalar::BigInt(Cow::Owned(n.to_string())), Scalar::Int),
            BorrowedValue::Static(StaticNode::F64(f)) => Scalar::Float(*f),
            BorrowedValue::String(s) => Scalar::Str(Cow::Borrowed(s.as_ref())),
            BorrowedValue::Array(_) => Scalar::List,
            BorrowedValue::Object(_) => Scalar::Object,
        }
    }
}

impl Scalar<'_> {
    /// How a message names the value.
    pub(crate) fn describe(&self) -> String {
        match self {
            Scalar::Null => "null".to_string(),
            Scalar::Bool(b) => b.to_string(),
            Scalar::Int(_) | Scalar::BigInt(_) | Scalar::Float(_) => {
                format!("the number {}", self.python_str())
            }
            Scalar::Str(s) => {
                let short: String = s.chars().take(40).collect();
                format!("{short:?}")
            }
            Scalar::List => "a list".to_string(),
            Scalar::Object => "an object".to_string(),
        }
    }

    /// An integer: integers, floats without a fraction, booleans, and
    /// strings of digits (with sign, underscores or a zero fraction).
    pub(crate) fn int(&self, name: &str) -> Result<i64, Unreadable> {
        let got = match self {
            Scalar::Int(n) => Some(*n),
            Scalar::Float(f) => float_to_int(*f),
            Scalar::Bool(b) => Some(i64::from(*b)),
            Scalar::Str(s) => int_from_text(s),
            _ => None,
        };
        got.ok_or_else(|| Unreadable::mistyped(name.to_string(), "an integer", self.describe()))
    }

    /// A boolean: true/false, 0/1, and the strings pydantic accepts.
    pub(crate) fn bool(&self, name: &str) -> Result<bool, Unreadable> {
        let got = match self {
            Scalar::Bool(b) => Some(*b),
            Scalar::Int(0) => Some(false),
            Scalar::Int(1) => Some(true),
            Scalar::Float(f) if *f == 0.0 => Some(false),
            Scalar::Float(f) if *f == 1.0 => Some(true),
            Scalar::Str(s) => match s.to_ascii_lowercase().as_str() {
                "1" | "on" | "t" | "true" | "y" | "yes" => Some(true),
                "0" | "off" | "f" | "false" | "n" | "no" => Some(false),
                _ => None,
            },
            _ => None,
        };
        got.ok_or_else(|| Unreadable::mistyped(name.to_string(), "true or false", self.describe()))
    }

    /// A date-time: a string in ISO 8601 or an epoch number.
    pub(crate) fn timestamp(&self) -> Result<Timestamp, Unreadable> {
        let got = match self {
            Scalar::Str(s) => Timestamp::parse(s),
            Scalar::Int(n) => Timestamp::from_epoch_number(*n as f64),
            Scalar::Float(f) => Timestamp::from_epoch_number(*f),
            _ => None,
        };
        got.ok_or_else(|| Unreadable::mistyped("timestamp", "a date-time", self.describe()))
    }

    /// What Python's `str()` gives, so a non-string label reads as in the
    /// reference.
    pub(crate) fn python_str(&self) -> String {
        match self {
            Scalar::Bool(true) => "True".to_string(),
            Scalar::Bool(false) => "False".to_string(),
            Scalar::Null => "None".to_string(),
            Scalar::Int(n) => n.to_string(),
            Scalar::BigInt(n) => n.to_string(),
            Scalar::Float(f) if f.fract() == 0.0 && f.abs() < 1e16 => format!("{f:.1}"),
            Scalar::Float(f) => f.to_string(),
            Scalar::Str(s) => s.to_string(),
            Scalar::List => "[...]".to_string(),
            Scalar::Object => "{...}".to_string(),
        }
    }
}

fn float_to_int(f: f64) -> Option<i64> {
    (f.fract() == 0.0 && f.is_finite() && f.abs() < 9.2e18).then_some(f as i64)
}

fn int_from_text(s: &str) -> Option<i64> {
    let t = s.trim();
    let (digits, frac) = match t.split_once('.') {
        Some((d, f)) if f.bytes().all(|b| b == b'0') => (d, true),
        Some(_) => return None,
        None => (t, false),
    };
    let unsigned = digits.strip_prefix(['+', '-']).unwrap_or(digits);
    if unsigned.is_empty()
        || unsigned.starts_with('_')
        || unsigned.ends_with('_')
        || unsigned.contains("__")
    {
        return None;
    }
    if frac && digits.contains('_') {
        return None;
    }
    digits.replace('_', "").parse().ok()
}

// The same rules on simd-json's tree, for the document formats.

pub(crate) fn as_str<'v>(v: &'v BorrowedValue<'v>) -> Option<&'v str> {
    match v {
        BorrowedValue::String(s) => Some(s.as_ref()),
        _ => None,
    }
}

pub(crate) fn describe(v: &BorrowedValue<'_>) -> String {
    Scalar::from(v).describe()
}

pub(crate) fn python_str(v: &BorrowedValue<'_>) -> String {
    match v {
        BorrowedValue::Array(_) | BorrowedValue::Object(_) => {
            simd_json::to_string(v).unwrap_or_default()
        }
        _ => Scalar::from(v).python_str(),
    }
}
