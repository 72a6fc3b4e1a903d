//! One OTLP/HTTP trace export, as the OTLP spec says to answer it: which
//! requests are taken (POST /v1/traces, JSON or protobuf, plain or gzip,
//! with the bearer token when one is set), the OTLP JSON line a body
//! becomes, and the ExportTraceServiceResponse or Status sent back.

use std::io::Read;

use flate2::read::MultiGzDecoder;
use sha2::{Digest, Sha256};

use hyper::http::request::Parts;
use hyper::http::{HeaderMap, Version};
use prost::Message as _;

use super::otlp;

/// The path OTLP/HTTP exporters post traces to.
pub(crate) const TRACES_PATH: &str = "/v1/traces";

/// How a body is encoded, from its Content-Type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Json,
    Protobuf,
}

/// Why a request is refused: the HTTP status and a message for the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: u16,
    pub message: String,
}

fn refuse(status: u16, message: impl Into<String>) -> Refusal {
    Refusal {
        status,
        message: message.into(),
    }
}

/// An answer before it is put on the wire.
pub(crate) struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

/// google.rpc.Status, the body of an OTLP refusal (its `details` left out).
#[derive(Clone, PartialEq, prost::Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
}

/// The values of header `name`, as text (a value that is not is empty).
fn all<'h>(headers: &'h HeaderMap, name: &str) -> impl Iterator<Item = &'h str> {
    headers
        .get_all(name)
        .into_iter()
        .map(|v| v.to_str().unwrap_or_default().trim())
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    all(headers, name).next()
}

/// Refuses a head whose framing a proxy in front could read differently
/// than the HTTP library does (RFC 9112 §6.1, §6.3): Transfer-Encoding
/// with Content-Length, in more than one header, or other than a lone
/// `chunked`. (The library itself refuses a Content-Length that is not
/// all digits or is given twice with different values, and
/// Transfer-Encoding in HTTP/1.0.) RFC 9112 §3.2: an HTTP/1.1 request
/// needs exactly one Host header, any request at most one.
pub(crate) fn check_head(parts: &Parts) -> Result<(), Refusal> {
    let headers = &parts.headers;
    let bad = |why: String| Err(refuse(400, format!("bad framing: {why}")));
    let te: Vec<&str> = all(headers, "transfer-encoding").collect();
    if te.len() > 1 {
        return bad("more than one Transfer-Encoding header".into());
    }
    if let Some(first) = te.first() {
        if headers.contains_key("content-length") {
            return bad("both Transfer-Encoding and Content-Length".into());
        }
        if !first.eq_ignore_ascii_case("chunked") {
            return bad(format!(
                "transfer-encoding {first:?}: only a lone \"chunked\" is taken"
            ));
        }
    }
    let hosts = all(headers, "host").count();
    if hosts > 1 || (hosts == 0 && parts.version >= Version::HTTP_11) {
        return Err(refuse(
            400,
            format!("bad request: {hosts} Host headers; HTTP/1.1 needs exactly one"),
        ));
    }
    Ok(())
}

/// What a request head must pass before its body is read.
pub(crate) struct Gate {
    /// SHA-256 of the bearer token, when one is required.
    token_digest: Option<[u8; 32]>,
}

impl Gate {
    pub(crate) fn new(token: Option<&str>) -> Self {
        Gate {
            token_digest: token.map(|t| Sha256::digest(t.as_bytes()).into()),
        }
    }

    /// The body's encoding and whether it is gzipped, or why the request
    /// is refused.
    pub(crate) fn check(&self, parts: &Parts) -> Result<(Encoding, bool), Refusal> {
        let headers = &parts.headers;
        let path = parts.uri.path();
        if path != TRACES_PATH {
            return Err(refuse(
                404,
                format!("no such path {path:?}; OTLP traces go to {TRACES_PATH}"),
            ));
        }
        if parts.method != hyper::Method::POST {
            return Err(refuse(
                405,
                format!("{} is not allowed; POST traces", parts.method),
            ));
        }
        if !self.authorized(header(headers, "authorization")) {
            return Err(refuse(401, "missing or wrong bearer token"));
        }
        // Two Content-Type headers are two claims on one body: a proxy may
        // act on the other one.
        if all(headers, "content-type").nth(1).is_some() {
            return Err(refuse(400, "more than one Content-Type header"));
        }
        let encoding = match media_type(header(headers, "content-type").unwrap_or_default())
            .as_str()
        {
            "application/json" => Encoding::Json,
            "application/x-protobuf" | "application/protobuf" => Encoding::Protobuf,
            other => {
                return Err(refuse(
                    415,
                    format!(
                        "content-type {other:?}: send application/json or application/x-protobuf"
                    ),
                ));
            }
        };
        let gzip = match header(headers, "content-encoding") {
            None | Some("") => false,
            Some(e) if e.eq_ignore_ascii_case("identity") => false,
            Some(e) if e.eq_ignore_ascii_case("gzip") => true,
            Some(e) => {
                return Err(refuse(
                    415,
                    format!("content-encoding {e:?}: send gzip or none"),
                ));
            }
        };
        Ok((encoding, gzip))
    }

    /// Compares digests in constant time, so neither the token's bytes nor
    /// its length can be found by timing.
    fn authorized(&self, header: Option<&str>) -> bool {
        let Some(expected) = &self.token_digest else {
            return true;
        };
        let given = header
            .and_then(|h| h.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map_or("", |(_, token)| token.trim());
        let given: [u8; 32] = Sha256::digest(given.as_bytes()).into();
        given
            .iter()
            .zip(expected)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }
}

fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

/// The body as one line of OTLP JSON (no newline), or `None` when it holds
/// no spans. Gzip is undone first; the result may not exceed `limit` bytes.
pub fn to_line(
    body: &[u8],
    encoding: Encoding,
    gzip: bool,
    limit: usize,
) -> Result<Option<Vec<u8>>, Refusal> {
    let plain;
    let body = if gzip {
        plain = gunzip(body, limit)?;
        &plain[..]
    } else {
        body
    };
    match encoding {
        Encoding::Json => json_line(body),
        Encoding::Protobuf => {
            let mut line = Vec::with_capacity(body.len() * 2);
            let resource_spans = otlp::export_request(body, &mut line)
                .map_err(|e| refuse(400, format!("bad protobuf: {e}")))?;
            if resource_spans == 0 {
                return Ok(None);
            }
            readable(line).map_err(|r| refuse(400, r.message.replace("bad JSON", "bad protobuf")))
        }
    }
}

fn gunzip(body: &[u8], limit: usize) -> Result<Vec<u8>, Refusal> {
    let mut plain = Vec::new();
    // Concatenated members are one gzip stream (RFC 1952 §2.2), as
    // `cat a.gz b.gz` and some exporters write it.
    MultiGzDecoder::new(body)
        .take(limit as u64 + 1)
        .read_to_end(&mut plain)
        .map_err(|e| refuse(400, format!("bad gzip body: {e}")))?;
    if plain.len() > limit {
        return Err(refuse(
            413,
            format!("body is larger than {limit} bytes once unzipped"),
        ));
    }
    Ok(plain)
}

/// A JSON body, checked to be an export request, as one line. Its own
/// text is kept (numbers exactly as sent); line breaks between tokens
/// become spaces (inside strings JSON has none).
fn json_line(body: &[u8]) -> Result<Option<Vec<u8>>, Refusal> {
    let body = body
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(body)
        .trim_ascii();
    // serde would take a struct from an array too; a request is an object.
    if !body.starts_with(b"{") {
        return Err(refuse(400, "bad JSON: an export request is an object"));
    }
    let line: Vec<u8> = body
        .iter()
        .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b })
        .collect();
    match readable(line) {
        // Only a request without spans may lack "resourceSpans".
        Err(_)
            if serde_json::from_slice::<Empty>(body).is_ok_and(|e| e.resource_spans.is_none()) =>
        {
            Ok(None)
        }
        other => other,
    }
}

/// An export request that may hold no `resourceSpans`.
#[derive(serde::Deserialize)]
struct Empty {
    #[serde(rename = "resourceSpans", alias = "resource_spans", default)]
    resource_spans: Option<serde::de::IgnoredAny>,
}

/// `line` when triage-parse will read its spans, checked by the reader
/// triage-parse uses: a 200 must mean the spans will be read, so a body
/// it would skip (a lone surrogate, a number out of range, a key given
/// twice, nesting past its limit) is refused instead.
fn readable(line: Vec<u8>) -> Result<Option<Vec<u8>>, Refusal> {
    match crate::adapters::formats::otlp::check_line(&line) {
        Ok(0) => Ok(None),
        Ok(_) => Ok(Some(line)),
        Err(why) => Err(refuse(400, format!("bad JSON: {why}"))),
    }
}

/// The success answer: an empty ExportTraceServiceResponse in the
/// request's encoding.
pub(crate) fn accepted(encoding: Encoding) -> Response {
    match encoding {
        Encoding::Json => response(200, Encoding::Json, b"{}".to_vec()),
        Encoding::Protobuf => response(200, Encoding::Protobuf, Vec::new()),
    }
}

/// A refusal as a google.rpc.Status in the request's encoding (JSON when
/// it is unknown), with the headers its status calls for.
pub(crate) fn refused(r: &Refusal, encoding: Option<Encoding>) -> Response {
    let code = grpc_code(r.status);
    let encoding = encoding.unwrap_or(Encoding::Json);
    let body = match encoding {
        Encoding::Json => {
            serde_json::to_vec(&serde_json::json!({"code": code, "message": r.message}))
                .unwrap_or_default()
        }
        Encoding::Protobuf => RpcStatus {
            code,
            message: r.message.clone(),
        }
        .encode_to_vec(),
    };
    let mut resp = response(r.status, encoding, body);
    match r.status {
        401 => resp.headers.push(("WWW-Authenticate", "Bearer".into())),
        405 => resp.headers.push(("Allow", "POST".into())),
        429 | 503 => resp.headers.push(("Retry-After", "1".into())),
        _ => {}
    }
    resp
}

fn response(status: u16, encoding: Encoding, body: Vec<u8>) -> Response {
    Response {
        status,
        content_type: match encoding {
            Encoding::Json => "application/json",
            Encoding::Protobuf => "application/x-protobuf",
        },
        headers: Vec::new(),
        body,
    }
}

/// The gRPC status code that goes with an HTTP status.
fn grpc_code(http: u16) -> i32 {
    match http {
        400 => 3,        // INVALID_ARGUMENT
        401 => 16,       // UNAUTHENTICATED
        404 => 5,        // NOT_FOUND
        405 | 415 => 12, // UNIMPLEMENTED
        408 => 4,        // DEADLINE_EXCEEDED
        413 | 431 => 8,  // RESOURCE_EXHAUSTED
        429 | 503 => 14, // UNAVAILABLE
        _ => 13,         // INTERNAL
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn json_keeps_its_text_on_one_line_and_empty_requests_write_nothing() {
        let body = b"{\n  \"resourceSpans\": [{\"scopeSpans\": [{\"spans\": [{\"name\": \"a\\nb\", \"x\": 12345678901234567890}]}]}]\r\n}\n";
        let line = to_line(body, Encoding::Json, false, 1 << 20)
            .unwrap()
            .unwrap();
        assert!(!line.contains(&b'\n'));
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(
            v["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"],
            "a\nb"
        );
        assert!(
            String::from_utf8(line)
                .unwrap()
                .contains("12345678901234567890")
        );
        assert_eq!(to_line(b"{}", Encoding::Json, false, 100).unwrap(), None);
        assert_eq!(to_line(b"", Encoding::Protobuf, false, 100).unwrap(), None);
    }

    #[test]
    fn bad_bodies_are_400_and_zip_bombs_413() {
        for body in [&b"{"[..], b"[]", b"{\"resourceSpans\": 3}", b"\xff"] {
            assert_eq!(
                to_line(body, Encoding::Json, false, 100)
                    .unwrap_err()
                    .status,
                400
            );
        }
        assert_eq!(
            to_line(b"not gzip", Encoding::Json, true, 100)
                .unwrap_err()
                .status,
            400
        );
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        gz.write_all(&vec![b' '; 10_000]).unwrap();
        let bomb = gz.finish().unwrap();
        assert!(bomb.len() < 100);
        assert_eq!(
            to_line(&bomb, Encoding::Json, true, 1000)
                .unwrap_err()
                .status,
            413
        );
    }

    /// A request of one span whose one attribute has `value` (JSON text).
    fn with_value(value: &str) -> Vec<u8> {
        format!(
            r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"01","spanId":"02","name":"s","attributes":[{{"key":"k","value":{value}}}]}}]}}]}}]}}"#
        )
        .into_bytes()
    }

    #[test]
    fn bodies_triage_parse_would_skip_are_refused_not_acknowledged() {
        let nested = format!(
            "{}{{\"stringValue\":\"x\"}}{}",
            r#"{"arrayValue":{"values":["#.repeat(50),
            "]}}".repeat(50)
        );
        for body in [
            with_value(r#"{"stringValue":"\ud800"}"#),
            with_value(r#"{"stringValue":"\udc00x"}"#),
            with_value(r#"{"doubleValue":1e400}"#),
            with_value(r#"{"stringValue":"a","stringValue":"b"}"#),
            with_value(&nested),
        ] {
            let text = String::from_utf8_lossy(&body).into_owned();
            // Acknowledged exactly when triage-parse reads it.
            match to_line(&body, Encoding::Json, false, 1 << 20) {
                Ok(Some(line)) => {
                    assert!(
                        crate::adapters::formats::otlp::check_line(&line).is_ok(),
                        "{text}"
                    )
                }
                Ok(None) => panic!("{text}: no spans?"),
                Err(r) => {
                    assert_eq!(r.status, 400, "{text}");
                    let why = crate::adapters::formats::otlp::check_line(&body).unwrap_err();
                    assert!(
                        r.message.ends_with(&why.to_string()),
                        "{text}: {}",
                        r.message
                    );
                }
            }
        }
        let line = to_line(
            &with_value(r#"{"doubleValue":1e300}"#),
            Encoding::Json,
            false,
            1 << 20,
        );
        assert!(line.unwrap().is_some());
        // Without spans nothing is written, and nothing refused.
        for empty in [
            &b"{}"[..],
            b"{\"resourceSpans\":[]}",
            b"{\"partialSuccess\":{},\"x\":1,\"x\":2}",
        ] {
            assert_eq!(to_line(empty, Encoding::Json, false, 100).unwrap(), None);
        }
    }

    #[test]
    fn the_token_must_match_exactly() {
        let gate = Gate::new(Some("s3cret"));
        assert!(gate.authorized(Some("Bearer s3cret")));
        assert!(gate.authorized(Some("bearer  s3cret ")));
        assert!(!gate.authorized(Some("Bearer s3cre")));
        assert!(!gate.authorized(Some("Basic s3cret")));
        assert!(!gate.authorized(None));
        assert!(Gate::new(None).authorized(None));
    }

    #[test]
    fn refusals_are_status_messages_in_the_request_encoding() {
        let r = refuse(400, "bad");
        let json = refused(&r, Some(Encoding::Json));
        assert_eq!(json.body, br#"{"code":3,"message":"bad"}"#);
        let pb = refused(&r, Some(Encoding::Protobuf));
        assert_eq!(pb.body, b"\x08\x03\x12\x03bad");
        assert_eq!(pb.content_type, "application/x-protobuf");
    }
}
