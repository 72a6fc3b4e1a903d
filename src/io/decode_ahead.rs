//! The read-ahead/decode driver of line formats: while the pool decodes one
//! chunk's lines, this thread hands the chunk before it over and reads the
//! next, so that reading, decoding and the consumer's work overlap.

use std::io::{self, Read};
use std::ops::Range;

use crate::io::ndjson::{Chunk, ChunkReader, LineSpans};
use crate::io::surrogates::Repaired;
use crate::io::task_share;

/// What the driver hands a chunk's decoded lines to, in input order, on
/// the thread that called [`decode_ahead`] (so it need not be `Send`).
pub(crate) trait Consumer<T> {
    type Error;

    /// A chunk's lone surrogate escapes were replaced as it was read; said
    /// when its decoding starts.
    fn repaired(&mut self, repaired: Repaired);

    /// The outputs of one chunk's tasks, in order.
    fn hand_over(&mut self, tasks: Vec<T>) -> Result<(), Self::Error>;

    /// A live input has nothing more waiting: what was handed over should
    /// go out now rather than with the next chunk.
    fn caught_up(&mut self) -> Result<(), Self::Error>;

    fn read_error(&self, e: io::Error) -> Self::Error;
}

/// How a chunk's lines are decoded: `lines_per_task` at a time, each task
/// by `decode(scratch, data, lines)` where `lines` are ranges of `data`
/// made ready to be scanned in place
/// ([`ChunkReader::next_chunk_to_scan`]). One scratch per thread and chunk.
pub(crate) struct Decoder<S, F> {
    pub lines_per_task: usize,
    pub scratch: S,
    pub decode: F,
}

/// Decodes every chunk of `reader`, `first` (already read, with its lines)
/// before the rest, and hands each chunk's outputs to `consumer` while the
/// next chunk is decoded.
pub(crate) fn decode_ahead<R, T, C, Sc, S, F>(
    reader: &mut ChunkReader<R>,
    first: Option<(Chunk, LineSpans)>,
    decoder: &Decoder<S, F>,
    consumer: &mut C,
) -> Result<(), C::Error>
where
    R: Read,
    T: Send,
    C: Consumer<T>,
    S: Fn() -> Sc + Sync,
    F: Fn(&mut Sc, &[u8], &[(u64, Range<usize>)]) -> T + Sync,
{
    let (mut chunk, mut spans) = match first {
        Some((chunk, spans)) => (Some(chunk), spans),
        None => {
            let mut spans = LineSpans::new();
            let chunk = reader
                .next_chunk_to_scan(&mut spans)
                .map_err(|e| consumer.read_error(e))?;
            (chunk, spans)
        }
    };
    let mut next_spans = LineSpans::new();
    let mut decoded: Vec<T> = Vec::new();
    while let Some(current) = chunk.take() {
        consumer.repaired(current.repaired);
        let previous = std::mem::take(&mut decoded);
        if reader.quiet() {
            // Nothing more has arrived: this chunk's outputs go out now,
            // not once the next chunk does.
            consumer.hand_over(previous)?;
            let (tasks, ()) = decode_chunk(&current, &spans, decoder, || ());
            consumer.hand_over(tasks)?;
            consumer.caught_up()?;
            reader.recycle(current);
            chunk = reader
                .next_chunk_to_scan(&mut spans)
                .map_err(|e| consumer.read_error(e))?;
            continue;
        }
        let (tasks, (handed, next)) = decode_chunk(&current, &spans, decoder, || {
            (
                consumer.hand_over(previous),
                reader.next_chunk_to_scan(&mut next_spans),
            )
        });
        reader.recycle(current);
        std::mem::swap(&mut spans, &mut next_spans);
        handed?;
        decoded = tasks;
        chunk = next.map_err(|e| consumer.read_error(e))?;
    }
    consumer.hand_over(decoded)
}

/// Decodes `chunk`'s lines on the pool and, once `meanwhile` has returned,
/// on this thread too.
fn decode_chunk<T, Sc, S, F, M>(
    chunk: &Chunk,
    spans: &LineSpans,
    decoder: &Decoder<S, F>,
    meanwhile: impl FnOnce() -> M,
) -> (Vec<T>, M)
where
    T: Send,
    S: Fn() -> Sc + Sync,
    F: Fn(&mut Sc, &[u8], &[(u64, Range<usize>)]) -> T + Sync,
{
    let groups: Vec<_> = spans.chunks(decoder.lines_per_task.max(1)).collect();
    let mut tasks: Vec<Option<T>> = std::iter::repeat_with(|| None).take(groups.len()).collect();
    let r = task_share::fill_while(
        &mut tasks,
        1,
        &decoder.scratch,
        |scratch, i, out| out[0] = Some((decoder.decode)(scratch, &chunk.data, groups[i])),
        meanwhile,
    );
    // Every slot is filled before fill_while returns.
    (tasks.into_iter().flatten().collect(), r)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collects line numbers and texts, noting when it caught up.
    #[derive(Default)]
    struct Collect {
        lines: Vec<(u64, String)>,
        handed: usize,
    }

    impl Consumer<Vec<(u64, String)>> for Collect {
        type Error = String;
        fn repaired(&mut self, _: Repaired) {}
        fn hand_over(&mut self, tasks: Vec<Vec<(u64, String)>>) -> Result<(), String> {
            self.handed += 1;
            for task in tasks {
                if task.iter().any(|(_, t)| t == "stop") {
                    return Err("stopped".to_string());
                }
                self.lines.extend(task);
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

    fn run(input: &str, chunk_bytes: usize) -> Result<Collect, String> {
        let mut reader = ChunkReader::with_chunk_size(input.as_bytes(), chunk_bytes);
        let decoder = Decoder {
            lines_per_task: 3,
            scratch: || (),
            decode: |_: &mut (), data: &[u8], lines: &[(u64, Range<usize>)]| {
                lines
                    .iter()
                    .map(|(n, r)| (*n, String::from_utf8_lossy(&data[r.clone()]).into_owned()))
                    .collect::<Vec<_>>()
            },
        };
        let mut out = Collect::default();
        decode_ahead(&mut reader, None, &decoder, &mut out)?;
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
