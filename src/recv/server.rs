//! The receiver on hyper: connections (up to a limit; past it new ones are
//! answered 503), each request's head checked (framing, token, type) before
//! its body is read under a deadline and a minimum rate, the body's bytes
//! taken from the budget as they arrive, and only a complete request given
//! one of the worker permits (waiting in a bounded queue; full: 503) to be
//! decoded and written (a large body on a blocking thread).

use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::budget::{Budget, peer_share};
use super::export::{self, Encoding, Gate, Refusal, Response};
use super::{Control, LineSink, Settings};
use crate::plumbing::diag::Diag;

/// How long a request's head may take to arrive, and a kept-alive
/// connection may wait for its next one (the Collector's
/// `read_header_timeout` bounds the same).
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a body may take to arrive, from the end of its head.
const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// A body still arriving after this long must have come at [`MIN_RATE`]
/// on average: a client that trickles holds memory no longer.
const RATE_GRACE: Duration = Duration::from_secs(5);
/// Bytes a second a body must average after [`RATE_GRACE`].
const MIN_RATE: u64 = 1024;
/// The connection's read buffer, which bounds a request head (431).
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Headers a request may have.
const MAX_HEADERS: usize = 64;
/// Plain bodies at most this large are decoded and written on the
/// connections' thread.
const INLINE_BODY: usize = 64 * 1024;
/// How long, and how many bytes, a refused body goes on being read after
/// the answer, so a client still sending sees the answer, not a reset.
const LINGER: Duration = Duration::from_secs(10);
const LINGER_BYTES: usize = 64 << 20;

/// Everything the connections and workers share.
struct Shared {
    settings: Settings,
    gate: Gate,
    sink: Arc<LineSink>,
    control: Arc<Control>,
    /// Warnings, for the thread that owns the diagnostics.
    warnings: std::sync::mpsc::Sender<(&'static str, String)>,
    /// Open connections.
    open: AtomicUsize,
    /// Body bytes held at once.
    budget: Budget,
    /// Requests decoded and written at once.
    workers: Semaphore,
    /// Requests decoding, writing, or waiting to: workers and queue.
    taken: Semaphore,
}

/// Serves `listener` until [`Control::stop`] is called or the sink fails.
/// The listener is closed as soon as it stops accepting, so clients are
/// refused at once rather than left waiting in its backlog; the requests
/// already taken are finished before this returns.
pub(crate) fn serve(
    listener: TcpListener,
    control: Arc<Control>,
    settings: Settings,
    sink: Arc<LineSink>,
    diag: &mut Diag,
) {
    let (warnings, heard) = std::sync::mpsc::channel();
    let workers = settings.workers.max(1);
    // What the workers and a full queue of average requests hold, at
    // least room for two of the largest bodies.
    let total = settings
        .max_body
        .saturating_mul(2)
        .max((workers + settings.queue).saturating_mul(1 << 20));
    let shared = Arc::new(Shared {
        gate: Gate::new(settings.token.as_deref()),
        budget: Budget::new(total, peer_share(total, settings.max_body)),
        workers: Semaphore::new(workers),
        taken: Semaphore::new(workers + settings.queue),
        open: AtomicUsize::new(0),
        settings,
        sink,
        control,
        warnings,
    });
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .thread_name("recv")
                .max_blocking_threads(workers)
                .build();
            match runtime {
                Ok(rt) => rt.block_on(accept_loop(listener, shared)),
                Err(e) => shared.warn("start", format!("no runtime for the server: {e}")),
            }
        });
        // Every sender is gone once the server has stopped.
        for (kind, msg) in heard {
            diag.warn(kind, format_args!("{msg}"));
        }
    });
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let listener = match listener
        .set_nonblocking(true)
        .and_then(|()| tokio::net::TcpListener::from_std(listener))
    {
        Ok(l) => l,
        Err(e) => return shared.warn("start", format!("cannot serve the listener: {e}")),
    };
    let mut connections = tokio::task::JoinSet::new();
    let stopped = shared.control.stopped();
    tokio::pin!(stopped);
    loop {
        tokio::select! {
            () = &mut stopped => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(a) => a,
                    Err(e) => {
                        shared.warn("accept", format!("accepting a connection failed: {e}"));
                        // Out of file descriptors and the like: let connections free some.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let open = shared.open.fetch_add(1, Ordering::SeqCst);
                let shared = shared.clone();
                connections.spawn(async move {
                    if open >= shared.settings.max_connections {
                        shared.warn(
                            "busy",
                            format!(
                                "{} connections are open, the most allowed: answered 503",
                                shared.settings.max_connections
                            ),
                        );
                        busy(stream).await;
                    } else {
                        serve_connection(stream, peer, &shared).await;
                    }
                    shared.open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        }
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
}

/// Answers a connection no reader can take: 503, try again in a second.
async fn busy(mut stream: tokio::net::TcpStream) {
    use tokio::io::AsyncWriteExt;
    let r = export::refused(&busy_refusal(), None);
    let mut bytes = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: {}\r\nRetry-After: 1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        r.content_type,
        r.body.len()
    )
    .into_bytes();
    bytes.extend_from_slice(&r.body);
    let _ = tokio::time::timeout(Duration::from_secs(1), stream.write_all(&bytes)).await;
}

fn busy_refusal() -> Refusal {
    Refusal {
        status: 503,
        message: "the receiver is busy; retry".into(),
    }
}

/// Serves one connection's requests until it closes, idles past the head
/// timeout, or the receiver stops (the request being served is finished).
async fn serve_connection(stream: tokio::net::TcpStream, peer: SocketAddr, shared: &Arc<Shared>) {
    let _ = stream.set_nodelay(true);
    let service = {
        let shared = shared.clone();
        service_fn(move |req| {
            let shared = shared.clone();
            async move { Ok::<_, Infallible>(handle(req, peer, &shared).await) }
        })
    };
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT)
        .half_close(true)
        .title_case_headers(true)
        .max_buf_size(MAX_HEAD_BYTES)
        .max_headers(MAX_HEADERS);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        () = shared.control.stopped() => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}

/// What becomes of the connection after an answer.
enum After {
    KeepAlive,
    /// Close; a body still arriving is read (and dropped) for a while
    /// first, so the client sees the answer rather than a reset.
    Close(Option<Incoming>),
}

/// Answers one request.
async fn handle(
    req: hyper::Request<Incoming>,
    peer: SocketAddr,
    shared: &Shared,
) -> hyper::Response<Full<Bytes>> {
    let (parts, body) = req.into_parts();
    let (response, after) = answer(&parts, body, peer, shared).await;
    let close = !matches!(after, After::KeepAlive);
    if let After::Close(Some(body)) = after {
        tokio::spawn(linger(body));
    }
    let close = close || shared.control.stopping();
    to_hyper(response, close)
}

async fn answer(
    parts: &hyper::http::request::Parts,
    body: Incoming,
    peer: SocketAddr,
    shared: &Shared,
) -> (Response, After) {
    let limit = shared.settings.max_body;
    // Every refusal closes the connection: what follows a request the
    // receiver would not take is not trusted to be framed as it seems.
    let refuse = |r: Refusal, encoding: Option<Encoding>, body: Option<Incoming>| {
        shared.refused(peer, &r);
        (export::refused(&r, encoding), After::Close(body))
    };
    // A client waiting for 100 Continue sends no body unless asked, and
    // reading it would ask.
    let unread = |body: Incoming| (!expects_continue(parts)).then_some(body);
    if let Err(r) = export::check_head(parts) {
        return refuse(r, None, None);
    }
    let (encoding, gzip) = match shared.gate.check(parts) {
        Ok(ok) => ok,
        Err(r) => return refuse(r, None, unread(body)),
    };
    let declared = hyper::body::Body::size_hint(&body).exact();
    if declared.is_some_and(|n| n > limit as u64) {
        return refuse(too_large(limit), Some(encoding), unread(body));
    }
    let body = match read_body(body, peer.ip(), shared).await {
        Ok(b) => b,
        Err((r, rest)) => return refuse(r, Some(encoding), rest),
    };
    let Ok(_taken) = shared.taken.try_acquire() else {
        shared.warn(
            "busy",
            "every worker is busy and the queue is full: answered 503".into(),
        );
        return refuse(busy_refusal(), Some(encoding), None);
    };
    let Ok(_worker) = shared.workers.acquire().await else {
        return refuse(busy_refusal(), Some(encoding), None);
    };
    let (bytes, _held) = body;
    let small = bytes.len() <= INLINE_BODY && !gzip;
    let sink = shared.sink.clone();
    let write = move || match export::to_line(&bytes, encoding, gzip, limit) {
        Ok(Some(line)) => sink.write_line(line).map_err(|e| Err(e.to_string())),
        Ok(None) => Ok(()),
        Err(r) => Err(Ok(r)),
    };
    // A small body is decoded and written here, at once: a trip to a
    // blocking thread and back costs more than the work. A large one
    // would hold up every other connection, so it goes to one.
    let written = if small {
        write()
    } else {
        tokio::task::spawn_blocking(write)
            .await
            .unwrap_or_else(|e| Err(Err(format!("the writer failed: {e}"))))
    };
    match written {
        Ok(()) => {}
        Err(Ok(refusal)) => return refuse(refusal, Some(encoding), None),
        Err(Err(e)) => {
            shared.control.stop();
            let r = Refusal {
                status: 503,
                message: format!("the receiver cannot write its output: {e}"),
            };
            return (export::refused(&r, Some(encoding)), After::Close(None));
        }
    }
    (export::accepted(encoding), After::KeepAlive)
}

fn too_large(limit: usize) -> Refusal {
    Refusal {
        status: 413,
        message: format!("body is larger than {limit} bytes"),
    }
}

fn expects_continue(parts: &hyper::http::request::Parts) -> bool {
    parts
        .headers
        .get("expect")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("100-continue"))
}

/// A body read whole, and its part of the budget (given back when dropped).
type ReadBody<'a> = (Vec<u8>, super::budget::Held<'a>);

/// Reads a body within the size limit, the budget (taken as bytes
/// arrive, within the peer's share), its deadline and the minimum rate.
/// On failure: the refusal, and the body when it may still be arriving.
async fn read_body(
    mut body: Incoming,
    peer: IpAddr,
    shared: &Shared,
) -> Result<ReadBody<'_>, (Refusal, Option<Incoming>)> {
    let limit = shared.settings.max_body;
    let mut held = shared.budget.hold(Some(peer));
    let mut bytes = Vec::new();
    let started = Instant::now();
    loop {
        // By when the bytes so far are too few for the minimum rate.
        let rate_due =
            started + RATE_GRACE + Duration::from_secs_f64(bytes.len() as f64 / MIN_RATE as f64);
        let due = rate_due.min(started + BODY_TIMEOUT);
        let frame = match tokio::time::timeout_at(due, body.frame()).await {
            Err(_) => {
                let r = Refusal {
                    status: 408,
                    message: format!(
                        "the body came slower than {MIN_RATE} bytes a second, or past {BODY_TIMEOUT:?} ({} bytes in {:.0?})",
                        bytes.len(),
                        started.elapsed()
                    ),
                };
                return Err((r, None));
            }
            Ok(None) => return Ok((bytes, held)),
            Ok(Some(Err(e))) => {
                let r = Refusal {
                    status: 400,
                    message: format!("bad body: {e}"),
                };
                return Err((r, None));
            }
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue; // trailers
        };
        let len = bytes.len() + data.len();
        if len > limit {
            return Err((too_large(limit), Some(body)));
        }
        if !held.grow_to(len) {
            shared.warn(
                "busy",
                format!("{peer}: bodies being read hold the memory allowed: answered 503"),
            );
            return Err((busy_refusal(), Some(body)));
        }
        bytes.extend_from_slice(&data);
    }
}

/// Reads and drops what is left of a refused body, for a while.
async fn linger(mut body: Incoming) {
    let mut read = 0usize;
    let _ = tokio::time::timeout(LINGER, async {
        while let Some(Ok(frame)) = body.frame().await {
            read += frame.data_ref().map_or(0, Bytes::len);
            if read > LINGER_BYTES {
                break;
            }
        }
    })
    .await;
}

fn to_hyper(r: Response, close: bool) -> hyper::Response<Full<Bytes>> {
    let mut builder = hyper::Response::builder()
        .status(r.status)
        .header("Content-Type", r.content_type);
    for (name, value) in &r.headers {
        builder = builder.header(*name, value.as_str());
    }
    if close {
        builder = builder.header("Connection", "close");
    }
    builder
        .body(Full::new(Bytes::from(r.body)))
        .unwrap_or_else(|_| hyper::Response::new(Full::new(Bytes::new())))
}

impl Shared {
    fn warn(&self, kind: &'static str, msg: String) {
        let _ = self.warnings.send((kind, msg));
    }

    fn refused(&self, peer: SocketAddr, r: &Refusal) {
        self.warn(
            "refused",
            format!("{peer}: refused ({}): {}", r.status, r.message),
        );
    }
}
