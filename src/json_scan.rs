//! A validating JSON scanner that allocates nothing: splits one NDJSON line
//! into its top-level members, each a raw slice plus what a reader needs to
//! decode it. The hot path of reading TraceEvent lines.

use std::borrow::Cow;

/// Containers nested deeper than this are refused.
pub const MAX_DEPTH: usize = 512;

/// One JSON value as it stands in the line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    /// The number's text, valid by JSON's grammar.
    Number(&'a str),
    /// The string's text with its quotes; `escaped` when it holds a backslash.
    String {
        raw: &'a str,
        escaped: bool,
    },
    /// The whole array's text.
    Array(&'a str),
    /// The whole object's text.
    Object(&'a str),
}

impl<'a> Value<'a> {
    /// The value's JSON text.
    pub fn raw(&self) -> &'a str {
        match self {
            Value::Null => "null",
            Value::Bool(true) => "true",
            Value::Bool(false) => "false",
            Value::Number(r) | Value::Array(r) | Value::Object(r) => r,
            Value::String { raw, .. } => raw,
        }
    }

    /// A string's decoded text (borrowed unless it has escapes).
    pub fn as_str(&self) -> Option<Cow<'a, str>> {
        match *self {
            Value::String {
                raw,
                escaped: false,
            } => Some(Cow::Borrowed(&raw[1..raw.len() - 1])),
            Value::String { raw, escaped: true } => {
                serde_json::from_str::<String>(raw).ok().map(Cow::Owned)
            }
            _ => None,
        }
    }
}

/// Why a line is not the JSON it should be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanError {
    pub reason: &'static str,
    /// Byte offset in the line.
    pub at: usize,
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at column {}", self.reason, self.at + 1)
    }
}

struct Scanner<'a> {
    s: &'a str,
    b: &'a [u8],
    pos: usize,
}

/// Splits a line holding one JSON value into the members of that value, an
/// object; `members` is cleared and filled. Duplicate keys are all kept, in
/// order (readers take the last, as Python does). Errors: not an object, or
/// not valid JSON.
pub fn object_members<'a>(
    line: &'a str,
    members: &mut Vec<(Value<'a>, Value<'a>)>,
) -> Result<(), ScanError> {
    members.clear();
    let mut sc = Scanner {
        s: line,
        b: line.as_bytes(),
        pos: 0,
    };
    sc.ws();
    if sc.peek() != Some(b'{') {
        // Validate first so a broken line reads as broken, not as "not an object".
        sc.value(0)?;
        sc.ws();
        if sc.pos != sc.b.len() {
            return Err(sc.err("trailing characters"));
        }
        return Err(ScanError {
            reason: "expected a JSON object",
            at: 0,
        });
    }
    sc.pos += 1;
    sc.ws();
    if sc.peek() == Some(b'}') {
        sc.pos += 1;
    } else {
        loop {
            sc.ws();
            if sc.peek() != Some(b'"') {
                return Err(sc.err("expected a key"));
            }
            let key = sc.string()?;
            sc.ws();
            if sc.peek() != Some(b':') {
                return Err(sc.err("expected ':'"));
            }
            sc.pos += 1;
            sc.ws();
            let v = sc.value(1)?;
            members.push((key, v));
            sc.ws();
            match sc.peek() {
                Some(b',') => sc.pos += 1,
                Some(b'}') => {
                    sc.pos += 1;
                    break;
                }
                _ => return Err(sc.err("expected ',' or '}'")),
            }
        }
    }
    sc.ws();
    if sc.pos != sc.b.len() {
        return Err(sc.err("trailing characters"));
    }
    Ok(())
}

/// The elements of an array's raw text (as returned by the scanner).
pub fn array_items<'a>(raw: &'a str, items: &mut Vec<Value<'a>>) -> Result<(), ScanError> {
    items.clear();
    let mut sc = Scanner {
        s: raw,
        b: raw.as_bytes(),
        pos: 1,
    };
    sc.ws();
    if sc.peek() == Some(b']') {
        return Ok(());
    }
    loop {
        sc.ws();
        items.push(sc.value(1)?);
        sc.ws();
        match sc.peek() {
            Some(b',') => sc.pos += 1,
            Some(b']') => return Ok(()),
            _ => return Err(sc.err("expected ',' or ']'")),
        }
    }
}

impl<'a> Scanner<'a> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn err(&self, reason: &'static str) -> ScanError {
        ScanError {
            reason,
            at: self.pos,
        }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value<'a>, ScanError> {
        match self.peek() {
            Some(b'"') => self.string(),
            Some(b'{') => {
                let start = self.pos;
                self.container(b'}', depth)?;
                Ok(Value::Object(&self.s[start..self.pos]))
            }
            Some(b'[') => {
                let start = self.pos;
                self.container(b']', depth)?;
                Ok(Value::Array(&self.s[start..self.pos]))
            }
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("expected a value")),
            None => Err(self.err("unexpected end of line")),
        }
    }

    fn literal(&mut self, word: &'static str, v: Value<'a>) -> Result<Value<'a>, ScanError> {
        if self.b[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(v)
        } else {
            Err(self.err("expected a value"))
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Value<'a>, ScanError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err("invalid number")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        Ok(Value::Number(&self.s[start..self.pos]))
    }

    fn string(&mut self) -> Result<Value<'a>, ScanError> {
        let start = self.pos;
        self.pos += 1;
        let mut escaped = false;
        loop {
            let rest = &self.b[self.pos..];
            let Some(i) = rest
                .iter()
                .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
            else {
                self.pos = self.b.len();
                return Err(self.err("unterminated string"));
            };
            self.pos += i;
            match self.b[self.pos] {
                b'"' => {
                    self.pos += 1;
                    return Ok(Value::String {
                        raw: &self.s[start..self.pos],
                        escaped,
                    });
                }
                b'\\' => {
                    escaped = true;
                    self.escape()?;
                }
                _ => return Err(self.err("control character in string")),
            }
        }
    }

    fn escape(&mut self) -> Result<(), ScanError> {
        self.pos += 1;
        match self.peek() {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                self.pos += 1;
                Ok(())
            }
            Some(b'u') => {
                let hex = self.b.get(self.pos + 1..self.pos + 5);
                if hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                    self.pos += 5;
                    Ok(())
                } else {
                    Err(self.err("invalid \\u escape"))
                }
            }
            _ => Err(self.err("invalid escape")),
        }
    }

    fn container(&mut self, close: u8, depth: usize) -> Result<(), ScanError> {
        if depth >= MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        self.pos += 1;
        self.ws();
        if self.peek() == Some(close) {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.ws();
            if close == b'}' {
                if self.peek() != Some(b'"') {
                    return Err(self.err("expected a key"));
                }
                self.string()?;
                self.ws();
                if self.peek() != Some(b':') {
                    return Err(self.err("expected ':'"));
                }
                self.pos += 1;
                self.ws();
            }
            self.value(depth + 1)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(c) if c == close => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.err("expected ',' or a closing bracket")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(line: &str) -> Result<Vec<(String, String)>, ScanError> {
        let mut m = Vec::new();
        object_members(line, &mut m)?;
        Ok(m.iter()
            .map(|(k, v)| (k.as_str().unwrap().into_owned(), v.raw().to_string()))
            .collect())
    }

    #[test]
    fn splits_members_with_raw_values() {
        let got = members(
            r#" {"a": 1.5e3, "b\u0041": "x\"y", "c": [1, {"d": null}], "e": {}, "f": true } "#,
        )
        .unwrap();
        assert_eq!(
            got,
            vec![
                ("a".into(), "1.5e3".into()),
                ("bA".into(), r#""x\"y""#.into()),
                ("c".into(), r#"[1, {"d": null}]"#.into()),
                ("e".into(), "{}".into()),
                ("f".into(), "true".into()),
            ]
        );
        assert_eq!(members("{}").unwrap(), vec![]);
    }

    #[test]
    fn agrees_with_serde_json_on_validity() {
        let cases = [
            r#"{"a":1}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":-}"#,
            r#"{"a":"\x"}"#,
            r#"{"a":"\u12G4"}"#,
            r#"{"a":[1,]}"#,
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{"a":tru}"#,
            r#"{"a":1} x"#,
            "{\"a\":\"\t\"}",
            r#"{"a":[1,[2,[3]]],"b":{"c":{"d":"e"}}}"#,
            r#"{"a":1e+5,"b":-0.5E-2}"#,
            r#"{"a":"é✓"}"#,
            r#"{1:2}"#,
            r#"{"a":nul}"#,
            r#"{"a":"unterminated}"#,
            "{",
            "",
        ];
        for c in cases {
            let ours = object_members(c, &mut Vec::new()).is_ok();
            let theirs = serde_json::from_str::<serde_json::Value>(c).is_ok_and(|v| v.is_object());
            assert_eq!(ours, theirs, "{c}");
        }
    }

    #[test]
    fn refuses_deep_nesting_and_non_objects() {
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(1000), "]".repeat(1000));
        assert_eq!(
            object_members(&deep, &mut Vec::new()).unwrap_err().reason,
            "nested too deeply"
        );
        assert_eq!(
            object_members("[1]", &mut Vec::new()).unwrap_err().reason,
            "expected a JSON object"
        );
    }

    #[test]
    fn array_items_split() {
        let mut items = Vec::new();
        array_items(r#"[ "a", 2 , [3] ]"#, &mut items).unwrap();
        assert_eq!(
            items.iter().map(|v| v.raw()).collect::<Vec<_>>(),
            [r#""a""#, "2", "[3]"]
        );
        array_items("[]", &mut items).unwrap();
        assert!(items.is_empty());
    }
}
