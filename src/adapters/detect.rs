//! Format detection from an input's first bytes, never its name: binary
//! files we cannot read are recognised and refused, and a JSON input is
//! claimed by the first format in [`RULES`] that knows the shape of its
//! first value, read without parsing the whole input.

use std::path::Path;

use super::Format;

/// Whether a shape is a format's.
type Claim = fn(&Shape) -> bool;

/// Which format claims a first JSON value, most specific shape first. A new
/// format is one row here.
const RULES: &[(Format, Claim)] = &[
    (Format::Otlp, Shape::is_otlp_request),
    (Format::Langfuse, Shape::is_langfuse),
    (Format::Langsmith, Shape::is_langsmith),
    (Format::ManagedAgent, Shape::is_managed_agent_event),
    (Format::Atif, Shape::is_atif),
    (Format::InspectAi, Shape::is_inspect_log),
    (Format::Ndjson, Shape::is_trace_event),
    (Format::Taubench, Shape::is_taubench),
    (Format::Whowhen, Shape::is_whowhen),
    (Format::Otel, Shape::is_span_document),
    (Format::AnthropicMessages, Shape::is_anthropic_transcript),
    (Format::OpenaiChat, Shape::is_chat_transcript),
];

/// Picks the format of an input from its first bytes. The path is not
/// looked at: `.json` files hold lines and `.jsonl` files hold documents.
/// Content nothing claims is ndjson, so its lines are reported as unreadable
/// rather than silently ignored.
pub fn detect(_path: Option<&Path>, head: &[u8]) -> Format {
    claim(head).unwrap_or(Format::Ndjson)
}

/// The format whose shape the first JSON value of `head` has, if any.
pub(crate) fn claim(head: &[u8]) -> Option<Format> {
    if recorded_session_call(head) {
        return Some(Format::ManagedAgent);
    }
    let shape = Shape::of(head);
    if coding_agent(&shape, head) {
        return Some(Format::CodingAgent);
    }
    RULES
        .iter()
        .find(|(_, claims)| claims(&shape))
        .map(|(format, _)| *format)
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

/// The top-level shape of a JSON input and the keys of its first object:
/// the top object's own keys, or those of a top list's first element.
#[derive(Debug, Default)]
struct Shape {
    top_is_list: bool,
    keys: Vec<String>,
    /// The first object did not end inside the bytes looked at.
    cut: bool,
    /// Anthropic's tool block types appear in the bytes looked at.
    anthropic_blocks: bool,
}

impl Shape {
    fn has(&self, key: &str) -> bool {
        self.keys.iter().any(|k| k == key)
    }

    /// agent-triage TraceEvent lines, and our own records.
    fn is_trace_event(&self) -> bool {
        let span_like = ["name", "context", "spanContext"]
            .iter()
            .any(|k| self.has(k));
        !self.top_is_list
            && (self.has("event_id")
                || self.has("action_taken")
                || (self.has("kind") && !span_like))
    }

    fn is_otlp_request(&self) -> bool {
        !self.top_is_list && (self.has("resourceSpans") || self.has("resource_spans"))
    }

    fn is_taubench(&self) -> bool {
        // A run's `traj` may lie past the bytes looked at, behind a long `info`.
        self.top_is_list && self.has("reward") && (self.has("traj") || self.cut)
    }

    /// A Who&When run: an object with a `history` and one of the benchmark's
    /// own keys (or a `history` too long to see past).
    fn is_whowhen(&self) -> bool {
        !self.top_is_list
            && self.has("history")
            && (self.has("mistake_agent") || self.has("question") || self.cut)
    }

    /// Spans as JSON: a list of them, {"spans": [...]}, Phoenix's
    /// {"data": [...], "next_cursor": …}, one span object, or one span's
    /// attributes without an envelope.
    fn is_span_document(&self) -> bool {
        if !self.top_is_list && (self.has("spans") || (self.has("data") && self.has("next_cursor")))
        {
            return true;
        }
        super::otel::SPAN_ID_KEYS.iter().any(|k| self.has(k))
            || (!self.top_is_list && self.keys.iter().any(|k| super::otel::is_attribute_key(k)))
    }

    /// A Langfuse trace with its observations, or an observation.
    fn is_langfuse(&self) -> bool {
        (!self.top_is_list && (self.has("observations") || self.has("trace")))
            || self.has("parentObservationId")
            || self.has("parent_observation_id")
            || (self.has("type")
                && self.has("level")
                && (self.has("traceId") || self.has("trace_id")))
    }

    /// The LangSmith SDK's batch payload, or a run.
    fn is_langsmith(&self) -> bool {
        (!self.top_is_list && (self.has("post") || self.has("patch")))
            || self.has("dotted_order")
            || self.has("run_type")
    }

    /// A Claude Managed Agents session event.
    fn is_managed_agent_event(&self) -> bool {
        self.has("processed_at") && self.has("type")
    }

    /// A chat transcript: a conversation in an envelope (`messages`), or
    /// messages (or Responses items) in a list or one per line.
    fn is_chat_transcript(&self) -> bool {
        self.has("messages")
            || (self.has("role") && (self.has("content") || self.has("tool_calls")))
            || (self.has("type") && (self.has("call_id") || self.has("summary")))
            || self.is_session_log()
    }

    /// A line of a Claude Code transcript or an Agent SDK stream: a typed
    /// record of a session, the API message under `message`.
    fn is_session_log(&self) -> bool {
        !self.top_is_list
            && self.has("type")
            && ((self.has("message") || self.has("subtype"))
                && (self.has("sessionId") || self.has("session_id"))
                || self.has("isSnapshotUpdate"))
    }

    /// A chat transcript whose messages carry Anthropic's tool blocks.
    fn is_anthropic_transcript(&self) -> bool {
        self.anthropic_blocks && self.is_chat_transcript()
    }

    fn is_atif(&self) -> bool {
        self.has("steps") && (self.has("schema_version") || self.has("session_id"))
    }

    /// An Inspect AI eval log (its JSON log format): `eval` with the log's
    /// `version` and `status`.
    fn is_inspect_log(&self) -> bool {
        !self.top_is_list && self.has("eval") && self.has("status") && self.has("version")
    }

    /// Reads the keys of the first object: depth 1 of a top object, depth 2
    /// of a top list whose first element is an object.
    fn of(head: &[u8]) -> Shape {
        let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
        let start = head.iter().position(|b| !b.is_ascii_whitespace());
        let Some(start) = start else {
            return Shape::default();
        };
        let mut shape = Shape {
            top_is_list: head[start] == b'[',
            anthropic_blocks: anthropic_blocks(head),
            ..Shape::default()
        };
        let key_depth = if shape.top_is_list { 2 } else { 1 };
        let mut depth = 0usize;
        let mut i = start;
        // Whether the next string at key depth is a key (after `{` or `,`).
        let mut expect_key = false;
        while i < head.len() {
            match head[i] {
                b'{' | b'[' => {
                    depth += 1;
                    expect_key = head[i] == b'{' && depth == key_depth;
                    if depth == key_depth && head[i] == b'[' {
                        return shape; // a list of lists: no object to read
                    }
                }
                b'}' | b']' => {
                    if depth == key_depth {
                        return shape; // the first object ended
                    }
                    depth = depth.saturating_sub(1);
                }
                b',' if depth == key_depth => expect_key = true,
                b'"' => {
                    let end = string_end(head, i + 1);
                    if expect_key && depth == key_depth {
                        let Some(end) = end else { break };
                        shape
                            .keys
                            .push(String::from_utf8_lossy(&head[i + 1..end]).into_owned());
                    }
                    expect_key = false;
                    match end {
                        Some(end) => i = end,
                        None => break,
                    }
                }
                _ => {}
            }
            i += 1;
        }
        shape.cut = true;
        shape
    }
}

/// A coding agent's trajectory: a transcript (`messages`) whose actions are
/// shell commands in the text (a fenced ```bash block, and no structured
/// tool calls) or whose replies carry mini-SWE-agent's `<returncode>`; or a
/// SWE-agent `.traj` object (`trajectory` beside `history` or `info`, or
/// too long to see past).
fn coding_agent(shape: &Shape, head: &[u8]) -> bool {
    let has = |needle: &str| memchr::memmem::find(head, needle.as_bytes()).is_some();
    let return_codes = has("<returncode>") && has("</returncode>");
    let shell_blocks = [
        "```bash\\n",
        "```sh\\n",
        "```shell\\n",
        "```mswea_bash_command\\n",
    ]
    .iter()
    .any(|b| has(b));
    let tool_calls = ["\"tool_calls\"", "\"tool_use\"", "\"function_call\""]
        .iter()
        .any(|k| calls_in(head, k));
    // In an envelope, or a bare list of the messages (mini-SWE-agent).
    let messages = shape.has("messages") || (shape.top_is_list && shape.has("role"));
    let transcript = messages && (return_codes || (shell_blocks && !tool_calls));
    let traj = !shape.top_is_list
        && shape.has("trajectory")
        && (shape.has("history") || shape.has("info") || shape.cut);
    transcript || traj
}

/// Whether `key` appears in `head` with a value that holds calls: not
/// `null` or `[]` (an API response's empty `"tool_calls": null`), and not
/// as a string value (`"type": "tool_use"` holds one).
fn calls_in(head: &[u8], key: &str) -> bool {
    memchr::memmem::find_iter(head, key.as_bytes()).any(|at| {
        let after = head[at + key.len()..].trim_ascii_start();
        let Some(value) = after.strip_prefix(b":") else {
            // `"type": "tool_use"`: the key is a value, a call's block.
            return head[..at].trim_ascii_end().ends_with(b":");
        };
        let value = value.trim_ascii_start();
        let empty_list = value
            .strip_prefix(b"[")
            .is_some_and(|v| v.trim_ascii_start().starts_with(b"]"));
        !(empty_list || value.starts_with(b"null") || value.starts_with(b"false"))
    })
}

/// A line recorded from the Anthropic SDK: `["client.beta.sessions...", ...]`.
fn recorded_session_call(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let rest = head.trim_ascii_start();
    let Some(rest) = rest.strip_prefix(b"[") else {
        return false;
    };
    let rest = rest.trim_ascii_start();
    rest.starts_with(b"\"client.beta.sessions") || rest.starts_with(b"\"beta.sessions")
}

/// Whether Anthropic's tool block types (`"type": "tool_use"`,
/// `"tool_result"`) appear, in any spacing.
fn anthropic_blocks(head: &[u8]) -> bool {
    ["\"tool_use\"", "\"tool_result\""].iter().any(|block| {
        memchr::memmem::find_iter(head, block.as_bytes()).any(|at| {
            let before = head[..at].trim_ascii_end();
            before.ends_with(b":")
                && before[..before.len() - 1]
                    .trim_ascii_end()
                    .ends_with(b"\"type\"")
        })
    })
}

/// The index of the quote closing the string that starts at `from`.
fn string_end(bytes: &[u8], mut from: usize) -> Option<usize> {
    while from < bytes.len() {
        match bytes[from] {
            b'\\' => from += 2,
            b'"' => return Some(from),
            _ => from += 1,
        }
    }
    None
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
            Format::Ndjson
        );
        assert_eq!(
            at("a.jsonl", r#"{"resourceSpans":[{"scopeSpans":[]}]}"#),
            Format::Otlp
        );
        assert_eq!(at("a.ndjson", r#"{"resource_spans":[]}"#), Format::Otlp);
        // The extension does not decide: a line file of τ-bench runs is τ-bench.
        assert_eq!(
            at("a.jsonl", r#"[{"reward":1,"traj":[]}]"#),
            Format::Taubench
        );
    }

    #[test]
    fn json_files_by_content() {
        assert_eq!(
            at("t.json", "\u{feff}\n{\n  \"resourceSpans\": []}"),
            Format::Otlp
        );
        assert_eq!(at("t.json", r#"{"spans":[{"span_id":"a"}]}"#), Format::Otel);
        assert_eq!(
            at("t.json", r#"[{"span_id":"a","name":"x"}]"#),
            Format::Otel
        );
        assert_eq!(
            at(
                "t.json",
                r#"[{"task_id":1,"reward":0.0,"info":{"x":"}{"},"traj":[]}]"#
            ),
            Format::Taubench
        );
        assert_eq!(
            at("t.json", r#"[{"task_id":1,"reward":0.0,"info":{"a":"#),
            Format::Taubench
        );
        assert_eq!(
            at("t.json", r#"{"history":[],"question":"q"}"#),
            Format::Whowhen
        );
        assert_eq!(at("t.json", "garbage"), Format::Ndjson);
        assert_eq!(at("t.json", ""), Format::Ndjson);
    }

    #[test]
    fn nested_keys_do_not_count() {
        assert_eq!(
            at("t.json", r#"{"a":{"resourceSpans":[]}}"#),
            Format::Ndjson
        );
        assert_eq!(
            at("t.json", r#"[{"a":{"reward":1,"traj":[]}}]"#),
            Format::Ndjson
        );
        assert_eq!(at("t.json", r#"{"a":"\"resourceSpans\""}"#), Format::Ndjson);
    }

    #[test]
    fn span_shapes_per_value() {
        let python = "{\n    \"name\": \"x\",\n    \"context\": {\"trace_id\": \"0x1\"},\n    \"kind\": \"SpanKind.INTERNAL\"}";
        assert_eq!(at("spans.txt", python), Format::Otel);
        assert_eq!(
            at("s.jsonl", r#"{"name":"x","context":{"trace_id":"a"}}"#),
            Format::Otel
        );
        assert_eq!(
            at("s.jsonl", r#"[{"name":"x","spanContext":{}}]"#),
            Format::Otel
        );
        assert_eq!(
            at("p.json", r#"{"data":[{"name":"x"}],"next_cursor":null}"#),
            Format::Otel
        );
        assert_eq!(
            at("m.json", r#"{"input":"x","gen_ai.operation.name":"chat"}"#),
            Format::Otel
        );
        assert_eq!(
            at("h.ndjson", r#"{"kind":"header","schema":1}"#),
            Format::Ndjson
        );
        assert_eq!(
            at("e.json", r#"{"event_id":"e","span_id":"s","run_id":"r"}"#),
            Format::Ndjson
        );
    }

    #[test]
    fn exports_of_tracing_platforms_and_agent_logs() {
        assert_eq!(
            at("t.json", r#"{"trace": {"id": "t", "observations": ["#),
            Format::Langfuse
        );
        assert_eq!(
            at("t.json", r#"{"id": "t", "observations": []}"#),
            Format::Langfuse
        );
        assert_eq!(
            at(
                "o.jsonl",
                r#"{"id":"o","trace_id":"t","type":"SPAN","level":"DEFAULT"}"#
            ),
            Format::Langfuse
        );
        assert_eq!(
            at("r.json", r#"{"post": [], "patch": []}"#),
            Format::Langsmith
        );
        assert_eq!(
            at("r.jsonl", r#"{"id":"r","run_type":"llm"}"#),
            Format::Langsmith
        );
        assert_eq!(
            at(
                "s.jsonl",
                "[\"client.beta.sessions.create\",{\"id\":\"s\"}]\n"
            ),
            Format::ManagedAgent
        );
        assert_eq!(
            at(
                "s.jsonl",
                r#"{"id":"e","type":"user.message","processed_at":null}"#
            ),
            Format::ManagedAgent
        );
        assert_eq!(
            at(
                "t.json",
                r#"{"schema_version":"ATIF-v1.4","session_id":"s","steps":[]}"#
            ),
            Format::Atif
        );
        assert_eq!(
            at("a.jsonl", r#"{"event_id":"e","run_id":"r","type":"x"}"#),
            Format::Ndjson
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
            Format::InspectAi
        );
    }

    #[test]
    fn coding_agent_trajectories() {
        // A bare list of messages with mini-SWE-agent's later fence.
        let bare = r#"[{"role": "system", "content": "be brief"},
            {"role": "assistant", "content": "```mswea_bash_command\nls\n```"},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"}]"#;
        assert_eq!(at("t.json", bare), Format::CodingAgent);
        let mini = r#"{"oid": "x", "task": "t", "messages": [{"role": "user", "content": "t"},
            {"role": "assistant", "content": "```bash\nls\n```"},
            {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"}]}"#;
        assert_eq!(at("t.json", mini), Format::CodingAgent);
        assert_eq!(
            at(
                "a.traj",
                r#"{"trajectory": [{"action": "ls"}], "history": [], "info": {}}"#
            ),
            Format::CodingAgent
        );
        assert_eq!(
            at("a.traj", r#"{"trajectory": [{"action": "ls", "#),
            Format::CodingAgent
        );
        // Before any reply: the command block in the text.
        let first = r#"{"messages": [{"role": "user", "content": "fix"},
            {"role": "assistant", "content": "THOUGHT: look\n\n```bash\nls\n```"}]}"#;
        assert_eq!(at("t.json", first), Format::CodingAgent);
        // A chat transcript without shell commands, or whose actions are
        // tool calls, is not one.
        assert_ne!(
            at(
                "c.json",
                r#"{"messages": [{"role": "user", "content": "hi"}]}"#
            ),
            Format::CodingAgent
        );
        let calls = r#"{"messages": [{"role": "assistant", "content": "```bash\nls\n```", "tool_calls": [{"id": "c"}]}]}"#;
        assert_ne!(at("c.json", calls), Format::CodingAgent);
        let none = r#"{"messages": [{"role": "assistant", "content": "```bash\nls\n```", "tool_calls": null}]}"#;
        assert_eq!(at("c.json", none), Format::CodingAgent);
    }

    #[test]
    fn stdin_is_decided_by_content() {
        assert_eq!(detect(None, br#"{"resourceSpans":[]}"#), Format::Otlp);
        assert_eq!(detect(None, br#"{"event_id":"e"}"#), Format::Ndjson);
        assert_eq!(detect(None, b"[[[[[[[["), Format::Ndjson);
    }
}
