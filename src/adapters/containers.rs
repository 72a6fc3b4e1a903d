//! JSON inputs no format claims by their first value: an object whose
//! values are each a document of a known format (named cases, a parent run
//! and its child) is read value by value; any other JSON document is named
//! in one message rather than as lines that are not JSON.

use std::io::{self, Read};

use serde::de::IgnoredAny;
use serde_json::Value;

use crate::adapters::Source;
use crate::adapters::formats::Format;
use crate::adapters::read::shape::Shape;
use crate::adapters::read_detected;
use crate::adapters::sink::Sink;

/// How many keys a message names before it stops.
const KEYS_NAMED: usize = 8;

/// Whether an input no format claimed may be a JSON document: it opens an
/// object or a list. A live input (`live`) must also spread its first value
/// over lines, as lines are read as they arrive.
pub(super) fn may_be_container(head: &[u8], live: bool) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    matches!(head.trim_ascii_start().first(), Some(b'{' | b'['))
        && !(live && first_line_is_value(head))
}

/// Whether the first non-blank line holds a whole JSON value.
fn first_line_is_value(body: &[u8]) -> bool {
    body.split(|b| *b == b'\n')
        .find(|l| !l.trim_ascii().is_empty())
        .is_some_and(|l| serde_json::from_slice::<IgnoredAny>(l).is_ok())
}

/// Reads an input no format claimed: its values one by one when it is an
/// object of documents, else one message naming what it is. Lines (JSONL)
/// go to the ndjson reader, whose messages are per line.
pub(super) fn read(
    name: &str,
    head: Vec<u8>,
    rest: impl Read + Send,
    sink: &mut Sink<'_>,
) -> anyhow::Result<()> {
    let data = whole(name, head, rest)?;
    let body = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&data);
    match layout(body) {
        Layout::Lines => {
            sink.begin_source(name, Format::FALLBACK.name);
            crate::adapters::formats::ndjson::read(io::Cursor::new(&data), None, sink)?;
            sink.end_source()?;
        }
        Layout::Broken(line, reason) => {
            sink.begin_source(name, crate::adapters::sink::NO_FORMAT);
            sink.skip(line, &reason)?;
            sink.end_source()?;
        }
        Layout::Documents(n) => {
            let what = serde_json::Deserializer::from_slice(body)
                .into_iter::<Value>()
                .next()
                .and_then(Result::ok)
                .map_or_else(String::new, |v| describe(&v));
            let why = match n {
                1 => format!(
                    "a JSON document no format reads ({what}); use --format to name its format"
                ),
                _ => format!(
                    "{n} JSON documents no format reads (the first: {what}); use --format to name their format"
                ),
            };
            if n > 1 || !read_each_value(name, body, sink)? {
                sink.begin_source(name, crate::adapters::sink::NO_FORMAT);
                sink.skip(None, &why)?;
                sink.end_source()?;
            }
        }
    }
    Ok(())
}

/// Reads an object whose every value is a document of a known format
/// member by member; anything else (one of its values no document) as
/// `format`, which its first bytes claimed.
pub(super) fn read_members_or(
    name: &str,
    head: Vec<u8>,
    rest: impl Read + Send,
    format: Format,
    sink: &mut Sink<'_>,
) -> anyhow::Result<()> {
    let data = whole(name, head, rest)?;
    let body = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&data);
    if matches!(layout(body), Layout::Documents(1)) && read_each_value(name, body, sink)? {
        return Ok(());
    }
    sink.begin_source(name, format.name);
    (format.read)(Box::new(io::Cursor::new(data)), None, sink)?;
    Ok(sink.end_source()?)
}

/// The whole input: its first bytes, then the rest.
fn whole(name: &str, head: Vec<u8>, rest: impl Read) -> anyhow::Result<Vec<u8>> {
    let mut data = head;
    io::BufReader::new(rest)
        .read_to_end(&mut data)
        .map_err(|e| anyhow::anyhow!("{name}: {}", crate::plumbing::diag::io_reason(&e)))?;
    Ok(data)
}

/// How an input's JSON is laid out.
enum Layout {
    /// A value on each line, or not JSON at all: read line by line.
    Lines,
    /// Documents spread over lines, this many, one after another.
    Documents(usize),
    /// A document spread over lines that breaks: where and why.
    Broken(Option<u64>, String),
}

fn layout(body: &[u8]) -> Layout {
    let one_line_value = first_line_is_value(body);
    let mut n = 0;
    for value in serde_json::Deserializer::from_slice(body).into_iter::<IgnoredAny>() {
        match value {
            Ok(_) => n += 1,
            Err(_) if one_line_value => return Layout::Lines,
            Err(e) => {
                let line = Some(e.line() as u64).filter(|l| *l > 0);
                let why = format!("not valid JSON: {}", crate::plumbing::diag::json_reason(&e));
                return Layout::Broken(line, why);
            }
        }
    }
    match n {
        // One value alone is a document whatever its layout.
        0 => Layout::Lines,
        1 => Layout::Documents(1),
        _ if one_line_value => Layout::Lines,
        _ => Layout::Documents(n),
    }
}

/// What a document is, for a message: an object's keys, or a list's length
/// and its first object's keys.
fn describe(v: &Value) -> String {
    let keys = |o: &serde_json::Map<String, Value>| {
        let mut named: Vec<&str> = o.keys().take(KEYS_NAMED).map(String::as_str).collect();
        if o.len() > KEYS_NAMED {
            named.push("…");
        }
        named.join(", ")
    };
    match v {
        Value::Object(o) if o.is_empty() => "an empty object".to_string(),
        Value::Object(o) => format!("top-level keys: {}", keys(o)),
        Value::Array(items) => {
            let n = items.len();
            match items.first() {
                Some(Value::Object(o)) => format!("a list of {n}; the first has keys: {}", keys(o)),
                Some(other) => format!("a list of {n}; the first is {}", kind(other)),
                None => "an empty list".to_string(),
            }
        }
        other => kind(other).to_string(),
    }
}

fn kind(v: &Value) -> &'static str {
    crate::adapters::read::value::describe(v)
}

/// Reads an object whose every value is a document of a known format, each
/// as an input of its own named `NAME#KEY` (its lines those of the file).
/// False, having read nothing, when the document is no such object.
fn read_each_value(name: &str, body: &[u8], sink: &mut Sink<'_>) -> anyhow::Result<bool> {
    let Some(members) = members(body) else {
        return Ok(false);
    };
    let mut parts = Vec::with_capacity(members.len());
    for (key, start, end) in members {
        // Blank lines before the value keep its line numbers the file's.
        let line = memchr::memchr_iter(b'\n', &body[..start]).count();
        let mut bytes = vec![b'\n'; line];
        bytes.extend_from_slice(&body[start..end]);
        let look = &bytes[..bytes.len().min(line + 64 * 1024)];
        match Format::claiming(&Shape::of(look)) {
            Some(format) => parts.push((key, format, bytes)),
            None => return Ok(false),
        }
    }
    if parts.is_empty() {
        return Ok(false);
    }
    // One member names nothing to tell apart (`{"history": [...]}`): the
    // input keeps the file's name, and its runs are named by the file.
    let single = parts.len() == 1;
    for (key, format, bytes) in parts {
        let part = if single {
            name.to_string()
        } else {
            format!("{name}#{key}")
        };
        let source = Source {
            name: &part,
            waiting: None,
        };
        read_detected(&source, bytes, io::empty(), format, sink)?;
    }
    Ok(true)
}

/// The members of a top-level object: each key, and where its value starts
/// and ends. `None` when `body` is no object or a value is not a document
/// (an object or a list).
fn members(body: &[u8]) -> Option<Vec<(String, usize, usize)>> {
    let skip_ws = |mut at: usize| {
        while body.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        at
    };
    let mut at = skip_ws(0);
    if body.get(at) != Some(&b'{') {
        return None;
    }
    at = skip_ws(at + 1);
    let mut out = Vec::new();
    if body.get(at) == Some(&b'}') {
        return Some(out);
    }
    loop {
        let mut keys = serde_json::Deserializer::from_slice(&body[at..]).into_iter::<String>();
        let key = keys.next()?.ok()?;
        at = skip_ws(at + keys.byte_offset());
        if body.get(at) != Some(&b':') {
            return None;
        }
        let start = skip_ws(at + 1);
        if !matches!(body.get(start), Some(b'{' | b'[')) {
            return None;
        }
        let mut values =
            serde_json::Deserializer::from_slice(&body[start..]).into_iter::<IgnoredAny>();
        values.next()?.ok()?;
        let end = start + values.byte_offset();
        out.push((key, start, end));
        at = skip_ws(end);
        match body.get(at) {
            Some(b',') => at = skip_ws(at + 1),
            Some(b'}') => return Some(out),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::formats::Format;
    use crate::adapters::records_of;

    #[test]
    fn named_cases_are_read_whatever_their_names_claim() {
        let conv = |t: &str| {
            serde_json::json!({"messages": [{"role": "user", "content": t},
                                                              {"role": "assistant", "content": "ok"}]})
        };
        let doc = serde_json::json!({"spans": conv("a"), "trace": conv("b"), "Case 3": conv("c")});
        let recs = records_of(Format::AUTO, "cases.json", doc.to_string().as_bytes());
        let runs: Vec<&str> = recs
            .iter()
            .filter(|r| r["kind"] == "run")
            .map(|r| r["run_id"].as_str().unwrap())
            .collect();
        assert_eq!(runs, ["cases#spans", "cases#trace", "cases#Case 3"]);
    }

    #[test]
    fn members_with_where_their_values_lie() {
        let doc = br#" { "a" : [1, {"x": "}"}] , "b\"c": {"k": []} } "#;
        let m = members(doc).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(&doc[m[0].1..m[0].2], br#"[1, {"x": "}"}]"#);
        assert_eq!(m[1].0, "b\"c");
        assert_eq!(&doc[m[1].1..m[1].2], br#"{"k": []}"#);
        assert!(members(br#"{"a": 1}"#).is_none(), "a number is no document");
        assert!(members(b"[1]").is_none());
    }

    #[test]
    fn layouts_told_apart() {
        assert!(matches!(layout(b"{\"a\": 1}\n{\"a\": 2}\n"), Layout::Lines));
        assert!(matches!(layout(b"{\"a\": 1}\n"), Layout::Documents(1)));
        assert!(matches!(
            layout(b"{\n\"a\": 1\n}\n{\n}"),
            Layout::Documents(2)
        ));
        assert!(matches!(
            layout(b"{\n\"a\": x\n}"),
            Layout::Broken(Some(2), _)
        ));
        assert!(matches!(layout(b"{\"a\": 1}\nnot json\n"), Layout::Lines));
        assert!(matches!(layout(b"{\"a\": x}"), Layout::Broken(Some(1), _)));
    }

    fn read(input: &str) -> (Vec<Value>, Vec<Value>) {
        let recs = records_of(Format::AUTO, "doc.json", input.as_bytes());
        recs.into_iter().partition(|r| r["kind"] == "source")
    }

    #[test]
    fn a_document_no_format_reads_is_one_message() {
        let (sources, rest) = read("{\n  \"a\": 1,\n  \"b\": {\"c\": 2},\n  \"d\": []\n}\n");
        assert!(rest.is_empty());
        assert_eq!(sources.len(), 1);
        assert_eq!(
            (&sources[0]["format"], &sources[0]["skipped"]),
            (&"json".into(), &1.into())
        );
    }

    #[test]
    fn named_documents_are_read_each_as_its_own_input() {
        let doc = r#"{
  "case_a": {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]},
  "case_b": [{"span_id": "s1", "trace_id": "t1", "name": "agent"}]
}"#;
        let (sources, rest) = read(doc);
        let paths: Vec<_> = sources
            .iter()
            .map(|s| s["path"].as_str().unwrap())
            .collect();
        assert_eq!(paths, ["doc.json#case_a", "doc.json#case_b"]);
        assert_eq!(sources[0]["format"], "openai-chat");
        assert_eq!(sources[1]["format"], "otel");
        assert!(sources.iter().all(|s| s["skipped"] == 0), "{sources:?}");
        let events: Vec<_> = rest.iter().filter(|r| r["kind"] == "event").collect();
        assert_eq!(events.len(), 3);
        // Lines are the file's.
        assert_eq!(events[0]["src"]["line"], 2);
        assert_eq!(events[2]["src"]["line"], 3);
    }
}
