//! Where the decode driver's chunks come from: read on the pool beside the
//! decoding, or on a reading thread of their own.

use std::io::{self, Read};
use std::sync::mpsc;

use crate::plumbing::framing::{ChunkReader, ScanChunk};

/// Chunks of one input, ready to be scanned, for
/// [`crate::plumbing::decode_ahead::decode_ahead`].
pub(crate) trait ChunkSource: Send {
    /// Runs on the pool while a chunk is decoded and the one before is
    /// handed over, when [`ChunkSource::reads_ahead`]: a source read on
    /// the driver's side reads its next chunk here.
    fn read_ahead(&mut self);

    /// Whether [`ChunkSource::read_ahead`] does anything.
    fn reads_ahead(&self) -> bool;

    /// The next chunk, `None` at the end of input. When it has not been
    /// read yet, `meanwhile` runs first: what was decoded is handed over
    /// while the input is awaited, rather than once it arrives.
    fn next<E>(
        &mut self,
        meanwhile: impl FnOnce() -> Result<(), E>,
    ) -> Result<io::Result<Option<ScanChunk>>, E>;

    /// Takes back a chunk that was handed over, to read into again.
    fn recycle(&mut self, chunk: ScanChunk);
}

/// An input read on the driver's side, by the pool while it decodes.
pub(crate) struct ReadInline<R> {
    reader: ChunkReader<R>,
    /// The chunk read ahead, or why it could not be.
    ahead: Option<io::Result<Option<ScanChunk>>>,
}

impl<R: Read> ReadInline<R> {
    pub(crate) fn new(reader: ChunkReader<R>) -> Self {
        ReadInline {
            reader,
            ahead: None,
        }
    }

    /// A source whose first chunk was already read (to tell its format).
    pub(crate) fn starting_with(reader: ChunkReader<R>, first: ScanChunk) -> Self {
        ReadInline {
            reader,
            ahead: Some(Ok(Some(first))),
        }
    }
}

impl<R: Read + Send> ChunkSource for ReadInline<R> {
    fn reads_ahead(&self) -> bool {
        true
    }

    fn read_ahead(&mut self) {
        // On a live input with nothing waiting, reading now would hold the
        // decoded chunk back until the writer writes again.
        if self.ahead.is_none() && !self.reader.quiet() {
            self.ahead = Some(self.reader.next_to_scan());
        }
    }

    fn next<E>(
        &mut self,
        meanwhile: impl FnOnce() -> Result<(), E>,
    ) -> Result<io::Result<Option<ScanChunk>>, E> {
        if let Some(ahead) = self.ahead.take() {
            return Ok(ahead);
        }
        meanwhile()?;
        Ok(self.reader.next_to_scan())
    }

    fn recycle(&mut self, chunk: ScanChunk) {
        self.reader.recycle_scanned(chunk);
    }
}

/// Chunks to read ahead of the one being decoded: enough to absorb a
/// burst from upstream, few enough to keep memory small (1 MiB each).
const READ_AHEAD_CHUNKS: usize = 2;

/// An input read on a thread of its own, so that the writer upstream never
/// waits on a full pipe while this process works; buffers of chunks handed
/// over go back to it to be filled again.
pub(crate) struct ReadThread {
    chunks: mpsc::Receiver<io::Result<ScanChunk>>,
    spent: mpsc::Sender<ScanChunk>,
}

impl ReadThread {
    // The thread is not joined: when a stage stops early on an error, a
    // read blocked on a quiet stdin must not keep it from exiting. It ends
    // at end of input, or at its next send once the receiver is gone.
    pub(crate) fn spawn<R: Read + Send + 'static>(mut reader: ChunkReader<R>) -> Self {
        let (chunk_tx, chunks) = mpsc::sync_channel(READ_AHEAD_CHUNKS);
        let (spent, spent_rx) = mpsc::channel::<ScanChunk>();
        std::thread::spawn(move || {
            loop {
                while let Ok(chunk) = spent_rx.try_recv() {
                    reader.recycle_scanned(chunk);
                }
                let next = reader.next_to_scan().transpose();
                let last = !matches!(next, Some(Ok(_)));
                if next.is_none_or(|n| chunk_tx.send(n).is_err()) || last {
                    return;
                }
            }
        });
        ReadThread { chunks, spent }
    }
}

impl ChunkSource for ReadThread {
    fn reads_ahead(&self) -> bool {
        false
    }

    fn read_ahead(&mut self) {}

    fn next<E>(
        &mut self,
        meanwhile: impl FnOnce() -> Result<(), E>,
    ) -> Result<io::Result<Option<ScanChunk>>, E> {
        let chunk = match self.chunks.try_recv() {
            Ok(chunk) => Some(chunk),
            Err(mpsc::TryRecvError::Disconnected) => None,
            Err(mpsc::TryRecvError::Empty) => {
                meanwhile()?;
                self.chunks.recv().ok()
            }
        };
        Ok(chunk.transpose())
    }

    fn recycle(&mut self, chunk: ScanChunk) {
        // The reader may have finished: then the buffer is simply freed.
        let _ = self.spent.send(chunk);
    }
}
