//! triage-recv's server: an OTLP/HTTP trace receiver on std::net. One
//! acceptor hands connections to a fixed pool of workers through a bounded
//! queue (a full queue is answered 503 at once); each request becomes one
//! OTLP JSON line, written and flushed before the client hears 200, so an
//! acknowledged span is never lost. Stopping (a signal, or the output
//! failing) closes the listener, lets the workers finish the requests they
//! took, and returns.

pub mod export;
pub mod http;
pub mod proto;

use std::io::{self, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use export::{Gate, Refusal};
use http::{Conn, ReadError, Response};

use crate::cli::Diag;

/// How the receiver runs.
pub struct Settings {
    /// Largest body taken, before and after gunzip.
    pub max_body: usize,
    /// Connections served at once.
    pub workers: usize,
    /// Connections waiting for a worker before new ones are answered 503.
    pub queue: usize,
    pub token: Option<String>,
}

/// Where accepted requests go, one line each; shared by the workers.
pub struct LineSink {
    out: Mutex<Box<dyn Write + Send>>,
    /// The first write error; once set nothing more is taken.
    error: Mutex<Option<io::Error>>,
}

impl LineSink {
    pub fn new(out: Box<dyn Write + Send>) -> Self {
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
        let result = out.write_all(&line).and_then(|()| out.flush());
        if let Err(e) = &result {
            let mut first = self.error.lock().unwrap_or_else(PoisonError::into_inner);
            first.get_or_insert_with(|| io::Error::new(e.kind(), e.to_string()));
        }
        result
    }

    /// The first write error, which ends the run.
    pub fn take_error(&self) -> Option<io::Error> {
        self.error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// Starts and stops a running [`serve`]; shared with the thread that
/// waits for signals.
pub struct Control {
    /// Where to connect to wake the acceptor.
    wake: SocketAddr,
    stopping: AtomicBool,
    /// Connections accepted but not yet taken by a worker.
    waiting: AtomicUsize,
}

impl Control {
    /// The control of a listener bound to `local`.
    pub fn new(local: SocketAddr) -> Self {
        Control {
            wake: wake_address(local),
            stopping: AtomicBool::new(false),
            waiting: AtomicUsize::new(0),
        }
    }

    /// Asks [`serve`] to stop: no new connections, the requests already
    /// taken are finished. Safe from any thread, and more than once.
    pub fn stop(&self) {
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
pub fn bind(addr: SocketAddr) -> anyhow::Result<TcpListener> {
    TcpListener::bind(addr)
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {}", crate::cli::io_reason(&e)))
}

/// Everything a worker reads.
struct Shared<'a> {
    settings: &'a Settings,
    gate: Gate,
    sink: &'a LineSink,
    control: &'a Control,
    diag: &'a Mutex<&'a mut Diag>,
}

/// Serves `listener` until [`Control::stop`] is called or the sink fails.
/// The listener is closed as soon as it stops accepting, so clients are
/// refused at once rather than left waiting in its backlog.
pub fn serve(
    listener: TcpListener,
    control: &Control,
    settings: &Settings,
    sink: &LineSink,
    diag: &mut Diag,
) {
    let diag = Mutex::new(diag);
    let shared = Shared {
        settings,
        gate: Gate::new(settings.token.as_deref()),
        sink,
        control,
        diag: &diag,
    };
    let (tx, rx) = sync_channel::<TcpStream>(settings.queue.max(1));
    let rx = Mutex::new(rx);
    std::thread::scope(|scope| {
        for _ in 0..settings.workers.max(1) {
            scope.spawn(|| worker(&rx, &shared));
        }
        accept_loop(listener, &tx, &shared);
        drop(tx);
    });
}

fn accept_loop(listener: TcpListener, tx: &SyncSender<TcpStream>, shared: &Shared<'_>) {
    let control = shared.control;
    for stream in listener.incoming() {
        if control.stopping() {
            return;
        }
        let stream = match stream {
            Ok(s) => s,
            Err(e) => {
                shared.warn("accept", format_args!("accepting a connection failed: {e}"));
                // Out of file descriptors and the like: let workers free some.
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        };
        control.waiting.fetch_add(1, Ordering::SeqCst);
        if let Err(TrySendError::Full(stream) | TrySendError::Disconnected(stream)) =
            tx.try_send(stream)
        {
            control.waiting.fetch_sub(1, Ordering::SeqCst);
            shared.warn(
                "busy",
                format_args!("every worker is busy and the queue is full: answered 503"),
            );
            busy(stream);
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

/// Answers a connection no worker can take: 503, try again in a second.
fn busy(stream: TcpStream) {
    let Ok(mut conn) = Conn::new(stream) else {
        return;
    };
    let r = Refusal {
        status: 503,
        message: "the receiver is busy; retry".into(),
    };
    if conn.respond(&export::refused(&r, None), true).is_ok() {
        conn.close_now();
    }
}

fn worker(rx: &Mutex<Receiver<TcpStream>>, shared: &Shared<'_>) {
    loop {
        let next = rx.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok(stream) = next else { return };
        shared.control.waiting.fetch_sub(1, Ordering::SeqCst);
        if let Ok(conn) = Conn::new(stream) {
            serve_connection(conn, shared);
        }
    }
}

/// Serves the requests of one connection until it closes, misbehaves,
/// idles, or the receiver stops.
fn serve_connection(mut conn: Conn, shared: &Shared<'_>) {
    let stopping = || shared.control.stopping();
    let others_wait = || shared.control.waiting.load(Ordering::SeqCst) > 0;
    let mut served = false;
    loop {
        // An idle keep-alive connection gives its worker to a waiting one:
        // its client reconnects when it has more to send, while a queued
        // exporter would otherwise wait out IDLE_TIMEOUT (past the 10 s
        // that OTel exporters allow). A new connection is not yet idle.
        let give_way = || stopping() || (served && others_wait());
        let head = match conn.read_head(&give_way) {
            Ok(head) => head,
            Err(ReadError::Closed) => return,
            Err(e) => {
                let r = refusal(e, shared.settings.max_body);
                shared.refused(&conn, &r);
                let _ = conn.respond(&export::refused(&r, None), true);
                return conn.linger_close();
            }
        };
        let (response, close_now) = handle(&mut conn, &head, shared);
        // Leave the connection when others wait for a worker, so a few
        // idle keep-alive clients cannot hold the whole pool.
        let close = close_now || head.wants_close() || stopping() || others_wait();
        if conn.respond(&response, close).is_err() || close {
            if close_now {
                conn.linger_close();
            }
            return;
        }
        served = true;
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
            shared.refused(conn, &r);
            // Read a small body anyway, so the connection can carry on;
            // a client waiting for 100 Continue sends none.
            let unread = match Conn::framing(head) {
                _ if head.expects_continue() => true,
                Ok(http::Framing::Length(n)) if n <= limit as u64 => {
                    conn.read_body(head, limit).is_err()
                }
                _ => true,
            };
            return (export::refused(&r, None), unread);
        }
    };
    let body = match conn.read_body(head, limit) {
        Ok(body) => body,
        Err(e) => {
            let r = refusal(e, limit);
            shared.refused(conn, &r);
            return (export::refused(&r, Some(encoding)), true);
        }
    };
    let line = match export::to_line(&body, encoding, gzip, limit) {
        Ok(line) => line,
        Err(r) => {
            shared.refused(conn, &r);
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

impl Shared<'_> {
    fn warn(&self, kind: &'static str, msg: std::fmt::Arguments<'_>) {
        self.diag
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .warn(kind, msg);
    }

    fn refused(&self, conn: &Conn, r: &Refusal) {
        self.warn(
            "refused",
            format_args!("{}: refused ({}): {}", conn.peer(), r.status, r.message),
        );
    }
}
