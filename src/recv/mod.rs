//! triage-recv's server: an OTLP/HTTP trace receiver. HTTP/1.1 is
//! hyper's (`server`); this module owns what the receiver promises: each
//! request's line written and flushed (`LineSink`) before the client hears
//! 200, so an acknowledged span is never lost; bounded memory (`budget`);
//! and stopping (a signal, or the output failing) that lets the requests
//! already taken finish.

mod budget;
pub mod export;
pub mod otlp;
mod server;

use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::{Mutex, PoisonError};

pub(crate) use server::serve;

/// How the receiver runs.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// Largest body taken, before and after gunzip.
    pub max_body: usize,
    /// Requests decoded and written at once.
    pub workers: usize,
    /// Complete requests waiting for a worker before more are answered 503.
    pub queue: usize,
    /// Connections open at once before new ones are answered 503.
    pub max_connections: usize,
    pub token: Option<String>,
}

/// Where the lines go: a file the receiver can cut back when a write fails
/// half done, or a stream (stdout) it cannot.
pub(crate) enum LineOut {
    /// An output file opened for appending, and its length: where every
    /// complete line ends.
    File(std::fs::File, u64),
    Stream(Box<dyn Write + Send>),
}

impl LineOut {
    /// Writes one line and flushes; a file a failed write left a part of a
    /// line in is cut back to its last complete line, so no torn line is
    /// left for the next line to be appended to.
    fn write_line(&mut self, line: &[u8]) -> io::Result<()> {
        match self {
            LineOut::Stream(out) => out.write_all(line).and_then(|()| out.flush()),
            LineOut::File(file, len) => match file.write_all(line) {
                Ok(()) => {
                    *len += line.len() as u64;
                    Ok(())
                }
                Err(e) => {
                    // Should the cut fail too, the next start repairs it.
                    let _ = file.set_len(*len);
                    Err(e)
                }
            },
        }
    }
}

/// Opens `path` for appending lines. A file that does not end in a newline
/// (a write cut short by a full disk or a kill) is cut back to its last
/// complete line, and the returned note says how many bytes went: a line
/// appended to a torn one would be unreadable.
pub(crate) fn open_output(path: &std::path::Path) -> io::Result<(LineOut, Option<String>)> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)?;
    let len = file.metadata()?.len();
    let mut kept = len;
    if len > 0 {
        // Look back for the last newline, a block at a time.
        let mut end = len;
        let mut block = vec![0u8; 64 * 1024];
        kept = 0;
        while end > 0 {
            let start = end.saturating_sub(block.len() as u64);
            let n = (end - start) as usize;
            file.seek(SeekFrom::Start(start))?;
            file.read_exact(&mut block[..n])?;
            if let Some(at) = block[..n].iter().rposition(|&b| b == b'\n') {
                kept = start + at as u64 + 1;
                break;
            }
            end = start;
        }
    }
    let note = (kept < len).then(|| {
        format!(
            "{}: the last {} bytes were not a complete line (a write cut short); cut them off",
            path.display(),
            len - kept
        )
    });
    if kept < len {
        file.set_len(kept)?;
    }
    Ok((LineOut::File(file, kept), note))
}

/// Where accepted requests go, one line each; shared by the workers.
pub(crate) struct LineSink {
    out: Mutex<LineOut>,
    /// The first write error; once set nothing more is taken.
    error: Mutex<Option<io::Error>>,
}

impl LineSink {
    pub(crate) fn new(out: LineOut) -> Self {
        LineSink {
            out: Mutex::new(out),
            error: Mutex::new(None),
        }
    }

    /// Writes `line` and a newline in one write, then flushes.
    fn write_line(&self, mut line: Vec<u8>) -> io::Result<()> {
        if self
            .error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
        {
            return Err(io::Error::other("an earlier write failed"));
        }
        line.push(b'\n');
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        let result = out.write_line(&line);
        if let Err(e) = &result {
            let mut first = self.error.lock().unwrap_or_else(PoisonError::into_inner);
            first.get_or_insert_with(|| io::Error::new(e.kind(), e.to_string()));
        }
        result
    }

    /// The first write error, which ends the run.
    pub(crate) fn take_error(&self) -> Option<io::Error> {
        self.error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// Starts and stops a running [`serve`]; shared with the thread that
/// waits for signals.
pub(crate) struct Control {
    stopping: tokio::sync::watch::Sender<bool>,
}

impl Control {
    pub(crate) fn new() -> Self {
        Control {
            stopping: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Asks [`serve`] to stop: no new connections, the requests already
    /// taken are finished. Safe from any thread, and more than once.
    pub(crate) fn stop(&self) {
        self.stopping.send_replace(true);
    }

    fn stopping(&self) -> bool {
        *self.stopping.borrow()
    }

    /// Resolves once [`Control::stop`] has been called.
    async fn stopped(&self) {
        let mut rx = self.stopping.subscribe();
        // The sender lives as long as `self`, so this cannot fail.
        let _ = rx.wait_for(|&stop| stop).await;
    }
}

/// Binds the listener, naming the address in the error.
pub(crate) fn bind(addr: SocketAddr) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr).map_err(|e| {
        anyhow::anyhow!(
            "cannot listen on {addr}: {}",
            crate::plumbing::diag::io_reason(&e)
        )
    })
}
