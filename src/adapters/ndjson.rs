//! The `ndjson` format: agent-triage / dungeon-traces TraceEvent lines,
//! read with agent-triage 0.1.0's lax value rules, decoded in parallel with
//! an allocation-free scanner and written by hand from the input's own
//! JSON text.

use std::borrow::Cow;
use std::io::Read;
use std::ops::Range;
use std::sync::Mutex;

use super::lax::Scalar;
use super::{Sink, TimeFilter};
use crate::io::json_scan::{
    Field, LineScratch, ScanError, Stepped, Value, array_items, object_members, pick,
    visit_object_in,
};
use crate::io::ndjson::{Chunk, ChunkReader, LineSpans};
use crate::io::task_share;
use crate::io::waiting::Waiting;
use crate::record::{ActionView, ErrorInfo, EventView};
use crate::timestamp::Timestamp;

/// Lines decoded by one parallel task.
const LINES_PER_TASK: usize = 128;

/// What became of one input line.
// Outcomes live in a vector per task of 512 lines; an inline view saves an
// allocation per event.
#[allow(clippy::large_enum_variant)]
enum Outcome {
    /// An event serialized into the task buffer without its closing brace:
    /// the range of the body, and its run id in the task's texts (a
    /// `String`, so that reading it back needs no UTF-8 check).
    Event {
        body: (usize, usize),
        run_id: Text,
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

#[derive(Default)]
struct TaskOutput {
    buf: Vec<u8>,
    outcomes: Vec<Outcome>,
    /// Run ids of written events; grouped events' texts, failures' texts
    /// and their divergence fields.
    texts: String,
    failures: Vec<FailureTexts>,
    divergence: Vec<Text>,
    /// Events kept by the time filter for want of a time.
    untimed: u64,
}

impl TaskOutput {
    /// Emptied, keeping its buffers' capacity.
    fn cleared(mut self) -> Self {
        self.buf.clear();
        self.outcomes.clear();
        self.texts.clear();
        self.failures.clear();
        self.divergence.clear();
        self.untimed = 0;
        self
    }
}

/// Reads TraceEvent lines from `r` into `sink`. Each chunk's lines are
/// decoded in parallel while the previous chunk's records are written and
/// the next chunk is read, and by this thread too once that is done.
/// On a live input (`waiting`), lines are read as they arrive, and those
/// read are written before the next read waits.
pub fn read(
    r: impl Read + Send,
    waiting: Option<Waiting>,
    sink: &mut Sink<'_>,
) -> anyhow::Result<()> {
    let mut reader = ChunkReader::new(r).live(waiting);
    let path = sink.path().to_string();
    let how = Decoding {
        // The start of the `src` member, once per input rather than per event.
        src_head: format!(
            ",\"src\":{{\"path\":{},\"line\":",
            serde_json::to_string(&path).unwrap_or_else(|_| "\"?\"".to_string())
        ),
        filter: sink.settings.filter,
        as_views: sink.feeds_grouper(),
        text_limit: sink.settings.text_limit,
    };
    let mut spans = LineSpans::new();
    let mut chunk = read_chunk(&mut reader, &mut spans, &path)?;
    let mut next_spans = LineSpans::new();
    let mut decoded: Vec<TaskOutput> = Vec::new();
    let spare = SpareOutputs::default();
    while let Some(current) = chunk.take() {
        // Lines are numbered, so this warning may come before warnings
        // about earlier lines of the chunk being written.
        sink.repaired(current.repaired);
        let previous = std::mem::take(&mut decoded);
        if reader.quiet() {
            // Nothing more has arrived: this chunk's records go out now,
            // not once the next chunk does.
            write_decoded(previous, sink, &spare)?;
            let (tasks, ()) = decode_chunk(&current, &spans, &how, &spare, || ());
            write_decoded(tasks, sink, &spare)?;
            sink.flush()?;
            reader.recycle(current);
            chunk = read_chunk(&mut reader, &mut spans, &path)?;
            continue;
        }
        // The sink is not Send (it may hold stdout), so it stays on this
        // thread, writing the previous chunk while the pool decodes this
        // one, which this thread then helps to finish.
        let (tasks, (written, next)) = decode_chunk(&current, &spans, &how, &spare, || {
            (
                write_decoded(previous, sink, &spare),
                read_chunk(&mut reader, &mut next_spans, &path),
            )
        });
        reader.recycle(current);
        std::mem::swap(&mut spans, &mut next_spans);
        written?;
        decoded = tasks;
        chunk = next?;
    }
    write_decoded(decoded, sink, &spare)
}

/// Task outputs already written, whose buffers the next chunk's tasks fill.
/// Freshly allocated ones cost the kernel a zeroed page per 4 KiB written:
/// 52,000 page faults, a fifth of triage-parse's time, on 1M events.
#[derive(Default)]
struct SpareOutputs(Mutex<Vec<TaskOutput>>);

/// Outputs kept for reuse: those of two chunks of short lines.
const KEEP_OUTPUTS: usize = 256;
/// A task output buffer bigger than this is freed after use.
const KEEP_OUTPUT_BYTES: usize = 4 << 20;

impl SpareOutputs {
    /// An empty output, recycled when one is spare.
    fn take(&self) -> TaskOutput {
        let spare = self.0.lock().map(|mut spares| spares.pop()).unwrap_or(None);
        spare.unwrap_or_default()
    }

    /// Keeps `tasks` for reuse, but not a buffer a run of long lines grew
    /// past [`KEEP_OUTPUT_BYTES`], nor more outputs than [`KEEP_OUTPUTS`].
    fn give_back(&self, tasks: Vec<TaskOutput>) {
        if let Ok(mut spares) = self.0.lock() {
            let room = KEEP_OUTPUTS.saturating_sub(spares.len());
            let kept = tasks
                .into_iter()
                .filter(|t| t.buf.capacity() <= KEEP_OUTPUT_BYTES);
            spares.extend(kept.take(room).map(TaskOutput::cleared));
        }
    }
}

/// The next chunk and its lines, made ready to be scanned where they stand.
fn read_chunk(
    reader: &mut ChunkReader<impl Read>,
    spans: &mut LineSpans,
    path: &str,
) -> anyhow::Result<Option<Chunk>> {
    reader
        .next_chunk_to_scan(spans)
        .map_err(|e| anyhow::anyhow!("{path}: {}", crate::io::diag::io_reason(&e)))
}

/// Decodes `chunk`'s lines, [`LINES_PER_TASK`] to a task, on the pool
/// and, once `meanwhile` has returned, on this thread too.
fn decode_chunk<R>(
    chunk: &Chunk,
    spans: &LineSpans,
    how: &Decoding,
    spare: &SpareOutputs,
    meanwhile: impl FnOnce() -> R,
) -> (Vec<TaskOutput>, R) {
    let groups: Vec<_> = spans.chunks(LINES_PER_TASK).collect();
    let mut tasks: Vec<TaskOutput> = std::iter::repeat_with(TaskOutput::default)
        .take(groups.len())
        .collect();
    // One scanner buffer per thread and chunk rather than per task: a
    // fresh one grew again each time.
    let r = task_share::fill_while(
        &mut tasks,
        1,
        LineScratch::default,
        |scratch, i, out| {
            out[0] = decode_group(&chunk.data, groups[i], how, scratch, spare.take());
        },
        meanwhile,
    );
    (tasks, r)
}

/// What decoding a chunk's lines needs to know besides the lines.
struct Decoding {
    /// `,"src":{"path":PATH,"line":` for this input.
    src_head: String,
    filter: TimeFilter,
    /// Events become [`GroupedEvent`]s rather than records.
    as_views: bool,
    /// `--max-text`: inputs and outputs longer are cut.
    text_limit: usize,
}

fn write_decoded(
    tasks: Vec<TaskOutput>,
    sink: &mut Sink<'_>,
    spare: &SpareOutputs,
) -> anyhow::Result<()> {
    for task in &tasks {
        sink.count_untimed(task.untimed);
        for outcome in &task.outcomes {
            match outcome {
                Outcome::Event { body, run_id } => {
                    sink.emit_prepared(task.text(*run_id), &task.buf[body.0..body.1])?;
                }
                Outcome::Grouped(ev) => sink.emit_view(task.view(ev), ev.timestamp),
                Outcome::Other { body } => sink.pass_through(&task.buf[body.0..body.1])?,
                Outcome::Filtered => {}
                Outcome::Skip { line, reason } => sink.skip(Some(*line), reason)?,
            }
        }
    }
    spare.give_back(tasks);
    Ok(())
}

/// Decodes the lines at `lines` of a chunk's `data`, made ready to be
/// scanned in place ([`crate::io::ndjson::ChunkReader::next_chunk_to_scan`]).
fn decode_group(
    data: &[u8],
    lines: &[(u64, Range<usize>)],
    how: &Decoding,
    scratch: &mut LineScratch,
    mut out: TaskOutput,
) -> TaskOutput {
    // Serialized events are about as long as their lines; a grouper's
    // texts are mostly a run and an agent id.
    let (buf, texts) = if how.as_views {
        (0, lines.len() * 48)
    } else {
        let bytes = lines.iter().map(|(_, l)| l.len() + 64 + how.src_head.len());
        (bytes.sum(), lines.len() * 16)
    };
    out.buf.reserve(buf);
    out.outcomes.reserve(lines.len());
    out.texts.reserve(texts);
    // The group's lines are checked as UTF-8 together (one call rather than
    // one per line); a group that fails is checked line by line, to find
    // which.
    let (Some((_, first)), Some((_, last))) = (lines.first(), lines.last()) else {
        return out;
    };
    let group_text = simdutf8::basic::from_utf8(&data[first.start..last.end]).ok();
    for (number, range) in lines {
        // Lines start and end next to a newline or the chunk's ends, so
        // these are character boundaries.
        let line = match group_text {
            Some(text) => Ok(&text[range.start - first.start..range.end - first.start]),
            None => simdutf8::basic::from_utf8(&data[range.clone()])
                .map_err(|_| "not valid UTF-8".to_string()),
        };
        let outcome = line
            .and_then(|line| {
                let tail = &data[range.start..];
                decode_line(line, tail, *number, how, &mut out, scratch)
            })
            .unwrap_or_else(|reason| Outcome::Skip {
                line: *number,
                reason,
            });
        out.outcomes.push(outcome);
    }
    out
}

/// Decodes one line; `tail` is the chunk from the line's start on.
fn decode_line<'c>(
    line: &'c str,
    tail: &'c [u8],
    number: u64,
    how: &Decoding,
    out: &mut TaskOutput,
    scratch: &mut LineScratch,
) -> Result<Outcome, String> {
    let obj = TopLevel::scan(line, tail, scratch).map_err(|e| match e.reason() {
        "expected a JSON object" => e.reason().to_string(),
        _ => format!("not valid JSON: {e}"),
    })?;
    let buf = &mut out.buf;
    if let Some(kind) = obj.get(Top::Kind).and_then(|k| k.as_str())
        && kind != "event"
    {
        let start = buf.len();
        buf.extend_from_slice(line.as_bytes());
        return Ok(Outcome::Other {
            body: (start, buf.len()),
        });
    }
    let mut ev = TraceEvent::read(&obj)?;
    ev.cut_texts(how.text_limit);
    if !how.filter.keeps(ev.timestamp) {
        return Ok(Outcome::Filtered);
    }
    if ev.timestamp.is_none() && how.filter.is_set() {
        out.untimed += 1;
    }
    if how.as_views {
        return Ok(Outcome::Grouped(ev.grouped(out)));
    }
    let start = out.buf.len();
    ev.write_json(&mut out.buf, &how.src_head, number);
    Ok(Outcome::Event {
        body: (start, out.buf.len()),
        run_id: out.put(&ev.run_id),
    })
}

/// The members of a line's object that a TraceEvent reads, found while
/// the line is scanned (members it does not read are only validated), with
/// what it reads of the objects among them; the last of duplicate keys
/// wins, as in Python's json module.
#[derive(Default)]
struct TopLevel<'c> {
    values: [Option<Value<'c>>; TOP_FIELDS.len()],
    /// `action_taken`'s `tool_name` and `tool_input`.
    action: [Option<Value<'c>>; 2],
    /// `error`'s `type` and `message`.
    error: [Option<Value<'c>>; 2],
    /// By `Top` slot, for the objects of integers: set when a member holds
    /// something other than plain digits, so that its keys must be read.
    not_plain: u32,
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

impl Top {
    /// Every member, in the order of `TOP_FIELDS`.
    const ALL: [Top; 19] = [
        Top::Kind,
        Top::EventId,
        Top::RunId,
        Top::AgentId,
        Top::Turn,
        Top::ActionSucceeded,
        Top::ActionTaken,
        Top::DivergenceFields,
        Top::Timestamp,
        Top::DivergenceAge,
        Top::LatencyMs,
        Top::Usage,
        Top::MessageContext,
        Top::FailureClassification,
        Top::SpanId,
        Top::ParentSpanId,
        Top::Error,
        Top::Input,
        Top::Output,
    ];
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

impl<'c> TopLevel<'c> {
    /// Scans a line that must hold one object, where it stands when `tail`
    /// (the buffer from the line's start) allows, else in a copy made in
    /// `scratch`. Reading members as they are scanned, rather than splitting
    /// the line and looking them up after, saved about 500 instructions an
    /// event.
    fn scan(line: &'c str, tail: &'c [u8], scratch: &mut LineScratch) -> Result<Self, ScanError> {
        let mut top = TopLevel::default();
        visit_object_in(line, tail, scratch, |key, field| {
            let Some(slot) = field.slot_of(key, field_slot).map(|i| Top::ALL[i]) else {
                return field.skip();
            };
            let (value, scanned) = match slot {
                Top::ActionTaken => {
                    top.action = [None; 2];
                    field.members(|k, f| pick_member(k, f, &mut top.action, action_slot))?
                }
                Top::Error => {
                    top.error = [None; 2];
                    field.members(|k, f| pick_member(k, f, &mut top.error, error_slot))?
                }
                Top::DivergenceAge | Top::LatencyMs | Top::Usage | Top::MessageContext => {
                    let mut plain = true;
                    let scanned = field.members(|_, f| {
                        let (v, scanned) = f.value()?;
                        plain &= is_plain_digits(&v);
                        Ok(scanned)
                    })?;
                    let bit = 1 << slot as u32;
                    top.not_plain = if plain {
                        top.not_plain & !bit
                    } else {
                        top.not_plain | bit
                    };
                    scanned
                }
                _ => field.value()?,
            };
            top.values[slot as usize] = Some(value);
            Ok(scanned)
        })?;
        Ok(top)
    }

    #[inline]
    fn get(&self, field: Top) -> Option<Value<'c>> {
        self.values[field as usize]
    }

    /// An object of integers' value, and whether its members all hold plain
    /// digits.
    fn int_object(&self, field: Top) -> Option<(Value<'c>, bool)> {
        let plain = self.not_plain & (1 << field as u32) == 0;
        self.get(field).map(|v| (v, plain))
    }

    #[inline]
    fn required(&self, field: Top) -> Result<Value<'c>, String> {
        self.get(field)
            .ok_or_else(|| format!("missing field \"{}\"", TOP_FIELDS[field as usize]))
    }
}

/// Keeps a nested member's value in `slots`, at the index `slot` gives its
/// key (a `match`, which costs less than a search of the names); the others
/// are only validated.
fn pick_member<'c, const N: usize>(
    key: Value<'c>,
    field: Field<'_, 'c, '_>,
    slots: &mut [Option<Value<'c>>; N],
    slot: fn(&str) -> Option<usize>,
) -> Result<Stepped, ScanError> {
    let Some(i) = field.slot_of(key, slot) else {
        return field.skip();
    };
    let (value, scanned) = field.value()?;
    slots[i] = Some(value);
    Ok(scanned)
}

/// The slot of a member of `action_taken` that a TraceEvent reads.
fn action_slot(name: &str) -> Option<usize> {
    match name {
        "tool_name" => Some(0),
        "tool_input" => Some(1),
        _ => None,
    }
}

/// The slot of a member of `error` that a TraceEvent reads.
fn error_slot(name: &str) -> Option<usize> {
    match name {
        "type" => Some(0),
        "message" => Some(1),
        _ => None,
    }
}

/// [`field_index`] as the position in `TOP_FIELDS`, for [`Field::slot_of`].
fn field_slot(name: &str) -> Option<usize> {
    field_index(name).map(|t| t as usize)
}

/// The slot of a top-level member; a `match` compiles to a switch on length
/// and bytes, where searching `TOP_FIELDS` cost a comparison per name.
fn field_index(name: &str) -> Option<Top> {
    Some(match name {
        "kind" => Top::Kind,
        "event_id" => Top::EventId,
        "run_id" => Top::RunId,
        "agent_id" => Top::AgentId,
        "turn" => Top::Turn,
        "action_succeeded" => Top::ActionSucceeded,
        "action_taken" => Top::ActionTaken,
        "divergence_fields" => Top::DivergenceFields,
        "timestamp" => Top::Timestamp,
        "divergence_age" => Top::DivergenceAge,
        "latency_ms" => Top::LatencyMs,
        "usage" => Top::Usage,
        "message_context" => Top::MessageContext,
        "failure_classification" => Top::FailureClassification,
        "span_id" => Top::SpanId,
        "parent_span_id" => Top::ParentSpanId,
        "error" => Top::Error,
        "input" => Top::Input,
        "output" => Top::Output,
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
    /// The timestamp's RFC 3339 text without its `Z`, when the input spelled
    /// it so.
    utc_text: Option<&'c str>,
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
    /// The input and output cut to `--max-text` (with the digest of the
    /// whole), when longer.
    input_cut: Option<(String, String)>,
    output_cut: Option<(String, String)>,
}

impl<'c> TraceEvent<'c> {
    /// Accepts exactly what agent-triage 0.1.0 accepts.
    fn read(obj: &TopLevel<'c>) -> Result<Self, String> {
        let event_id = strict_str(obj.required(Top::EventId)?, "event_id")?;
        let run = strict_str(obj.required(Top::RunId)?, "run_id")?;
        let agent_id = strict_str(obj.required(Top::AgentId)?, "agent_id")?;
        let turn = lax_int(&obj.required(Top::Turn)?, "turn")?;
        let succeeded = lax_bool(&obj.required(Top::ActionSucceeded)?, "action_succeeded")?;
        let (tool_name, tool_input) = action(obj.required(Top::ActionTaken)?, obj.action)?;
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
        let (timestamp, utc_text) = match obj.get(Top::Timestamp) {
            None | Some(Value::Null) => (None, None),
            Some(v) => {
                let (t, text) = lax_timestamp(&v)?;
                (Some(t), text)
            }
        };
        let divergence_age = object_field(
            obj.int_object(Top::DivergenceAge),
            "divergence_age",
            IntKeys::<0>::All,
        )?
        .filter(|raw| !is_empty_object(raw));
        let latency_ms = object_field(
            obj.int_object(Top::LatencyMs),
            "latency_ms",
            IntKeys::Some(["llm", "tool", "total"]),
        )?;
        let usage = object_field(
            obj.int_object(Top::Usage),
            "usage",
            IntKeys::Some(["input_tokens", "output_tokens"]),
        )?;
        let message_context = object_field(
            obj.int_object(Top::MessageContext),
            "message_context",
            IntKeys::<0>::Some([]),
        )?
        .filter(|raw| !is_empty_object(raw));
        Ok(TraceEvent {
            event_id,
            run_id: run.as_str().ok_or("run_id: not a readable string")?,
            run_id_raw: run.raw(),
            turn,
            agent_id,
            tool_name,
            tool_input,
            succeeded,
            timestamp,
            utc_text,
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
            error: obj.get(Top::Error).and_then(|v| error_info(v, obj.error)),
            input: obj.get(Top::Input).filter(is_string).map(|v| v.raw()),
            output: obj.get(Top::Output).filter(is_string),
            input_cut: None,
            output_cut: None,
        })
    }

    /// Cuts the input and output texts longer than `limit` bytes. The JSON
    /// text is never shorter than what it decodes to, so most texts are
    /// let through on their length alone.
    fn cut_texts(&mut self, limit: usize) {
        let cut = |raw: &str| {
            if raw.len() <= limit + 2 {
                return None;
            }
            let text: String = serde_json::from_str(raw).ok()?;
            (text.len() > limit).then(|| crate::record::cut_text(&text, limit))
        };
        self.input_cut = self.input.and_then(cut);
        self.output_cut = self.output.and_then(|v| cut(v.raw()));
    }

    /// The `failure_source` member: why the event counts as failed.
    fn failure_source_member(&self) -> &'static str {
        if self.classification.is_some() {
            ",\"failure_source\":\"label\""
        } else if !self.succeeded {
            ",\"failure_source\":\"status\""
        } else {
            ""
        }
    }

    /// Writes the `event` record without its closing brace (the sink adds
    /// the step), in the field order of [`crate::record::EventOut`].
    /// `src_head` is `,"src":{"path":PATH,"line":`. Keys are written with
    /// their punctuation in one piece: a copy per key, value and brace cost
    /// about 300 instructions an event more.
    fn write_json(&self, buf: &mut Vec<u8>, src_head: &str, line: u64) {
        let mut w = JsonWriter(buf);
        w.member("{\"kind\":\"event\",\"event_id\":", self.event_id.raw());
        w.member(",\"run_id\":", self.run_id_raw);
        w.raw(",\"turn\":");
        w.int(self.turn);
        w.member(",\"agent_id\":", self.agent_id.raw());
        w.member(",\"action_taken\":{\"tool_name\":", self.tool_name.raw());
        w.optional(",\"tool_input\":", self.tool_input);
        w.raw(if self.succeeded {
            "},\"action_succeeded\":true"
        } else {
            "},\"action_succeeded\":false"
        });
        if let Some(t) = self.timestamp {
            w.raw(",\"timestamp\":\"");
            match self.utc_text {
                Some(text) => {
                    w.raw(text);
                    w.raw("Z\"");
                }
                None => {
                    t.write_rfc3339(w.0);
                    w.raw("\"");
                }
            }
        }
        w.optional(
            ",\"failure_classification\":",
            self.classification.as_ref().map(|(_, raw)| raw.as_ref()),
        );
        w.raw(self.failure_source_member());
        w.optional(
            ",\"divergence_fields\":",
            self.divergence_raw
                .filter(|_| !self.divergence_fields.is_empty()),
        );
        w.optional(",\"divergence_age\":", self.divergence_age);
        w.optional(",\"latency_ms\":", self.latency_ms);
        w.optional(",\"usage\":", self.usage);
        w.optional(",\"message_context\":", self.message_context);
        w.optional(",\"span_id\":", self.span_id);
        w.optional(",\"parent_span_id\":", self.parent_span_id);
        if let Some(e) = &self.error {
            w.raw(",\"error\":");
            w.serde(e);
        }
        match &self.input_cut {
            Some((kept, digest)) => {
                w.raw(",\"input\":");
                w.serde(kept);
                w.member(",\"input_digest\":", &format!("\"{digest}\""));
            }
            None => w.optional(",\"input\":", self.input),
        }
        match &self.output_cut {
            Some((kept, digest)) => {
                w.raw(",\"output\":");
                w.serde(kept);
                w.member(",\"output_digest\":", &format!("\"{digest}\""));
            }
            None => w.optional(",\"output\":", self.output.map(|v| v.raw())),
        }
        w.raw(src_head);
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
                output: match &self.output_cut {
                    Some((kept, _)) => Some(out.put(kept)),
                    None => self.output.as_ref().map(|o| out.put(&decoded(o))),
                },
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

    /// `key` (its punctuation included) then `raw`, which is JSON text
    /// already.
    fn member(&mut self, key: &str, raw: &str) {
        self.raw(key);
        self.raw(raw);
    }

    /// [`JsonWriter::member`] when there is a value.
    fn optional(&mut self, key: &str, raw: Option<&str>) {
        if let Some(raw) = raw {
            self.member(key, raw);
        }
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
#[inline(always)]
fn action<'c>(
    v: Value<'c>,
    [tool, input]: [Option<Value<'c>>; 2],
) -> Result<(Value<'c>, Option<&'c str>), String> {
    let Value::Object(_) = v else {
        return Err(format!(
            "action_taken: expected an object, got {}",
            describe(&v)
        ));
    };
    let tool = tool.ok_or("missing field \"action_taken.tool_name\"")?;
    let tool = strict_str(tool, "action_taken.tool_name")?;
    let input = match input {
        None => None,
        Some(Value::Object(raw)) => Some(raw).filter(|raw| !is_empty_object(raw)),
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
#[inline(always)]
fn object_field<'c, const N: usize>(
    v: Option<(Value<'c>, bool)>,
    name: &str,
    ints: IntKeys<N>,
) -> Result<Option<&'c str>, String> {
    match v {
        None => Ok(None),
        Some((Value::Object(raw), plain)) => {
            // Members that all hold plain digits pass whichever keys must be
            // integers, so the keys need reading only when one does not.
            if !plain {
                check_int_members(raw, name, ints)?;
            }
            Ok(Some(raw))
        }
        Some((v, _)) => Err(format!("{name}: expected an object, got {}", describe(&v))),
    }
}

/// Checks that the members `ints` names of object field `name` hold lax
/// integers.
#[cold]
fn check_int_members<const N: usize>(
    object: &str,
    name: &str,
    ints: IntKeys<N>,
) -> Result<(), String> {
    let mut members = Vec::new();
    object_members(object, &mut members).map_err(|e| format!("not valid JSON: {e}"))?;
    let members = members.as_slice();
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
    Ok(())
}

/// Plain digits, short enough for an i64: an integer without parsing.
#[inline]
fn is_plain_digits(v: &Value<'_>) -> bool {
    matches!(v, Value::Number(n) if n.len() < 19 && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Checks that member `key` of object field `name` holds a lax integer.
#[inline]
fn lax_int_member<'k>(
    v: &Value<'_>,
    name: &str,
    key: impl FnOnce() -> Cow<'k, str>,
) -> Result<(), String> {
    if is_plain_digits(v) {
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
fn error_info(v: Value<'_>, [kind, message]: [Option<Value<'_>>; 2]) -> Option<ErrorInfo> {
    let Value::Object(_) = v else { return None };
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
#[inline(always)]
fn strict_str<'c>(v: Value<'c>, name: &str) -> Result<Value<'c>, String> {
    match v {
        Value::String { .. } => Ok(v),
        other => Err(format!(
            "{name}: expected a string, got {}",
            describe(&other)
        )),
    }
}

// The lax readers below go straight to the spelling nearly every trace
// uses (plain digits, a JSON boolean, a string without escapes) before the
// general rules, whose dispatch cost about 100 instructions a value.

#[inline(always)]
fn lax_int(v: &Value<'_>, name: &str) -> Result<i64, String> {
    if let Value::Number(digits) = v
        && is_plain_digits(v)
    {
        return Ok(digits.bytes().fold(0, |n, d| n * 10 + i64::from(d - b'0')));
    }
    Scalar::from(v).int(name)
}

#[inline(always)]
fn lax_bool(v: &Value<'_>, name: &str) -> Result<bool, String> {
    if let Value::Bool(b) = v {
        return Ok(*b);
    }
    Scalar::from(v).bool(name)
}

/// The timestamp and, when the input spelled it in UTC, its text for
/// [`TraceEvent::utc_text`].
fn lax_timestamp<'c>(v: &Value<'c>) -> Result<(Timestamp, Option<&'c str>), String> {
    if let Value::String {
        raw,
        escaped: false,
    } = v
        && let Some((t, text)) = Timestamp::parse_utc(&raw[1..raw.len() - 1])
    {
        return Ok((t, Some(text)));
    }
    Scalar::from(v).timestamp().map(|t| (t, None))
}

fn python_str(v: &Value<'_>) -> String {
    match v {
        Value::Array(raw) | Value::Object(raw) => raw.to_string(),
        _ => Scalar::from(v).python_str(),
    }
}

#[cfg(test)]
mod tests;
