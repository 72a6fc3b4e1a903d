//! Just enough HTTP/1.1 for an OTLP receiver: reading requests from one
//! connection (keep-alive, Content-Length or chunked bodies, Expect:
//! 100-continue) under size limits and deadlines, and writing responses.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::{Duration, Instant};

/// A request head larger than this is refused (431).
const MAX_HEAD_BYTES: usize = 16 * 1024;
/// Headers a request may have.
const MAX_HEADERS: usize = 64;
/// How long a request's head may take to arrive, from its first byte
/// (the Collector's `read_header_timeout` bounds the same).
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a connection may wait for its next request.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one request may take to arrive, head and body, from its
/// first byte.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a connection may take over each part of a request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadlines {
    pub head: Duration,
    pub request: Duration,
    pub idle: Duration,
}

impl Default for Deadlines {
    fn default() -> Self {
        Deadlines {
            head: HEAD_TIMEOUT,
            request: REQUEST_TIMEOUT,
            idle: IDLE_TIMEOUT,
        }
    }
}
/// A body still arriving after this long must have come at [`MIN_RATE`]
/// on average: a client that trickles holds a reader no longer.
const RATE_GRACE: Duration = Duration::from_secs(5);
/// Bytes a second a body must average after [`RATE_GRACE`].
const MIN_RATE: u64 = 1024;

/// A body being read: its deadline, the reservation it grows as bytes
/// arrive, and the bytes already taken out of the buffer.
struct Body<'r> {
    deadline: Instant,
    reserve: &'r mut dyn FnMut(usize) -> bool,
    held: usize,
}

/// How often a blocked read looks at the clock and the stop flag.
pub(crate) const POLL: Duration = Duration::from_millis(200);
/// At most this much of a refused body is read and thrown away by the
/// acceptor, which must not block, before closing.
const DRAIN_LIMIT: u64 = 4 << 20;
/// How long, and how many bytes, a reader thread goes on reading a refused
/// body after answering, so the client sees the answer, not a reset.
const LINGER: Duration = Duration::from_secs(10);
const LINGER_BYTES: u64 = 64 << 20;

/// A request line and its headers.
pub struct Head {
    pub method: String,
    /// The path without its query.
    pub path: String,
    /// HTTP/1.0 closes after one request unless asked otherwise.
    pub http10: bool,
    headers: Vec<(String, String)>,
}

impl Head {
    /// The first value of header `name` (lowercase).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn all(&self, name: &str) -> impl Iterator<Item = &str> {
        self.headers
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// True when the client asked to close after this request.
    pub(crate) fn wants_close(&self) -> bool {
        let connection = self.header("connection").unwrap_or_default();
        let has = |token: &str| {
            connection
                .split(',')
                .any(|t| t.trim().eq_ignore_ascii_case(token))
        };
        has("close") || (self.http10 && !has("keep-alive"))
    }

    /// True when the client waits for `100 Continue` before sending the body.
    pub(crate) fn expects_continue(&self) -> bool {
        self.header("expect")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("100-continue"))
    }
}

/// How a request's body is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    Length(u64),
    Chunked,
}

/// Why a request could not be read; each maps to an answer.
#[derive(Debug)]
pub enum ReadError {
    /// The peer went away or the stop flag was raised between requests:
    /// close without answering.
    Closed,
    /// Answer with this status and message, then close.
    Refuse(u16, String),
    /// The body is larger than allowed (413); close after answering.
    TooLarge,
}

/// One client connection.
pub struct Conn {
    stream: TcpStream,
    /// Bytes read but not yet used.
    buf: Vec<u8>,
    deadlines: Deadlines,
    /// When the first byte of the request being read came.
    started: Instant,
}

impl Conn {
    pub fn new(stream: TcpStream) -> io::Result<Self> {
        stream.set_read_timeout(Some(POLL))?;
        stream.set_write_timeout(Some(REQUEST_TIMEOUT))?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buf: Vec::with_capacity(8 * 1024),
            deadlines: Deadlines::default(),
            started: Instant::now(),
        })
    }

    /// The same connection under other deadlines.
    #[cfg(test)]
    pub(crate) fn with_deadlines(mut self, deadlines: Deadlines) -> Self {
        self.deadlines = deadlines;
        self
    }

    /// The client's address, for its share of what is held at once.
    pub(crate) fn peer_ip(&self) -> Option<std::net::IpAddr> {
        self.stream.peer_addr().ok().map(|a| a.ip())
    }

    pub(crate) fn peer(&self) -> String {
        self.stream
            .peer_addr()
            .map_or_else(|_| "a client".to_string(), |a| a.to_string())
    }

    /// The next request's head. Between requests, `give_way` (checked
    /// every POLL) or a long idle time ends the connection quietly; inside
    /// a head, `give_way` refuses it (503).
    pub fn read_head(&mut self, give_way: &dyn Fn() -> bool) -> Result<Head, ReadError> {
        let idle_since = Instant::now();
        // When the first byte of this request came: its deadlines start then.
        let mut started = (!self.buf.is_empty()).then(Instant::now);
        loop {
            if let Some(head) = self.parse_head()? {
                self.started = started.unwrap_or_else(Instant::now);
                return Ok(head);
            }
            if self.buf.len() > MAX_HEAD_BYTES {
                return Err(ReadError::Refuse(431, "request head too large".into()));
            }
            match self.fill()? {
                Some(0) => return Err(ReadError::Closed),
                Some(_) => {
                    started.get_or_insert_with(Instant::now);
                }
                None if started.is_none()
                    && (give_way() || idle_since.elapsed() > self.deadlines.idle) =>
                {
                    return Err(ReadError::Closed);
                }
                None => {}
            }
            // A request not yet in is not taken: stopping does not wait for it.
            if started.is_some() && give_way() {
                return Err(ReadError::Refuse(
                    503,
                    "the receiver is stopping; retry".into(),
                ));
            }
            if started.is_some_and(|t| t.elapsed() > self.deadlines.head) {
                return Err(ReadError::Refuse(
                    408,
                    "request head not received in time".into(),
                ));
            }
        }
    }

    fn parse_head(&mut self) -> Result<Option<Head>, ReadError> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut req = httparse::Request::new(&mut headers);
        let len = match req.parse(&self.buf) {
            Ok(httparse::Status::Complete(len)) => len,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(httparse::Error::TooManyHeaders) => {
                return Err(ReadError::Refuse(431, "too many headers".into()));
            }
            Err(e) => return Err(ReadError::Refuse(400, format!("bad request: {e}"))),
        };
        // RFC 9112 §2.2: a bare LF is not a line end a proxy in front would
        // agree on, so a request framed by one is refused.
        if bare_lf(&self.buf[..len]) {
            return Err(ReadError::Refuse(
                400,
                "bad request: a line ends in a bare LF, not CRLF".into(),
            ));
        }
        let target = req.path.unwrap_or("/");
        let head = Head {
            method: req.method.unwrap_or_default().to_string(),
            path: target.split(['?', '#']).next().unwrap_or("/").to_string(),
            http10: req.version == Some(0),
            headers: req
                .headers
                .iter()
                .map(|h| {
                    (
                        h.name.to_ascii_lowercase(),
                        String::from_utf8_lossy(h.value).trim().to_string(),
                    )
                })
                .collect(),
        };
        self.buf.drain(..len);
        // RFC 9112 §3.2: an HTTP/1.1 request without a Host header, or
        // with more than one, is answered 400.
        let hosts = head.all("host").count();
        if hosts > 1 || (hosts == 0 && !head.http10) {
            return Err(ReadError::Refuse(
                400,
                format!("bad request: {hosts} Host headers; HTTP/1.1 needs exactly one"),
            ));
        }
        // Framing is settled before anything else is read, so a request
        // whose end two servers could see differently is never served.
        Self::framing(&head)?;
        Ok(Some(head))
    }

    /// How the body of `head` is framed. Anything a proxy in front could
    /// read differently is refused (RFC 9112 §6.1, §6.3): Transfer-Encoding
    /// with Content-Length, in HTTP/1.0, in more than one header, or other
    /// than a lone `chunked`; a Content-Length not all digits (`+5`), or
    /// given twice with different values.
    pub fn framing(head: &Head) -> Result<Framing, ReadError> {
        let refuse = |why: &str| Err(ReadError::Refuse(400, format!("bad framing: {why}")));
        let mut te = head.all("transfer-encoding");
        let has_length = head.header("content-length").is_some();
        if let Some(first) = te.next() {
            if te.next().is_some() {
                return refuse("more than one Transfer-Encoding header");
            }
            if has_length {
                return refuse("both Transfer-Encoding and Content-Length");
            }
            if head.http10 {
                return refuse("Transfer-Encoding in an HTTP/1.0 request");
            }
            if !first.eq_ignore_ascii_case("chunked") {
                return refuse(&format!(
                    "transfer-encoding {first:?}: only a lone \"chunked\" is taken"
                ));
            }
            return Ok(Framing::Chunked);
        }
        let mut values = head.all("content-length");
        let Some(first) = values.next() else {
            return Ok(Framing::Length(0));
        };
        let n = content_length(first).ok_or_else(|| {
            ReadError::Refuse(400, format!("bad framing: content-length {first:?}"))
        })?;
        if values.any(|v| content_length(v) != Some(n)) {
            return refuse("content-length given twice with different values");
        }
        Ok(Framing::Length(n))
    }

    /// Reads the body of `head` (at most `limit` bytes), first telling a
    /// client that waits for it to go on.
    pub fn read_body(&mut self, head: &Head, limit: usize) -> Result<Vec<u8>, ReadError> {
        self.read_body_within(head, limit, &mut |_| true)
    }

    /// As [`Conn::read_body`], asking `reserve` for room for the bytes held
    /// as they arrive (not for the length the head declares): a client
    /// that declares 16 MiB and sends a byte a second holds a few bytes.
    /// Refused room is a 503; a body arriving slower than [`MIN_RATE`]
    /// after [`RATE_GRACE`] is a 408.
    pub(crate) fn read_body_within(
        &mut self,
        head: &Head,
        limit: usize,
        reserve: &mut dyn FnMut(usize) -> bool,
    ) -> Result<Vec<u8>, ReadError> {
        let framing = Self::framing(head)?;
        if let Framing::Length(n) = framing
            && n > limit as u64
        {
            return Err(ReadError::TooLarge);
        }
        if head.expects_continue() && self.buf.is_empty() {
            self.stream
                .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                .map_err(|_| ReadError::Closed)?;
        }
        let deadline = self.started + self.deadlines.request;
        let mut body = Body {
            deadline,
            reserve,
            held: 0,
        };
        match framing {
            Framing::Length(n) => self.take(n as usize, &mut body),
            Framing::Chunked => self.read_chunked(limit, &mut body),
        }
    }

    fn read_chunked(
        &mut self,
        limit: usize,
        body_read: &mut Body<'_>,
    ) -> Result<Vec<u8>, ReadError> {
        let mut body = Vec::new();
        loop {
            body_read.held = body.len();
            let line = self.take_line(body_read)?;
            let size = chunk_size(&line)
                .ok_or_else(|| ReadError::Refuse(400, format!("bad chunk size line {line:?}")))?;
            if size == 0 {
                // Trailers, up to the empty line.
                while !self.take_line(body_read)?.is_empty() {}
                return Ok(body);
            }
            if body.len().saturating_add(size) > limit {
                return Err(ReadError::TooLarge);
            }
            body.extend_from_slice(&self.take(size, body_read)?);
            body_read.held = body.len();
            if !self.take_line(body_read)?.is_empty() {
                return Err(ReadError::Refuse(400, "bad chunk end".into()));
            }
        }
    }

    fn take(&mut self, n: usize, body: &mut Body<'_>) -> Result<Vec<u8>, ReadError> {
        while self.buf.len() < n {
            self.fill_before(body)?;
        }
        let rest = self.buf.split_off(n);
        Ok(std::mem::replace(&mut self.buf, rest))
    }

    fn take_line(&mut self, body: &mut Body<'_>) -> Result<String, ReadError> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf) {
                let line: Vec<u8> = self.buf.drain(..=i).collect();
                let Some(line) = line.strip_suffix(b"\r\n") else {
                    return Err(ReadError::Refuse(
                        400,
                        "bad chunked body: a line ends in a bare LF, not CRLF".into(),
                    ));
                };
                return Ok(String::from_utf8_lossy(line).into_owned());
            }
            if self.buf.len() > MAX_HEAD_BYTES {
                return Err(ReadError::Refuse(400, "chunk line too long".into()));
            }
            self.fill_before(body)?;
        }
    }

    fn fill_before(&mut self, body: &mut Body<'_>) -> Result<(), ReadError> {
        // Checked after data too: a byte now and then must not extend it.
        let filled = self.fill()?;
        if Instant::now() > body.deadline {
            return Err(ReadError::Refuse(
                408,
                "request body not received in time".into(),
            ));
        }
        if !(body.reserve)(body.held + self.buf.len()) {
            return Err(ReadError::Refuse(
                503,
                "too many bodies are being read at once; retry".into(),
            ));
        }
        let elapsed = self.started.elapsed();
        if elapsed > RATE_GRACE
            && (body.held + self.buf.len()) as f64 / elapsed.as_secs_f64() < MIN_RATE as f64
        {
            return Err(ReadError::Refuse(
                408,
                format!("request body arriving slower than {MIN_RATE} bytes a second"),
            ));
        }
        match filled {
            Some(0) => Err(ReadError::Closed),
            _ => Ok(()),
        }
    }

    /// Reads what is there: `Some(0)` at end of stream, `None` when nothing
    /// came within [`POLL`].
    fn fill(&mut self) -> Result<Option<usize>, ReadError> {
        let mut chunk = [0u8; 16 * 1024];
        match self.stream.read(&mut chunk) {
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(Some(n))
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) =>
            {
                Ok(None)
            }
            Err(_) => Err(ReadError::Closed),
        }
    }

    /// Writes one response; `close` adds `Connection: close`.
    pub(crate) fn respond(&mut self, resp: &Response, close: bool) -> io::Result<()> {
        let mut out = Vec::with_capacity(256 + resp.body.len());
        write!(
            out,
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n",
            resp.status,
            reason(resp.status),
            resp.content_type,
            resp.body.len()
        )?;
        for (name, value) in &resp.headers {
            write!(out, "{name}: {value}\r\n")?;
        }
        if close {
            out.extend_from_slice(b"Connection: close\r\n");
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(&resp.body);
        self.stream.write_all(&out)?;
        self.stream.flush()
    }

    /// Closes after an answer given before the body was read: stop
    /// writing, read and drop what the client still sends (up to a
    /// limit), so it sees the answer instead of a connection reset.
    pub(crate) fn linger_close(mut self) {
        let _ = self.stream.shutdown(Shutdown::Write);
        let _ = self
            .stream
            .set_read_timeout(Some(Duration::from_millis(500)));
        // Until the client stops sending (a refused body of the largest
        // size, on a slow link, included), half a second of silence, or
        // the bounds: closing with its bytes unread would be a reset, and
        // a reset can discard the answer before the client reads it.
        let until = Instant::now() + LINGER;
        let mut chunk = [0u8; 64 * 1024];
        let mut drained = 0u64;
        while Instant::now() < until && drained < LINGER_BYTES {
            match self.stream.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => drained += n as u64,
            }
        }
    }
    /// Closes without waiting: drops what the client already sent (so the
    /// close is not a reset that could hide the answer) but never blocks,
    /// for the acceptor, which must not stall under load.
    pub(crate) fn close_now(mut self) {
        let _ = self.stream.shutdown(Shutdown::Write);
        if self.stream.set_nonblocking(true).is_ok() {
            let _ = io::copy(&mut (&mut self.stream).take(DRAIN_LIMIT), &mut io::sink());
        }
    }
}

/// True when some LF in `head` does not follow a CR.
fn bare_lf(head: &[u8]) -> bool {
    memchr::memchr_iter(b'\n', head).any(|i| i == 0 || head[i - 1] != b'\r')
}

/// A Content-Length value: digits only (no sign, no space inside).
fn content_length(v: &str) -> Option<u64> {
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    v.parse().ok()
}

/// The size on a chunk's first line: hex digits, then optionally
/// extensions after `;` (RFC 9112 §7.1.1).
fn chunk_size(line: &str) -> Option<usize> {
    let size = line.split(';').next().unwrap_or_default();
    let size = size.trim_end_matches([' ', '\t']);
    if size.is_empty() || size.len() > 15 || !size.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    usize::from_str_radix(size, 16).ok()
}

/// An answer to one request.
pub(crate) struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A connection whose client side has already sent `bytes` and closed.
    fn conn_with(bytes: &[u8]) -> Conn {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        client.write_all(bytes).unwrap();
        client.shutdown(Shutdown::Write).unwrap();
        let (server, _) = listener.accept().unwrap();
        std::mem::forget(client);
        Conn::new(server).unwrap()
    }

    #[test]
    fn reads_keep_alive_requests_with_length_and_chunked_bodies() {
        let mut c = conn_with(
            b"POST /v1/traces?x=1 HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc\
POST /v1/traces HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2;ext\r\nde\r\n1\r\nf\r\n0\r\nX-T: 1\r\n\r\n",
        );
        let never = || false;
        let h = c.read_head(&never).unwrap();
        assert_eq!((h.method.as_str(), h.path.as_str()), ("POST", "/v1/traces"));
        assert!(!h.wants_close());
        assert_eq!(c.read_body(&h, 100).unwrap(), b"abc");
        let h = c.read_head(&never).unwrap();
        assert!(h.wants_close());
        assert_eq!(c.read_body(&h, 100).unwrap(), b"def");
        assert!(matches!(c.read_head(&never), Err(ReadError::Closed)));
    }

    #[test]
    fn bodies_over_the_limit_are_refused_whatever_their_framing() {
        let mut c = conn_with(b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n");
        let h = c.read_head(&|| false).unwrap();
        assert!(matches!(c.read_body(&h, 10), Err(ReadError::TooLarge)));
        let mut c =
            conn_with(b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n");
        let h = c.read_head(&|| false).unwrap();
        assert!(matches!(c.read_body(&h, 10), Err(ReadError::TooLarge)));
    }

    #[test]
    fn malformed_heads_and_lengths_are_refused() {
        let mut c = conn_with(b"\x01\x02 garbage\r\n\r\n");
        assert!(matches!(
            c.read_head(&|| false),
            Err(ReadError::Refuse(400, _))
        ));
        let mut c = conn_with(
            b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
        );
        assert!(matches!(
            c.read_head(&|| false),
            Err(ReadError::Refuse(400, _))
        ));
        let mut c = conn_with(b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nab");
        let h = c.read_head(&|| false).unwrap();
        assert!(matches!(c.read_body(&h, 100), Err(ReadError::Closed)));
    }

    /// The status a request head is refused with, if it is.
    fn refused(bytes: &[u8]) -> Option<u16> {
        match conn_with(bytes).read_head(&|| false) {
            Err(ReadError::Refuse(status, _)) => Some(status),
            _ => None,
        }
    }

    #[test]
    fn framing_a_proxy_could_read_differently_is_refused() {
        for head in [
            &b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
            b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +5\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -0\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0x5\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5 5\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
            b"POST / HTTP/1.1\nContent-Length: 5\n\n",
            b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\n\r\n",
            b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: xchunked\r\n\r\n",
            b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
        ] {
            assert_eq!(
                refused(head),
                Some(400),
                "{}",
                String::from_utf8_lossy(head)
            );
        }
        for fine in [
            &b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 005\r\n\r\n"[..],
            b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: h\r\ntransfer-encoding: Chunked\r\n\r\n",
        ] {
            assert_eq!(refused(fine), None, "{}", String::from_utf8_lossy(fine));
        }
    }

    #[test]
    fn chunk_lines_must_be_hex_and_end_in_crlf() {
        for body in [
            &b"+5\r\nabcde\r\n0\r\n\r\n"[..],
            b" 5\r\nabcde\r\n0\r\n\r\n",
            b"5\nabcde\r\n0\r\n\r\n",
            b"5\r\nabcde\n0\r\n\r\n",
            b"5\r\nabcde\r\n0\r\n\n",
            b"0x5\r\nabcde\r\n0\r\n\r\n",
            b"10000000000000000\r\n",
        ] {
            let mut request =
                b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
            request.extend_from_slice(body);
            let mut c = conn_with(&request);
            let h = c.read_head(&|| false).unwrap();
            assert!(
                matches!(c.read_body(&h, 1 << 20), Err(ReadError::Refuse(400, _))),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
        assert_eq!(chunk_size("1f ; name=value"), Some(31));
    }

    /// A connection whose client sends the first `burst` bytes at once,
    /// then the rest of `bytes` one at a time, `gap` apart.
    fn trickled(bytes: &'static [u8], burst: usize, gap: Duration) -> Conn {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        std::thread::spawn(move || {
            client.write_all(&bytes[..burst]).unwrap();
            for b in &bytes[burst..] {
                if client.write_all(&[*b]).is_err() {
                    return;
                }
                std::thread::sleep(gap);
            }
            std::thread::sleep(Duration::from_secs(5));
        });
        let (server, _) = listener.accept().unwrap();
        Conn::new(server).unwrap().with_deadlines(Deadlines {
            head: Duration::from_millis(400),
            request: Duration::from_millis(800),
            idle: Duration::from_secs(5),
        })
    }

    #[test]
    fn a_trickling_client_is_cut_off_at_its_deadline_not_kept_alive_by_each_byte() {
        let gap = Duration::from_millis(30);
        let started = Instant::now();
        let mut c = trickled(b"POST / HTTP/1.1\r\nHost: h\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n", 0, gap);
        assert!(matches!(
            c.read_head(&|| false),
            Err(ReadError::Refuse(408, _))
        ));
        assert!(started.elapsed() < Duration::from_secs(2));

        let started = Instant::now();
        let mut c = trickled(
            b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 100\r\n\r\nbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
            40,
            Duration::from_millis(15),
        );
        let h = c.read_head(&|| false).unwrap();
        assert!(matches!(
            c.read_body(&h, 1000),
            Err(ReadError::Refuse(408, _))
        ));
        assert!(started.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn http10_closes_unless_kept_alive() {
        let mut c =
            conn_with(b"POST / HTTP/1.0\r\n\r\nPOST / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
        assert!(c.read_head(&|| false).unwrap().wants_close());
        assert!(!c.read_head(&|| false).unwrap().wants_close());
    }
}
