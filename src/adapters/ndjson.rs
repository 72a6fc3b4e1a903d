//! The `ndjson` format: agent-triage / dungeon-traces TraceEvent lines,
//! read with agent-triage 0.1.0's lax value rules, decoded in parallel with
//! an allocation-free scanner and written by hand from the input's own
//! JSON text.

use std::borrow::Cow;
use std::io::Read;
use std::ops::Range;

use rayon::prelude::*;

use super::lax::Scalar;
use super::{Sink, TimeFilter};
use crate::json_scan::{Split, Value, array_items, object_members, split_object};
use crate::ndjson::{Chunk, ChunkReader};
use crate::record::{ActionView, ErrorInfo, EventView};
use crate::timestamp::Timestamp;

/// Lines decoded by one parallel task.
const LINES_PER_TASK: usize = 128;

/// What became of one input line.
// Outcomes live in a vector per task of 512 lines; an inline view saves an
// allocation per event.
#[allow(clippy::large_enum_variant)]
enum Outcome {
    /// An event serialized into the task buffer without its closing brace;
    /// ranges of the body and of its run id.
    Event {
        body: (usize, usize),
        run_id: (usize, usize),
    },
    /// An event decoded for a grouper in the same process.
    View(OwnedView),
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
    let filter = sink.settings.filter;
    let as_views = sink.feeds_grouper();
    let mut chunk = read_chunk(&mut reader, &path)?;
    let mut decoded: Vec<TaskOutput> = Vec::new();
    while let Some(mut current) = chunk.take() {
        let mut tasks = Vec::new();
        let previous = std::mem::take(&mut decoded);
        // The sink is not Send (it may hold stdout), so it stays on this
        // thread, writing the previous chunk while the pool decodes this one.
        let (written, next) = rayon::in_place_scope(|scope| {
            scope.spawn(|_| tasks = decode_chunk(&mut current, &path, filter, as_views));
            (
                write_decoded(previous, sink),
                read_chunk(&mut reader, &path),
            )
        });
        written?;
        decoded = tasks;
        chunk = next?;
    }
    write_decoded(decoded, sink)
}

fn read_chunk(reader: &mut ChunkReader<impl Read>, path: &str) -> anyhow::Result<Option<Chunk>> {
    reader
        .next_chunk()
        .map_err(|e| anyhow::anyhow!("{path}: {}", crate::cli::io_reason(&e)))
}

fn decode_chunk(
    chunk: &mut Chunk,
    path: &str,
    filter: TimeFilter,
    as_views: bool,
) -> Vec<TaskOutput> {
    let lines: Vec<(u64, &[u8])> = chunk
        .lines()
        .map(|l| (l.number, l.bytes as &[u8]))
        .collect();
    // The file name as a JSON string, once per chunk rather than per event.
    let src_path = serde_json::to_string(path).unwrap_or_else(|_| "\"?\"".to_string());
    lines
        .par_chunks(LINES_PER_TASK)
        .map(|group| decode_group(group, &src_path, filter, as_views))
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
                Outcome::View(v) => sink.emit_view(v.view(), v.timestamp),
                Outcome::Other { body } => sink.pass_through(&task.buf[body.0..body.1])?,
                Outcome::Filtered => {}
                Outcome::Skip { line, reason } => sink.skip(Some(line), &reason)?,
            }
        }
    }
    Ok(())
}

fn decode_group(
    lines: &[(u64, &[u8])],
    src_path: &str,
    filter: TimeFilter,
    as_views: bool,
) -> TaskOutput {
    let bytes: usize = lines.iter().map(|(_, l)| l.len() + 64).sum();
    let mut out = TaskOutput {
        buf: Vec::with_capacity(if as_views {
            0
        } else {
            bytes + src_path.len() * lines.len()
        }),
        outcomes: Vec::with_capacity(lines.len()),
    };
    let mut split = Split::default();
    for &(number, bytes) in lines {
        let outcome = decode_line(
            bytes,
            number,
            src_path,
            filter,
            as_views,
            &mut out.buf,
            &mut split,
        )
        .unwrap_or_else(|reason| Outcome::Skip {
            line: number,
            reason,
        });
        out.outcomes.push(outcome);
    }
    out
}

fn decode_line<'c>(
    bytes: &'c [u8],
    number: u64,
    src_path: &str,
    filter: TimeFilter,
    as_view: bool,
    buf: &mut Vec<u8>,
    split: &mut Split<'c>,
) -> Result<Outcome, String> {
    let line = simdutf8::basic::from_utf8(bytes).map_err(|_| "not valid UTF-8".to_string())?;
    split_object(line, split).map_err(|e| match e.reason {
        "expected a JSON object" => e.reason.to_string(),
        _ => format!("not valid JSON: {e}"),
    })?;
    let obj = TopLevel::new(split);
    if let Some(kind) = obj.get("kind").and_then(|k| k.as_str())
        && kind != "event"
    {
        let start = buf.len();
        buf.extend_from_slice(bytes);
        return Ok(Outcome::Other {
            body: (start, buf.len()),
        });
    }
    let ev = TraceEvent::read(&obj)?;
    if !filter.keeps(ev.timestamp) {
        return Ok(Outcome::Filtered);
    }
    if as_view {
        return Ok(Outcome::View(ev.owned_view()));
    }
    let start = buf.len();
    ev.write_json(buf, src_path, number);
    let body = (start, buf.len());
    let run_start = buf.len();
    buf.extend_from_slice(ev.run_id.as_bytes());
    Ok(Outcome::Event {
        body,
        run_id: (run_start, buf.len()),
    })
}

/// The members of a line's object that a TraceEvent reads, found in one
/// pass; the last of duplicate keys wins, as in Python's json module.
struct TopLevel<'s, 'c> {
    /// The index in `split.members` of each of `TOP_FIELDS`.
    slots: [Option<u32>; TOP_FIELDS.len()],
    split: &'s Split<'c>,
}

const TOP_FIELDS: [&str; 19] = [
    "kind",
    "event_id",
    "run_id",
    "agent_id",
    "turn",
    "action_succeeded",
    "action_taken",
    "divergence_fields",
    "timestamp",
    "divergence_age",
    "latency_ms",
    "usage",
    "message_context",
    "failure_classification",
    "span_id",
    "parent_span_id",
    "error",
    "input",
    "output",
];

impl<'s, 'c> TopLevel<'s, 'c> {
    fn new(split: &'s Split<'c>) -> Self {
        let mut slots = [None; TOP_FIELDS.len()];
        for (m, (k, _)) in split.members.iter().enumerate() {
            let i = match k {
                Value::String {
                    raw,
                    escaped: false,
                } => field_index(&raw[1..raw.len() - 1]),
                k => k.as_str().and_then(|key| field_index(&key)),
            };
            if let Some(i) = i {
                slots[i] = Some(m as u32);
            }
        }
        TopLevel { slots, split }
    }

    fn get(&self, name: &str) -> Option<Value<'c>> {
        self.member(name).map(|(v, _)| v)
    }

    /// A member's value and, when it is an object, the object's members.
    fn member(&self, name: &str) -> Option<(Value<'c>, &'s [(Value<'c>, Value<'c>)])> {
        let m = self.slots[field_index(name)?]? as usize;
        Some((self.split.members[m].1, self.split.children_of(m)))
    }

    fn required(&self, name: &'static str) -> Result<Value<'c>, String> {
        self.get(name)
            .ok_or_else(|| format!("missing field \"{name}\""))
    }
}

/// The slot of a top-level member; a `match` compiles to a switch on length
/// and bytes, where searching `TOP_FIELDS` cost a comparison per name.
fn field_index(name: &str) -> Option<usize> {
    Some(match name {
        "kind" => 0,
        "event_id" => 1,
        "run_id" => 2,
        "agent_id" => 3,
        "turn" => 4,
        "action_succeeded" => 5,
        "action_taken" => 6,
        "divergence_fields" => 7,
        "timestamp" => 8,
        "divergence_age" => 9,
        "latency_ms" => 10,
        "usage" => 11,
        "message_context" => 12,
        "failure_classification" => 13,
        "span_id" => 14,
        "parent_span_id" => 15,
        "error" => 16,
        "input" => 17,
        "output" => 18,
        _ => return None,
    })
}

/// The members of a nested object; the last of duplicate keys wins.
struct Members<'m, 'c>(&'m [(Value<'c>, Value<'c>)]);

impl<'c> Members<'_, 'c> {
    fn get(&self, name: &str) -> Option<Value<'c>> {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| match k {
                Value::String {
                    raw,
                    escaped: false,
                } => &raw[1..raw.len() - 1] == name,
                k => k.as_str().is_some_and(|s| s == name),
            })
            .map(|(_, v)| *v)
    }
}

/// One TraceEvent, read with the reference's rules, keeping the input's own
/// JSON text for what is written back unchanged.
struct TraceEvent<'c> {
    event_id: Value<'c>,
    run_id: Cow<'c, str>,
    run_id_raw: &'c str,
    turn: i64,
    agent_id: Value<'c>,
    tool_name: Value<'c>,
    tool_input: Option<&'c str>,
    succeeded: bool,
    timestamp: Option<Timestamp>,
    /// The classification and its JSON text.
    classification: Option<(Cow<'c, str>, Cow<'c, str>)>,
    divergence_fields: Vec<Value<'c>>,
    divergence_raw: Option<&'c str>,
    divergence_age: Option<&'c str>,
    latency_ms: Option<&'c str>,
    usage: Option<&'c str>,
    message_context: Option<&'c str>,
    span_id: Option<&'c str>,
    parent_span_id: Option<&'c str>,
    error: Option<ErrorInfo>,
    input: Option<&'c str>,
    output: Option<Value<'c>>,
}

impl<'c> TraceEvent<'c> {
    /// Accepts exactly what agent-triage 0.1.0 accepts.
    fn read(obj: &TopLevel<'_, 'c>) -> Result<Self, String> {
        let event_id = strict_str(obj.required("event_id")?, "event_id")?;
        let run = strict_str(obj.required("run_id")?, "run_id")?;
        let agent_id = strict_str(obj.required("agent_id")?, "agent_id")?;
        let turn = lax_int(&obj.required("turn")?, "turn")?;
        let succeeded = lax_bool(&obj.required("action_succeeded")?, "action_succeeded")?;
        let (tool_name, tool_input) = action(
            obj.required("action_taken")?,
            obj.member("action_taken").map_or(&[], |(_, kids)| kids),
        )?;
        let mut divergence_fields = Vec::new();
        let divergence_raw = match obj.get("divergence_fields") {
            None => None,
            Some(Value::Array(raw)) => {
                let mut items = Vec::new();
                array_items(raw, &mut items).map_err(|e| e.to_string())?;
                for (i, v) in items.iter().enumerate() {
                    strict_str(*v, &format!("divergence_fields[{i}]"))?;
                }
                divergence_fields = items;
                Some(raw)
            }
            Some(v) => {
                return Err(format!(
                    "divergence_fields: expected a list, got {}",
                    describe(&v)
                ));
            }
        };
        let timestamp = match obj.get("timestamp") {
            None | Some(Value::Null) => None,
            Some(v) => Some(lax_timestamp(&v)?),
        };
        let divergence_age =
            object_field(obj.member("divergence_age"), "divergence_age", IntKeys::All)?;
        let latency_ms = object_field(
            obj.member("latency_ms"),
            "latency_ms",
            IntKeys::Some(&["llm", "tool", "total"]),
        )?;
        let usage = object_field(
            obj.member("usage"),
            "usage",
            IntKeys::Some(&["input_tokens", "output_tokens"]),
        )?;
        let message_context = object_field(
            obj.member("message_context"),
            "message_context",
            IntKeys::Some(&[]),
        )?
        .filter(|raw| !is_empty_object(raw));
        Ok(TraceEvent {
            event_id,
            run_id: run.as_str().expect("checked to be a string"),
            run_id_raw: run.raw(),
            turn,
            agent_id,
            tool_name,
            tool_input,
            succeeded,
            timestamp,
            classification: classification(obj.get("failure_classification")),
            divergence_fields,
            divergence_raw,
            divergence_age,
            latency_ms,
            usage,
            message_context,
            span_id: obj.get("span_id").filter(is_string).map(|v| v.raw()),
            parent_span_id: obj.get("parent_span_id").filter(is_string).map(|v| v.raw()),
            error: obj.get("error").and_then(error_info),
            input: obj.get("input").filter(is_string).map(|v| v.raw()),
            output: obj.get("output").filter(is_string),
        })
    }

    fn failure_source(&self) -> Option<&'static str> {
        if self.classification.is_some() {
            Some("label")
        } else if !self.succeeded {
            Some("status")
        } else {
            None
        }
    }

    /// Writes the `event` record without its closing brace (the sink adds
    /// the step), in the field order of [`crate::record::EventOut`].
    fn write_json(&self, buf: &mut Vec<u8>, src_path: &str, line: u64) {
        let mut w = JsonWriter(buf);
        w.raw("{\"kind\":\"event\",\"event_id\":");
        w.raw(self.event_id.raw());
        w.field("run_id", self.run_id_raw);
        w.raw(",\"turn\":");
        w.int(self.turn);
        w.field("agent_id", self.agent_id.raw());
        w.raw(",\"action_taken\":{\"tool_name\":");
        w.raw(self.tool_name.raw());
        if let Some(input) = self.tool_input {
            w.field("tool_input", input);
        }
        w.raw(if self.succeeded {
            "},\"action_succeeded\":true"
        } else {
            "},\"action_succeeded\":false"
        });
        if let Some(t) = self.timestamp {
            w.raw(",\"timestamp\":\"");
            t.write_rfc3339(w.0);
            w.raw("\"");
        }
        if let Some((_, raw)) = &self.classification {
            w.field("failure_classification", raw);
        }
        if let Some(source) = self.failure_source() {
            w.raw(",\"failure_source\":\"");
            w.raw(source);
            w.raw("\"");
        }
        if let Some(raw) = self
            .divergence_raw
            .filter(|_| !self.divergence_fields.is_empty())
        {
            w.field("divergence_fields", raw);
        }
        for (name, v) in [
            ("divergence_age", self.divergence_age),
            ("latency_ms", self.latency_ms),
            ("usage", self.usage),
            ("message_context", self.message_context),
            ("span_id", self.span_id),
            ("parent_span_id", self.parent_span_id),
        ] {
            if let Some(raw) = v {
                w.field(name, raw);
            }
        }
        if let Some(e) = &self.error {
            w.raw(",\"error\":");
            w.serde(e);
        }
        if let Some(raw) = self.input {
            w.field("input", raw);
        }
        if let Some(v) = self.output {
            w.field("output", v.raw());
        }
        w.raw(",\"src\":{\"path\":");
        w.raw(src_path);
        w.raw(",\"line\":");
        w.int(line as i64);
        w.raw("}");
    }

    /// The event as the grouper reads it, its texts in one string.
    fn owned_view(&self) -> OwnedView {
        // Raw texts are at least as long as decoded ones: one allocation.
        let capacity = self.event_id.raw().len()
            + self.run_id.len()
            + self.agent_id.raw().len()
            + self.tool_name.raw().len()
            + self.classification.as_ref().map_or(0, |(c, _)| c.len())
            + self.divergence_raw.map_or(0, str::len)
            + self.output.map_or(0, |o| o.raw().len());
        let mut text = String::with_capacity(capacity);
        let mut put = |t: &str| {
            let start = text.len();
            text.push_str(t);
            start..text.len()
        };
        fn decoded<'c>(v: &Value<'c>) -> Cow<'c, str> {
            v.as_str().unwrap_or_default()
        }
        let event_id = put(&decoded(&self.event_id));
        let run_id = put(&self.run_id);
        let agent_id = put(&decoded(&self.agent_id));
        let tool_name = put(&decoded(&self.tool_name));
        let classification = self.classification.as_ref().map(|(c, _)| put(c));
        let divergence_fields = self
            .divergence_fields
            .iter()
            .map(|d| put(&decoded(d)))
            .collect();
        let output = self.output.as_ref().map(|o| put(&decoded(o)));
        OwnedView {
            text,
            event_id,
            run_id,
            agent_id,
            tool_name,
            classification,
            divergence_fields,
            output,
            turn: self.turn,
            succeeded: self.succeeded,
            timestamp: self.timestamp,
            error: self.error.clone(),
        }
    }
}

/// An event decoded for a grouper in this process, owning its texts in one
/// string so that it costs one allocation.
struct OwnedView {
    text: String,
    event_id: Range<usize>,
    run_id: Range<usize>,
    agent_id: Range<usize>,
    tool_name: Range<usize>,
    classification: Option<Range<usize>>,
    divergence_fields: Vec<Range<usize>>,
    output: Option<Range<usize>>,
    turn: i64,
    succeeded: bool,
    timestamp: Option<Timestamp>,
    error: Option<ErrorInfo>,
}

impl OwnedView {
    fn view(&self) -> EventView<'_> {
        let at = |r: &Range<usize>| Cow::Borrowed(&self.text[r.clone()]);
        EventView {
            event_id: at(&self.event_id),
            run_id: at(&self.run_id),
            turn: self.turn,
            step: 0,
            agent_id: at(&self.agent_id),
            action_taken: ActionView {
                tool_name: at(&self.tool_name),
            },
            action_succeeded: self.succeeded,
            failure_classification: self.classification.as_ref().map(at),
            divergence_fields: Some(self.divergence_fields.iter().map(at).collect()),
            timestamp: None,
            error: self.error.clone(),
            output: self.output.as_ref().map(at),
        }
    }
}

/// Appends JSON text to a buffer.
struct JsonWriter<'b>(&'b mut Vec<u8>);

impl JsonWriter<'_> {
    fn raw(&mut self, s: &str) {
        self.0.extend_from_slice(s.as_bytes());
    }

    /// `,"name":` then `raw`, which is JSON text already.
    fn field(&mut self, name: &str, raw: &str) {
        self.0.extend_from_slice(b",\"");
        self.0.extend_from_slice(name.as_bytes());
        self.0.extend_from_slice(b"\":");
        self.0.extend_from_slice(raw.as_bytes());
    }

    fn int(&mut self, n: i64) {
        self.0
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }

    fn serde<T: serde::Serialize>(&mut self, v: &T) {
        let _ = serde_json::to_writer(&mut *self.0, v);
    }
}

fn is_string(v: &Value<'_>) -> bool {
    matches!(v, Value::String { .. })
}

fn is_empty_object(raw: &str) -> bool {
    raw[1..raw.len() - 1].trim().is_empty()
}

/// `action_taken`: an object with a string `tool_name` and, optionally, an
/// object `tool_input`.
fn action<'c>(
    v: Value<'c>,
    members: &[(Value<'c>, Value<'c>)],
) -> Result<(Value<'c>, Option<&'c str>), String> {
    let Value::Object(_) = v else {
        return Err(format!(
            "action_taken: expected an object, got {}",
            describe(&v)
        ));
    };
    let obj = Members(members);
    let tool = obj
        .get("tool_name")
        .ok_or("missing field \"action_taken.tool_name\"")?;
    let tool = strict_str(tool, "action_taken.tool_name")?;
    let input = match obj.get("tool_input") {
        None => None,
        Some(Value::Object(raw)) => Some(raw),
        Some(v) => {
            return Err(format!(
                "action_taken.tool_input: expected an object, got {}",
                describe(&v)
            ));
        }
    };
    Ok((tool, input))
}

/// Which members of an object field must hold lax integers.
enum IntKeys {
    All,
    Some(&'static [&'static str]),
}

/// An object field that may be absent; present, it must be an object whose
/// named members hold lax integers. Returns its JSON text.
fn object_field<'c>(
    v: Option<(Value<'c>, &[(Value<'c>, Value<'c>)])>,
    name: &str,
    ints: IntKeys,
) -> Result<Option<&'c str>, String> {
    // The member's name is only worded when its value is refused.
    let int = |v: &Value<'_>, key: &str| {
        if let Value::Number(n) = v
            && n.len() < 19
            && n.bytes().all(|b| b.is_ascii_digit())
        {
            // Plain digits are an integer; the common case skips parsing.
            return Ok(());
        }
        Scalar::from(v)
            .int("")
            .map(|_| ())
            .map_err(|_| Scalar::from(v).int(&format!("{name}.{key}")).unwrap_err())
    };
    match v {
        None => Ok(None),
        Some((Value::Object(raw), members)) => {
            match ints {
                IntKeys::All => {
                    for (k, v) in members {
                        int(v, &k.as_str().unwrap_or_default())?;
                    }
                }
                IntKeys::Some(keys) => {
                    let obj = Members(members);
                    for k in keys {
                        if let Some(x) = obj.get(k) {
                            int(&x, k)?;
                        }
                    }
                }
            }
            Ok(Some(raw))
        }
        Some((v, _)) => Err(format!("{name}: expected an object, got {}", describe(&v))),
    }
}

/// The classification and its JSON text; null, "" and "null" mean none, and
/// a non-string reads as Python's `str()` of it, as in the reference.
fn classification(v: Option<Value<'_>>) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
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

fn error_info(v: Value<'_>) -> Option<ErrorInfo> {
    let Value::Object(raw) = v else { return None };
    let mut members = Vec::new();
    object_members(raw, &mut members).ok()?;
    let obj = Members(&members);
    let text = |k: &str| obj.get(k).and_then(|v| v.as_str()).map(Cow::into_owned);
    Some(ErrorInfo {
        kind: text("type"),
        message: text("message"),
    })
}

fn describe(v: &Value<'_>) -> String {
    Scalar::from(v).describe()
}

/// A string, and nothing else (pydantic does not turn numbers into strings).
fn strict_str<'c>(v: Value<'c>, name: &str) -> Result<Value<'c>, String> {
    match v {
        Value::String { .. } => Ok(v),
        other => Err(format!(
            "{name}: expected a string, got {}",
            describe(&other)
        )),
    }
}

fn lax_int(v: &Value<'_>, name: &str) -> Result<i64, String> {
    Scalar::from(v).int(name)
}

fn lax_bool(v: &Value<'_>, name: &str) -> Result<bool, String> {
    Scalar::from(v).bool(name)
}

fn lax_timestamp(v: &Value<'_>) -> Result<Timestamp, String> {
    Scalar::from(v).timestamp()
}

fn python_str(v: &Value<'_>) -> String {
    match v {
        Value::Array(raw) | Value::Object(raw) => raw.to_string(),
        _ => Scalar::from(v).python_str(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<String, String> {
        let mut split = Split::default();
        split_object(json, &mut split).map_err(|e| e.to_string())?;
        let top = TopLevel::new(&split);
        let ev = TraceEvent::read(&top)?;
        let mut buf = Vec::new();
        ev.write_json(&mut buf, "\"t.ndjson\"", 1);
        buf.push(b'}');
        let text = String::from_utf8(buf).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).expect("the event is valid JSON");
        Ok(text)
    }

    #[test]
    fn every_top_field_has_its_own_slot() {
        for (i, name) in TOP_FIELDS.iter().enumerate() {
            assert_eq!(field_index(name), Some(i), "{name}");
        }
        assert_eq!(field_index("turns"), None);
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
