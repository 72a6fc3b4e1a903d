//! Format detection from an input's first bytes, never its name: binary
//! files we cannot read are recognised and refused, and a JSON input is
//! claimed by the first format of [`FORMATS`](super::FORMATS) that knows
//! the shape of its first value, read without parsing the whole input.

use std::path::Path;

use crate::adapters::formats::Format;
use crate::adapters::read::shape::Shape;

/// Picks the format of an input from its first bytes. The path is not
/// looked at: `.json` files hold lines and `.jsonl` files hold documents.
/// Content nothing claims is ndjson, so its lines are reported as unreadable
/// rather than silently ignored.
pub fn detect(_path: Option<&Path>, head: &[u8]) -> Format {
    Format::claiming(&shape_of(head)).unwrap_or(Format::FALLBACK)
}

/// The shape an input's format is told from: its first value's, or where
/// the first line is broken and a format claims the lines after it,
/// theirs.
pub(crate) fn shape_of(head: &[u8]) -> Shape<'_> {
    after_broken_first_line(head)
        .map(Shape::of)
        .filter(|rest| Format::claiming(rest).is_some())
        .unwrap_or_else(|| Shape::of(head))
}

/// The rest of a JSON Lines head whose first line is broken (cut off at the
/// head of a log, or no JSON at all) while the next holds a whole value:
/// the format is told from the lines that can be read.
fn after_broken_first_line(head: &[u8]) -> Option<&[u8]> {
    use crate::adapters::read::value::{cut_short, opens_documents};
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let mut at = 0;
    let mut lines = head.split(|b| *b == b'\n').map(|line| {
        let start = at;
        at += line.len() + 1;
        (start, line)
    });
    let (_, first) = lines.find(|(_, l)| !l.trim_ascii().is_empty())?;
    let (start, next) = lines.find(|(_, l)| !l.trim_ascii().is_empty())?;
    let whole = |l: &[u8]| serde_json::from_slice::<serde::de::IgnoredAny>(l.trim_ascii()).is_ok();
    let broken = if opens_documents(first) {
        cut_short(first, Some(next))
    } else {
        !whole(first) && whole(next)
    };
    broken.then(|| &head[start..])
}

/// Why an input that starts with `head` cannot be read and what to do, for
/// the binary files trace tools write: the Collector's protobuf and zstd
/// file exports, gzip; and for UTF-16 text (what PowerShell's `>` writes).
pub fn refusal(head: &[u8]) -> Option<&'static str> {
    if let Some(why) = wide_text(head) {
        return Some(why);
    }
    if head.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]) {
        return Some(
            "a zstd-compressed file, and triage reads JSON: decompress it into stdin \
             (`zstd -dc FILE | triage-parse`, `zstd -dc FILE | triage report`), or set `compression` off \
             in the Collector's file exporter",
        );
    }
    if head.starts_with(&[0x1F, 0x8B]) {
        return Some(
            "a gzip-compressed file, and triage reads JSON: decompress it into stdin \
             (`gzip -dc FILE | triage-parse`, `gzip -dc FILE | triage report`)",
        );
    }
    if is_protobuf(head) {
        return Some(
            "an OTLP protobuf file, and triage reads OTLP JSON: export the traces as JSON \
             instead (`format: json` in the Collector's file exporter, the default)",
        );
    }
    None
}

/// Why UTF-16 or UTF-32 text (what PowerShell's `>` writes) cannot be read,
/// with the `iconv` command for its byte order: a byte order mark, or
/// mostly ASCII with 0 bytes beside each character (iconv reads BOM-less
/// UTF-16 in the machine's own order, so the order is named).
fn wide_text(head: &[u8]) -> Option<&'static str> {
    const UTF32: &str = "UTF-32 text, and triage reads UTF-8: convert it first \
                           (`iconv -f UTF-32 -t UTF-8 FILE | triage-parse`)";
    const UTF16: &str = "UTF-16 text, and triage reads UTF-8: convert it first \
                         (`iconv -f UTF-16 -t UTF-8 FILE | triage-parse`)";
    const UTF16LE: &str = "UTF-16 text (little-endian, no byte order mark), and triage reads \
                           UTF-8: convert it first (`iconv -f UTF-16LE -t UTF-8 FILE | triage-parse`)";
    const UTF16BE: &str = "UTF-16 text (big-endian, no byte order mark), and triage reads \
                           UTF-8: convert it first (`iconv -f UTF-16BE -t UTF-8 FILE | triage-parse`)";
    if head.starts_with(&[0xFF, 0xFE, 0, 0]) || head.starts_with(&[0, 0, 0xFE, 0xFF]) {
        return Some(UTF32);
    }
    if head.starts_with(&[0xFF, 0xFE]) || head.starts_with(&[0xFE, 0xFF]) {
        return Some(UTF16);
    }
    let units: Vec<[u8; 2]> = head
        .chunks_exact(2)
        .take(64)
        .map(|u| [u[0], u[1]])
        .collect();
    // Three in four characters ASCII: JSON's punctuation and keys are,
    // whatever language its text is in.
    let mostly = |ascii_first: bool| {
        let ascii = units
            .iter()
            .filter(|u| {
                let (c, zero) = if ascii_first {
                    (u[0], u[1])
                } else {
                    (u[1], u[0])
                };
                zero == 0 && c != 0 && c.is_ascii()
            })
            .count();
        units.len() >= 4 && ascii * 4 >= units.len() * 3
    };
    if mostly(true) {
        Some(UTF16LE)
    } else if mostly(false) {
        Some(UTF16BE)
    } else {
        None
    }
}

/// Binary that opens like an OTLP protobuf message: field 1 (resource
/// spans, length-delimited) either at the start or after the 4-byte length
/// the Collector's file exporter writes before each message.
fn is_protobuf(head: &[u8]) -> bool {
    let field_one = head.first() == Some(&0x0A) || (head.len() > 4 && head[4] == 0x0A);
    field_one
        && head
            .iter()
            .take(512)
            .any(|b| *b == 0 || (*b < 0x20 && !b"\t\n\r\x0c".contains(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(name: &str, head: &str) -> Format {
        detect(Some(Path::new(name)), head.as_bytes())
    }

    #[test]
    fn line_files_are_ndjson_unless_otlp() {
        assert_eq!(
            at("a.jsonl", r#"{"event_id":"e","run_id":"r"}"#),
            Format::named("ndjson").unwrap()
        );
        assert_eq!(
            at("a.jsonl", r#"{"resourceSpans":[{"scopeSpans":[]}]}"#),
            Format::named("otlp").unwrap()
        );
        assert_eq!(
            at("a.ndjson", r#"{"resource_spans":[]}"#),
            Format::named("otlp").unwrap()
        );
        // The extension does not decide: a line file of τ-bench runs is τ-bench.
        assert_eq!(
            at("a.jsonl", r#"[{"reward":1,"traj":[]}]"#),
            Format::named("taubench").unwrap()
        );
    }

    #[test]
    fn json_files_by_content() {
        assert_eq!(
            at("t.json", "\u{feff}\n{\n  \"resourceSpans\": []}"),
            Format::named("otlp").unwrap()
        );
        assert_eq!(
            at("t.json", r#"{"spans":[{"span_id":"a"}]}"#),
            Format::named("otel").unwrap()
        );
        assert_eq!(
            at("t.json", r#"[{"span_id":"a","name":"x"}]"#),
            Format::named("otel").unwrap()
        );
        assert_eq!(
            at(
                "t.json",
                r#"[{"task_id":1,"reward":0.0,"info":{"x":"}{"},"traj":[]}]"#
            ),
            Format::named("taubench").unwrap()
        );
        assert_eq!(
            at("t.json", r#"[{"task_id":1,"reward":0.0,"info":{"a":"#),
            Format::named("taubench").unwrap()
        );
        assert_eq!(
            at("t.json", r#"{"history":[],"question":"q"}"#),
            Format::named("whowhen").unwrap()
        );
        assert_eq!(at("t.json", "garbage"), Format::named("ndjson").unwrap());
        assert_eq!(at("t.json", ""), Format::named("ndjson").unwrap());
    }

    #[test]
    fn nested_keys_do_not_count() {
        assert_eq!(
            at("t.json", r#"{"a":{"resourceSpans":[]}}"#),
            Format::named("ndjson").unwrap()
        );
        assert_eq!(
            at("t.json", r#"[{"a":{"reward":1,"traj":[]}}]"#),
            Format::named("ndjson").unwrap()
        );
        assert_eq!(
            at("t.json", r#"{"a":"\"resourceSpans\""}"#),
            Format::named("ndjson").unwrap()
        );
    }

    #[test]
    fn span_shapes_per_value() {
        let python = "{\n    \"name\": \"x\",\n    \"context\": {\"trace_id\": \"0x1\"},\n    \"kind\": \"SpanKind.INTERNAL\"}";
        assert_eq!(at("spans.txt", python), Format::named("otel").unwrap());
        assert_eq!(
            at("s.jsonl", r#"{"name":"x","context":{"trace_id":"a"}}"#),
            Format::named("otel").unwrap()
        );
        assert_eq!(
            at("s.jsonl", r#"[{"name":"x","spanContext":{}}]"#),
            Format::named("otel").unwrap()
        );
        assert_eq!(
            at("p.json", r#"{"data":[{"name":"x"}],"next_cursor":null}"#),
            Format::named("otel").unwrap()
        );
        assert_eq!(
            at("m.json", r#"{"input":"x","gen_ai.operation.name":"chat"}"#),
            Format::named("otel").unwrap()
        );
        assert_eq!(
            at("h.ndjson", r#"{"kind":"header","schema":1}"#),
            Format::named("ndjson").unwrap()
        );
        assert_eq!(
            at("e.json", r#"{"event_id":"e","span_id":"s","run_id":"r"}"#),
            Format::named("ndjson").unwrap()
        );
    }

    #[test]
    fn exports_of_tracing_platforms_and_agent_logs() {
        assert_eq!(
            at("t.json", r#"{"trace": {"id": "t", "observations": ["#),
            Format::named("langfuse").unwrap()
        );
        assert_eq!(
            at("t.json", r#"{"id": "t", "observations": []}"#),
            Format::named("langfuse").unwrap()
        );
        assert_eq!(
            at(
                "o.jsonl",
                r#"{"id":"o","trace_id":"t","type":"SPAN","level":"DEFAULT"}"#
            ),
            Format::named("langfuse").unwrap()
        );
        assert_eq!(
            at("r.json", r#"{"post": [], "patch": []}"#),
            Format::named("langsmith").unwrap()
        );
        assert_eq!(
            at("r.jsonl", r#"{"id":"r","run_type":"llm"}"#),
            Format::named("langsmith").unwrap()
        );
        assert_eq!(
            at(
                "s.jsonl",
                "[\"client.beta.sessions.create\",{\"id\":\"s\"}]\n"
            ),
            Format::named("managed-agent").unwrap()
        );
        assert_eq!(
            at(
                "s.jsonl",
                r#"{"id":"e","type":"user.message","processed_at":null}"#
            ),
            Format::named("managed-agent").unwrap()
        );
        assert_eq!(
            at(
                "t.json",
                r#"{"schema_version":"ATIF-v1.4","session_id":"s","steps":[]}"#
            ),
            Format::named("atif").unwrap()
        );
        assert_eq!(
            at("a.jsonl", r#"{"event_id":"e","run_id":"r","type":"x"}"#),
            Format::named("ndjson").unwrap()
        );
    }

    #[test]
    fn binary_exports_are_refused_with_what_to_do() {
        let zstd = refusal(&[0x28, 0xB5, 0x2F, 0xFD, 0x00]).unwrap();
        assert!(zstd.contains("zstd -dc"), "{zstd}");
        let proto = refusal(&[0x0A, 0x85, 0x02, 0x0A, 0x00, 0x12]).unwrap();
        assert!(proto.contains("format: json"), "{proto}");
        let framed = refusal(&[0x00, 0x00, 0x01, 0x05, 0x0A, 0x80, 0x02]).unwrap();
        assert!(framed.contains("protobuf"), "{framed}");
        assert!(refusal(&[0x1F, 0x8B, 0x08]).unwrap().contains("gzip -dc"));
        assert_eq!(refusal(b"{\"resourceSpans\": []}"), None);
        assert_eq!(refusal(b"\n{}"), None);
    }

    /// UTF-16 with or without a byte order mark, either byte order, is
    /// named as such (its 0 bytes once read as an OTLP protobuf's).
    #[test]
    fn utf16_text_is_refused_with_how_to_convert_it() {
        let text = "{\"resourceSpans\": []}\n";
        let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        for bytes in [
            le.clone(),
            be.clone(),
            [&[0xFF, 0xFE][..], &le].concat(),
            [&[0xFE, 0xFF][..], &be].concat(),
        ] {
            let why = refusal(&bytes).expect("refused");
            assert!(why.contains("UTF-16") && why.contains("iconv"), "{why}");
        }
        // Without a mark, iconv needs the order named.
        assert!(refusal(&le).unwrap().contains("-f UTF-16LE"));
        assert!(refusal(&be).unwrap().contains("-f UTF-16BE"));
        let accented = "{\r\n \"k\": \"é\"}\n";
        let accented: Vec<u8> = accented.encode_utf16().flat_map(u16::to_le_bytes).collect();
        assert!(refusal(&accented).unwrap().contains("UTF-16LE"));
        assert!(
            refusal(&[0xFF, 0xFE, 0, 0, b'{', 0, 0, 0])
                .unwrap()
                .contains("UTF-32")
        );
        assert_eq!(refusal("{\"k\": \"é\"}".as_bytes()), None);
    }

    #[test]
    fn inspect_eval_logs() {
        assert_eq!(
            at(
                "log.json",
                r#"{"version": 2, "status": "success", "eval": {"task": "t"}, "samples": []}"#
            ),
            Format::named("inspect-ai").unwrap()
        );
    }

    #[test]
    fn coding_agent_trajectories() {
        // A bare list of messages with mini-SWE-agent's later fence.
        let bare = r#"[{"role": "system", "content": "be brief"},
            {"role": "assistant", "content": "```mswea_bash_command\nls\n```"},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"}]"#;
        assert_eq!(at("t.json", bare), Format::named("coding-agent").unwrap());
        let mini = r#"{"oid": "x", "task": "t", "messages": [{"role": "user", "content": "t"},
            {"role": "assistant", "content": "```bash\nls\n```"},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"}]}"#;
        assert_eq!(at("t.json", mini), Format::named("coding-agent").unwrap());
        assert_eq!(
            at(
                "a.traj",
                r#"{"trajectory": [{"action": "ls"}], "history": [], "info": {}}"#
            ),
            Format::named("coding-agent").unwrap()
        );
        assert_eq!(
            at("a.traj", r#"{"trajectory": [{"action": "ls", "#),
            Format::named("coding-agent").unwrap()
        );
        // Before any reply: the command block in the text.
        let first = r#"{"messages": [{"role": "user", "content": "fix"},
            {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls\n```"}]}"#;
        assert_eq!(at("t.json", first), Format::named("coding-agent").unwrap());
        // A chat transcript without shell commands, or whose actions are
        // tool calls, is not one.
        assert_ne!(
            at(
                "c.json",
                r#"{"messages": [{"role": "user", "content": "hi"}]}"#
            ),
            Format::named("coding-agent").unwrap()
        );
        let calls = r#"{"messages": [{"role": "assistant", "content": "```bash\nls\n```", "tool_calls": [{"id": "c"}]}]}"#;
        assert_ne!(at("c.json", calls), Format::named("coding-agent").unwrap());
        let none = r#"{"messages": [{"role": "assistant", "content": "```bash\nls\n```", "tool_calls": null}]}"#;
        assert_eq!(at("c.json", none), Format::named("coding-agent").unwrap());
    }

    #[test]
    fn stdin_is_decided_by_content() {
        assert_eq!(
            detect(None, br#"{"resourceSpans":[]}"#),
            Format::named("otlp").unwrap()
        );
        assert_eq!(
            detect(None, br#"{"event_id":"e"}"#),
            Format::named("ndjson").unwrap()
        );
        assert_eq!(detect(None, b"[[[[[[[["), Format::named("ndjson").unwrap());
    }
}
