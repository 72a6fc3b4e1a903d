//! The `ndjson` format: agent-triage / dungeon-traces TraceEvent lines,
//! read with agent-triage 0.1.0's lax value rules and decoded in parallel.

use std::borrow::Cow;
use std::io::Read;

use rayon::prelude::*;
use simd_json::{BorrowedValue as Value, StaticNode};

use super::{DecodeSettings, Sink};
use crate::ndjson::{Chunk, ChunkReader, Line};
use crate::record::{ActionOut, ErrorInfo, EventOut, JsonVal, Src};
use crate::timestamp::Timestamp;

/// Lines decoded by one parallel task.
const LINES_PER_TASK: usize = 512;

/// What became of one input line.
enum Outcome {
    /// An event serialized into the task buffer without its closing brace;
    /// ranges of the body and of its run id.
    Event {
        body: (usize, usize),
        run_id: (usize, usize),
    },
    /// A record of another kind, passed through as written.
    Other {
        body: (usize, usize),
    },
    /// Outside the --since/--until range.
    Filtered,
    Skip {
        line: u64,
        reason: String,
    },
}

struct TaskOutput {
    buf: Vec<u8>,
    outcomes: Vec<Outcome>,
}

/// Reads TraceEvent lines from `r` into `sink`. Each chunk's lines are
/// decoded in parallel while the previous chunk's records are written and
/// the next chunk is read.
pub fn read(r: impl Read + Send, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let mut reader = ChunkReader::new(r);
    let path = sink.path().to_string();
    let mut chunk = read_chunk(&mut reader, &path)?;
    let mut decoded: Vec<TaskOutput> = Vec::new();
    while let Some(mut current) = chunk.take() {
        let settings = &sink.settings;
        let (tasks, next) = rayon::join(
            || decode_chunk(&mut current, &path, settings),
            || read_chunk(&mut reader, &path),
        );
        write_decoded(std::mem::replace(&mut decoded, tasks), sink)?;
        chunk = next?;
    }
    write_decoded(decoded, sink)
}

fn read_chunk(reader: &mut ChunkReader<impl Read>, path: &str) -> anyhow::Result<Option<Chunk>> {
    reader
        .next_chunk()
        .map_err(|e| anyhow::anyhow!("{path}: {}", crate::cli::io_reason(&e)))
}

fn decode_chunk(chunk: &mut Chunk, path: &str, settings: &DecodeSettings) -> Vec<TaskOutput> {
    let mut lines: Vec<Line<'_>> = chunk.lines().collect();
    lines
        .par_chunks_mut(LINES_PER_TASK)
        .map(|group| decode_group(group, path, settings))
        .collect()
}

fn write_decoded(tasks: Vec<TaskOutput>, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    for task in tasks {
        for outcome in task.outcomes {
            match outcome {
                Outcome::Event { body, run_id } => {
                    let run = std::str::from_utf8(&task.buf[run_id.0..run_id.1])
                        .expect("run ids are written from str");
                    sink.emit_prepared(run, &task.buf[body.0..body.1])?;
                }
                Outcome::Other { body } => sink.pass_through(&task.buf[body.0..body.1])?,
                Outcome::Filtered => {}
                Outcome::Skip { line, reason } => sink.skip(Some(line), &reason)?,
            }
        }
    }
    Ok(())
}

fn decode_group(lines: &mut [Line<'_>], path: &str, settings: &DecodeSettings) -> TaskOutput {
    let bytes: usize = lines.iter().map(|l| l.bytes.len() + 64).sum();
    let mut out = TaskOutput {
        buf: Vec::with_capacity(bytes + path.len() * lines.len()),
        outcomes: Vec::with_capacity(lines.len()),
    };
    let mut buffers = simd_json::Buffers::default();
    for line in lines {
        let number = line.number;
        let outcome = decode_line(line, path, settings, &mut out.buf, &mut buffers).unwrap_or_else(
            |reason| Outcome::Skip {
                line: number,
                reason: if reason.is_empty() {
                    json_error(line.bytes)
                } else {
                    reason
                },
            },
        );
        out.outcomes.push(outcome);
    }
    out
}

fn decode_line(
    line: &mut Line<'_>,
    path: &str,
    settings: &DecodeSettings,
    buf: &mut Vec<u8>,
    buffers: &mut simd_json::Buffers,
) -> Result<Outcome, String> {
    // A record of another kind is passed through as written, so keep a copy
    // before simd-json rewrites the line in place.
    if simdutf8::basic::from_utf8(line.bytes).is_err() {
        return Err("not valid UTF-8".to_string());
    }
    let original = memchr::memmem::find(line.bytes, b"\"kind\"").map(|_| line.bytes.to_vec());
    let number = line.number;
    let value = match simd_json::value::borrowed::to_value_with_buffers(line.bytes, buffers) {
        Ok(v) => v,
        // The line is borrowed by the failed parse; the caller words the error.
        Err(_) => return Err(String::new()),
    };
    let Value::Object(obj) = &value else {
        return Err("expected a JSON object".to_string());
    };
    if let Some(kind) = obj.get("kind").and_then(as_str)
        && kind != "event"
    {
        let start = buf.len();
        buf.extend_from_slice(original.as_deref().unwrap_or_default());
        return Ok(Outcome::Other {
            body: (start, buf.len()),
        });
    }
    let (ev, ts) = event_from(&value, path, number)?;
    if !settings.filter.keeps(ts) {
        return Ok(Outcome::Filtered);
    }
    let start = buf.len();
    serde_json::to_writer(&mut *buf, &ev).map_err(|e| e.to_string())?;
    buf.pop();
    let body = (start, buf.len());
    let run_start = buf.len();
    buf.extend_from_slice(ev.run_id.as_bytes());
    Ok(Outcome::Event {
        body,
        run_id: (run_start, buf.len()),
    })
}

fn json_error(line: &[u8]) -> String {
    match serde_json::from_slice::<serde::de::IgnoredAny>(line) {
        Err(e) => format!("not valid JSON: {e}"),
        Ok(_) => "not valid JSON: nested too deeply or too large".to_string(),
    }
}

/// Builds an event from one decoded line, accepting exactly what
/// agent-triage 0.1.0 accepts.
fn event_from<'v>(
    value: &'v Value<'v>,
    path: &'v str,
    line: u64,
) -> Result<(EventOut<'v>, Option<Timestamp>), String> {
    let Value::Object(obj) = value else {
        return Err("expected a JSON object".to_string());
    };
    let field = |name: &str| obj.get(name);
    let required =
        |name: &'static str| field(name).ok_or_else(|| format!("missing field \"{name}\""));

    let event_id = strict_str(required("event_id")?, "event_id")?;
    let run_id = strict_str(required("run_id")?, "run_id")?;
    let agent_id = strict_str(required("agent_id")?, "agent_id")?;
    let turn = lax_int(required("turn")?, "turn")?;
    let action_succeeded = lax_bool(required("action_succeeded")?, "action_succeeded")?;
    let action = required("action_taken")?;
    let Value::Object(action_obj) = action else {
        return Err(format!(
            "action_taken: expected an object, got {}",
            describe(action)
        ));
    };
    let tool_name = strict_str(
        action_obj
            .get("tool_name")
            .ok_or("missing field \"action_taken.tool_name\"")?,
        "action_taken.tool_name",
    )?;
    let tool_input = match action_obj.get("tool_input") {
        None => None,
        Some(v @ Value::Object(_)) => Some(JsonVal::Simd(v)),
        Some(v) => {
            return Err(format!(
                "action_taken.tool_input: expected an object, got {}",
                describe(v)
            ));
        }
    };

    let failure_classification = match field("failure_classification") {
        None | Some(Value::Static(StaticNode::Null)) => None,
        Some(Value::String(s)) if s.is_empty() || s == "null" => None,
        Some(Value::String(s)) => Some(Cow::Borrowed(s.as_ref())),
        Some(other) => Some(Cow::Owned(python_str(other))),
    };
    let divergence_fields = match field("divergence_fields") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, v)| strict_str(v, &format!("divergence_fields[{i}]")))
            .collect::<Result<_, _>>()?,
        Some(v) => {
            return Err(format!(
                "divergence_fields: expected a list, got {}",
                describe(v)
            ));
        }
    };
    let ts = match field("timestamp") {
        None | Some(Value::Static(StaticNode::Null)) => None,
        Some(v) => Some(lax_timestamp(v)?),
    };
    let divergence_age = optional_object(field("divergence_age"), "divergence_age", &[])?;
    let latency_ms = optional_object(field("latency_ms"), "latency_ms", &["llm", "tool", "total"])?;
    let usage = optional_object(field("usage"), "usage", &["input_tokens", "output_tokens"])?;
    let message_context = optional_object(field("message_context"), "message_context", &[])?
        .filter(|v| matches!(v, JsonVal::Simd(Value::Object(o)) if !o.is_empty()));
    if let Some(JsonVal::Simd(Value::Object(ages))) = &divergence_age {
        for (k, v) in ages.iter() {
            lax_int(v, &format!("divergence_age.{k}"))?;
        }
    }

    let failure_source = if failure_classification.is_some() {
        Some("label")
    } else if !action_succeeded {
        Some("status")
    } else {
        None
    };
    let event = EventOut {
        kind: "event",
        event_id,
        run_id,
        turn,
        agent_id,
        action_taken: ActionOut {
            tool_name,
            tool_input,
        },
        action_succeeded,
        timestamp: ts.map(|t| t.to_string()),
        failure_classification,
        failure_source,
        divergence_fields,
        divergence_age,
        latency_ms,
        usage,
        message_context,
        span_id: optional_str(field("span_id")),
        parent_span_id: optional_str(field("parent_span_id")),
        error: field("error").and_then(error_info),
        input: field("input").and_then(as_str).map(str::to_string),
        output: field("output").and_then(as_str).map(str::to_string),
        src: Some(Src {
            path: Cow::Borrowed(path),
            line,
        }),
        ..Default::default()
    };
    Ok((event, ts))
}

fn as_str<'v>(v: &'v Value<'v>) -> Option<&'v str> {
    match v {
        Value::String(s) => Some(s.as_ref()),
        _ => None,
    }
}

fn optional_str<'v>(v: Option<&'v Value<'v>>) -> Option<Cow<'v, str>> {
    v.and_then(as_str).map(Cow::Borrowed)
}

fn error_info(v: &Value<'_>) -> Option<ErrorInfo> {
    let Value::Object(o) = v else { return None };
    Some(ErrorInfo {
        kind: o.get("type").and_then(as_str).map(str::to_string),
        message: o.get("message").and_then(as_str).map(str::to_string),
    })
}

/// An object field that may be absent; present, it must be an object whose
/// listed keys hold lax integers.
fn optional_object<'v>(
    v: Option<&'v Value<'v>>,
    name: &str,
    int_keys: &[&str],
) -> Result<Option<JsonVal<'v>>, String> {
    match v {
        None => Ok(None),
        Some(v @ Value::Object(o)) => {
            for k in int_keys {
                if let Some(x) = o.get(*k) {
                    lax_int(x, &format!("{name}.{k}"))?;
                }
            }
            Ok(Some(JsonVal::Simd(v)))
        }
        Some(v) => Err(format!("{name}: expected an object, got {}", describe(v))),
    }
}

fn describe(v: &Value<'_>) -> String {
    match v {
        Value::Static(StaticNode::Null) => "null".to_string(),
        Value::Static(StaticNode::Bool(b)) => b.to_string(),
        Value::Static(_) => format!("the number {}", python_str(v)),
        Value::String(s) => {
            let short: String = s.chars().take(40).collect();
            format!("{short:?}")
        }
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

/// A string, and nothing else (pydantic does not turn numbers into strings).
fn strict_str<'v>(v: &'v Value<'v>, name: &str) -> Result<Cow<'v, str>, String> {
    match v {
        Value::String(s) => Ok(Cow::Borrowed(s.as_ref())),
        other => Err(format!(
            "{name}: expected a string, got {}",
            describe(other)
        )),
    }
}

/// An integer as pydantic's lax mode reads one: integers, floats without a
/// fraction, booleans, and strings of digits (with sign, underscores or a
/// zero fraction).
pub fn lax_int(v: &Value<'_>, name: &str) -> Result<i64, String> {
    let bad = || format!("{name}: expected an integer, got {}", describe(v));
    match v {
        Value::Static(StaticNode::I64(n)) => Ok(*n),
        Value::Static(StaticNode::U64(n)) => i64::try_from(*n).map_err(|_| bad()),
        Value::Static(StaticNode::F64(f)) => float_to_int(*f).ok_or_else(bad),
        Value::Static(StaticNode::Bool(b)) => Ok(i64::from(*b)),
        Value::String(s) => int_from_text(s).ok_or_else(bad),
        _ => Err(bad()),
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

/// A boolean as pydantic's lax mode reads one.
pub fn lax_bool(v: &Value<'_>, name: &str) -> Result<bool, String> {
    let bad = || format!("{name}: expected true or false, got {}", describe(v));
    match v {
        Value::Static(StaticNode::Bool(b)) => Ok(*b),
        Value::Static(StaticNode::I64(0)) | Value::Static(StaticNode::U64(0)) => Ok(false),
        Value::Static(StaticNode::I64(1)) | Value::Static(StaticNode::U64(1)) => Ok(true),
        Value::Static(StaticNode::F64(f)) if *f == 0.0 => Ok(false),
        Value::Static(StaticNode::F64(f)) if *f == 1.0 => Ok(true),
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "1" | "on" | "t" | "true" | "y" | "yes" => Ok(true),
            "0" | "off" | "f" | "false" | "n" | "no" => Ok(false),
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

fn lax_timestamp(v: &Value<'_>) -> Result<Timestamp, String> {
    let parsed = match v {
        Value::String(s) => Timestamp::parse(s),
        Value::Static(StaticNode::I64(n)) => Timestamp::from_epoch_number(*n as f64),
        Value::Static(StaticNode::U64(n)) => Timestamp::from_epoch_number(*n as f64),
        Value::Static(StaticNode::F64(f)) => Timestamp::from_epoch_number(*f),
        _ => None,
    };
    parsed.ok_or_else(|| format!("timestamp: expected a date-time, got {}", describe(v)))
}

/// What Python's `str()` gives for a scalar, so a non-string label reads the
/// same as in the reference.
fn python_str(v: &Value<'_>) -> String {
    match v {
        Value::Static(StaticNode::Bool(true)) => "True".to_string(),
        Value::Static(StaticNode::Bool(false)) => "False".to_string(),
        Value::Static(StaticNode::Null) => "None".to_string(),
        Value::Static(StaticNode::I64(n)) => n.to_string(),
        Value::Static(StaticNode::U64(n)) => n.to_string(),
        Value::Static(StaticNode::F64(f)) => {
            if f.fract() == 0.0 && f.abs() < 1e16 {
                format!("{f:.1}")
            } else {
                f.to_string()
            }
        }
        other => simd_json::to_string(other).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<String, String> {
        let mut bytes = json.as_bytes().to_vec();
        let v = simd_json::to_borrowed_value(&mut bytes).unwrap();
        event_from(&v, "t.ndjson", 1).map(|(e, _)| serde_json::to_string(&e).unwrap())
    }

    const BASE: &str =
        r#""event_id":"e","run_id":"r","agent_id":"a","action_taken":{"tool_name":"t"}"#;

    fn with(extra: &str) -> Result<String, String> {
        parse(&format!("{{{BASE},{extra}}}"))
    }

    #[test]
    fn lax_turn_values_match_the_reference() {
        for (raw, want) in [
            ("\"3\"", 3),
            ("2.0", 2),
            ("true", 1),
            ("\" 3\"", 3),
            ("\"3.0\"", 3),
            ("\"+3\"", 3),
            ("\"3_000\"", 3000),
            ("-1", -1),
        ] {
            let got = with(&format!("\"turn\":{raw},\"action_succeeded\":true")).unwrap();
            assert!(got.contains(&format!("\"turn\":{want},")), "{raw}: {got}");
        }
        for raw in [
            "2.5", "\"1e2\"", "null", "\"0x10\"", "\"\"", "[1]", "\"3.5\"", "\"1__0\"",
        ] {
            assert!(
                with(&format!("\"turn\":{raw},\"action_succeeded\":true")).is_err(),
                "{raw}"
            );
        }
    }

    #[test]
    fn lax_success_values_match_the_reference() {
        for (raw, want) in [
            ("true", true),
            ("\"yes\"", true),
            ("\"no\"", false),
            ("\"TRUE\"", true),
            ("0", false),
            ("1", true),
            ("1.0", true),
            ("\"f\"", false),
            ("\"off\"", false),
        ] {
            let got = with(&format!("\"turn\":1,\"action_succeeded\":{raw}")).unwrap();
            assert!(
                got.contains(&format!("\"action_succeeded\":{want}")),
                "{raw}: {got}"
            );
        }
        for raw in ["2", "null", "\"\"", "\" true\"", "\"maybe\""] {
            assert!(
                with(&format!("\"turn\":1,\"action_succeeded\":{raw}")).is_err(),
                "{raw}"
            );
        }
    }

    #[test]
    fn null_classification_spellings_mean_none() {
        for raw in ["null", "\"\"", "\"null\""] {
            let got = with(&format!(
                "\"turn\":1,\"action_succeeded\":true,\"failure_classification\":{raw}"
            ))
            .unwrap();
            assert!(!got.contains("failure_classification"), "{raw}: {got}");
        }
        let got =
            with("\"turn\":1,\"action_succeeded\":true,\"failure_classification\":true").unwrap();
        assert!(got.contains("\"failure_classification\":\"True\""), "{got}");
    }

    #[test]
    fn rejects_what_the_reference_rejects() {
        assert_eq!(
            parse(r#"{"event_id":"e","turn":1,"agent_id":"a","action_taken":{"tool_name":"t"},"action_succeeded":true}"#).unwrap_err(),
            "missing field \"run_id\""
        );
        assert!(parse(r#"{"event_id":1,"run_id":"r","turn":1,"agent_id":"a","action_taken":{"tool_name":"t"},"action_succeeded":true}"#).is_err());
        assert!(with("\"turn\":1,\"action_succeeded\":true,\"divergence_fields\":null").is_err());
        assert!(with("\"turn\":1,\"action_succeeded\":true,\"divergence_fields\":[1]").is_err());
        assert!(with("\"turn\":1,\"action_succeeded\":true,\"latency_ms\":5").is_err());
        assert!(with("\"turn\":1,\"action_succeeded\":true,\"latency_ms\":{\"llm\":1.5}").is_err());
        assert!(with("\"turn\":1,\"action_succeeded\":true,\"timestamp\":\"garbage\"").is_err());
        assert!(with("\"turn\":1,\"action_succeeded\":true,\"message_context\":[]").is_err());
        assert!(
            with("\"turn\":1,\"action_succeeded\":true,\"divergence_age\":{\"x\":1.5}").is_err()
        );
        assert!(parse(r#"{"event_id":"e","run_id":"r","turn":1,"agent_id":"a","action_taken":{"tool_name":null},"action_succeeded":true}"#).is_err());
    }

    #[test]
    fn failure_source_says_why() {
        let got = with("\"turn\":1,\"action_succeeded\":false").unwrap();
        assert!(got.contains("\"failure_source\":\"status\""), "{got}");
        let got =
            with("\"turn\":1,\"action_succeeded\":true,\"failure_classification\":\"agent_error\"")
                .unwrap();
        assert!(got.contains("\"failure_source\":\"label\""), "{got}");
    }
}
