//! The first scanner, recursive and checked at every byte: the oracle the
//! differential tests hold the fast scanner in `super` against.

use super::{MAX_DEPTH, ScanError, Value};

/// A line's object split two levels deep: its members, and the members of
/// each member that is itself an object.
#[derive(Default)]
pub(crate) struct Split<'a> {
    pub members: Vec<(Value<'a>, Value<'a>)>,
    /// The members of nested objects, each object's together.
    pub children: Vec<(Value<'a>, Value<'a>)>,
    /// For each member, the range of `children` holding its members (empty
    /// unless its value is an object).
    pub spans: Vec<(u32, u32)>,
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
pub(crate) fn object_members<'a>(
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

/// [`object_members`], also splitting the members whose values are objects.
pub(crate) fn split_object<'a>(line: &'a str, split: &mut Split<'a>) -> Result<(), ScanError> {
    split.members.clear();
    split.children.clear();
    split.spans.clear();
    let Split {
        members,
        children,
        spans,
        ..
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
        return Err(ScanError::new("expected a JSON object", 0));
    }
    sc.object(0, member)?;
    sc.ws();
    if sc.pos != sc.b.len() {
        return Err(sc.err("trailing characters"));
    }
    Ok(())
}

/// The elements of an array's raw text (as returned by the scanner).
pub(crate) fn array_items<'a>(raw: &'a str, items: &mut Vec<Value<'a>>) -> Result<(), ScanError> {
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
        ScanError::new(reason, self.pos)
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

    fn string(&mut self) -> Result<Value<'a>, ScanError> {
        let start = self.pos;
        self.pos += 1;
        let mut escaped = false;
        loop {
            let Some(i) = self.b[self.pos..]
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
