//! NDJSON framing: reading input in chunks of whole lines (with line numbers,
//! BOM, CRLF and blank-line handling) and writing records through one reused
//! buffer.

use std::io::{self, Read, Write};
use std::ops::Range;

use serde::Serialize;

use crate::plumbing::json_scan::PAD;
use crate::plumbing::surrogates::{self, Repaired};
use crate::plumbing::waiting::{SILENCE, Waiting};

/// Lines longer than this are refused rather than grown without bound.
pub(crate) const MAX_LINE_BYTES: usize = 1 << 30;
const CHUNK_BYTES: usize = 1 << 20;
/// Recycled chunk buffers kept for reuse: as many as a reader holds at once.
const MAX_SPARE_CHUNKS: usize = 4;

/// A run of whole lines read from an input.
pub(crate) struct Chunk {
    pub data: Vec<u8>,
    /// The 1-based line number of the first line in `data`.
    pub first_line: u64,
    /// Lone surrogate escapes replaced in `data` as it was read.
    pub repaired: Repaired,
}

/// Where a chunk's lines are, as [`Chunk::line_spans`] gives them: each
/// line's number and its range in the chunk's data.
pub(crate) type LineSpans = Vec<(u64, Range<usize>)>;

/// A chunk made ready to be scanned where it stands
/// ([`Chunk::end_lines_with_zero`]), and where its lines are: what the
/// line readers decode from.
pub(crate) struct ScanChunk {
    pub chunk: Chunk,
    pub lines: LineSpans,
}

impl Chunk {
    /// Makes the lines at `spans` ready to be scanned where they stand
    /// (`json_scan`'s `*_in` entry points): each line's terminator (its
    /// `\r` or `\n`) overwritten with 0, and [`PAD`] zero bytes after the
    /// data. The lines themselves are unchanged.
    fn end_lines_with_zero(&mut self, spans: &[(u64, Range<usize>)]) {
        self.data.extend_from_slice(&[0; PAD]);
        for (_, line) in spans {
            self.data[line.end] = 0;
        }
    }

    /// The chunk made ready to be scanned in place, as
    /// [`ChunkReader::next_to_scan`] gives it, with its lines.
    pub(crate) fn into_scannable(mut self) -> ScanChunk {
        let lines: LineSpans = self.line_spans().collect();
        self.end_lines_with_zero(&lines);
        ScanChunk { chunk: self, lines }
    }

    /// Where the lines of the chunk that hold something other than white
    /// space are in `data` (without their terminator, `\n` or `\r\n`),
    /// with their numbers. One
    /// newline search over the whole chunk: a search per line cost more
    /// to start than to run.
    pub(crate) fn line_spans(&self) -> impl Iterator<Item = (u64, Range<usize>)> + '_ {
        let data = &self.data[..];
        let mut ends = memchr::memchr_iter(b'\n', data);
        let mut start = 0;
        let mut number = self.first_line;
        std::iter::from_fn(move || {
            loop {
                if start >= data.len() {
                    return None;
                }
                let end = ends.next().unwrap_or(data.len());
                let line = match data[start..end] {
                    [.., b'\r'] => start..end - 1,
                    _ => start..end,
                };
                let (this, next) = (number, end + 1);
                number += 1;
                start = next;
                // Records start with '{': no blank test for them.
                if data[line.clone()].first() == Some(&b'{')
                    || !data[line.clone()].iter().all(u8::is_ascii_whitespace)
                {
                    return Some((this, line));
                }
            }
        })
    }
}

/// Reads an input as chunks of whole lines of about 1 MiB.
pub(crate) struct ChunkReader<R> {
    inner: R,
    carry: Vec<u8>,
    /// Buffers handed back by [`ChunkReader::recycle`], filled next
    /// instead of new allocations.
    spares: Vec<Vec<u8>>,
    /// Lists of lines handed back with their chunks.
    spare_lines: Vec<LineSpans>,
    next_line: u64,
    at_start: bool,
    eof: bool,
    chunk_bytes: usize,
    /// Set for a live input: chunks end where the bytes that have arrived
    /// end, rather than waiting to fill.
    waiting: Option<Waiting>,
    /// Lines longer than this are refused.
    max_line: usize,
}

/// The most a read of a live input with nothing waiting asks for: it
/// returns what arrives first, into space zeroed beforehand.
const LIVE_READ_BYTES: usize = 64 * 1024;

impl<R: Read> ChunkReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        Self::with_chunk_size(inner, CHUNK_BYTES)
    }

    pub(crate) fn with_chunk_size(inner: R, chunk_bytes: usize) -> Self {
        ChunkReader {
            inner,
            carry: Vec::new(),
            spares: Vec::new(),
            spare_lines: Vec::new(),
            next_line: 1,
            at_start: true,
            eof: false,
            chunk_bytes: chunk_bytes.max(16),
            waiting: None,
            max_line: MAX_LINE_BYTES,
        }
    }

    /// Refuses lines longer than `bytes` (at most [`MAX_LINE_BYTES`]).
    pub(crate) fn max_line(mut self, bytes: u64) -> Self {
        self.max_line = usize::try_from(bytes).map_or(MAX_LINE_BYTES, |b| b.min(MAX_LINE_BYTES));
        self
    }

    /// Reads `waiting`'s input as it arrives: each chunk holds the lines
    /// that had arrived, however few.
    pub(crate) fn live(mut self, waiting: Option<Waiting>) -> Self {
        self.waiting = waiting;
        self
    }

    /// True when the input is live and nothing has arrived since the last
    /// chunk: reading the next would wait for the writer, so what was read
    /// should be handed on first.
    pub(crate) fn quiet(&self) -> bool {
        !self.eof && Waiting::silent(self.waiting)
    }

    /// The next chunk, or `None` at end of input. A final line without a
    /// newline is returned as its own chunk.
    pub(crate) fn next_chunk(&mut self) -> io::Result<Option<Chunk>> {
        let Some(data) = self.next_data()? else {
            return Ok(None);
        };
        let chunk = self.start_chunk(data);
        self.next_line += memchr::memchr_iter(b'\n', &chunk.data).count() as u64;
        Ok(Some(chunk))
    }

    /// [`ChunkReader::next_chunk`], with its [`Chunk::line_spans`] put in
    /// `spans`: found in the pass that numbers the lines, where counting
    /// them first cost a second pass over every byte.
    fn next_chunk_and_spans(&mut self, spans: &mut LineSpans) -> io::Result<Option<Chunk>> {
        spans.clear();
        let Some(data) = self.next_data()? else {
            return Ok(None);
        };
        let chunk = self.start_chunk(data);
        spans.extend(chunk.line_spans());
        // After the last line: its terminator and any blank lines.
        let (last, end) = spans
            .last()
            .map_or((self.next_line, 0), |(n, r)| (*n, r.end));
        self.next_line = last + memchr::memchr_iter(b'\n', &chunk.data[end..]).count() as u64;
        Ok(Some(chunk))
    }

    /// The next chunk made ready to be scanned where its lines stand
    /// ([`Chunk::end_lines_with_zero`]), with its lines: what the readers
    /// of NDJSON and of records decode from. A copy of each line for the
    /// scanner cost about 60 instructions an event.
    pub(crate) fn next_to_scan(&mut self) -> io::Result<Option<ScanChunk>> {
        let mut lines = self.spare_lines.pop().unwrap_or_default();
        let chunk = self.next_chunk_and_spans(&mut lines)?;
        Ok(chunk.map(|mut chunk| {
            chunk.end_lines_with_zero(&lines);
            ScanChunk { chunk, lines }
        }))
    }

    /// [`ChunkReader::recycle`] for a chunk [`ChunkReader::next_to_scan`]
    /// gave, its list of lines kept too.
    pub(crate) fn recycle_scanned(&mut self, scanned: ScanChunk) {
        if self.spare_lines.len() < MAX_SPARE_CHUNKS {
            self.spare_lines.push(scanned.lines);
        }
        self.recycle(scanned.chunk);
    }

    /// The bytes of the next chunk: whole lines, or the input's last line.
    fn next_data(&mut self) -> io::Result<Option<Vec<u8>>> {
        let mut data = self.spares.pop().unwrap_or_default();
        data.clear();
        // Chunks are read to `chunk_bytes` (unless a line is longer), so a
        // recycled buffer always has the room: a fresh allocation per chunk
        // cost a page fault per 4 KiB read.
        data.reserve_exact(self.chunk_bytes);
        data.extend_from_slice(&self.carry);
        self.carry.clear();
        let mut scanned = 0;
        loop {
            if let Some(last_nl) = memchr::memrchr(b'\n', &data[scanned..]) {
                // The first line ends at the first newline: when no newline
                // came before `scanned`, it is the one that grew.
                let first_end = memchr::memchr(b'\n', &data).unwrap_or(0);
                if first_end > self.max_line {
                    return Err(self.too_long());
                }
                let end = scanned + last_nl + 1;
                self.carry.extend_from_slice(&data[end..]);
                data.truncate(end);
                return Ok(Some(data));
            }
            scanned = data.len();
            // Exact: a line one byte over the cap is refused, and no more
            // than the cap and a byte is ever read of it.
            if data.len() > self.max_line {
                return Err(self.too_long());
            }
            if self.eof {
                return Ok(Some(data).filter(|d| !d.is_empty()));
            }
            self.fill(&mut data)?;
        }
    }

    fn too_long(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "line {} is longer than {}",
                self.next_line,
                crate::plumbing::diag::size_text(self.max_line as u64)
            ),
        )
    }

    /// Takes back a chunk that was handed over, so that the next chunk is
    /// read into its buffer rather than a new one.
    pub(crate) fn recycle(&mut self, chunk: Chunk) {
        if self.spares.len() < MAX_SPARE_CHUNKS {
            self.spares.push(chunk.data);
        }
    }

    fn fill(&mut self, data: &mut Vec<u8>) -> io::Result<()> {
        let want = match self.chunk_bytes.checked_sub(data.len()) {
            Some(room) if room > 0 => room,
            _ => self.chunk_bytes.max(data.len() / 2),
        };
        // Never past the line cap and a byte: a line over the cap is seen
        // as soon as it is, and held in no more memory than that.
        let want = want.min((self.max_line + 1).saturating_sub(data.len()).max(1));
        // Read into spare capacity: zeroing each chunk first costs a pass;
        // exactly, as a doubled buffer near the cap would double the peak.
        data.reserve_exact(want);
        match self.waiting.and_then(|w| Some((w, w.bytes()?))) {
            Some((probe, waiting)) => self.read_arrived(probe, data, want, waiting)?,
            None => {
                if read_up_to(&mut self.inner, data, want)? < want {
                    self.eof = true;
                }
            }
        }
        if self.at_start && data.len() >= 3 {
            self.at_start = false;
            if data.starts_with(b"\xEF\xBB\xBF") {
                data.drain(..3);
            }
        } else if self.eof {
            self.at_start = false;
        }
        Ok(())
    }

    /// Reads into `data`, up to `want` bytes, what has arrived on a live
    /// input (`waiting` bytes at first, by `probe`), and what follows while
    /// the writer keeps writing; when nothing has arrived, what comes next.
    fn read_arrived(
        &mut self,
        probe: Waiting,
        data: &mut Vec<u8>,
        want: usize,
        mut waiting: u64,
    ) -> io::Result<()> {
        let mut got = 0;
        while got < want && !self.eof {
            if waiting == 0 {
                if got > 0 && !probe.arrives_within(SILENCE) {
                    break;
                }
                waiting = probe.bytes().unwrap_or(0);
            }
            let n = if waiting > 0 {
                let ask = (want - got).min(waiting as usize);
                let n = read_up_to(&mut self.inner, data, ask)?;
                self.eof = n < ask;
                n
            } else {
                // Nothing yet: wait in a read, which returns what comes
                // first, or nothing at the end.
                let n = read_once(&mut self.inner, data, (want - got).min(LIVE_READ_BYTES))?;
                self.eof = n == 0;
                n
            };
            got += n;
            waiting = 0;
        }
        Ok(())
    }

    /// A chunk of `data`, numbered from the next line; the caller moves
    /// `next_line` past it.
    fn start_chunk(&mut self, mut data: Vec<u8>) -> Chunk {
        self.at_start = false;
        let repaired = surrogates::repair(&mut data, self.next_line);
        Chunk {
            data,
            first_line: self.next_line,
            repaired,
        }
    }
}

/// Appends up to `want` bytes of `r` to `data`, fewer only at its end.
fn read_up_to(r: &mut impl Read, data: &mut Vec<u8>, want: usize) -> io::Result<usize> {
    r.take(want as u64).read_to_end(data)
}

/// Appends what one read of `r` returns, at most `most` bytes.
fn read_once(r: &mut impl Read, data: &mut Vec<u8>, most: usize) -> io::Result<usize> {
    let start = data.len();
    data.resize(start + most, 0);
    let got = loop {
        match r.read(&mut data[start..]) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            got => break got,
        }
    };
    data.truncate(start + got.as_ref().map_or(0, |n| *n));
    got
}

/// Reads a whole input into memory, dropping a UTF-8 byte order mark.
pub(crate) fn read_all(mut r: impl Read) -> io::Result<Vec<u8>> {
    let mut data = Vec::new();
    r.read_to_end(&mut data)?;
    if data.starts_with(b"\xEF\xBB\xBF") {
        data.drain(..3);
    }
    Ok(data)
}

/// The pipe buffer this process asks for on its stdin and stdout: one
/// 256 KiB write of the record writer fits, where Linux's default 64 KiB
/// pipe filled four times per write, the writer sleeping and the reader
/// waking each time. A 1 MiB pipe measured slower: its pages are no longer
/// in the cache when they are written again. Either end may widen a pipe,
/// so a stage fed by `cat` or `jq` widens its stdin itself: triage-group
/// reading 1M records from `cat` took 0.67-0.81 s with the default pipe,
/// 0.40-0.43 s with this.
const PIPE_BYTES: usize = 256 * 1024;

/// Widens `end`'s pipe buffer, when `end` is a pipe; anything else (a file,
/// a terminal, another system) is left as it is.
pub(crate) fn enlarge_pipe(end: &impl std::os::fd::AsFd) {
    #[cfg(target_os = "linux")]
    {
        // Refused (not a pipe, a pipe already wider, or over the system's
        // limit): nothing to do.
        let wider = rustix::pipe::fcntl_getpipe_size(end).is_ok_and(|now| now >= PIPE_BYTES);
        if !wider {
            let _ = rustix::pipe::fcntl_setpipe_size(end, PIPE_BYTES);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = end;
}

/// Writes records, one per line, each serialized into a reused buffer and
/// written once.
pub struct RecordWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    line_buffered: bool,
}

impl RecordWriter<io::BufWriter<crate::plumbing::outfile::Stdout>> {
    /// One buffered, locked stdout.
    pub(crate) fn stdout(line_buffered: bool) -> Self {
        enlarge_pipe(&io::stdout());
        RecordWriter::new(crate::plumbing::outfile::stdout(256 * 1024), line_buffered)
    }
}

impl<W: Write> RecordWriter<W> {
    pub fn new(out: W, line_buffered: bool) -> Self {
        RecordWriter {
            out,
            buf: Vec::with_capacity(4096),
            line_buffered,
        }
    }

    /// Serializes `rec` as one line.
    pub(crate) fn record<T: Serialize + ?Sized>(&mut self, rec: &T) -> io::Result<()> {
        self.buf.clear();
        serde_json::to_writer(&mut self.buf, rec).map_err(io::Error::other)?;
        self.buf.push(b'\n');
        self.out.write_all(&self.buf)?;
        self.after_record()
    }

    /// Writes a line that is already serialized (a passed-through record);
    /// adds the newline.
    pub(crate) fn raw_line(&mut self, line: &[u8]) -> io::Result<()> {
        self.out.write_all(line)?;
        self.out.write_all(b"\n")?;
        self.after_record()
    }

    /// Writes one record given as two pieces (the second ends with the
    /// newline).
    pub(crate) fn raw_parts(&mut self, head: &[u8], tail: &[u8]) -> io::Result<()> {
        self.out.write_all(head)?;
        self.out.write_all(tail)?;
        self.after_record()
    }

    fn after_record(&mut self) -> io::Result<()> {
        if self.line_buffered {
            self.out.flush()?;
        }
        Ok(())
    }

    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    #[cfg(test)]
    pub(crate) fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn either_end_widens_a_pipe_but_never_narrows_it() {
        use rustix::pipe::{fcntl_getpipe_size, fcntl_setpipe_size, pipe};
        let (read_end, write_end) = pipe().unwrap();
        enlarge_pipe(&read_end);
        assert!(fcntl_getpipe_size(&write_end).unwrap() >= PIPE_BYTES);
        let (read_end, _write_end) = pipe().unwrap();
        let wide = fcntl_setpipe_size(&read_end, 4 * PIPE_BYTES).unwrap();
        enlarge_pipe(&read_end);
        assert_eq!(fcntl_getpipe_size(&read_end).unwrap(), wide);
        // A file is left as it is.
        enlarge_pipe(&std::fs::File::open("Cargo.toml").unwrap());
    }

    fn all_lines(input: &[u8], chunk: usize) -> Vec<(u64, String)> {
        let mut r = ChunkReader::with_chunk_size(input, chunk);
        let mut out = Vec::new();
        while let Some(c) = r.next_chunk().unwrap() {
            for (number, line) in c.line_spans() {
                out.push((number, String::from_utf8_lossy(&c.data[line]).into_owned()));
            }
        }
        out
    }

    #[test]
    fn numbers_lines_across_chunks_and_skips_blank() {
        let input = b"\xEF\xBB\xBFa\r\n\n  \nbb\nccc";
        for chunk in [16, 17, 1024] {
            assert_eq!(
                all_lines(input, chunk),
                vec![
                    (1, "a".to_string()),
                    (4, "bb".to_string()),
                    (5, "ccc".to_string())
                ],
                "chunk {chunk}"
            );
        }
    }

    proptest::proptest! {
        /// Lines and their spans are the input split at newlines, without a
        /// carriage return before the newline, blank ones left out, numbered
        /// from 1.
        #[test]
        fn lines_and_spans_split_at_newlines(
            input in proptest::collection::vec(proptest::sample::select(b"ab \r\n".to_vec()), 0..200)
        ) {
            let want: Vec<(u64, Vec<u8>)> = input
                .split(|b| *b == b'\n')
                .enumerate()
                .map(|(i, l)| (i as u64 + 1, l.strip_suffix(b"\r").unwrap_or(l).to_vec()))
                .filter(|(_, l)| !l.iter().all(u8::is_ascii_whitespace))
                .collect();
            let chunk = Chunk { data: input.clone(), first_line: 1, repaired: Repaired::default() };
            let spans: Vec<(u64, Vec<u8>)> =
                chunk.line_spans().map(|(n, r)| (n, input[r].to_vec())).collect();
            proptest::prop_assert_eq!(&spans, &want);
        }
    }

    proptest::proptest! {
        /// Reading with spans gives the chunks, numbers and lines that
        /// reading and then splitting gives, whatever the chunk size.
        #[test]
        fn spans_read_with_the_chunk_are_its_line_spans(
            input in proptest::collection::vec(proptest::sample::select(b"ab \r\n".to_vec()), 0..300),
            chunk in 16usize..64,
        ) {
            let mut plain = ChunkReader::with_chunk_size(input.as_slice(), chunk);
            let mut spanned = ChunkReader::with_chunk_size(input.as_slice(), chunk);
            let mut spans = LineSpans::new();
            loop {
                let want = plain.next_chunk().unwrap();
                let got = spanned.next_chunk_and_spans(&mut spans).unwrap();
                let (Some(want), Some(got)) = (want, got) else {
                    proptest::prop_assert!(spanned.next_chunk().unwrap().is_none());
                    break;
                };
                proptest::prop_assert_eq!(&got.data, &want.data);
                proptest::prop_assert_eq!(got.first_line, want.first_line);
                proptest::prop_assert_eq!(&spans, &want.line_spans().collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn lines_ended_with_zero_keep_their_text() {
        let mut chunk = Chunk {
            data: b"{\"a\":1}\r\n\n  \n{}\n[]".to_vec(),
            first_line: 1,
            repaired: Repaired::default(),
        };
        let spans: LineSpans = chunk.line_spans().collect();
        chunk.end_lines_with_zero(&spans);
        let texts: Vec<&[u8]> = spans.iter().map(|(_, r)| &chunk.data[r.clone()]).collect();
        assert_eq!(texts, [&b"{\"a\":1}"[..], b"{}", b"[]"]);
        for (_, r) in &spans {
            assert_eq!(chunk.data[r.end], 0);
            assert!(chunk.data.len() >= r.end + PAD);
        }
    }

    #[test]
    fn long_line_grows_the_chunk() {
        let mut input = vec![b'x'; 100_000];
        input.push(b'\n');
        input.extend_from_slice(b"y\n");
        let lines = all_lines(&input, 16);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].1.len(), 100_000);
        assert_eq!(lines[1], (2, "y".to_string()));
    }

    #[test]
    fn the_line_cap_is_exact_and_bounds_the_memory_held() {
        let read = |len: usize, newline: bool| {
            let mut input = vec![b'x'; len];
            if newline {
                input.push(b'\n');
            }
            input.extend_from_slice(b"y\n");
            let mut r = ChunkReader::with_chunk_size(&input[..], 16).max_line(1000);
            let mut biggest = 0;
            loop {
                match r.next_chunk() {
                    Ok(Some(c)) => {
                        biggest = biggest.max(c.data.capacity());
                        r.recycle(c);
                    }
                    Ok(None) => return Ok(biggest),
                    Err(e) => return Err(e.to_string()),
                }
            }
        };
        assert!(read(1000, true).is_ok());
        for newline in [true, false] {
            let err = read(1001, newline).unwrap_err();
            assert!(err.contains("line 1 is longer than 1000 bytes"), "{err}");
        }
        // Of a line far over the cap, no more than the cap is ever held.
        assert!(read(1_000_000, true).is_err());
        let held = read(1000, true).unwrap();
        assert!(held <= 1000 + 1024, "{held}");
    }

    #[test]
    fn writer_writes_one_line_per_record() {
        let mut w = RecordWriter::new(Vec::new(), false);
        w.record(&serde_json::json!({"kind":"x","n":1})).unwrap();
        w.raw_line(br#"{"kind":"y"}"#).unwrap();
        let s = String::from_utf8(w.into_inner()).unwrap();
        assert_eq!(s, "{\"kind\":\"x\",\"n\":1}\n{\"kind\":\"y\"}\n");
    }
}
