//! The read-ahead/decode driver of every line reader (trace formats and
//! record streams alike): while the pool decodes one chunk's lines, the
//! driver's thread hands the chunk before it over, and the next chunk is
//! read meanwhile, so that reading, decoding and the consumer's work
//! overlap.

use std::io;
use std::ops::Range;

use crate::plumbing::framing::ScanChunk;
use crate::plumbing::read_ahead::ChunkSource;
use crate::plumbing::surrogates::Repaired;
use crate::plumbing::task_share;

/// How a chunk's lines are decoded: a task's worth at a time, each task on
/// some thread of the pool. What a task gives may borrow the chunk, which
/// outlives it until it has been handed over.
pub(crate) trait LineDecoder: Sync {
    /// Space a thread reuses from task to task within a chunk.
    type Scratch<'c>;
    /// What one task gives.
    type Out<'c>: Send;

    /// Lines one task decodes.
    fn lines_per_task(&self) -> usize;

    fn scratch<'c>(&self) -> Self::Scratch<'c>;

    /// Decodes `lines`, ranges of `data` made ready to be scanned in place
    /// ([`crate::plumbing::framing::ChunkReader::next_to_scan`]) with their
    /// numbers.
    fn decode<'c>(
        &self,
        scratch: &mut Self::Scratch<'c>,
        data: &'c [u8],
        lines: &[(u64, Range<usize>)],
    ) -> Self::Out<'c>;
}

/// What the driver hands a chunk's decoded tasks to, in input order, on
/// the thread that called [`decode_ahead`] (so it need not be `Send`).
pub(crate) trait InOrder<D: LineDecoder> {
    type Error;

    /// A chunk's lone surrogate escapes were replaced as it was read; said
    /// when its decoding starts.
    fn repaired(&mut self, repaired: Repaired);

    /// The outputs of one chunk's tasks, in order.
    fn hand_over(&mut self, tasks: Vec<D::Out<'_>>) -> Result<(), Self::Error>;

    /// The input has nothing more waiting: what was handed over should go
    /// out now rather than with the next chunk.
    fn caught_up(&mut self) -> Result<(), Self::Error>;

    fn read_error(&self, e: io::Error) -> Self::Error;
}

/// Decodes every chunk of `source` and hands each chunk's outputs to
/// `consumer` while the next chunk is decoded.
///
/// The chunks being decoded and handed over live in two slots, `a` and
/// `b`, so that the outputs of one may borrow it while the other is
/// filled: the loop goes round both.
pub(crate) fn decode_ahead<D, C>(
    source: &mut impl ChunkSource,
    decoder: &D,
    consumer: &mut C,
) -> Result<(), C::Error>
where
    D: LineDecoder,
    C: InOrder<D>,
{
    let first = source.next(|| Ok(()))?;
    let Some(mut a) = first.map_err(|e| consumer.read_error(e))? else {
        return Ok(());
    };
    consumer.repaired(a.chunk.repaired);
    let mut decoded_a = decode_chunk(&a, decoder, || (), reading_ahead(source));
    loop {
        let Some(b) = next(source, consumer, &mut decoded_a)? else {
            break;
        };
        consumer.repaired(b.chunk.repaired);
        let decoded_b = decode_while_handing_over(&b, decoder, decoded_a, source, consumer)?;
        source.recycle(a);
        let mut decoded_b = decoded_b;
        let Some(next_a) = next(source, consumer, &mut decoded_b)? else {
            return consumer.hand_over(decoded_b);
        };
        a = next_a;
        consumer.repaired(a.chunk.repaired);
        decoded_a = decode_while_handing_over(&a, decoder, decoded_b, source, consumer)?;
        source.recycle(b);
    }
    consumer.hand_over(decoded_a)
}

/// The next chunk of `source`; when it has not been read yet, `decoded`
/// (the outputs of the chunk before) is handed over while it is awaited.
fn next<D, C>(
    source: &mut impl ChunkSource,
    consumer: &mut C,
    decoded: &mut Vec<D::Out<'_>>,
) -> Result<Option<ScanChunk>, C::Error>
where
    D: LineDecoder,
    C: InOrder<D>,
{
    let next = source.next(|| {
        consumer.hand_over(std::mem::take(decoded))?;
        consumer.caught_up()
    })?;
    next.map_err(|e| consumer.read_error(e))
}

/// Decodes `next` on the pool while this thread hands `previous` over and
/// lets `source` read ahead, and then on this thread too.
fn decode_while_handing_over<'n, D, C>(
    next: &'n ScanChunk,
    decoder: &D,
    previous: Vec<D::Out<'_>>,
    source: &mut impl ChunkSource,
    consumer: &mut C,
) -> Result<Vec<D::Out<'n>>, C::Error>
where
    D: LineDecoder,
    C: InOrder<D>,
{
    let mut handed = Ok(());
    let decoded = decode_chunk(
        next,
        decoder,
        || handed = consumer.hand_over(previous),
        reading_ahead(source),
    );
    handed.map(|()| decoded)
}

/// The read of `source`'s next chunk, to run on the pool beside the
/// decoding, when it reads ahead on this side at all.
fn reading_ahead(source: &mut impl ChunkSource) -> Option<impl FnOnce() + Send + '_> {
    source.reads_ahead().then_some(|| source.read_ahead())
}

/// Decodes `chunk`'s lines on the pool and, once `meanwhile` has returned,
/// on this thread too; `beside` runs on the pool meanwhile.
fn decode_chunk<'c, D: LineDecoder>(
    chunk: &'c ScanChunk,
    decoder: &D,
    meanwhile: impl FnOnce(),
    beside: Option<impl FnOnce() + Send>,
) -> Vec<D::Out<'c>> {
    let data = &chunk.chunk.data[..];
    let groups: Vec<_> = chunk
        .lines
        .chunks(decoder.lines_per_task().max(1))
        .collect();
    let mut tasks: Vec<Option<D::Out<'c>>> =
        std::iter::repeat_with(|| None).take(groups.len()).collect();
    task_share::fill_while(
        &mut tasks,
        1,
        || decoder.scratch(),
        |scratch, i, out| out[0] = Some(decoder.decode(scratch, data, groups[i])),
        meanwhile,
        beside,
    );
    // Every slot is filled before fill_while returns.
    tasks.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plumbing::framing::ChunkReader;
    use crate::plumbing::read_ahead::{ReadInline, ReadThread};

    /// Decodes each line to its number and text, borrowed from the chunk.
    struct Texts;

    impl LineDecoder for Texts {
        type Scratch<'c> = ();
        type Out<'c> = Vec<(u64, &'c [u8])>;
        fn lines_per_task(&self) -> usize {
            3
        }
        fn scratch<'c>(&self) -> Self::Scratch<'c> {}
        fn decode<'c>(
            &self,
            _: &mut (),
            data: &'c [u8],
            lines: &[(u64, Range<usize>)],
        ) -> Vec<(u64, &'c [u8])> {
            lines.iter().map(|(n, r)| (*n, &data[r.clone()])).collect()
        }
    }

    /// Collects line numbers and texts.
    #[derive(Default)]
    struct Collect {
        lines: Vec<(u64, String)>,
    }

    impl InOrder<Texts> for Collect {
        type Error = String;
        fn repaired(&mut self, _: Repaired) {}
        fn hand_over(&mut self, tasks: Vec<Vec<(u64, &[u8])>>) -> Result<(), String> {
            for (n, text) in tasks.into_iter().flatten() {
                if text == b"stop" {
                    return Err("stopped".to_string());
                }
                self.lines
                    .push((n, String::from_utf8_lossy(text).into_owned()));
            }
            Ok(())
        }
        fn caught_up(&mut self) -> Result<(), String> {
            Ok(())
        }
        fn read_error(&self, e: io::Error) -> String {
            e.to_string()
        }
    }

    /// Runs the driver over `input` in chunks of `chunk_bytes`, read inline
    /// and on a thread of their own; both must agree.
    fn run(input: &str, chunk_bytes: usize) -> Result<Collect, String> {
        let mut inline =
            ReadInline::new(ChunkReader::with_chunk_size(input.as_bytes(), chunk_bytes));
        let mut out = Collect::default();
        decode_ahead(&mut inline, &Texts, &mut out)?;
        let owned = io::Cursor::new(input.to_string());
        let mut thread = ReadThread::spawn(ChunkReader::with_chunk_size(owned, chunk_bytes));
        let mut by_thread = Collect::default();
        decode_ahead(&mut thread, &Texts, &mut by_thread)?;
        assert_eq!(by_thread.lines, out.lines, "chunks of {chunk_bytes} bytes");
        Ok(out)
    }

    #[test]
    fn every_line_in_order_with_its_number_whatever_the_chunk_size() {
        let input: String = (0..500)
            .map(|i| {
                if i % 7 == 3 {
                    "\n".to_string()
                } else {
                    format!("line {i}\r\n")
                }
            })
            .collect();
        for chunk_bytes in [16, 100, 4096, 1 << 20] {
            let out = run(&input, chunk_bytes).unwrap();
            let want: Vec<(u64, String)> = (0..500)
                .filter(|i| i % 7 != 3)
                .map(|i| (i + 1, format!("line {i}")))
                .collect();
            assert_eq!(out.lines, want, "chunks of {chunk_bytes} bytes");
        }
    }

    #[test]
    fn a_consumer_error_stops_the_reading() {
        let input: String = (0..2000).map(|i| format!("{i}\n")).collect::<String>() + "stop\n";
        assert_eq!(run(&input, 64).err().as_deref(), Some("stopped"));
    }

    #[test]
    fn an_empty_input_hands_over_nothing() {
        let out = run("", 64).unwrap();
        assert!(out.lines.is_empty());
    }
}
