//! Formats written one JSON value per line: the lines decoded in parallel
//! and handed over in input order. Spans (OTLP request lines, span dumps)
//! go to the trace window, each trace emitted once complete (see
//! `trace_window`), so that memory holds open traces rather than the file;
//! other formats get each line's value (LangSmith and Langfuse hold them in
//! a window of their own). A file whose first value runs over several
//! lines, or whose first line holds objects one after another, is read
//! whole instead.

use std::io::Read;
use std::ops::Range;

use serde_json::Value;

use crate::adapters::read::pruned_value::Members;
use crate::adapters::read::span_events::HeldSpan;
use crate::adapters::read::trace_window::TraceWindow;
use crate::adapters::read::value::json_values;
use crate::adapters::sink::Sink;
use crate::adapters::unreadable::Unreadable;
use crate::plumbing::decode_ahead::{InOrder, LineDecoder, decode_ahead};
use crate::plumbing::framing::{Chunk, ChunkReader, ScanChunk};
use crate::plumbing::json_scan::LineScratch;
use crate::plumbing::read_ahead::ReadInline;

/// What one line of a span format became.
pub(crate) enum SpanLine {
    /// Its spans, and why parts of it were not read.
    Read {
        spans: Vec<HeldSpan>,
        skipped: Vec<Unreadable>,
    },
    /// Not read at all.
    Skip(Unreadable),
}

/// How a span format reads its lines and, when its first value runs over
/// several lines, its whole input.
pub(crate) struct LineFormat<D, W> {
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
pub(crate) fn spans<D, W>(
    r: impl Read + Send,
    sink: &mut Sink<'_>,
    format: LineFormat<D, W>,
) -> anyhow::Result<()>
where
    D: Fn(&mut LineScratch, &[u8], Range<usize>, u64) -> SpanLine + Sync,
    W: FnOnce(Vec<u8>, &mut Sink<'_>) -> anyhow::Result<Vec<HeldSpan>>,
{
    let mut window = TraceWindow::new(sink.settings.trace_window);
    match open(r, sink, format.one_line)? {
        Opened::Empty => return Ok(()),
        Opened::Whole(doc) => {
            for span in (format.whole)(doc, sink)? {
                window.push(span, sink)?;
            }
        }
        Opened::Lines(lines) => {
            lines.decode(sink, &format.decode, |number, _, line, sink| match line {
                SpanLine::Read { spans, skipped } => {
                    for reason in skipped {
                        sink.skip(Some(number), reason)?;
                    }
                    spans
                        .into_iter()
                        .try_for_each(|span| window.push(span, sink))
                }
                SpanLine::Skip(reason) => sink.skip(Some(number), reason),
            })?;
        }
    }
    window.finish(sink)
}

/// Reads the JSON values of `r`, one per line or documents one after
/// another, handing each to `each` with the line it starts on, in input
/// order. Lines are parsed on the pool. The input as a whole is held to
/// `--max-document`, as a document is: these formats keep what they read
/// to the end.
pub(crate) fn values(
    r: impl Read + Send,
    sink: &mut Sink<'_>,
    each: impl FnMut(u64, Result<Value, Unreadable>, &mut Sink<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    values_with(r, sink, |_, value| value, each)
}

/// [`values`], with what each value becomes made on the pool too
/// (`on_pool`), so that only the joining of lines is left to `each`; a
/// value is then also dropped where it was made.
pub(crate) fn values_with<T: Send>(
    r: impl Read + Send,
    sink: &mut Sink<'_>,
    on_pool: impl Fn(u64, Result<Value, Unreadable>) -> T + Sync,
    each: impl FnMut(u64, T, &mut Sink<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    read_values(r, sink, Held::Whole, None, on_pool, each)
}

/// [`values_with`] for a format that holds what it reads in a trace
/// window, not to the end: `--max-document` holds each line, not the
/// input (as for spans). Lines are read with only `members` (a whole
/// document is read in full).
pub(crate) fn streamed_values<T: Send>(
    r: impl Read + Send,
    sink: &mut Sink<'_>,
    members: Option<&'static Members>,
    on_pool: impl Fn(u64, Result<Value, Unreadable>) -> T + Sync,
    each: impl FnMut(u64, T, &mut Sink<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    read_values(r, sink, Held::Lines, members, on_pool, each)
}

/// What a format of values holds of its input while it reads.
#[derive(Clone, Copy, PartialEq)]
enum Held {
    /// All of it, to the end: held to `--max-document` as a whole.
    Whole,
    /// Lines of open traces: each line held to `--max-document`.
    Lines,
}

fn read_values<T: Send>(
    r: impl Read + Send,
    sink: &mut Sink<'_>,
    held: Held,
    members: Option<&'static Members>,
    on_pool: impl Fn(u64, Result<Value, Unreadable>) -> T + Sync,
    mut each: impl FnMut(u64, T, &mut Sink<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    match open(r, sink, "one line")? {
        Opened::Empty => Ok(()),
        Opened::Whole(doc) => {
            let doc = crate::adapters::read::document::quote_wide_integers(doc);
            for (line, value) in json_values(&doc) {
                each(line, on_pool(line, value), sink)?;
            }
            Ok(())
        }
        Opened::Lines(lines) => {
            let (path, limit) = (sink.path().to_string(), sink.settings.document_limit);
            let mut read = 0u64;
            let decode = |_: &mut LineScratch, data: &[u8], range: Range<usize>, number| {
                on_pool(number, value_of_line(&data[range], members))
            };
            lines.decode(sink, &decode, |number, bytes, value, sink| {
                read += bytes;
                if held == Held::Whole && read > limit {
                    return Err(crate::adapters::read::document::too_large(&path, limit));
                }
                each(number, value, sink)
            })
        }
    }
}

/// One line's value, wide integers quoted first (see
/// [`crate::adapters::read::document::quote_wide_integers`]); with `members`, only those (see
/// [`Members`]).
pub(crate) fn value_of_line(
    bytes: &[u8],
    members: Option<&'static Members>,
) -> Result<Value, Unreadable> {
    if simdutf8::basic::from_utf8(bytes).is_err() {
        return Err(Unreadable::NotUtf8);
    }
    let quoted = crate::adapters::read::document::wide_integers_quoted(bytes);
    if let Some(members) = members {
        let mut text = quoted.clone().unwrap_or_else(|| bytes.to_vec());
        if let Some(value) = members.parse(&mut text) {
            return Ok(value);
        }
    }
    serde_json::from_slice(quoted.as_deref().unwrap_or(bytes))
        .map_err(|e| Unreadable::Json(crate::plumbing::diag::json_reason(&e)))
}

/// An input opened: nothing in it, a whole document (its first value runs
/// over several lines, or documents follow one another), or lines.
enum Opened<R> {
    Empty,
    Whole(Vec<u8>),
    Lines(Lines<R>),
}

/// An input of one value per line, its first chunk read.
struct Lines<R> {
    reader: ChunkReader<R>,
    first: ScanChunk,
    one_line: &'static str,
}

/// Opens `r`: the first line shows whether values are one per line or one
/// document across lines. A whole document is read up to
/// `--max-document`; a line may be as long.
fn open<R: Read>(r: R, sink: &mut Sink<'_>, one_line: &'static str) -> anyhow::Result<Opened<R>> {
    let limit = sink.settings.document_limit;
    let mut reader = ChunkReader::new(r).max_line(limit);
    let read_error = read_error(sink.path(), one_line);
    loop {
        let Some(chunk) = reader.next_chunk().map_err(&read_error)? else {
            return Ok(Opened::Empty);
        };
        match first_line_state(&chunk) {
            None => reader.recycle(chunk),
            Some(Some(doc)) => {
                let doc = read_rest(reader, chunk, doc, sink, read_error)?;
                return Ok(Opened::Whole(doc));
            }
            Some(None) => {
                let first = chunk.into_scannable();
                return Ok(Opened::Lines(Lines {
                    reader,
                    first,
                    one_line,
                }));
            }
        }
    }
}

/// How a read fails: a line past `--max-document` names the flag.
fn read_error(
    path: &str,
    one_line: &'static str,
) -> impl Fn(std::io::Error) -> anyhow::Error + use<> {
    let path = path.to_string();
    move |e| match e.kind() {
        std::io::ErrorKind::InvalidData => anyhow::anyhow!(
            "{path}: {e}, the most --max-document lets {one_line} take; raise --max-document"
        ),
        _ => anyhow::anyhow!("{path}: {}", crate::plumbing::diag::io_reason(&e)),
    }
}

impl<R: Read + Send> Lines<R> {
    /// Decodes every line with `decode` on the pool and hands each to
    /// `each` in input order, with its number and length in bytes.
    fn decode<T: Send>(
        self,
        sink: &mut Sink<'_>,
        decode: &(impl Fn(&mut LineScratch, &[u8], Range<usize>, u64) -> T + Sync),
        each: impl FnMut(u64, u64, T, &mut Sink<'_>) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let decoder = EachLine {
            limit: sink.settings.document_limit,
            decode,
        };
        let read_error = read_error(sink.path(), self.one_line);
        let mut feed = Feed {
            path: sink.path().to_string(),
            sink,
            each,
            read_error,
        };
        let mut source = ReadInline::starting_with(self.reader, self.first);
        decode_ahead(&mut source, &decoder, &mut feed)
    }
}

/// Decodes each line by `decode`, but for a line past `--max-document`
/// (`limit`), decoded as `None`.
struct EachLine<'d, D> {
    limit: u64,
    decode: &'d D,
}

impl<T, D> LineDecoder for EachLine<'_, D>
where
    T: Send,
    D: Fn(&mut LineScratch, &[u8], Range<usize>, u64) -> T + Sync,
{
    type Scratch<'c> = LineScratch;
    /// Each line's number, length with its newline, and value.
    type Out<'c> = Vec<(u64, u64, Option<T>)>;

    fn lines_per_task(&self) -> usize {
        1
    }

    fn scratch<'c>(&self) -> Self::Scratch<'c> {
        LineScratch::default()
    }

    fn decode<'c>(
        &self,
        scratch: &mut LineScratch,
        data: &'c [u8],
        lines: &[(u64, Range<usize>)],
    ) -> Self::Out<'c> {
        lines
            .iter()
            .map(|(number, range)| {
                let bytes = range.len() as u64;
                let decoded = (bytes <= self.limit)
                    .then(|| (self.decode)(scratch, data, range.clone(), *number));
                (*number, bytes + 1, decoded)
            })
            .collect()
    }
}

/// Hands decoded lines to `each`, in input order; a line past
/// `--max-document` (decoded as `None`) is an error.
struct Feed<'f, 's, F, E> {
    path: String,
    sink: &'f mut Sink<'s>,
    each: F,
    read_error: E,
}

impl<T, D, F, E> InOrder<EachLine<'_, D>> for Feed<'_, '_, F, E>
where
    T: Send,
    D: Fn(&mut LineScratch, &[u8], Range<usize>, u64) -> T + Sync,
    F: FnMut(u64, u64, T, &mut Sink<'_>) -> anyhow::Result<()>,
    E: Fn(std::io::Error) -> anyhow::Error,
{
    type Error = anyhow::Error;

    fn repaired(&mut self, repaired: crate::plumbing::surrogates::Repaired) {
        self.sink.repaired(repaired);
    }

    fn hand_over(&mut self, tasks: Vec<Vec<(u64, u64, Option<T>)>>) -> anyhow::Result<()> {
        for (number, bytes, line) in tasks.into_iter().flatten() {
            let Some(line) = line else {
                let at = format!("{}:{number}", self.path);
                return Err(crate::adapters::read::document::too_large(
                    &at,
                    self.sink.settings.document_limit,
                ));
            };
            (self.each)(number, bytes, line, self.sink)?;
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
            return Err(crate::adapters::read::document::too_large(&path, limit));
        }
        doc.extend_from_slice(&c.data);
        reader.recycle(c);
        chunk = reader.next_chunk().map_err(&read_error)?;
    }
    Ok(doc)
}

/// After the chunk holding the first non-blank line: `Some(None)` for one
/// value per line, `Some(Some(buffer))` when the first value runs over
/// more lines (a pretty-printed file) or objects follow one another on
/// the line. `None` while only blank lines came.
/// A first line cut short is read whole too, and told from a document
/// there ([`crate::adapters::read::value::first_line_cut_short`]).
fn first_line_state(chunk: &Chunk) -> Option<Option<Vec<u8>>> {
    let (_, first) = chunk.line_spans().next()?;
    let documents = crate::adapters::read::value::opens_documents(&chunk.data[first]);
    Some(documents.then(Vec::new))
}
