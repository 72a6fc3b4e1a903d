//! The `ndjson` format: agent-triage / dungeon-traces TraceEvent lines,
//! read with agent-triage 0.1.0's lax value rules, decoded in parallel with
//! an allocation-free scanner and written by hand from the input's own
//! JSON text.

use std::borrow::Cow;
use std::io::Read;
use std::ops::Range;
use std::sync::Mutex;

use crate::adapters::formats::Format;
use crate::adapters::read::shape::Shape;
use crate::adapters::read::spans::RecentIds;
use crate::adapters::settings::TimeFilter;
use crate::adapters::sink::Sink;
use crate::adapters::unreadable::Unreadable;
use crate::plumbing::decode_ahead::{InOrder, LineDecoder, decode_ahead};
use crate::plumbing::framing::ChunkReader;
use crate::plumbing::json_scan::{LineScratch, Value};
use crate::plumbing::read_ahead::ReadInline;
use crate::plumbing::waiting::Waiting;
use crate::record::{ActionView, ErrorInfo, EventView};
use crate::timestamp::Timestamp;

mod event;
mod values;

use event::{Top, TopLevel, TraceEvent};

/// Lines decoded by one parallel task.
const LINES_PER_TASK: usize = 128;

/// What became of one input line.
// Line results live in a vector per task of 512 lines; an inline view saves an
// allocation per event.
#[allow(clippy::large_enum_variant)]
enum LineResult {
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
        reason: Unreadable,
    },
}

#[derive(Default)]
struct TaskOutput {
    buf: Vec<u8>,
    outcomes: Vec<LineResult>,
    /// Run ids of written events; grouped events' texts, failures' texts
    /// and their divergence fields.
    texts: String,
    failures: Vec<FailureTexts>,
    divergence: Vec<Text>,
    /// Events kept by the time filter for want of a time.
    untimed: u64,
    /// Per outcome: a hash of an event's line (its id and content), to
    /// drop a line read before; 0 for other outcomes.
    digests: Vec<u64>,
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
        self.digests.clear();
        self
    }
}

/// Reads TraceEvent lines from `r` into `sink`. Each chunk's lines are
/// decoded in parallel while the previous chunk's records are written and
/// the next chunk is read, and by this thread too once that is done.
/// On a live input (`waiting`), lines are read as they arrive, and those
/// read are written before the next read waits.
pub(crate) fn read(
    r: impl Read + Send,
    waiting: Option<Waiting>,
    sink: &mut Sink<'_>,
) -> anyhow::Result<()> {
    let reader = ChunkReader::new(r).live(waiting);
    let path = sink.path().to_string();
    let how = Decoding {
        // The start of the `src` member, once per input rather than per event.
        src_head: format!(
            ",\"src\":{{\"path\":{},\"line\":",
            serde_json::to_string(&path).unwrap_or_else(|_| "\"?\"".to_string())
        ),
        filter: sink.settings.filter,
        as_views: sink.takes_views(),
        text_limit: sink.settings.text_limit,
        lines_seen: std::hash::RandomState::new(),
    };
    let decoder = EventLines {
        how,
        spare: SpareOutputs::default(),
    };
    let mut writer = Writer {
        sink,
        spare: &decoder.spare,
        path,
        seen: RecentIds::default(),
        repeated: 0,
    };
    decode_ahead(&mut ReadInline::new(reader), &decoder, &mut writer)?;
    if writer.repeated > 0 {
        let (n, path) = (writer.repeated, &writer.path);
        writer.sink.diag.warn(
            "repeated-event",
            format_args!(
                "{path}: {n} events repeat the line (event id and content) of one read before \
(a retried export?); each is counted once"
            ),
        );
    }
    Ok(())
}

/// Decodes TraceEvent lines into task outputs, whose buffers are recycled.
struct EventLines {
    how: Decoding,
    spare: SpareOutputs,
}

impl LineDecoder for EventLines {
    // One scanner buffer per thread and chunk rather than per task: a
    // fresh one grew again each time.
    type Scratch<'c> = LineScratch;
    type Out<'c> = TaskOutput;

    fn lines_per_task(&self) -> usize {
        LINES_PER_TASK
    }

    fn scratch<'c>(&self) -> Self::Scratch<'c> {
        LineScratch::default()
    }

    fn decode(
        &self,
        scratch: &mut LineScratch,
        data: &[u8],
        lines: &[(u64, Range<usize>)],
    ) -> TaskOutput {
        decode_group(data, lines, &self.how, scratch, self.spare.take())
    }
}

/// Writes decoded chunks to the sink, which stays on the reading thread (it
/// may hold stdout, which is not `Send`).
struct Writer<'w, 's> {
    sink: &'w mut Sink<'s>,
    spare: &'w SpareOutputs,
    path: String,
    /// Hashes of the event lines written, to drop one read again.
    seen: RecentIds,
    repeated: u64,
}

impl InOrder<EventLines> for Writer<'_, '_> {
    type Error = anyhow::Error;

    fn repaired(&mut self, repaired: crate::plumbing::surrogates::Repaired) {
        // Lines are numbered, so this warning may come before warnings
        // about earlier lines of the chunk being written.
        self.sink.repaired(repaired);
    }

    fn hand_over(&mut self, tasks: Vec<TaskOutput>) -> anyhow::Result<()> {
        write_decoded(tasks, self)
    }

    fn caught_up(&mut self) -> anyhow::Result<()> {
        Ok(self.sink.flush()?)
    }

    fn read_error(&self, e: std::io::Error) -> anyhow::Error {
        anyhow::anyhow!("{}: {}", self.path, crate::plumbing::diag::io_reason(&e))
    }
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

/// What decoding a chunk's lines needs to know besides the lines.
struct Decoding {
    /// `,"src":{"path":PATH,"line":` for this input.
    src_head: String,
    filter: TimeFilter,
    /// Events become [`GroupedEvent`]s rather than records.
    as_views: bool,
    /// `--max-text`: inputs and outputs longer are cut.
    text_limit: usize,
    /// Hashes event lines, with keys of this process's own: input cannot
    /// be built to collide and have events dropped.
    lines_seen: std::hash::RandomState,
}

fn write_decoded(tasks: Vec<TaskOutput>, w: &mut Writer<'_, '_>) -> anyhow::Result<()> {
    let sink = &mut *w.sink;
    for task in &tasks {
        sink.count_untimed(task.untimed);
        for (outcome, &digest) in task.outcomes.iter().zip(&task.digests) {
            if digest != 0 {
                if w.seen.contains_hash(digest) {
                    w.repeated += 1;
                    continue;
                }
                w.seen.insert_hash(digest);
            }
            match outcome {
                LineResult::Event { body, run_id } => {
                    sink.emit_event_text(task.text(*run_id), &task.buf[body.0..body.1])?;
                }
                LineResult::Grouped(ev) => sink.emit_event_view(task.view(ev), ev.timestamp),
                LineResult::Other { body } => sink.emit_line(&task.buf[body.0..body.1])?,
                LineResult::Filtered => {}
                LineResult::Skip { line, reason } => sink.skip(Some(*line), reason)?,
            }
        }
    }
    w.spare.give_back(tasks);
    Ok(())
}

/// Decodes the lines at `lines` of a chunk's `data`, made ready to be
/// scanned in place ([`crate::plumbing::framing::ChunkReader::next_to_scan`]).
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
            None => {
                simdutf8::basic::from_utf8(&data[range.clone()]).map_err(|_| Unreadable::NotUtf8)
            }
        };
        let text = line.as_ref().ok().copied();
        let outcome = line
            .and_then(|line| {
                let tail = &data[range.start..];
                decode_line(line, tail, *number, how, &mut out, scratch)
            })
            .unwrap_or_else(|reason| LineResult::Skip {
                line: *number,
                reason,
            });
        let digest = match (&outcome, text) {
            (LineResult::Event { .. } | LineResult::Grouped(_), Some(text)) => {
                use std::hash::BuildHasher;
                how.lines_seen.hash_one(text.trim()).max(1)
            }
            _ => 0,
        };
        out.digests.push(digest);
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
) -> Result<LineResult, Unreadable> {
    let obj = TopLevel::scan(line, tail, scratch).map_err(|e| match e.reason() {
        "expected a JSON object" => Unreadable::shape("expected a JSON object"),
        _ => Unreadable::Json(e.to_string()),
    })?;
    let buf = &mut out.buf;
    if let Some(kind) = obj.get(Top::Kind).and_then(|k| k.as_str())
        && kind != "event"
    {
        let start = buf.len();
        buf.extend_from_slice(line.as_bytes());
        return Ok(LineResult::Other {
            body: (start, buf.len()),
        });
    }
    let mut ev = TraceEvent::read(&obj)?;
    ev.cut_texts(how.text_limit);
    if !how.filter.keeps(ev.timestamp) {
        return Ok(LineResult::Filtered);
    }
    if ev.timestamp.is_none() && how.filter.is_set() {
        out.untimed += 1;
    }
    if how.as_views {
        return Ok(LineResult::Grouped(ev.grouped(out)));
    }
    let start = out.buf.len();
    ev.write_json(&mut out.buf, &how.src_head, number);
    Ok(LineResult::Event {
        body: (start, out.buf.len()),
        run_id: out.put(&ev.run_id),
    })
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

    /// The event as an in-process consumer reads its view; a success's event
    /// id and tool, which a consumer of views does not read, are left empty.
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

/// The `ndjson` row of the format table.
pub(crate) const FORMAT: Format = Format {
    name: "ndjson",
    help: "agent-triage TraceEvent lines (.ndjson, .jsonl).",
    claims: Some(claims),
    read: |r, waiting, sink| read(r, waiting, sink),
};

/// agent-triage TraceEvent lines, and our own records.
fn claims(shape: &Shape<'_>) -> bool {
    let span_like = ["name", "context", "spanContext"]
        .iter()
        .any(|k| shape.has(k));
    !shape.top_is_list
        && (shape.has("event_id") || shape.has("action_taken") || (shape.has("kind") && !span_like))
}

#[cfg(test)]
mod tests;
