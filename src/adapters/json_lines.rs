//! Formats written one JSON value per line: the lines decoded in parallel
//! and handed over in input order. Spans (OTLP request lines, span dumps)
//! go to the trace window, each trace emitted once complete (see
//! `trace_window`), so that memory holds open traces rather than the file;
//! other formats get each line's value. A file whose first value runs over
//! several lines is read whole instead.

use std::io::Read;
use std::ops::Range;

use serde_json::Value;

use super::observations::json_values;
use super::span_events::HeldSpan;
use super::trace_window::TraceWindow;
use super::{Sink, Unreadable};
use crate::io::decode_ahead::{Consumer, Decoder, decode_ahead};
use crate::io::json_scan::LineScratch;
use crate::io::ndjson::{Chunk, ChunkReader};

/// What one line became.
pub(super) enum SpanLine {
    /// Its spans, and why parts of it were not read.
    Read {
        spans: Vec<HeldSpan>,
        skipped: Vec<Unreadable>,
    },
    /// Not read at all.
    Skip(Unreadable),
    /// Past `--max-document`: an error, as for a document.
    TooLarge,
}

/// How a span format reads its lines and, when its first value runs over
/// several lines, its whole input.
pub(super) struct LineFormat<D, W> {
    /// What one line holds, in the error for a line past `--max-document`
    /// ("one OTLP request").
    pub one_line: &'static str,
    /// Reads the line at `range` of a chunk's data (made ready to be
    /// scanned in place), numbered `number`.
    pub decode: D,
    /// Reads a whole input into held spans, reporting what it skips.
    pub whole: W,
}

/// Reads spans from `r` into `sink` line by line, or whole when its first
/// value is written over several lines.
pub(super) fn spans<D, W>(
    r: impl Read,
    sink: &mut Sink<'_>,
    format: LineFormat<D, W>,
) -> anyhow::Result<()>
where
    D: Fn(&mut LineScratch, &[u8], Range<usize>, u64) -> SpanLine + Sync,
    W: FnOnce(Vec<u8>, &mut Sink<'_>) -> anyhow::Result<Vec<HeldSpan>>,
{
    let limit = sink.settings.document_limit;
    let mut reader = ChunkReader::new(r).max_line(limit);
    let path = sink.path().to_string();
    let one_line = format.one_line;
    let read_error = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::InvalidData => anyhow::anyhow!(
            "{path}: {e}, the most --max-document lets {one_line} take; raise --max-document"
        ),
        _ => anyhow::anyhow!("{path}: {}", crate::io::diag::io_reason(&e)),
    };
    // The first line shows whether values are one per line or one
    // document across lines.
    let first = loop {
        let Some(chunk) = reader.next_chunk().map_err(read_error)? else {
            return Ok(());
        };
        match first_line_state(&chunk) {
            None => reader.recycle(chunk),
            Some(Some(doc)) => {
                let doc = read_rest(reader, chunk, doc, sink, read_error)?;
                let held = (format.whole)(doc, sink)?;
                let mut window = TraceWindow::new(sink.settings.trace_window);
                for span in held {
                    window.push(span, sink)?;
                }
                return window.finish(sink);
            }
            Some(None) => break chunk.into_scannable(),
        }
    };
    let decode = &format.decode;
    let decoder = Decoder {
        lines_per_task: 1,
        scratch: LineScratch::default,
        decode: |scratch: &mut LineScratch, data: &[u8], lines: &[(u64, Range<usize>)]| {
            lines
                .iter()
                .map(|(number, range)| {
                    let decoded = if range.len() as u64 > limit {
                        SpanLine::TooLarge
                    } else {
                        decode(scratch, data, range.clone(), *number)
                    };
                    (*number, decoded)
                })
                .collect::<Vec<_>>()
        },
    };
    let mut feed = WindowFeed {
        window: TraceWindow::new(sink.settings.trace_window),
        sink,
        path: &path,
        limit,
        read_error: &read_error,
    };
    decode_ahead(&mut reader, Some(first), &decoder, &mut feed)?;
    feed.window.finish(feed.sink)
}

/// Feeds decoded lines' spans to the trace window, in input order.
struct WindowFeed<'f, 's, E> {
    window: TraceWindow,
    sink: &'f mut Sink<'s>,
    path: &'f str,
    limit: u64,
    read_error: &'f E,
}

impl<E: Fn(std::io::Error) -> anyhow::Error> Consumer<Vec<(u64, SpanLine)>>
    for WindowFeed<'_, '_, E>
{
    type Error = anyhow::Error;

    fn repaired(&mut self, repaired: crate::io::surrogates::Repaired) {
        self.sink.repaired(repaired);
    }

    fn hand_over(&mut self, tasks: Vec<Vec<(u64, SpanLine)>>) -> anyhow::Result<()> {
        for (number, line) in tasks.into_iter().flatten() {
            match line {
                SpanLine::Read { spans, skipped } => {
                    for reason in skipped {
                        self.sink.skip(Some(number), reason)?;
                    }
                    for span in spans {
                        self.window.push(span, self.sink)?;
                    }
                }
                SpanLine::Skip(reason) => self.sink.skip(Some(number), reason)?,
                SpanLine::TooLarge => {
                    return Err(super::too_large(
                        &format!("{}:{number}", self.path),
                        self.limit,
                    ));
                }
            }
        }
        Ok(())
    }

    fn caught_up(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    fn read_error(&self, e: std::io::Error) -> anyhow::Error {
        (self.read_error)(e)
    }
}

/// The rest of an input whose first value runs over more lines than one,
/// after `doc` and the chunk `first`: up to `--max-document`.
fn read_rest<R: Read>(
    mut reader: ChunkReader<R>,
    first: Chunk,
    mut doc: Vec<u8>,
    sink: &mut Sink<'_>,
    read_error: impl Fn(std::io::Error) -> anyhow::Error,
) -> anyhow::Result<Vec<u8>> {
    let limit = sink.settings.document_limit;
    let path = sink.path().to_string();
    let mut chunk = Some(first);
    while let Some(c) = chunk {
        sink.repaired(c.repaired);
        if (doc.len() + c.data.len()) as u64 > limit {
            return Err(super::too_large(&path, limit));
        }
        doc.extend_from_slice(&c.data);
        reader.recycle(c);
        chunk = reader.next_chunk().map_err(&read_error)?;
    }
    Ok(doc)
}

/// After the chunk holding the first non-blank line: `Some(None)` for one
/// value per line, `Some(Some(buffer))` when the first value runs over
/// more lines (a pretty-printed file). `None` while only blank lines came.
fn first_line_state(chunk: &Chunk) -> Option<Option<Vec<u8>>> {
    let (_, first) = chunk.line_spans().next()?;
    let incomplete = matches!(
        serde_json::from_slice::<serde::de::IgnoredAny>(&chunk.data[first]),
        Err(e) if e.is_eof()
    );
    Some(incomplete.then(Vec::new))
}

/// What one line of a value format became: what the format made of its
/// value on the pool.
enum LineValue<T> {
    Read(T),
    TooLarge,
}

/// Reads the JSON values of `r`, one per line or documents one after
/// another, handing each to `each` with the line it starts on, in input
/// order. Lines are parsed on the pool. The input as a whole is held to
/// `--max-document`, as a document is: these formats keep what they read
/// to the end.
pub(super) fn values(
    r: impl Read,
    sink: &mut Sink<'_>,
    each: impl FnMut(u64, Result<Value, Unreadable>, &mut Sink<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    values_with(r, sink, |_, value| value, each)
}

/// [`values`], with what each value becomes made on the pool too
/// (`on_pool`), so that only the joining of lines is left to `each`; a
/// value is then also dropped where it was made.
pub(super) fn values_with<T: Send>(
    r: impl Read,
    sink: &mut Sink<'_>,
    on_pool: impl Fn(u64, Result<Value, Unreadable>) -> T + Sync,
    mut each: impl FnMut(u64, T, &mut Sink<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let limit = sink.settings.document_limit;
    let mut reader = ChunkReader::new(r).max_line(limit);
    let path = sink.path().to_string();
    let read_error = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::InvalidData => super::too_large(&path, limit),
        _ => anyhow::anyhow!("{path}: {}", crate::io::diag::io_reason(&e)),
    };
    let first = loop {
        let Some(chunk) = reader.next_chunk().map_err(read_error)? else {
            return Ok(());
        };
        match first_line_state(&chunk) {
            None => reader.recycle(chunk),
            Some(Some(doc)) => {
                let doc = read_rest(reader, chunk, doc, sink, read_error)?;
                let doc = super::quote_wide_integers(doc);
                for (line, value) in json_values(&doc) {
                    each(line, on_pool(line, value), sink)?;
                }
                return Ok(());
            }
            Some(None) => break chunk.into_scannable(),
        }
    };
    let on_pool = &on_pool;
    let decoder = Decoder {
        lines_per_task: 1,
        scratch: || (),
        decode: |(): &mut (), data: &[u8], lines: &[(u64, Range<usize>)]| {
            lines
                .iter()
                .map(|(number, range)| {
                    let value = if range.len() as u64 > limit {
                        LineValue::TooLarge
                    } else {
                        let value = value_of_line(&data[range.clone()]);
                        LineValue::Read(on_pool(*number, value))
                    };
                    (*number, range.len() as u64 + 1, value)
                })
                .collect::<Vec<_>>()
        },
    };
    let mut feed = ValueFeed {
        sink,
        each: &mut each,
        path: &path,
        limit,
        read: 0,
        read_error: &read_error,
    };
    decode_ahead(&mut reader, Some(first), &decoder, &mut feed)
}

/// One line's value, wide integers quoted first (see
/// [`super::quote_wide_integers`]).
fn value_of_line(bytes: &[u8]) -> Result<Value, Unreadable> {
    if simdutf8::basic::from_utf8(bytes).is_err() {
        return Err(Unreadable::NotUtf8);
    }
    let bytes = super::quote_wide_integers(bytes.to_vec());
    serde_json::from_slice(&bytes).map_err(|e| Unreadable::Json(crate::io::diag::json_reason(&e)))
}

/// Hands decoded lines' values to the format, in input order.
struct ValueFeed<'f, 's, F, E> {
    sink: &'f mut Sink<'s>,
    each: &'f mut F,
    path: &'f str,
    limit: u64,
    /// Bytes of the input handed over so far.
    read: u64,
    read_error: &'f E,
}

impl<T, F, E> Consumer<Vec<(u64, u64, LineValue<T>)>> for ValueFeed<'_, '_, F, E>
where
    F: FnMut(u64, T, &mut Sink<'_>) -> anyhow::Result<()>,
    E: Fn(std::io::Error) -> anyhow::Error,
{
    type Error = anyhow::Error;

    fn repaired(&mut self, repaired: crate::io::surrogates::Repaired) {
        self.sink.repaired(repaired);
    }

    fn hand_over(&mut self, tasks: Vec<Vec<(u64, u64, LineValue<T>)>>) -> anyhow::Result<()> {
        for (number, bytes, line) in tasks.into_iter().flatten() {
            self.read += bytes;
            match line {
                _ if self.read > self.limit => {
                    return Err(super::too_large(self.path, self.limit));
                }
                LineValue::Read(value) => (self.each)(number, value, self.sink)?,
                LineValue::TooLarge => {
                    return Err(super::too_large(
                        &format!("{}:{number}", self.path),
                        self.limit,
                    ));
                }
            }
        }
        Ok(())
    }

    fn caught_up(&mut self) -> anyhow::Result<()> {
        Ok(())
    }

    fn read_error(&self, e: std::io::Error) -> anyhow::Error {
        (self.read_error)(e)
    }
}
