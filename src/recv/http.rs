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
/// How long a connection may wait for its next request.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one request may take to arrive, head and body.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How often a blocked read looks at the clock and the stop flag.
pub const POLL: Duration = Duration::from_millis(200);
/// At most this much of a refused body is read and thrown away before
/// closing, so the client sees the answer rather than a reset.
const DRAIN_LIMIT: u64 = 4 << 20;

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

    fn all(&self, name: &str) -> impl Iterator<Item = &str> {
        self.headers
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// True when the client asked to close after this request.
    pub fn wants_close(&self) -> bool {
        let connection = self.header("connection").unwrap_or_default();
        let has = |token: &str| {
            connection
                .split(',')
                .any(|t| t.trim().eq_ignore_ascii_case(token))
        };
        has("close") || (self.http10 && !has("keep-alive"))
    }

    /// True when the client waits for `100 Continue` before sending the body.
    pub fn expects_continue(&self) -> bool {
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
}

impl Conn {
    pub fn new(stream: TcpStream) -> io::Result<Self> {
        stream.set_read_timeout(Some(POLL))?;
        stream.set_write_timeout(Some(REQUEST_TIMEOUT))?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buf: Vec::with_capacity(8 * 1024),
        })
    }

    pub fn peer(&self) -> String {
        self.stream
            .peer_addr()
            .map_or_else(|_| "a client".to_string(), |a| a.to_string())
    }

    /// The next request's head. Between requests, `give_way` (checked
    /// every POLL) or a long idle time ends the connection quietly.
    pub fn read_head(&mut self, give_way: &dyn Fn() -> bool) -> Result<Head, ReadError> {
        let idle_since = Instant::now();
        // When the first byte of this request came: its deadline starts then.
        let mut started = (!self.buf.is_empty()).then(Instant::now);
        loop {
            if let Some(head) = self.parse_head()? {
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
                    && (give_way() || idle_since.elapsed() > IDLE_TIMEOUT) =>
                {
                    return Err(ReadError::Closed);
                }
                None if started.is_some_and(|t| t.elapsed() > REQUEST_TIMEOUT) => {
                    return Err(ReadError::Refuse(
                        408,
                        "request head not received in time".into(),
                    ));
                }
                None => {}
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
        Ok(Some(head))
    }

    /// How the body of `head` is framed.
    pub fn framing(head: &Head) -> Result<Framing, ReadError> {
        if let Some(te) = head.header("transfer-encoding") {
            return if te
                .rsplit(',')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("chunked"))
            {
                Ok(Framing::Chunked)
            } else {
                Err(ReadError::Refuse(
                    400,
                    format!("unsupported transfer-encoding {te:?}"),
                ))
            };
        }
        let mut values = head.all("content-length");
        let Some(first) = values.next() else {
            return Ok(Framing::Length(0));
        };
        let bad = || ReadError::Refuse(400, "bad content-length".into());
        let n = first.parse::<u64>().map_err(|_| bad())?;
        if values.any(|v| v.parse::<u64>() != Ok(n)) {
            return Err(bad());
        }
        Ok(Framing::Length(n))
    }

    /// Reads the body of `head` (at most `limit` bytes), first telling a
    /// client that waits for it to go on.
    pub fn read_body(&mut self, head: &Head, limit: usize) -> Result<Vec<u8>, ReadError> {
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
        let deadline = Instant::now() + REQUEST_TIMEOUT;
        match framing {
            Framing::Length(n) => self.take(n as usize, deadline),
            Framing::Chunked => self.read_chunked(limit, deadline),
        }
    }

    fn read_chunked(&mut self, limit: usize, deadline: Instant) -> Result<Vec<u8>, ReadError> {
        let mut body = Vec::new();
        loop {
            let line = self.take_line(deadline)?;
            let size = line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size, 16)
                .map_err(|_| ReadError::Refuse(400, "bad chunk size".into()))?;
            if size == 0 {
                // Trailers, up to the empty line.
                while !self.take_line(deadline)?.is_empty() {}
                return Ok(body);
            }
            if body.len().saturating_add(size) > limit {
                return Err(ReadError::TooLarge);
            }
            body.extend_from_slice(&self.take(size, deadline)?);
            if !self.take_line(deadline)?.is_empty() {
                return Err(ReadError::Refuse(400, "bad chunk end".into()));
            }
        }
    }

    fn take(&mut self, n: usize, deadline: Instant) -> Result<Vec<u8>, ReadError> {
        while self.buf.len() < n {
            self.fill_before(deadline)?;
        }
        let rest = self.buf.split_off(n);
        Ok(std::mem::replace(&mut self.buf, rest))
    }

    fn take_line(&mut self, deadline: Instant) -> Result<String, ReadError> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf) {
                let line: Vec<u8> = self.buf.drain(..=i).collect();
                let line = line.strip_suffix(b"\n").unwrap_or(&line);
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                return Ok(String::from_utf8_lossy(line).into_owned());
            }
            if self.buf.len() > MAX_HEAD_BYTES {
                return Err(ReadError::Refuse(400, "chunk line too long".into()));
            }
            self.fill_before(deadline)?;
        }
    }

    fn fill_before(&mut self, deadline: Instant) -> Result<(), ReadError> {
        match self.fill()? {
            Some(0) => Err(ReadError::Closed),
            Some(_) => Ok(()),
            None if Instant::now() > deadline => Err(ReadError::Refuse(
                408,
                "request body not received in time".into(),
            )),
            None => Ok(()),
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
    pub fn respond(&mut self, resp: &Response, close: bool) -> io::Result<()> {
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
    pub fn linger_close(mut self) {
        let _ = self.stream.shutdown(Shutdown::Write);
        let _ = self
            .stream
            .set_read_timeout(Some(Duration::from_millis(500)));
        let _ = io::copy(&mut (&mut self.stream).take(DRAIN_LIMIT), &mut io::sink());
    }
    /// Closes without waiting: drops what the client already sent (so the
    /// close is not a reset that could hide the answer) but never blocks,
    /// for the acceptor, which must not stall under load.
    pub fn close_now(mut self) {
        let _ = self.stream.shutdown(Shutdown::Write);
        if self.stream.set_nonblocking(true).is_ok() {
            let _ = io::copy(&mut (&mut self.stream).take(DRAIN_LIMIT), &mut io::sink());
        }
    }
}

/// An answer to one request.
pub struct Response {
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
POST /v1/traces HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n2;ext\r\nde\r\n1\r\nf\r\n0\r\nX-T: 1\r\n\r\n",
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
        let mut c = conn_with(b"POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\n");
        let h = c.read_head(&|| false).unwrap();
        assert!(matches!(c.read_body(&h, 10), Err(ReadError::TooLarge)));
        let mut c =
            conn_with(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n");
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
        let mut c =
            conn_with(b"POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd");
        let h = c.read_head(&|| false).unwrap();
        assert!(matches!(
            c.read_body(&h, 100),
            Err(ReadError::Refuse(400, _))
        ));
        let mut c = conn_with(b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab");
        let h = c.read_head(&|| false).unwrap();
        assert!(matches!(c.read_body(&h, 100), Err(ReadError::Closed)));
    }

    #[test]
    fn http10_closes_unless_kept_alive() {
        let mut c =
            conn_with(b"POST / HTTP/1.0\r\n\r\nPOST / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n");
        assert!(c.read_head(&|| false).unwrap().wants_close());
        assert!(!c.read_head(&|| false).unwrap().wants_close());
    }
}
