//! triage-recv's server: an OTLP/HTTP trace receiver on std::net. The
//! acceptor gives each connection a reader thread (up to a limit; past it
//! new connections are answered 503) that reads whole requests under
//! deadlines and checks the token as soon as the head is in; only with a
//! complete request does it take one of the worker permits (waiting in a
//! bounded queue; full: 503) to decode it and write it as one OTLP JSON
//! line, flushed before the client hears 200, so an acknowledged span is
//! never lost and a slow client holds no worker. Stopping (a signal, or
//! the output failing) closes the listener, lets the requests already
//! being read finish, and returns.

pub mod export;
pub mod http;
pub mod proto;

use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::Duration;

use export::{Encoding, Gate, Refusal};
use http::{Conn, ReadError, Response};

use crate::plumbing::diag::Diag;

/// How the receiver runs.
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
    /// Where to connect to wake the acceptor.
    wake: SocketAddr,
    stopping: AtomicBool,
}

impl Control {
    /// The control of a listener bound to `local`.
    pub(crate) fn new(local: SocketAddr) -> Self {
        Control {
            wake: wake_address(local),
            stopping: AtomicBool::new(false),
        }
    }

    /// Asks [`serve`] to stop: no new connections, the requests already
    /// taken are finished. Safe from any thread, and more than once.
    pub(crate) fn stop(&self) {
        if !self.stopping.swap(true, Ordering::SeqCst) {
            // Wake the acceptor blocked in accept().
            let _ = TcpStream::connect_timeout(&self.wake, Duration::from_secs(1));
        }
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
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

/// A reader thread's stack, as a thread's by default: it decodes bodies
/// (nested up to the JSON reader's depth limit). Untouched pages cost
/// no memory.
const READER_STACK: usize = 2 << 20;

/// Everything the reader threads and workers read.
struct Shared<'a> {
    settings: &'a Settings,
    gate: Gate,
    sink: &'a LineSink,
    control: &'a Control,
    diag: &'a Mutex<&'a mut Diag>,
    /// Open connections (reader threads).
    readers: AtomicUsize,
    /// Body bytes the reader threads may hold at once.
    budget: Budget,
    /// Requests decoded and written at once, and those waiting to be.
    permits: Permits,
}

/// Serves `listener` until [`Control::stop`] is called or the sink fails.
/// The listener is closed as soon as it stops accepting, so clients are
/// refused at once rather than left waiting in its backlog.
pub(crate) fn serve(
    listener: TcpListener,
    control: &Control,
    settings: &Settings,
    sink: &LineSink,
    diag: &mut Diag,
) {
    let diag = Mutex::new(diag);
    let workers = settings.workers.max(1);
    let shared = Shared {
        settings,
        gate: Gate::new(settings.token.as_deref()),
        sink,
        control,
        diag: &diag,
        readers: AtomicUsize::new(0),
        // What the workers and a full queue of average requests hold,
        // at least room for two of the largest bodies.
        budget: {
            let total = settings
                .max_body
                .saturating_mul(2)
                .max((workers + settings.queue).saturating_mul(1 << 20));
            Budget::new(total, peer_share(total, settings.max_body))
        },
        permits: Permits::new(workers, settings.queue),
    };
    std::thread::scope(|scope| accept_loop(listener, &shared, scope));
}

fn accept_loop<'scope, 'env: 'scope, 's: 'env>(
    listener: TcpListener,
    shared: &'env Shared<'s>,
    scope: &'scope std::thread::Scope<'scope, 'env>,
) {
    let control = shared.control;
    for stream in listener.incoming() {
        if control.stopping() {
            return;
        }
        let stream = match stream {
            Ok(s) => s,
            Err(e) => {
                shared.warn("accept", format_args!("accepting a connection failed: {e}"));
                // Out of file descriptors and the like: let readers free some.
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        if shared.readers.fetch_add(1, Ordering::SeqCst) >= shared.settings.max_connections {
            shared.readers.fetch_sub(1, Ordering::SeqCst);
            shared.warn(
                "busy",
                format_args!(
                    "{} connections are open, the most allowed: answered 503",
                    shared.settings.max_connections
                ),
            );
            busy(stream);
            continue;
        }
        let spawned = std::thread::Builder::new()
            .name("recv-reader".into())
            .stack_size(READER_STACK)
            .spawn_scoped(scope, move || {
                if let Ok(conn) = Conn::new(stream) {
                    serve_connection(conn, shared);
                }
                shared.readers.fetch_sub(1, Ordering::SeqCst);
            });
        if let Err(e) = spawned {
            shared.readers.fetch_sub(1, Ordering::SeqCst);
            shared.warn("accept", format_args!("no thread for a connection: {e}"));
        }
    }
}

/// Where to connect to wake a listener bound to `addr`.
fn wake_address(addr: SocketAddr) -> SocketAddr {
    let mut a = addr;
    if a.ip().is_unspecified() {
        a.set_ip(match a {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    a
}

fn busy_refusal() -> Refusal {
    Refusal {
        status: 503,
        message: "the receiver is busy; retry".into(),
    }
}

/// Answers a connection no reader can take: 503, try again in a second.
fn busy(stream: TcpStream) {
    let Ok(mut conn) = Conn::new(stream) else {
        return;
    };
    if conn
        .respond(&export::refused(&busy_refusal(), None), true)
        .is_ok()
    {
        conn.close_now();
    }
}

/// Reads and answers the requests of one connection until it closes,
/// misbehaves, idles, or the receiver stops.
fn serve_connection(mut conn: Conn, shared: &Shared<'_>) {
    let stopping = || shared.control.stopping();
    loop {
        let head = match conn.read_head(&stopping) {
            Ok(head) => head,
            Err(ReadError::Closed) => return,
            Err(e) => {
                let r = refusal(e, shared.settings.max_body);
                shared.refused(&conn.peer(), &r);
                let _ = conn.respond(&export::refused(&r, None), true);
                return conn.linger_close();
            }
        };
        let (response, close_now) = handle(&mut conn, &head, shared);
        let close = close_now || head.wants_close() || stopping();
        if conn.respond(&response, close).is_err() || close {
            if close_now {
                conn.linger_close();
            }
            return;
        }
    }
}

/// The answer to a request that could not be read.
fn refusal(e: ReadError, limit: usize) -> Refusal {
    match e {
        ReadError::TooLarge => Refusal {
            status: 413,
            message: format!("body is larger than {limit} bytes"),
        },
        ReadError::Refuse(status, message) => Refusal { status, message },
        ReadError::Closed => Refusal {
            status: 400,
            message: "the connection closed inside the request".into(),
        },
    }
}

/// Answers one request whose head was read; the flag says whether the
/// body was left unread (the connection must close after the answer).
fn handle(conn: &mut Conn, head: &http::Head, shared: &Shared<'_>) -> (Response, bool) {
    let limit = shared.settings.max_body;
    let (encoding, gzip) = match shared.gate.check(head) {
        Ok(ok) => ok,
        Err(r) => {
            shared.refused(&conn.peer(), &r);
            // Read a small body anyway, so the connection can carry on;
            // a client waiting for 100 Continue sends none.
            let unread = match Conn::framing(head) {
                _ if head.expects_continue() => true,
                Ok(http::Framing::Length(n)) if n <= DRAINED_BODY => {
                    conn.read_body(head, limit).is_err()
                }
                _ => true,
            };
            return (export::refused(&r, None), unread);
        }
    };
    // Room for the body among those read at once, taken as its bytes
    // arrive, within the peer's share.
    let mut held = shared.budget.hold(conn.peer_ip());
    let body = match conn.read_body_within(head, limit, &mut |bytes| held.grow_to(bytes)) {
        Ok(body) => body,
        Err(e) => {
            let r = refusal(e, limit);
            shared.refused(&conn.peer(), &r);
            return (export::refused(&r, Some(encoding)), true);
        }
    };
    let Some(_permit) = shared.permits.take() else {
        shared.warn(
            "busy",
            format_args!("every worker is busy and the queue is full: answered 503"),
        );
        return (export::refused(&busy_refusal(), Some(encoding)), false);
    };
    write_request(&body, encoding, gzip, &conn.peer(), shared)
}

/// A refused request's body is read (so the connection can carry on)
/// when it is at most this large; a larger one closes the connection.
const DRAINED_BODY: u64 = 64 * 1024;

/// Decodes one complete request and writes its line: the answer, and
/// whether the connection must close after it.
fn write_request(
    body: &[u8],
    encoding: Encoding,
    gzip: bool,
    peer: &str,
    shared: &Shared<'_>,
) -> (Response, bool) {
    let limit = shared.settings.max_body;
    let line = match export::to_line(body, encoding, gzip, limit) {
        Ok(line) => line,
        Err(r) => {
            shared.refused(peer, &r);
            return (export::refused(&r, Some(encoding)), false);
        }
    };
    if let Some(line) = line
        && let Err(e) = shared.sink.write_line(line)
    {
        shared.control.stop();
        let r = Refusal {
            status: 503,
            message: format!("the receiver cannot write its output: {e}"),
        };
        return (export::refused(&r, Some(encoding)), true);
    }
    (export::accepted(encoding), false)
}

/// The worker permits: `workers` requests decode and write at once, up to
/// `queue` more wait their turn.
struct Permits {
    state: Mutex<(usize, usize)>,
    freed: Condvar,
    queue: usize,
}

/// Holds a worker permit until dropped.
struct Permit<'a>(&'a Permits);

impl Permits {
    fn new(workers: usize, queue: usize) -> Self {
        Permits {
            state: Mutex::new((workers, 0)),
            freed: Condvar::new(),
            queue,
        }
    }

    /// A permit, after waiting in the queue if need be; `None` when the
    /// queue is full.
    fn take(&self) -> Option<Permit<'_>> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.0 == 0 {
            if state.1 >= self.queue {
                return None;
            }
            state.1 += 1;
            while state.0 == 0 {
                state = self
                    .freed
                    .wait(state)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            state.1 -= 1;
        }
        state.0 -= 1;
        Some(Permit(self))
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.0 += 1;
        self.0.freed.notify_one();
    }
}

/// Body bytes that may be held at once, and each peer's share of them:
/// taken as bytes arrive and given back by guards, so neither a few slow
/// clients nor one busy host can take it all.
struct Budget {
    state: Mutex<BudgetState>,
    /// The most one peer (an IP address) may hold at once.
    share: usize,
}

struct BudgetState {
    left: usize,
    by_peer: std::collections::HashMap<std::net::IpAddr, usize>,
}

/// Holds part of a [`Budget`] for one body until dropped.
struct Held<'a> {
    budget: &'a Budget,
    peer: Option<std::net::IpAddr>,
    bytes: usize,
}

/// A peer's share of the budget: a quarter, but room for one largest body.
fn peer_share(total: usize, max_body: usize) -> usize {
    (total / 4).max(max_body).min(total)
}

impl Budget {
    fn new(bytes: usize, share: usize) -> Self {
        Budget {
            state: Mutex::new(BudgetState {
                left: bytes,
                by_peer: std::collections::HashMap::new(),
            }),
            share,
        }
    }

    /// An empty reservation for a body from `peer`.
    fn hold(&self, peer: Option<std::net::IpAddr>) -> Held<'_> {
        Held {
            budget: self,
            peer,
            bytes: 0,
        }
    }
}

impl Held<'_> {
    /// Grows the reservation to `bytes`; false when the budget, or the
    /// peer's share of it, has no room.
    fn grow_to(&mut self, bytes: usize) -> bool {
        let Some(more) = bytes.checked_sub(self.bytes).filter(|&m| m > 0) else {
            return true;
        };
        let mut st = self
            .budget
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let peer_held = self
            .peer
            .and_then(|p| st.by_peer.get(&p).copied())
            .unwrap_or(0);
        if more > st.left || peer_held + more > self.budget.share {
            return false;
        }
        st.left -= more;
        if let Some(p) = self.peer {
            *st.by_peer.entry(p).or_insert(0) += more;
        }
        self.bytes = bytes;
        true
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if self.bytes == 0 {
            return;
        }
        let mut st = self
            .budget
            .state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        st.left += self.bytes;
        if let Some(p) = self.peer
            && let Some(n) = st.by_peer.get_mut(&p)
        {
            *n -= self.bytes.min(*n);
            if *n == 0 {
                st.by_peer.remove(&p);
            }
        }
    }
}

impl Shared<'_> {
    fn warn(&self, kind: &'static str, msg: std::fmt::Arguments<'_>) {
        self.diag
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .warn(kind, msg);
    }

    fn refused(&self, peer: &str, r: &Refusal) {
        self.warn(
            "refused",
            format_args!("{peer}: refused ({}): {}", r.status, r.message),
        );
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;

    #[test]
    fn room_is_taken_as_bytes_arrive_within_each_peers_share() {
        let budget = Budget::new(100, peer_share(100, 30));
        assert_eq!(budget.share, 30);
        let (a, b) = (Some([10, 0, 0, 1].into()), Some([10, 0, 0, 2].into()));
        let mut first = budget.hold(a);
        assert!(first.grow_to(20));
        let mut second = budget.hold(a);
        // The same peer: 20 + 15 is past its share of 30.
        assert!(!second.grow_to(15));
        assert!(second.grow_to(10));
        // Another peer has its own share; the total still bounds both.
        let mut other = budget.hold(b);
        assert!(other.grow_to(30));
        let mut third = budget.hold(Some([10, 0, 0, 3].into()));
        assert!(third.grow_to(30));
        assert!(!budget.hold(Some([10, 0, 0, 4].into())).grow_to(11));
        drop(first);
        // Given back: the first peer has room again.
        assert!(second.grow_to(30));
    }
}
