//! The `ndjson` format: agent-triage / dungeon-traces TraceEvent lines,
//! read with agent-triage 0.1.0's lax value rules, decoded in parallel with
//! an allocation-free scanner and written by hand from the input's own
//! JSON text.

use std::borrow::Cow;
use std::io::Read;

use rayon::prelude::*;

use super::lax::Scalar;
use super::{Sink, TimeFilter};
use crate::json_scan::{Split, Value, array_items, pick, split_object};
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
    Grouped(GroupedEvent),
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
    /// Grouped events' texts, failures' texts and their divergence fields.
    texts: String,
    failures: Vec<FailureTexts>,
    divergence: Vec<Text>,
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
    for mut task in tasks {
        for outcome in std::mem::take(&mut task.outcomes) {
            match outcome {
                Outcome::Event { body, run_id } => {
                    let run = std::str::from_utf8(&task.buf[run_id.0..run_id.1])
                        .expect("run ids are written from str");
                    sink.emit_prepared(run, &task.buf[body.0..body.1])?;
                }
                Outcome::Grouped(ev) => sink.emit_view(task.view(&ev), ev.timestamp),
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
    // Serialized events are about as long as their lines; a grouper's
    // texts are mostly a run and an agent id.
    let (buf, texts) = if as_views {
        (0, lines.len() * 48)
    } else {
        let bytes = lines.iter().map(|(_, l)| l.len() + 64 + src_path.len());
        (bytes.sum(), 0)
    };
    let mut out = TaskOutput {
        buf: Vec::with_capacity(buf),
        outcomes: Vec::with_capacity(lines.len()),
        texts: String::with_capacity(texts),
        failures: Vec::new(),
        divergence: Vec::new(),
    };
    let mut split = Split::default();
    for &(number, bytes) in lines {
        let outcome = decode_line(
            bytes, number, src_path, filter, as_views, &mut out, &mut split,
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
    out: &mut TaskOutput,
    split: &mut Split<'c>,
) -> Result<Outcome, String> {
    let line = simdutf8::basic::from_utf8(bytes).map_err(|_| "not valid UTF-8".to_string())?;
    split_object(line, split).map_err(|e| match e.reason() {
        "expected a JSON object" => e.reason().to_string(),
        _ => format!("not valid JSON: {e}"),
    })?;
    let obj = TopLevel::new(split);
    let buf = &mut out.buf;
    if let Some(kind) = obj.get(Top::Kind).and_then(|k| k.as_str())
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
        return Ok(Outcome::Grouped(ev.grouped(out)));
    }
    let buf = &mut out.buf;
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

/// A top-level member a TraceEvent reads: its slot in `TOP_FIELDS`, so
/// that reading a member costs no name comparison.
#[derive(Clone, Copy)]
enum Top {
    Kind,
    EventId,
    RunId,
    AgentId,
    Turn,
    ActionSucceeded,
    ActionTaken,
    DivergenceFields,
    Timestamp,
    DivergenceAge,
    LatencyMs,
    Usage,
    MessageContext,
    FailureClassification,
    SpanId,
    ParentSpanId,
    Error,
    Input,
    Output,
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

    fn get(&self, field: Top) -> Option<Value<'c>> {
        self.member(field).map(|(v, _)| v)
    }

    /// A member's value and, when it is an object, the object's members.
    fn member(&self, field: Top) -> Option<(Value<'c>, &'s [(Value<'c>, Value<'c>)])> {
        let m = self.slots[field as usize]? as usize;
        Some((self.split.members[m].1, self.split.children_of(m)))
    }

    fn required(&self, field: Top) -> Result<Value<'c>, String> {
        self.get(field)
            .ok_or_else(|| format!("missing field \"{}\"", TOP_FIELDS[field as usize]))
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
        let event_id = strict_str(obj.required(Top::EventId)?, "event_id")?;
        let run = strict_str(obj.required(Top::RunId)?, "run_id")?;
        let agent_id = strict_str(obj.required(Top::AgentId)?, "agent_id")?;
        let turn = lax_int(&obj.required(Top::Turn)?, "turn")?;
        let succeeded = lax_bool(&obj.required(Top::ActionSucceeded)?, "action_succeeded")?;
        let (tool_name, tool_input) = action(
            obj.required(Top::ActionTaken)?,
            obj.member(Top::ActionTaken).map_or(&[], |(_, kids)| kids),
        )?;
        let mut divergence_fields = Vec::new();
        let divergence_raw = match obj.get(Top::DivergenceFields) {
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
        let timestamp = match obj.get(Top::Timestamp) {
            None | Some(Value::Null) => None,
            Some(v) => Some(lax_timestamp(&v)?),
        };
        let divergence_age = object_field(
            obj.member(Top::DivergenceAge),
            "divergence_age",
            IntKeys::<0>::All,
        )?;
        let latency_ms = object_field(
            obj.member(Top::LatencyMs),
            "latency_ms",
            IntKeys::Some(["llm", "tool", "total"]),
        )?;
        let usage = object_field(
            obj.member(Top::Usage),
            "usage",
            IntKeys::Some(["input_tokens", "output_tokens"]),
        )?;
        let message_context = object_field(
            obj.member(Top::MessageContext),
            "message_context",
            IntKeys::<0>::Some([]),
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
            classification: classification(obj.get(Top::FailureClassification)),
            divergence_fields,
            divergence_raw,
            divergence_age,
            latency_ms,
            usage,
            message_context,
            span_id: obj.get(Top::SpanId).filter(is_string).map(|v| v.raw()),
            parent_span_id: obj
                .get(Top::ParentSpanId)
                .filter(is_string)
                .map(|v| v.raw()),
            error: obj.member(Top::Error).and_then(error_info),
            input: obj.get(Top::Input).filter(is_string).map(|v| v.raw()),
            output: obj.get(Top::Output).filter(is_string),
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

    /// The event as a grouper reads it, its texts appended to `out.texts`.
    /// A success needs only its run, agent, turn and time; the texts a
    /// failure's pattern and sample read are kept for failures alone.
    fn grouped(&self, out: &mut TaskOutput) -> GroupedEvent {
        let failure = (!self.succeeded || self.classification.is_some()).then(|| {
            let divergence_from = out.divergence.len();
            for d in &self.divergence_fields {
                let text = out.put(&decoded(d));
                out.divergence.push(text);
            }
            let failure = FailureTexts {
                event_id: out.put(&decoded(&self.event_id)),
                tool_name: out.put(&decoded(&self.tool_name)),
                classification: self.classification.as_ref().map(|(c, _)| out.put(c)),
                divergence: (divergence_from, out.divergence.len()),
                output: self.output.as_ref().map(|o| out.put(&decoded(o))),
                error: self.error.clone(),
            };
            out.failures.push(failure);
            out.failures.len() - 1
        });
        GroupedEvent {
            run_id: out.put(&self.run_id),
            agent_id: out.put(&decoded(&self.agent_id)),
            turn: self.turn,
            succeeded: self.succeeded,
            timestamp: self.timestamp,
            failure,
        }
    }
}

fn decoded<'c>(v: &Value<'c>) -> Cow<'c, str> {
    v.as_str().unwrap_or_default()
}

/// A text in a task's buffer: its byte range.
type Text = (usize, usize);

/// An event decoded for a grouper in this process, its texts in the task's
/// buffer, so that handing it over allocates nothing.
struct GroupedEvent {
    run_id: Text,
    agent_id: Text,
    turn: i64,
    succeeded: bool,
    timestamp: Option<Timestamp>,
    /// For a failure, its index in the task's `failures`.
    failure: Option<usize>,
}

/// The texts that only a failure's pattern and sample read.
struct FailureTexts {
    event_id: Text,
    tool_name: Text,
    classification: Option<Text>,
    /// The range of the task's `divergence` holding the fields.
    divergence: (usize, usize),
    output: Option<Text>,
    error: Option<ErrorInfo>,
}

impl TaskOutput {
    /// Appends `text` to the buffer.
    fn put(&mut self, text: &str) -> Text {
        let start = self.texts.len();
        self.texts.push_str(text);
        (start, self.texts.len())
    }

    fn text(&self, (start, end): Text) -> &str {
        &self.texts[start..end]
    }

    /// The event as [`crate::group::Grouper`] reads it; a success's event
    /// id and tool, which the grouper does not read, are left empty.
    fn view(&self, ev: &GroupedEvent) -> EventView<'_> {
        let at = |t: Text| Cow::Borrowed(self.text(t));
        let failure = ev.failure.map(|i| &self.failures[i]);
        EventView {
            event_id: failure.map_or(Cow::Borrowed(""), |f| at(f.event_id)),
            run_id: at(ev.run_id),
            turn: ev.turn,
            step: 0,
            agent_id: at(ev.agent_id),
            action_taken: ActionView {
                tool_name: failure.map_or(Cow::Borrowed(""), |f| at(f.tool_name)),
            },
            action_succeeded: ev.succeeded,
            failure_classification: failure.and_then(|f| f.classification.map(at)),
            divergence_fields: failure.map(|f| {
                self.divergence[f.divergence.0..f.divergence.1]
                    .iter()
                    .map(|t| at(*t))
                    .collect()
            }),
            timestamp: None,
            error: failure.and_then(|f| f.error.clone()).map(Box::new),
            output: failure.and_then(|f| f.output.map(at)),
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
    let [tool, input] = pick(members, &["tool_name", "tool_input"]);
    let tool = tool.ok_or("missing field \"action_taken.tool_name\"")?;
    let tool = strict_str(tool, "action_taken.tool_name")?;
    let input = match input {
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
enum IntKeys<const N: usize> {
    All,
    Some([&'static str; N]),
}

/// An object field that may be absent; present, it must be an object whose
/// named members hold lax integers. Returns its JSON text.
fn object_field<'c, const N: usize>(
    v: Option<(Value<'c>, &[(Value<'c>, Value<'c>)])>,
    name: &str,
    ints: IntKeys<N>,
) -> Result<Option<&'c str>, String> {
    match v {
        None => Ok(None),
        Some((Value::Object(raw), members)) => {
            match ints {
                IntKeys::All => {
                    for (k, v) in members {
                        lax_int_member(v, name, || k.as_str().unwrap_or_default())?;
                    }
                }
                IntKeys::Some(keys) => {
                    for (key, v) in keys.iter().zip(pick(members, &keys)) {
                        if let Some(v) = v {
                            lax_int_member(&v, name, || Cow::Borrowed(*key))?;
                        }
                    }
                }
            }
            Ok(Some(raw))
        }
        Some((v, _)) => Err(format!("{name}: expected an object, got {}", describe(&v))),
    }
}

/// Checks that member `key` of object field `name` holds a lax integer.
#[inline]
fn lax_int_member<'k>(
    v: &Value<'_>,
    name: &str,
    key: impl FnOnce() -> Cow<'k, str>,
) -> Result<(), String> {
    if let Value::Number(n) = v
        && n.len() < 19
        && n.bytes().all(|b| b.is_ascii_digit())
    {
        // Plain digits are an integer; the common case skips parsing.
        return Ok(());
    }
    lax_int_slow(v, name, &key())
}

/// [`lax_int_member`] past plain digits; the member is only named when
/// its value is refused.
#[cold]
fn lax_int_slow(v: &Value<'_>, name: &str, key: &str) -> Result<(), String> {
    Scalar::from(v)
        .int("")
        .map(|_| ())
        .map_err(|_| Scalar::from(v).int(&format!("{name}.{key}")).unwrap_err())
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

/// The `error` member's type and message, when it is an object.
fn error_info<'c>((v, members): (Value<'c>, &[(Value<'c>, Value<'c>)])) -> Option<ErrorInfo> {
    let Value::Object(_) = v else { return None };
    let [kind, message] = pick(members, &["type", "message"]);
    let text = |v: Option<Value<'_>>| v.and_then(|v| v.as_str()).map(Cow::into_owned);
    Some(ErrorInfo {
        kind: text(kind),
        message: text(message),
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
        for (field, name) in [
            (Top::Kind, "kind"),
            (Top::ActionTaken, "action_taken"),
            (Top::Timestamp, "timestamp"),
            (Top::Error, "error"),
            (Top::Output, "output"),
        ] {
            assert_eq!(TOP_FIELDS[field as usize], name);
        }
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
