//! Reading trace inputs: an input's first bytes decide its format (or the
//! format is given), and that format's reader writes events, runs and
//! skipped lines into a [`Sink`]. Layers, each using only those below it:
//! this module, `detect` and `containers`; `formats` (one module per
//! format, and the table); `read` (the reading strategies the formats
//! share); `sink`, `settings` and `unreadable`.

mod containers;
mod detect;
pub mod formats;
mod read;
mod settings;
mod sink;
mod unreadable;

use std::io::{self, Read};

pub use detect::{detect, refusal};
pub use formats::{FORMATS, Format};
pub use read::document::{DocumentLoss, too_large};
pub(crate) use settings::DEFAULT_MAX_DOCUMENT;
pub use settings::{DecodeSettings, TimeFilter};
pub use sink::{Sink, SinkTarget};
pub use unreadable::Unreadable;

use crate::plumbing::input::Input;
use crate::plumbing::waiting::Waiting;
#[cfg(test)]
use crate::plumbing::{diag::Diag, framing::RecordWriter};
#[cfg(test)]
use serde_json::Value;
#[cfg(test)]
use std::io::Write;

/// Reads one input in `format` (or the detected one) into `sink`.
pub(crate) fn read_input(input: &Input, format: Format, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let (head, reader) = peek(input)?;
    read_peeked(input, head, reader, format, sink)
}

/// The first 64 KiB of an input, and a reader that still yields them.
pub(crate) type Peeked = (Vec<u8>, Box<dyn Read + Send>);

/// Opens an input and reads its start, for format detection.
pub(crate) fn peek(input: &Input) -> anyhow::Result<Peeked> {
    let mut reader = input.open()?;
    let head = read_start(&input.name(), &mut reader, input.waiting())?;
    Ok((head, reader))
}

/// Reads an input whose start `head` was already read from `rest`.
pub(crate) fn read_peeked(
    input: &Input,
    head: Vec<u8>,
    rest: Box<dyn Read + Send>,
    format: Format,
    sink: &mut Sink<'_>,
) -> anyhow::Result<()> {
    let source = Source {
        name: &input.name(),
        waiting: input.waiting(),
    };
    sink.begin_input();
    let live = source.waiting.is_some();
    let blank = (head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head))
        .iter()
        .all(u8::is_ascii_whitespace);
    read_detected(&source, head, rest, format, sink)?;
    if !live {
        sink.empty_input(source.name, blank);
    }
    sink.end_input(source.name);
    Ok(())
}

/// Reads one input given as a reader: `name` is used in messages and the
/// `source` record.
pub fn read_from(
    name: &str,
    mut reader: impl Read + Send,
    format: Format,
    sink: &mut Sink<'_>,
) -> anyhow::Result<()> {
    let head = read_start(name, &mut reader, None)?;
    let source = Source {
        name,
        waiting: None,
    };
    sink.begin_input();
    read_detected(&source, head, reader, format, sink)?;
    sink.end_input(name);
    Ok(())
}

/// Where an input comes from, as its reader needs to know.
struct Source<'a> {
    /// For messages and the `source` record.
    name: &'a str,
    /// Set for a live input, read as it arrives.
    waiting: Option<Waiting>,
}

fn read_start(
    name: &str,
    reader: &mut impl Read,
    waiting: Option<Waiting>,
) -> anyhow::Result<Vec<u8>> {
    let mut head = vec![0u8; 64 * 1024];
    let n = read_head(reader, &mut head, waiting)
        .map_err(|e| anyhow::anyhow!("{name}: {}", crate::plumbing::diag::io_reason(&e)))?;
    head.truncate(n);
    Ok(head)
}

/// Detects the format (unless given) from the name and `head`, and reads
/// `head` followed by `rest` with that format's adapter.
fn read_detected(
    source: &Source<'_>,
    head: Vec<u8>,
    rest: impl Read + Send,
    format: Format,
    sink: &mut Sink<'_>,
) -> anyhow::Result<()> {
    let name = source.name;
    let shape = detect::shape_of(&head);
    let claimed = Format::claiming(&shape);
    let auto = format.is_auto();
    let format = if auto {
        claimed.unwrap_or(Format::FALLBACK)
    } else {
        format
    };
    if let Some(why) = refusal(&head).filter(|_| claimed.is_none()) {
        // Not a format we read (a zip is claimed by its format first), so the source record names none of them.
        sink.begin_source(name, sink::NOT_JSON);
        sink.skip(None, why)?;
        return Ok(sink.end_source()?);
    }
    let live = source.waiting.is_some();
    if auto && claimed.is_none() && containers::may_be_container(&head, live) {
        return containers::read(name, head, rest, sink);
    }
    if auto && !live && shape.holds_objects() && !shape.is_mlflow_trace() {
        // Named documents, whatever their names claim (a case named
        // "spans"): read member by member, else as the claim says.
        return containers::read_members_or(name, head, rest, format, sink);
    }
    sink.begin_source(name, format.name);
    (format.read)(
        Box::new(io::Cursor::new(head).chain(rest)),
        source.waiting,
        sink,
    )?;
    sink.end_source()?;
    Ok(())
}

/// Fills `buf` from `r`, less at its end or, on a live input, once a
/// whole line has arrived and nothing more has: the format is told from
/// what came first rather than after the writer's next 64 KiB.
fn read_head(r: &mut impl Read, buf: &mut [u8], waiting: Option<Waiting>) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => {
                filled += n;
                if buf[..filled].contains(&b'\n') && Waiting::silent(waiting) {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Runs one adapter on bytes in memory, for the adapters' tests: every
/// record written, the `source` record last.
#[cfg(test)]
pub(crate) fn records_of(format: Format, name: &str, bytes: &[u8]) -> Vec<Value> {
    records_with(format, name, bytes, DecodeSettings::default())
}

#[cfg(test)]
pub(crate) fn records_with(
    format: Format,
    name: &str,
    bytes: &[u8],
    settings: DecodeSettings,
) -> Vec<Value> {
    let mut out = Vec::new();
    let mut diag = Diag::new("test", true);
    {
        let writer = RecordWriter::new(Box::new(&mut out) as Box<dyn Write + '_>, false);
        let mut sink = Sink::new(
            writer,
            &mut diag,
            crate::plumbing::diag::OnBadInput::Skip,
            settings,
        );
        read_from(name, bytes, format, &mut sink).unwrap();
        sink.flush().unwrap();
    }
    out.split(|b| *b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

/// The tool of each event, in order, for the adapters' tests.
#[cfg(test)]
pub(crate) fn tool_names(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["action_taken"]["tool_name"].as_str().unwrap())
        .collect()
}

/// The records one adapter writes for `input`, for the adapters' tests:
/// events, run records, and the source record.
#[cfg(test)]
pub(crate) fn split_records(
    format: Format,
    name: &str,
    input: &str,
) -> (Vec<Value>, Vec<Value>, Value) {
    let mut recs = records_of(format, name, input.as_bytes());
    let source = recs.pop().unwrap();
    let (events, runs) = recs.into_iter().partition(|r| r["kind"] == "event");
    (events, runs, source)
}
