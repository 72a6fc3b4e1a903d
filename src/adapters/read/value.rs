//! JSON values as the readers meet them: an input as a stream of values
//! whatever its framing (one document, a list, JSONL, documents one after
//! another), JSON nested inside strings, texts of inputs and outputs, and
//! times in every spelling.

use std::borrow::Cow;

use serde_json::Value;

use crate::adapters::settings::DecodeSettings;
use crate::adapters::unreadable::Unreadable;
use crate::record::EventOut;
use crate::timestamp::Timestamp;

// ---- framing: one document, a list, JSONL, concatenated documents ----

/// True when a first line opens documents rather than JSONL: its value
/// runs on past the line, or another object follows it on the line
/// (files of one compact object each, concatenated by `cat`).
pub(crate) fn opens_documents(line: &[u8]) -> bool {
    let mut stream =
        serde_json::Deserializer::from_slice(line).into_iter::<serde::de::IgnoredAny>();
    match stream.next() {
        Some(Err(e)) => e.is_eof(),
        Some(Ok(_)) => line[stream.byte_offset()..]
            .trim_ascii_start()
            .starts_with(b"{"),
        None => false,
    }
}

/// Whether a first line that [`opens_documents`] is rather a value cut
/// short (a log whose head was cut off, a partial copy) at the top of one
/// value per line: it opens an object, does not end where a value opens on
/// the next line (after `{`, `[` or `:`), and the next line holds a whole
/// object of its own (a pretty printer's next line after a comma is a key,
/// or a member followed by a comma or a bracket). Read as lines, only that
/// line is lost.
pub(crate) fn cut_short(first: &[u8], next: Option<&[u8]>) -> bool {
    let first = first.trim_ascii();
    let breaks_there = matches!(first.last(), Some(b'{' | b'[' | b':'));
    let next_whole = next.map(<[u8]>::trim_ascii).is_some_and(|n| {
        n.starts_with(b"{") && serde_json::from_slice::<serde::de::IgnoredAny>(n).is_ok()
    });
    first.starts_with(b"{") && !breaks_there && next_whole
}

/// Whether `doc`, which [`opens_documents`], is rather lines whose first
/// was cut short: its first two lines say so ([`cut_short`]) and its
/// first document does not parse (a document that does, whatever its
/// line breaks, is one).
pub(crate) fn first_line_cut_short(doc: &[u8]) -> bool {
    let mut lines = doc
        .split(|b| *b == b'\n')
        .filter(|l| !l.trim_ascii().is_empty());
    let (Some(first), next) = (lines.next(), lines.next()) else {
        return false;
    };
    cut_short(first, next)
        && matches!(
            serde_json::Deserializer::from_slice(doc)
                .into_iter::<serde::de::IgnoredAny>()
                .next(),
            Some(Err(_))
        )
}

/// Every JSON value of `doc` in order with the line it starts on, or why a
/// part could not be read. When the first line holds one whole value the
/// input is JSONL: each line is read on its own, so a bad line costs that
/// line. Otherwise (see [`opens_documents`]) it is one or more documents
/// one after another, read until the first one that is broken (what
/// follows cannot be told apart).
pub(crate) fn json_values(
    doc: &[u8],
) -> Box<dyn Iterator<Item = (u64, Result<Value, Unreadable>)> + '_> {
    let doc = doc.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(doc);
    let mut lines = doc.split(|b| *b == b'\n');
    let first = lines.find(|l| !l.trim_ascii().is_empty());
    let multi_line = first.is_some_and(opens_documents) && !first_line_cut_short(doc);
    if !multi_line {
        return Box::new(
            doc.split(|b| *b == b'\n')
                .enumerate()
                .filter(|(_, l)| !l.trim_ascii().is_empty())
                .map(|(i, l)| (i as u64 + 1, value_of_line(l))),
        );
    }
    if let Err(e) = std::str::from_utf8(doc) {
        let line = 1 + memchr::memchr_iter(b'\n', &doc[..e.valid_up_to()]).count() as u64;
        return Box::new(std::iter::once((line, Err(Unreadable::NotUtf8))));
    }
    Box::new(Documents {
        doc,
        stream: serde_json::Deserializer::from_slice(doc).into_iter(),
        lines: LineCounter::default(),
        done: false,
    })
}

fn value_of_line(line: &[u8]) -> Result<Value, Unreadable> {
    if std::str::from_utf8(line).is_err() {
        return Err(Unreadable::NotUtf8);
    }
    serde_json::from_slice(line)
        .map_err(|e| Unreadable::Json(crate::plumbing::diag::json_reason(&e)))
}

/// Documents one after another, up to the first broken one.
struct Documents<'d> {
    doc: &'d [u8],
    stream: serde_json::StreamDeserializer<'d, serde_json::de::SliceRead<'d>, Value>,
    lines: LineCounter,
    done: bool,
}

impl Iterator for Documents<'_> {
    type Item = (u64, Result<Value, Unreadable>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let start = self.stream.byte_offset();
        let space = self.doc[start..]
            .iter()
            .take_while(|b| b.is_ascii_whitespace());
        let line = self.lines.at(self.doc, start + space.count());
        match self.stream.next()? {
            Ok(v) => Some((line, Ok(v))),
            Err(e) => {
                self.done = true;
                let at = if e.line() > 0 { e.line() as u64 } else { line };
                let why = crate::plumbing::diag::json_reason(&e);
                Some((at, Err(Unreadable::Json(why))))
            }
        }
    }
}

/// Line numbers of offsets that only grow, counted once.
#[derive(Default)]
struct LineCounter {
    offset: usize,
    line: u64,
}

impl LineCounter {
    fn at(&mut self, doc: &[u8], offset: usize) -> u64 {
        self.line += memchr::memchr_iter(b'\n', &doc[self.offset..offset]).count() as u64;
        self.offset = offset;
        self.line + 1
    }
}

// ---- values: nested JSON, texts, times ----

/// A value with JSON written inside strings decoded (twice-encoded JSON
/// too); texts that are not JSON objects or lists stay as they are, and
/// are borrowed, not copied.
pub(crate) fn decoded(v: &Value) -> Cow<'_, Value> {
    let mut out = Cow::Borrowed(v);
    for _ in 0..2 {
        let inner = match out.as_ref() {
            Value::String(s) if holds_json(s) => serde_json::from_str::<Value>(s).ok(),
            _ => None,
        };
        match inner {
            Some(inner) => out = Cow::Owned(inner),
            None => break,
        }
    }
    out
}

/// [`decoded`], of a value the caller owns.
pub(crate) fn decoded_owned(v: Value) -> Value {
    match decoded(&v) {
        Cow::Owned(inner) => inner,
        Cow::Borrowed(_) => v,
    }
}

/// Whether a text may be JSON worth decoding: an object, a list or a
/// string.
fn holds_json(s: &str) -> bool {
    let t = s.trim_start();
    t.starts_with('{') || t.starts_with('[') || t.starts_with('"')
}

/// The text of an input or output: a string (decoded when it holds JSON
/// text), the text parts of a content list, or compact JSON.
pub(crate) fn text_of(v: &Value) -> Option<String> {
    match decoded(v).as_ref() {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) if !parts.is_empty() && parts.iter().all(is_text_part) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        other => Some(other.to_string()),
    }
    .filter(|t| !t.trim().is_empty())
}

/// A content block of type "text" (the Anthropic and OpenAI shape).
fn is_text_part(p: &Value) -> bool {
    p.get("type").and_then(Value::as_str) == Some("text")
        && p.get("text").is_some_and(Value::is_string)
}

/// What kind of JSON value `v` is, for a message.
pub(crate) fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Non-empty text of a JSON string, or of a number.
pub(crate) fn str_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A time written as ISO 8601 (any offset), as [seconds, nanoseconds], or
/// as an epoch number in seconds, milliseconds, microseconds or nanoseconds
/// (told apart by size; integers are read exactly, never through a float),
/// as Unix nanoseconds.
pub(crate) fn nanos_of(v: Option<&Value>) -> Option<i128> {
    let nanos = match v? {
        Value::String(s) => match s.trim().parse::<i128>() {
            Ok(n) => epoch_integer(n),
            Err(_) => Timestamp::parse(s).map(|t| t.0),
        },
        Value::Number(n) => match n.as_i64() {
            Some(i) => epoch_integer(i128::from(i)),
            None => n
                .as_f64()
                .and_then(Timestamp::from_epoch_number)
                .map(|t| t.0),
        },
        // [seconds, nanoseconds], as JavaScript's hrtime writes it.
        Value::Array(pair) => match pair.as_slice() {
            [Value::Number(s), Value::Number(ns)] => {
                Some(i128::from(s.as_i64()?) * 1_000_000_000 + i128::from(ns.as_i64()?))
            }
            _ => None,
        },
        _ => None,
    };
    nanos.filter(|n| *n > 0)
}

fn epoch_integer(n: i128) -> Option<i128> {
    Some(match n.abs() {
        a if a < 100_000_000_000 => n * 1_000_000_000,
        a if a < 100_000_000_000_000 => n * 1_000_000,
        a if a < 100_000_000_000_000_000 => n * 1_000,
        _ => n,
    })
}

/// Sets an event's input and output, cut to the configured size, with the
/// digests of the whole texts.
pub(crate) fn set_texts(
    ev: &mut EventOut<'_>,
    input: Option<&str>,
    output: Option<&str>,
    settings: &DecodeSettings,
) {
    if let Some(text) = input {
        let (cut, digest) = settings.text(text);
        ev.input = Some(cut);
        ev.input_digest = Some(digest);
    }
    if let Some(text) = output {
        let (cut, digest) = settings.text(text);
        ev.output = Some(cut);
        ev.output_digest = Some(digest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines_and_values(doc: &str) -> Vec<(u64, Result<Value, Unreadable>)> {
        json_values(doc.as_bytes()).collect()
    }

    #[test]
    fn a_first_line_cut_short_costs_that_line_only() {
        let got = lines_and_values("{\"a\": {\"b\n{\"a\":2}\n{\"a\":3}\n");
        let read: Vec<u64> = got
            .iter()
            .filter(|(_, v)| v.is_ok())
            .map(|(l, _)| *l)
            .collect();
        assert_eq!(read, [2, 3]);
        assert!(got[0].1.is_err() && got[0].0 == 1);
        // Files joined with `cat`, the first without its last newline.
        let got = lines_and_values("{\"a\":1}{\"a\":2}\n{\"a\":3}\n");
        assert_eq!(got.iter().filter(|(_, v)| v.is_ok()).count(), 3);
        // Pretty-printed documents stay documents, whatever their line
        // breaks: each parses whole.
        for doc in [
            "{\"x\": [\n{\"a\":1}\n]}",
            "{\n  \"a\": 1\n}",
            "{\"a\": 1,\n\"b\": {\"c\": 2}}",
            "{\"items\": [{\"a\": 1},\n{\"b\": 2},\n{\"c\": 3}]}",
            // Two items, the first on the opening line.
            "{\"items\": [{\"a\": 1},\n{\"b\": 2}\n]}",
            "[\n{\"a\":1}\n]",
            "{\"a\": 1\n, \"b\": 2}",
        ] {
            let got = lines_and_values(doc);
            assert_eq!(got.len(), 1, "{doc}");
            assert!(got[0].1.is_ok(), "{doc}");
        }
    }

    #[test]
    fn every_framing_gives_its_values_and_lines() {
        let got = lines_and_values("{\"a\":1}\n{\"a\":2}\n");
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].0, 2);
        let got = lines_and_values("\u{feff}{\n  \"a\": 1\n}\n{\n  \"a\": 2\n}");
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].0, got[1].0), (1, 4));
        let got = lines_and_values("[1,2]\n[\"x\", {\"b\": 3}]\n");
        assert_eq!(got[1].1.as_ref().unwrap(), &json!(["x", {"b": 3}]));
    }

    #[test]
    fn a_bad_line_costs_only_that_line() {
        let got = lines_and_values("{\"a\":1}\nnot json\n\n{\"a\":3}\n{\"a\":");
        let ok: Vec<_> = got
            .iter()
            .filter(|(_, v)| v.is_ok())
            .map(|(l, _)| *l)
            .collect();
        let bad: Vec<_> = got
            .iter()
            .filter(|(_, v)| v.is_err())
            .map(|(l, _)| *l)
            .collect();
        assert_eq!(ok, [1, 4]);
        assert_eq!(bad, [2, 5]);
        let got: Vec<_> = json_values(b"{\"a\":1}\r\n\xff\r\n{\"a\":3}\r\n").collect();
        assert_eq!(got.len(), 3);
        assert_eq!(got[1], (2, Err(Unreadable::NotUtf8)));
        assert_eq!(got[2].0, 3);
        assert!(json_values(b"").next().is_none());
    }

    #[test]
    fn a_broken_document_ends_the_reading() {
        // Complete lines inside a document cut short are not read as values.
        let cut = "{\n  \"observations\": [\n    {\"id\": \"a\"},\n    {\"id\": \"b\"";
        let got = lines_and_values(cut);
        assert_eq!(got.len(), 1);
        assert!(got[0].1.is_err());
        let got = lines_and_values("{\n \"a\": 1\n}\n{\n \"a\": x\n}\n{\"a\": 3}\n");
        assert!(got[0].1.is_ok());
        assert_eq!((got.len(), got[1].0), (2, 5));
        let got: Vec<_> = json_values(b"{\n \"a\": \"\xff\"\n}\n").collect();
        assert_eq!(got, [(2, Err(Unreadable::NotUtf8))]);
    }

    #[test]
    fn json_inside_strings_is_decoded_even_twice() {
        assert_eq!(*decoded(&json!("{\"a\":1}")), json!({"a": 1}));
        assert_eq!(*decoded(&json!("\"{\\\"a\\\":1}\"")), json!({"a": 1}));
        assert_eq!(*decoded(&json!("plain")), json!("plain"));
        assert_eq!(text_of(&json!("\"Say hi\"")).unwrap(), "Say hi");
        assert_eq!(
            text_of(&json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]))
                .unwrap(),
            "a\nb"
        );
        assert_eq!(text_of(&json!({"x": 1})).unwrap(), "{\"x\":1}");
        assert_eq!(text_of(&json!("  ")), None);
    }

    #[test]
    fn times_in_every_spelling() {
        let iso = nanos_of(Some(&json!("2024-10-11T20:58:23.298773+00:00")));
        assert_eq!(iso, Some(1_728_680_303_298_773_000));
        assert_eq!(
            nanos_of(Some(&json!(1_728_803_137_170u64))),
            Some(1_728_803_137_170_000_000)
        );
        assert_eq!(
            nanos_of(Some(&json!("2025-06-06 11:31:33.965"))),
            nanos_of(Some(&json!("2025-06-06T13:31:33.965+02:00")))
        );
        assert_eq!(nanos_of(Some(&json!(null))), None);
        let ns = 1_728_803_137_170_000_001u64;
        assert_eq!(nanos_of(Some(&json!(ns))), Some(i128::from(ns)));
        assert_eq!(nanos_of(Some(&json!(ns.to_string()))), Some(i128::from(ns)));
        assert_eq!(
            nanos_of(Some(&json!(1_728_803_137))),
            Some(1_728_803_137_000_000_000)
        );
        let hrtime = json!([1_728_803_137, 5]);
        assert_eq!(nanos_of(Some(&hrtime)), Some(1_728_803_137_000_000_005));
    }
}
