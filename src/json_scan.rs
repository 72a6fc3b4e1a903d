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

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// True when some byte of the word is zero.
fn zero_byte(v: u64) -> u64 {
    v.wrapping_sub(ONES) & !v & HIGHS
}

/// The first byte that ends a run of plain string text: a quote, a
/// backslash or a control character. Sixteen bytes at a time where SSE2 is
/// the baseline, then eight.
fn find_special(b: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        let mut blocks = b.chunks_exact(16);
        let mut i = 0;
        for block in blocks.by_ref() {
            let found = special_mask16(block.try_into().expect("sixteen bytes"));
            if found != 0 {
                return Some(i + found.trailing_zeros() as usize);
            }
            i += 16;
        }
        find_special_swar(blocks.remainder()).map(|p| i + p)
    }
    #[cfg(not(target_arch = "x86_64"))]
    find_special_swar(b)
}

/// One bit per special byte of `block`, lowest bit first.
#[cfg(target_arch = "x86_64")]
fn special_mask16(block: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: `block` is sixteen readable bytes, and an unaligned load has
    // no alignment requirement; SSE2 is part of every x86_64 CPU, so its
    // intrinsics are always available.
    unsafe {
        let v = _mm_loadu_si128(block.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        // Unsigned max(v, 0x1f) == 0x1f exactly for the bytes below 0x20.
        let low = _mm_set1_epi8(0x1f);
        let control = _mm_cmpeq_epi8(_mm_max_epu8(v, low), low);
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32
    }
}

/// [`find_special`] eight bytes at a time, in plain integer arithmetic.
fn find_special_swar(b: &[u8]) -> Option<usize> {
    let mut words = b.chunks_exact(8);
    let mut i = 0;
    for word in words.by_ref() {
        let w = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let quote = zero_byte(w ^ (ONES * b'"' as u64));
        let backslash = zero_byte(w ^ (ONES * b'\\' as u64));
        // Bytes below 0x20; bytes of 0x80 and above are masked out by !w.
        let control = w.wrapping_sub(ONES * 0x20) & !w & HIGHS;
        let found = quote | backslash | control;
        if found != 0 {
            // Borrows only run upwards, so the lowest flagged byte is exact.
            return Some(i + (found.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    words
        .remainder()
        .iter()
        .position(|&c| c == b'"' || c == b'\\' || c < 0x20)
        .map(|p| i + p)
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
    top_object(line, |sc, key| {
        let v = sc.value(1)?;
        members.push((key, v));
        Ok(())
    })
}

/// A key and its value, as they stand in the line.
pub type Member<'a> = (Value<'a>, Value<'a>);

/// A line's object split two levels deep, in one pass: its members, and the
/// members of each member that is itself an object, so that readers of
/// nested fields need not scan them again.
#[derive(Default)]
pub struct Split<'a> {
    pub members: Vec<(Value<'a>, Value<'a>)>,
    /// The members of nested objects, each object's together.
    pub children: Vec<(Value<'a>, Value<'a>)>,
    /// For each member, the range of `children` holding its members (empty
    /// unless its value is an object).
    pub spans: Vec<(u32, u32)>,
}

impl<'a> Split<'a> {
    /// The members of member `i`'s object value.
    pub fn children_of(&self, i: usize) -> &[(Value<'a>, Value<'a>)] {
        let (from, to) = self.spans[i];
        &self.children[from as usize..to as usize]
    }
}

/// [`object_members`], also splitting the members whose values are objects.
pub fn split_object<'a>(line: &'a str, split: &mut Split<'a>) -> Result<(), ScanError> {
    split.members.clear();
    split.children.clear();
    split.spans.clear();
    let Split {
        members,
        children,
        spans,
    } = split;
    top_object(line, |sc, key| {
        let from = children.len() as u32;
        let v = if sc.peek() == Some(b'{') {
            let start = sc.pos;
            sc.object(1, |sc, k| {
                let v = sc.value(2)?;
                children.push((k, v));
                Ok(())
            })?;
            Value::Object(&sc.s[start..sc.pos])
        } else {
            sc.value(1)?
        };
        members.push((key, v));
        spans.push((from, children.len() as u32));
        Ok(())
    })
}

/// Scans a line that must hold one object, handing each member's key to
/// `member`, which scans the value.
fn top_object<'a>(
    line: &'a str,
    member: impl FnMut(&mut Scanner<'a>, Value<'a>) -> Result<(), ScanError>,
) -> Result<(), ScanError> {
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
    sc.object(0, member)?;
    sc.ws();
    if sc.pos != sc.b.len() {
        return Err(sc.err("trailing characters"));
    }
    Ok(())
}

/// The values of the members named in `names`, in that order, found in
/// one pass over an object's members; the last of duplicate keys wins, as in
/// Python's json module.
pub fn pick<'c, const N: usize>(
    members: &[(Value<'c>, Value<'c>)],
    names: &[&str; N],
) -> [Option<Value<'c>>; N] {
    let mut slots = [None; N];
    for (k, v) in members {
        let i = match k {
            Value::String {
                raw,
                escaped: false,
            } => names.iter().position(|n| *n == &raw[1..raw.len() - 1]),
            k => k
                .as_str()
                .and_then(|key| names.iter().position(|n| *n == key)),
        };
        if let Some(i) = i {
            slots[i] = Some(*v);
        }
    }
    slots
}

/// The elements of an array's raw text (as returned by the scanner).
pub fn array_items<'a>(raw: &'a str, items: &mut Vec<Value<'a>>) -> Result<(), ScanError> {
    items.clear();
    let mut sc = Scanner {
        s: raw,
        b: raw.as_bytes(),
        pos: 0,
    };
    sc.array(0, |sc| {
        items.push(sc.value(1)?);
        Ok(())
    })
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
                self.object(depth, |sc, _| sc.value(depth + 1).map(drop))?;
                Ok(Value::Object(&self.s[start..self.pos]))
            }
            Some(b'[') => {
                let start = self.pos;
                self.array(depth, |sc| sc.value(depth + 1).map(drop))?;
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

    /// The string at `pos`. Most strings in traces are short and plain: one
    /// sixteen-byte test finds their end without leaving this function.
    #[inline]
    fn string(&mut self) -> Result<Value<'a>, ScanError> {
        #[cfg(target_arch = "x86_64")]
        if let Some(block) = self.b.get(self.pos + 1..self.pos + 17) {
            let found = special_mask16(block.try_into().expect("sixteen bytes"));
            let end = self.pos + 1 + found.trailing_zeros() as usize;
            if found != 0 && self.b[end] == b'"' {
                let start = self.pos;
                self.pos = end + 1;
                return Ok(Value::String {
                    raw: &self.s[start..self.pos],
                    escaped: false,
                });
            }
        }
        self.string_slow()
    }

    #[inline(never)]
    fn string_slow(&mut self) -> Result<Value<'a>, ScanError> {
        let start = self.pos;
        self.pos += 1;
        let mut escaped = false;
        loop {
            let Some(i) = find_special(&self.b[self.pos..]) else {
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

    /// Scans the object at `pos`, handing each member's key to `member`,
    /// which scans the value.
    fn object(
        &mut self,
        depth: usize,
        mut member: impl FnMut(&mut Self, Value<'a>) -> Result<(), ScanError>,
    ) -> Result<(), ScanError> {
        if depth >= MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        self.pos += 1;
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return Err(self.err("expected a key"));
            }
            let key = self.string()?;
            self.ws();
            if self.peek() != Some(b':') {
                return Err(self.err("expected ':'"));
            }
            self.pos += 1;
            self.ws();
            member(self, key)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.err("expected ',' or '}'")),
            }
        }
    }

    /// Scans the array at `pos`, calling `item` to scan each element.
    fn array(
        &mut self,
        depth: usize,
        mut item: impl FnMut(&mut Self) -> Result<(), ScanError>,
    ) -> Result<(), ScanError> {
        if depth >= MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        self.pos += 1;
        self.ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            self.ws();
            item(self)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return Err(self.err("expected ',' or ']'")),
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
            assert_eq!(
                split_object(c, &mut Split::default()).is_ok(),
                theirs,
                "{c}"
            );
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
    fn special_bytes_are_found_at_any_offset() {
        for len in 0..40 {
            for special in [b'"', b'\\', 0x01, 0x1f] {
                let mut b = vec![b'a'; len];
                b.extend_from_slice("é✓".as_bytes());
                let at = b.len();
                b.push(special);
                b.extend_from_slice(b"zz\"");
                assert_eq!(find_special(&b), Some(at), "{len} {special}");
                assert_eq!(find_special_swar(&b), Some(at), "{len} {special}");
            }
            assert_eq!(find_special(&vec![b'x'; len]), None);
            assert_eq!(find_special_swar(&vec![b'x'; len]), None);
        }
    }

    #[test]
    fn split_keeps_the_members_of_nested_objects() {
        let line = r#"{"a": {"b": 1, "c": {"d": [2]}}, "e": [{"x": 1}], "f": {}, "a": 3}"#;
        let mut split = Split::default();
        split_object(line, &mut split).unwrap();
        let raw = |m: &[(Value<'_>, Value<'_>)]| {
            m.iter()
                .map(|(k, v)| format!("{}={}", k.raw(), v.raw()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            raw(&split.members),
            [
                r#""a"={"b": 1, "c": {"d": [2]}}"#,
                r#""e"=[{"x": 1}]"#,
                r#""f"={}"#,
                r#""a"=3"#
            ]
        );
        assert_eq!(raw(split.children_of(0)), [r#""b"=1"#, r#""c"={"d": [2]}"#]);
        assert!(split.children_of(1).is_empty());
        assert!(split.children_of(2).is_empty());
        assert!(split.children_of(3).is_empty());
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
