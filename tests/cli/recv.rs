//! triage-recv on 127.0.0.1 (port 0, the bound address read from its
//! stderr): OTLP JSON and protobuf into triage-parse, refusals that leave
//! it serving, and a load test in which every acknowledged span comes out
//! exactly once, also across a SIGTERM.

use crate::common;

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{of_kind, records};
use serde_json::Value;

/// A running triage-recv.
pub(crate) struct Recv {
    child: Child,
    url: String,
    stderr: Arc<Mutex<String>>,
}

impl Recv {
    pub(crate) fn start(args: &[&str], stdout: Stdio) -> Recv {
        let mut cmd = Command::new(common::bin("triage-recv"));
        cmd.args(["--listen", "127.0.0.1:0"]).args(args);
        Recv::spawn(cmd, stdout)
    }

    /// Starts it under a file-size limit of `kib` KiB (bash's `ulimit -f`).
    fn start_with_file_limit(kib: u32, args: &[&str]) -> Recv {
        let mut cmd = Command::new("bash");
        cmd.arg("-c")
            .arg(format!(
                "ulimit -f {kib}; exec \"$0\" --listen 127.0.0.1:0 \"$@\""
            ))
            .arg(common::bin("triage-recv"))
            .args(args);
        Recv::spawn(cmd, Stdio::null())
    }

    fn spawn(mut cmd: Command, stdout: Stdio) -> Recv {
        let mut child = cmd
            .env_remove("TRIAGE_RECV_TOKEN")
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        // Warnings about the output file come before the listening line.
        let mut before = String::new();
        let url = loop {
            let line = lines
                .next()
                .unwrap_or_else(|| panic!("no listening line after: {before}"))
                .unwrap();
            match line.strip_prefix("triage-recv: listening on ") {
                Some(url) => break url.to_string(),
                None if line.contains("warning") => before.push_str(&(line + "\n")),
                None => panic!("unexpected line: {line}"),
            }
        };
        let stderr = Arc::new(Mutex::new(before));
        let rest = stderr.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                rest.lock().unwrap().push_str(&(line + "\n"));
            }
        });
        Recv { child, url, stderr }
    }

    /// SIGTERM, then the exit code (within a generous bound).
    pub(crate) fn stop(mut self) -> (i32, String) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(50));
                return (
                    status.code().unwrap_or(-1),
                    self.stderr.lock().unwrap().clone(),
                );
            }
            assert!(Instant::now() < deadline, "triage-recv did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for it to exit by itself; its exit code (None: a signal) and
    /// what it said.
    fn wait(mut self) -> (Option<i32>, String) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(50));
                return (status.code(), self.stderr.lock().unwrap().clone());
            }
            assert!(Instant::now() < deadline, "triage-recv did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub(crate) fn addr(&self) -> String {
        self.url
            .trim_start_matches("http://")
            .trim_end_matches("/v1/traces")
            .to_string()
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .new_agent()
}

/// POSTs `body`; returns the status, content type and body of the answer.
fn post(
    agent: &ureq::Agent,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<(u16, String, Vec<u8>), ureq::Error> {
    let mut req = agent.post(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let mut resp = req.send(body)?;
    let ctype = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let mut answer = Vec::new();
    resp.body_mut()
        .as_reader()
        .read_to_end(&mut answer)
        .unwrap();
    Ok((resp.status().as_u16(), ctype, answer))
}

const JSON: (&str, &str) = ("Content-Type", "application/json");
const PROTOBUF: (&str, &str) = ("Content-Type", "application/x-protobuf");
const GZIP: (&str, &str) = ("Content-Encoding", "gzip");

fn gzip(body: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(body).unwrap();
    gz.finish().unwrap()
}

/// A span as the test sends it: ids, agent, run, turn, tool, outcome.
struct Span {
    trace: [u8; 16],
    id: [u8; 8],
    agent: &'static str,
    run: String,
    turn: i64,
    tool: &'static str,
    ok: bool,
}

impl Span {
    fn new(client: usize, request: usize, i: usize) -> Span {
        let mut trace = [0u8; 16];
        trace[..8].copy_from_slice(&(client as u64 + 1).to_be_bytes());
        let id = (((client * 1000 + request) * 100 + i) as u64 + 1).to_be_bytes();
        Span {
            trace,
            id,
            agent: "planner",
            run: format!("run-{client}"),
            turn: i as i64 + 1,
            tool: "search",
            ok: i.is_multiple_of(2),
        }
    }

    fn hex_id(&self) -> String {
        self.id.iter().map(|b| format!("{b:02x}")).collect()
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|b| format!("{b:02x}")).collect()
}

/// An ExportTraceServiceRequest of `spans`, protobuf-encoded by prost
/// from the receiver's own generated OTLP types.
fn protobuf_request(spans: &[Span]) -> Vec<u8> {
    use prost::Message as _;
    use triage::recv::otlp::common::{
        AnyValue, InstrumentationScope, KeyValue, any_value::Value as V,
    };
    use triage::recv::otlp::{ExportTraceServiceRequest, trace};
    let attr = |key: &str, value: V| KeyValue {
        key: key.into(),
        value: Some(AnyValue { value: Some(value) }),
        ..Default::default()
    };
    let spans = spans
        .iter()
        .map(|s| trace::Span {
            trace_id: s.trace.to_vec(),
            span_id: s.id.to_vec(),
            name: s.tool.into(),
            kind: 1,
            start_time_unix_nano: 1_777_000_000_000_000_000 + s.turn as u64,
            end_time_unix_nano: 1_777_000_000_500_000_000 + s.turn as u64,
            attributes: vec![
                attr("agent.id", V::StringValue(s.agent.into())),
                attr("run.id", V::StringValue(s.run.clone())),
                attr("turn", V::IntValue(s.turn)),
                attr("action.tool", V::StringValue(s.tool.into())),
            ],
            status: (!s.ok).then(|| trace::Status {
                code: 2,
                ..Default::default()
            }),
            ..Default::default()
        })
        .collect();
    ExportTraceServiceRequest {
        resource_spans: vec![trace::ResourceSpans {
            scope_spans: vec![trace::ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "test".into(),
                    ..Default::default()
                }),
                spans,
                ..Default::default()
            }],
            ..Default::default()
        }],
    }
    .encode_to_vec()
}

/// The same spans as an OTLP JSON request.
fn json_request(spans: &[Span]) -> Vec<u8> {
    let spans: Vec<Value> = spans
        .iter()
        .map(|s| {
            serde_json::json!({
                "traceId": hex(&s.trace), "spanId": s.hex_id(), "name": s.tool, "kind": 1,
                "startTimeUnixNano": (1_777_000_000_000_000_000u64 + s.turn as u64).to_string(),
                "attributes": [
                    {"key": "agent.id", "value": {"stringValue": s.agent}},
                    {"key": "run.id", "value": {"stringValue": s.run}},
                    {"key": "turn", "value": {"intValue": s.turn.to_string()}},
                    {"key": "action.tool", "value": {"stringValue": s.tool}}
                ],
                "status": {"code": if s.ok { 0 } else { 2 }}
            })
        })
        .collect();
    serde_json::to_vec_pretty(
        &serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}),
    )
    .unwrap()
}

/// Span ids in the receiver's output lines, with how often each appears.
fn span_ids(output: &str) -> HashMap<String, usize> {
    let mut seen = HashMap::new();
    for line in output.lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        for rs in v["resourceSpans"].as_array().unwrap() {
            for ss in rs["scopeSpans"].as_array().unwrap() {
                for span in ss["spans"].as_array().unwrap() {
                    *seen
                        .entry(span["spanId"].as_str().unwrap().to_string())
                        .or_insert(0) += 1;
                }
            }
        }
    }
    seen
}

#[test]
fn recv_into_parse_reads_json_and_protobuf() {
    let mut recv = Recv::start(&[], Stdio::piped());
    let parse = Command::new(common::bin("triage-parse"))
        .stdin(Stdio::from(recv.child.stdout.take().unwrap()))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let agent = agent();

    let shop = std::fs::read_to_string("examples/otlp-shop.jsonl").unwrap();
    let first = shop.lines().next().unwrap();
    let (status, ctype, body) = post(&agent, &recv.url, &[JSON], first.as_bytes()).unwrap();
    assert_eq!(
        (status, ctype.as_str(), &body[..]),
        (200, "application/json", &b"{}"[..])
    );

    let spans: Vec<Span> = (0..3).map(|i| Span::new(7, 0, i)).collect();
    let (status, ctype, body) = post(
        &agent,
        &recv.url,
        &[PROTOBUF, GZIP],
        &gzip(&protobuf_request(&spans)),
    )
    .unwrap();
    assert_eq!((status, ctype.as_str()), (200, "application/x-protobuf"));
    assert!(body.is_empty(), "an empty ExportTraceServiceResponse");

    let (code, err) = recv.stop();
    assert_eq!(code, 0, "{err}");
    let out = parse.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let recs = records(&out.stdout);
    let sources = of_kind(&recs, "source");
    assert_eq!(sources.len(), 1);
    assert_eq!(sources[0]["format"], "otlp");
    assert_eq!(sources[0]["skipped"], 0);

    let events = of_kind(&recs, "event");
    let from_json = first.matches("\"spanId\"").count();
    assert_eq!(events.len(), from_json + 3);
    let pb: Vec<&&Value> = events.iter().filter(|e| e["run_id"] == "run-7").collect();
    assert_eq!(pb.len(), 3);
    for (e, s) in pb.iter().zip(&spans) {
        assert_eq!(e["agent_id"], "planner");
        assert_eq!(e["action_taken"]["tool_name"], "search");
        assert_eq!(e["turn"], s.turn);
        assert_eq!(e["span_id"], s.hex_id().as_str());
        assert_eq!(e["action_succeeded"], s.ok);
    }
    assert!(events.iter().any(|e| e["run_id"] == "conv-shop-001"));
}

#[test]
fn refused_requests_leave_it_serving() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("spans.jsonl");
    let recv = Recv::start(
        &[
            "--token",
            "tok3n",
            "--max-body",
            "2K",
            "--output",
            output.to_str().unwrap(),
        ],
        Stdio::null(),
    );
    let agent = agent();
    let auth = ("Authorization", "Bearer tok3n");
    let good = json_request(&[Span::new(1, 0, 0)]);
    let status =
        |headers: &[(&str, &str)], body: &[u8]| post(&agent, &recv.url, headers, body).unwrap().0;

    assert_eq!(status(&[JSON], &good), 401);
    assert_eq!(
        status(&[JSON, ("Authorization", "Bearer tok3")], &good),
        401
    );
    assert_eq!(status(&[("Content-Type", "text/plain"), auth], &good), 415);
    assert_eq!(
        status(&[JSON, auth, ("Content-Encoding", "br")], &good),
        415
    );
    assert_eq!(status(&[JSON, auth], b"{\"resourceSpans\": [,]}"), 400);
    let (code, ctype, body) = post(&agent, &recv.url, &[PROTOBUF, auth], b"\x0a\xff\xff").unwrap();
    assert_eq!((code, ctype.as_str()), (400, "application/x-protobuf"));
    assert_eq!(
        &body[..2],
        b"\x08\x03",
        "a Status with code INVALID_ARGUMENT"
    );
    assert_eq!(status(&[JSON, auth], &vec![b' '; 3000]), 413);
    assert_eq!(
        status(&[JSON, auth, GZIP], &gzip(&vec![b' '; 100_000])),
        413
    );
    let wrong_path = recv.url.replace("/v1/traces", "/v1/logs");
    assert_eq!(
        post(&agent, &wrong_path, &[JSON, auth], &good).unwrap().0,
        404
    );
    assert_eq!(agent.get(&recv.url).call().unwrap().status().as_u16(), 405);

    // Garbage on a raw connection gets a 400 and a closed connection.
    let mut raw = TcpStream::connect(recv.addr()).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    raw.write_all(b"\x16\x03\x01 not http at all\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    raw.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");

    // Still serving.
    assert_eq!(status(&[JSON, auth], &good), 200);
    let (code, err) = recv.stop();
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("refused (401)"), "{err}");
    let written = std::fs::read_to_string(&output).unwrap();
    assert_eq!(
        written.lines().count(),
        1,
        "only the accepted request: {written}"
    );
    assert_eq!(span_ids(&written).len(), 1);
}

const CLIENTS: usize = 8;
const REQUESTS: usize = 25;
const SPANS: usize = 4;

#[test]
fn every_acknowledged_span_comes_out_exactly_once_across_a_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("spans.jsonl");
    // Few workers and a short queue, so some clients are told 503 and retry.
    let recv = Recv::start(
        &[
            "--workers",
            "3",
            "--queue",
            "2",
            "--output",
            output.to_str().unwrap(),
        ],
        Stdio::null(),
    );
    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    let acked_count = Arc::new(AtomicUsize::new(0));
    let stopping = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (url, acked, acked_count, stopping) = (
                recv.url.clone(),
                acked.clone(),
                acked_count.clone(),
                stopping.clone(),
            );
            std::thread::spawn(move || {
                let agent = agent();
                'requests: for r in 0..REQUESTS {
                    let spans: Vec<Span> = (0..SPANS).map(|i| Span::new(c, r, i)).collect();
                    let (headers, body) = match (r % 2, r % 3) {
                        (0, 0) => (vec![JSON, GZIP], gzip(&json_request(&spans))),
                        (0, _) => (vec![JSON], json_request(&spans)),
                        (_, 0) => (vec![PROTOBUF, GZIP], gzip(&protobuf_request(&spans))),
                        _ => (vec![PROTOBUF], protobuf_request(&spans)),
                    };
                    for _attempt in 0..500 {
                        match post(&agent, &url, &headers, &body) {
                            Ok((200, _, _)) => {
                                acked.lock().unwrap().extend(spans.iter().map(Span::hex_id));
                                acked_count.fetch_add(SPANS, Ordering::SeqCst);
                                continue 'requests;
                            }
                            Ok((503, _, _)) | Err(_) if !stopping.load(Ordering::SeqCst) => {
                                std::thread::sleep(Duration::from_millis(5));
                            }
                            Ok((status, _, answer)) if status != 503 => {
                                panic!("status {status}: {}", String::from_utf8_lossy(&answer))
                            }
                            _ => return,
                        }
                    }
                    panic!("request {r} of client {c} was never taken");
                }
            })
        })
        .collect();

    // Stop once half the spans are acknowledged, while clients still send.
    let half = CLIENTS * REQUESTS * SPANS / 2;
    let deadline = Instant::now() + Duration::from_secs(60);
    while acked_count.load(Ordering::SeqCst) < half {
        assert!(
            Instant::now() < deadline,
            "the receiver took too few requests"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    stopping.store(true, Ordering::SeqCst);
    let (code, err) = recv.stop();
    for c in clients {
        c.join().unwrap();
    }
    assert_eq!(code, 0, "{err}");

    let acked: HashSet<String> = acked.lock().unwrap().iter().cloned().collect();
    assert!(acked.len() >= half);
    let written = span_ids(&std::fs::read_to_string(&output).unwrap());
    let twice: Vec<_> = written.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "written more than once: {twice:?}");
    let lost: Vec<_> = acked
        .iter()
        .filter(|id| !written.contains_key(*id))
        .collect();
    assert!(lost.is_empty(), "acknowledged but not written: {lost:?}");
    let unacked: Vec<_> = written.keys().filter(|id| !acked.contains(*id)).collect();
    assert!(
        unacked.is_empty(),
        "written but never acknowledged: {unacked:?}"
    );
}

#[test]
fn an_idle_keep_alive_connection_gives_its_worker_to_a_waiting_one() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("spans.jsonl");
    let recv = Recv::start(
        &["--workers", "1", "--output", output.to_str().unwrap()],
        Stdio::null(),
    );
    // The first exporter keeps its connection open (ureq pools it) and
    // sends nothing more: it holds the only worker.
    let first = agent();
    let ok = post(
        &first,
        &recv.url,
        &[JSON],
        &json_request(&[Span::new(1, 0, 0)]),
    )
    .unwrap();
    assert_eq!(ok.0, 200);
    // The second would wait out the 30 s idle timeout, past its own 10 s.
    let started = Instant::now();
    let second = post(
        &agent(),
        &recv.url,
        &[JSON],
        &json_request(&[Span::new(2, 0, 0)]),
    )
    .expect("the second exporter is served while the first idles");
    assert_eq!(second.0, 200);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "served after {:?}",
        started.elapsed()
    );
    // The first reconnects when it has more to send.
    let again = post(
        &first,
        &recv.url,
        &[JSON],
        &json_request(&[Span::new(1, 1, 0)]),
    )
    .unwrap();
    assert_eq!(again.0, 200);
    let (code, err) = recv.stop();
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        span_ids(&std::fs::read_to_string(&output).unwrap()).len(),
        3
    );
}

#[test]
fn listening_beyond_loopback_without_a_token_warns() {
    let mut child = Command::new(common::bin("triage-recv"))
        .args(["--listen", ":0"])
        .env_remove("TRIAGE_RECV_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let second = lines.next().unwrap().unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        first.starts_with("triage-recv: listening on http://0.0.0.0:"),
        "{first}"
    );
    assert!(
        second.contains("warning:") && second.contains("no --token"),
        "{second}"
    );
}

/// Sends `bytes` on a new connection and reads until the receiver closes.
fn raw_exchange(addr: &str, bytes: &[u8]) -> String {
    let mut raw = TcpStream::connect(addr).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    raw.write_all(bytes).unwrap();
    let mut answer = Vec::new();
    let _ = raw.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

#[test]
fn a_request_smuggled_behind_ambiguous_framing_is_never_served() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("spans.jsonl");
    let recv = Recv::start(&["-o", output.to_str().unwrap()], Stdio::null());
    let body = json_request(&[Span::new(0, 0, 0)]);
    let smuggled = format!(
        "POST /v1/traces HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{}",
        body.len(),
        String::from_utf8_lossy(&body)
    );
    let chunked_empty = "0\r\n\r\n";
    let start = "POST /v1/traces HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n";
    for framing in [
        format!(
            "Content-Length: {}\r\nTransfer-Encoding: chunked\r\n\r\n{chunked_empty}",
            chunked_empty.len()
        ),
        format!("Transfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n{chunked_empty}"),
        format!("Transfer-Encoding: identity, chunked\r\n\r\n{chunked_empty}"),
        format!("Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n{chunked_empty}"),
        "Content-Length: +0\r\n\r\n".to_string(),
        "Content-Length: 0\n\r\n".to_string(),
    ] {
        let answer = raw_exchange(
            &recv.addr(),
            format!("{start}{framing}{smuggled}").as_bytes(),
        );
        assert!(answer.starts_with("HTTP/1.1 400 "), "{framing:?}: {answer}");
        assert!(
            answer.contains("Connection: close"),
            "{framing:?}: {answer}"
        );
        assert_eq!(
            answer.matches("HTTP/1.1 ").count(),
            1,
            "{framing:?}: {answer}"
        );
    }
    // A plain request on its own connection is still served.
    let answer = raw_exchange(
        &recv.addr(),
        smuggled
            .replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n")
            .as_bytes(),
    );
    assert!(answer.starts_with("HTTP/1.1 200 "), "{answer}");
    let (code, err) = recv.stop();
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&output).unwrap().lines().count(), 1);
}

#[test]
fn slow_clients_hold_no_worker_and_honest_exporters_get_through() {
    let recv = Recv::start(&["--token", "tok"], Stdio::null());
    let stop = Arc::new(AtomicBool::new(false));
    // More slow connections than workers and queue together, each
    // sending a byte at a time, one of them with the token.
    let slow: Vec<_> = (0..100)
        .map(|i| {
            let addr = recv.addr();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut s = TcpStream::connect(addr).unwrap();
                let head = format!(
                    "POST /v1/traces HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer tok\r\nContent-Type: application/json\r\nX-Slow: {i}{}",
                    "-".repeat(200)
                );
                for b in head.bytes() {
                    if stop.load(Ordering::SeqCst) || s.write_all(&[b]).is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(300));
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    let agent = agent();
    let body = json_request(&[Span::new(1, 0, 0)]);
    let auth = ("Authorization", "Bearer tok");
    for _ in 0..20 {
        let started = Instant::now();
        let (status, _, _) = post(&agent, &recv.url, &[JSON, auth], &body).unwrap();
        assert_eq!(status, 200);
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        // A client without the token is told so at once, slow ones or not.
        assert_eq!(post(&agent, &recv.url, &[JSON], &body).unwrap().0, 401);
        std::thread::sleep(Duration::from_millis(100));
    }
    stop.store(true, Ordering::SeqCst);
    for t in slow {
        t.join().unwrap();
    }
    let (code, err) = recv.stop();
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("503"), "{err}");
}

/// A span whose id is `n`, alone among the soak test's spans.
fn numbered_span(n: u64) -> Span {
    let mut trace = [0u8; 16];
    trace[..8].copy_from_slice(&(n / 64 + 1).to_be_bytes());
    Span {
        trace,
        id: n.to_be_bytes(),
        agent: "planner",
        run: format!("soak-{}", n / 64),
        turn: (n % 64) as i64 + 1,
        tool: "search",
        ok: !n.is_multiple_of(3),
    }
}

/// Request headers and a body.
type Request = (Vec<(&'static str, &'static str)>, Vec<u8>);

/// Requests triage-parse may not read: each either refused, or, if
/// taken, read back like any other.
fn hostile_bodies(span: &Span) -> Vec<Request> {
    let request: Value = serde_json::from_slice(&json_request(std::slice::from_ref(span))).unwrap();
    let good = request.to_string();
    let planner = r#"{"stringValue":"planner"}"#;
    assert!(good.contains(planner));
    let nested = format!(
        "{}{planner}{}",
        r#"{"arrayValue":{"values":["#.repeat(150),
        "]}}".repeat(150)
    );
    let mut bodies: Vec<Request> = [
        r#"{"stringValue": "planner\ud800"}"#,
        r#"{"stringValue": "\udfffplanner"}"#,
        r#"{"doubleValue": 1e400}"#,
        r#"{"stringValue": "planner", "stringValue": "x"}"#,
        &nested,
    ]
    .iter()
    .map(|v| (vec![JSON], good.replace(planner, v).into_bytes()))
    .collect();
    bodies.push((vec![JSON], good.as_bytes()[..good.len() / 2].to_vec()));
    bodies.push((vec![JSON, GZIP], good.clone().into_bytes()));
    bodies.push((
        vec![PROTOBUF],
        protobuf_request(std::slice::from_ref(span))[..20].to_vec(),
    ));
    bodies
}

#[test]
fn soak_every_acknowledged_span_is_read_back_once_by_parse() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("spans.jsonl");
    let recv = Recv::start(
        &[
            "--workers",
            "3",
            "--queue",
            "4",
            "--output",
            output.to_str().unwrap(),
        ],
        Stdio::null(),
    );
    let next_id = Arc::new(AtomicUsize::new(1));
    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    let stopping = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    // Honest exporters, retrying 503 and dropped connections.
    for c in 0..6 {
        let (url, next_id, acked, stopping) = (
            recv.url.clone(),
            next_id.clone(),
            acked.clone(),
            stopping.clone(),
        );
        threads.push(std::thread::spawn(move || {
            let agent = agent();
            let mut r = 0;
            while !stopping.load(Ordering::SeqCst) {
                r += 1;
                let spans: Vec<Span> = (0..3)
                    .map(|_| numbered_span(next_id.fetch_add(1, Ordering::SeqCst) as u64))
                    .collect();
                let (headers, body) = match (r + c) % 3 {
                    0 => (vec![JSON, GZIP], gzip(&json_request(&spans))),
                    1 => (vec![JSON], json_request(&spans)),
                    _ => (vec![PROTOBUF], protobuf_request(&spans)),
                };
                // Exporters batch: a request every 10 ms or so.
                std::thread::sleep(Duration::from_millis(10));
                while !stopping.load(Ordering::SeqCst) {
                    match post(&agent, &url, &headers, &body) {
                        Ok((200, _, _)) => {
                            acked.lock().unwrap().extend(spans.iter().map(Span::hex_id));
                            break;
                        }
                        Ok((503, _, _)) | Err(_) => std::thread::sleep(Duration::from_millis(5)),
                        Ok((status, _, answer)) => {
                            panic!("status {status}: {}", String::from_utf8_lossy(&answer))
                        }
                    }
                }
            }
        }));
    }
    // Hostile bodies, and requests smuggled behind ambiguous framing.
    for _ in 0..2 {
        let (url, addr, next_id, acked, stopping) = (
            recv.url.clone(),
            recv.addr(),
            next_id.clone(),
            acked.clone(),
            stopping.clone(),
        );
        threads.push(std::thread::spawn(move || {
            let agent = agent();
            while !stopping.load(Ordering::SeqCst) {
                let span = numbered_span(next_id.fetch_add(1, Ordering::SeqCst) as u64);
                for (headers, body) in hostile_bodies(&span) {
                    if let Ok((200, _, _)) = post(&agent, &url, &headers, &body) {
                        acked.lock().unwrap().push(span.hex_id());
                    }
                }
                let inner = json_request(&[numbered_span(
                    next_id.fetch_add(1, Ordering::SeqCst) as u64,
                )]);
                let smuggle = format!(
                    "POST /v1/traces HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nPOST /v1/traces HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{}",
                    inner.len(),
                    String::from_utf8_lossy(&inner)
                );
                if let Ok(mut s) = TcpStream::connect(&addr) {
                    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                    let _ = s.write_all(smuggle.as_bytes());
                    let _ = s.read_to_end(&mut Vec::new());
                }
            }
        }));
    }
    // Slow clients, a byte every 200 ms, reconnecting when cut off.
    for i in 0..40 {
        let (addr, stopping) = (recv.addr(), stopping.clone());
        threads.push(std::thread::spawn(move || {
            let head = format!(
                "POST /v1/traces HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nX-Slow: {i}{}\r\n",
                "-".repeat(100)
            );
            'connect: while !stopping.load(Ordering::SeqCst) {
                let Ok(mut s) = TcpStream::connect(&addr) else {
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                };
                for b in head.bytes() {
                    if stopping.load(Ordering::SeqCst) || s.write_all(&[b]).is_err() {
                        continue 'connect;
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        }));
    }
    std::thread::sleep(Duration::from_secs(6));
    let acked_before_stop = acked.lock().unwrap().len();
    stopping.store(true, Ordering::SeqCst);
    let (code, err) = recv.stop();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(code, 0, "{err}");
    assert!(
        acked_before_stop > 100,
        "only {acked_before_stop} spans taken in 6 s"
    );

    let out = Command::new(common::bin("triage-parse"))
        .args(["-f", "otlp"])
        .arg(&output)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("skipped"), "{stderr}");
    let recs = records(&out.stdout);
    let mut read_back: HashMap<String, usize> = HashMap::new();
    for e in of_kind(&recs, "event") {
        *read_back
            .entry(e["span_id"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    let acked: Vec<String> = acked.lock().unwrap().clone();
    let acked_set: HashSet<&String> = acked.iter().collect();
    assert_eq!(acked_set.len(), acked.len(), "a span acknowledged twice");
    let lost: Vec<_> = acked
        .iter()
        .filter(|id| read_back.get(*id) != Some(&1))
        .collect();
    assert!(
        lost.is_empty(),
        "acknowledged but not read back once: {lost:?}"
    );
    let unacked: Vec<_> = read_back
        .keys()
        .filter(|id| !acked_set.contains(id))
        .collect();
    assert!(
        unacked.is_empty(),
        "read back but never acknowledged: {unacked:?}"
    );
}

/// Posts `n` requests of one span each (numbered from `from`) until one is
/// not acknowledged; returns the span numbers acknowledged.
fn post_until_refused(r: &Recv, from: u64, n: u64) -> Vec<u64> {
    let agent = agent();
    let mut acked = Vec::new();
    for k in from..from + n {
        match post(&agent, &r.url, &[JSON], &json_request(&[numbered_span(k)])) {
            Ok((200, _, _)) => acked.push(k),
            _ => break,
        }
    }
    acked
}

/// Every line of `path` reads as JSON and ends in a newline; the spans in
/// it, by name.
fn whole_lines(path: &std::path::Path) -> HashMap<String, usize> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.is_empty() || text.ends_with('\n'), "a torn last line");
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: a torn line"));
    }
    span_ids(&text)
}

/// A file-size limit (SIGXFSZ) stops the receiver with a message, not a
/// silent kill; the file holds every acknowledged span and no torn line,
/// and a restart appends whole lines after them.
#[test]
fn a_file_size_limit_stops_the_receiver_with_a_message_and_leaves_no_torn_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("spans.jsonl");
    let o = out.to_str().unwrap();
    let r = Recv::start_with_file_limit(8, &["-o", o]);
    let acked = post_until_refused(&r, 0, 200);
    assert!(!acked.is_empty() && acked.len() < 200, "{}", acked.len());
    let (code, err) = r.wait();
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("file too large"), "{err}");
    let seen = whole_lines(&out);
    assert_eq!(seen.len(), acked.len(), "{seen:?}");
    let r = Recv::start(&["-o", o], Stdio::null());
    assert_eq!(post_until_refused(&r, 1000, 3).len(), 3);
    let (code, err) = r.stop();
    assert_eq!(code, 0, "{err}");
    assert_eq!(whole_lines(&out).len(), acked.len() + 3);
}

/// An output file left ending in part of a line (a disk that filled, a
/// kill in the middle of a write) is cut back to its last whole line on
/// start, with a warning: the next acknowledged line is readable.
#[test]
fn an_output_ending_in_a_torn_line_is_cut_back_on_start() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("spans.jsonl");
    let whole = String::from_utf8(json_request(&[numbered_span(1)]))
        .unwrap()
        .replace('\n', "");
    std::fs::write(&out, format!("{whole}\n{}", &whole[..40])).unwrap();
    let r = Recv::start(&["-o", out.to_str().unwrap()], Stdio::null());
    assert_eq!(post_until_refused(&r, 2, 1), vec![2]);
    let (code, err) = r.stop();
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("the last 40 bytes were not a complete line"),
        "{err}"
    );
    assert_eq!(whole_lines(&out).len(), 2);
}

/// A full disk (a small tmpfs, where this test may mount one): the write
/// that fails leaves no torn line and stops the receiver with a message;
/// after space is freed a restart appends whole lines.
#[test]
fn a_full_disk_leaves_no_torn_line() {
    let dir = tempfile::tempdir().unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(dir.path())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        // No tmpfs can be mounted here (not root): the file-size limit test
        // covers the same torn write.
        return;
    }
    struct Unmount<'p>(&'p std::path::Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(dir.path());
    let out = dir.path().join("spans.jsonl");
    let o = out.to_str().unwrap();
    let r = Recv::start(&["-o", o], Stdio::null());
    let acked = post_until_refused(&r, 0, 500);
    assert!(!acked.is_empty() && acked.len() < 500, "{}", acked.len());
    let (code, err) = r.wait();
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("no space left"), "{err}");
    assert_eq!(whole_lines(&out).len(), acked.len());
    // Room again: the restart appends whole lines.
    let text = std::fs::read_to_string(&out).unwrap();
    let keep: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
    std::fs::write(&out, keep).unwrap();
    let r = Recv::start(&["-o", o], Stdio::null());
    assert_eq!(post_until_refused(&r, 1000, 2).len(), 2);
    let (code, err) = r.stop();
    assert_eq!(code, 0, "{err}");
    assert_eq!(whole_lines(&out).len(), 4);
}

/// RFC 9112's Host rule, one Content-Type, and a gzip body of several
/// members (as `cat a.gz b.gz` makes): each answered as the RFCs say.
#[test]
fn host_content_type_and_gzip_members_follow_the_rfcs() {
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("spans.jsonl");
    let recv = Recv::start(&["-o", output.to_str().unwrap()], Stdio::null());
    let body = String::from_utf8(json_request(&[numbered_span(1)])).unwrap();
    let request = |version: &str, headers: &str| {
        format!(
            "POST /v1/traces HTTP/{version}\r\n{headers}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    for (headers, version, status) in [
        ("", "1.1", "400"),
        ("Host: a\r\nHost: b\r\n", "1.1", "400"),
        ("Host: a\r\nContent-Type: text/plain\r\n", "1.1", "400"),
        ("", "1.0", "200"),
        ("Host: a\r\n", "1.1", "200"),
    ] {
        let answer = raw_exchange(&recv.addr(), request(version, headers).as_bytes());
        // An HTTP/1.0 client is answered in its own version.
        assert!(
            answer.starts_with(&format!("HTTP/{version} {status} ")),
            "{headers:?} {version}: {answer}"
        );
    }
    // One body compressed as two gzip members (a writer that flushed a
    // member half way): read whole.
    let plain = json_request(&[numbered_span(2), numbered_span(3)]);
    let (a, b) = plain.split_at(plain.len() / 2);
    let two = [gzip(a), gzip(b)].concat();
    let lines_before = std::fs::read_to_string(&output).unwrap().lines().count();
    let (status, _, _) = post(&agent(), &recv.url, &[JSON, GZIP], &two).unwrap();
    assert_eq!(status, 200);
    let (code, err) = recv.stop();
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&output).unwrap();
    assert_eq!(text.lines().count(), lines_before + 1);
    let last = text.lines().last().unwrap();
    let ids = span_ids(last);
    assert_eq!(ids.len(), 2, "{last}");
}

/// Connections that declare the largest body and trickle it (5, 50 and
/// 500 of them) reserve only the bytes that came, and are cut off once
/// they fall under the minimum data rate: an honest exporter keeps getting
/// 200 all along, on a receiver without a token.
#[test]
fn trickling_bodies_do_not_exhaust_the_budget() {
    for n in [5usize, 50, 500] {
        let recv = Recv::start(&["--max-connections", "2048"], Stdio::null());
        // Four of the largest bodies and one of half: together the whole
        // memory bound, were declared lengths reserved.
        let mut slow: Vec<TcpStream> = (0..n)
            .map(|i| {
                let mut s = TcpStream::connect(recv.addr()).unwrap();
                let length = if i == 4 { 8 << 20 } else { 16 << 20 };
                s.write_all(
                    format!("POST /v1/traces HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n{{").as_bytes(),
                )
                .unwrap();
                s
            })
            .collect();
        let agent = agent();
        let body = json_request(&[Span::new(1, 0, 0)]);
        let until = Instant::now() + Duration::from_secs(7);
        let mut answered = 0;
        while Instant::now() < until {
            // A byte a connection, now and then, while they last.
            slow.retain_mut(|s| s.write_all(b" ").is_ok());
            let (status, _, answer) = post(&agent, &recv.url, &[JSON], &body).unwrap();
            assert_eq!(
                status,
                200,
                "{n} trickling: {}",
                String::from_utf8_lossy(&answer)
            );
            answered += 1;
            std::thread::sleep(Duration::from_millis(250));
        }
        assert!(answered > 10, "{answered}");
        drop(slow);
        let (code, err) = recv.stop();
        assert_eq!(code, 0, "{err}");
        // Past the grace, the trickling ones were cut for their rate.
        assert!(err.contains("slower than"), "{n}: {err}");
    }
}

/// `make soak`: 32 exporters send JSON, protobuf and gzip for
/// TRIAGE_SOAK_SECONDS (10 by default, as `make test` runs it) while the
/// receiver is stopped by SIGTERM, SIGINT and SIGKILL in turn and started
/// again on the same output. Exporters retry what was not acknowledged.
/// Read back by triage-parse, every acknowledged span is there exactly
/// once, and nothing is there that nobody sent.
#[test]
fn soak_32_clients_across_restarts_and_signals() {
    let seconds: u64 = std::env::var("TRIAGE_SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("spans.jsonl");
    let o = output.to_str().unwrap().to_string();
    let start = || Recv::start(&["--output", &o], Stdio::null());
    let mut recv = start();
    let url = Arc::new(Mutex::new(recv.url.clone()));
    let next_id = Arc::new(AtomicUsize::new(1));
    let acked = Arc::new(Mutex::new(Vec::<String>::new()));
    let sent = Arc::new(Mutex::new(HashSet::<String>::new()));
    let stopping = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..32)
        .map(|c| {
            let (url, next_id, acked, sent, stopping) = (
                url.clone(),
                next_id.clone(),
                acked.clone(),
                sent.clone(),
                stopping.clone(),
            );
            std::thread::spawn(move || {
                let agent = agent();
                let mut r = c;
                while !stopping.load(Ordering::SeqCst) {
                    r += 1;
                    let spans: Vec<Span> = (0..3)
                        .map(|_| numbered_span(next_id.fetch_add(1, Ordering::SeqCst) as u64))
                        .collect();
                    sent.lock().unwrap().extend(spans.iter().map(Span::hex_id));
                    let (headers, body) = match r % 3 {
                        0 => (vec![JSON, GZIP], gzip(&json_request(&spans))),
                        1 => (vec![JSON], json_request(&spans)),
                        _ => (vec![PROTOBUF], protobuf_request(&spans)),
                    };
                    // Retried until acknowledged, even once stopping: an
                    // exporter does not drop what it holds.
                    let give_up = Instant::now() + Duration::from_secs(60);
                    loop {
                        assert!(Instant::now() < give_up, "never acknowledged");
                        let to = url.lock().unwrap().clone();
                        match post(&agent, &to, &headers, &body) {
                            Ok((200, _, _)) => {
                                acked.lock().unwrap().extend(spans.iter().map(Span::hex_id));
                                break;
                            }
                            Ok((503 | 408, _, _)) | Err(_) => {
                                std::thread::sleep(Duration::from_millis(20));
                            }
                            Ok((status, _, answer)) => {
                                panic!("status {status}: {}", String::from_utf8_lossy(&answer))
                            }
                        }
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            })
        })
        .collect();
    let until = Instant::now() + Duration::from_secs(seconds);
    let mut round = 0;
    while Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1500));
        let signal = ["-TERM", "-INT", "-KILL"][round % 3];
        round += 1;
        let pid = recv.child.id().to_string();
        assert!(
            Command::new("kill")
                .args([signal, &pid])
                .status()
                .unwrap()
                .success()
        );
        let (code, err) = recv.wait();
        if signal != "-KILL" {
            assert_eq!(code, Some(0), "{signal}: {err}");
        }
        recv = start();
        *url.lock().unwrap() = recv.url.clone();
    }
    std::thread::sleep(Duration::from_millis(500));
    stopping.store(true, Ordering::SeqCst);
    for c in clients {
        c.join().unwrap();
    }
    let (code, err) = recv.stop();
    assert_eq!(code, 0, "{err}");
    assert!(round >= 3, "only {round} restarts");

    let out = Command::new(common::bin("triage-parse"))
        .args(["-f", "otlp"])
        .arg(&output)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("skipped"), "a torn or bad line: {stderr}");
    let mut read_back: HashMap<String, usize> = HashMap::new();
    for e in of_kind(&records(&out.stdout), "event") {
        *read_back
            .entry(e["span_id"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    let acked = acked.lock().unwrap().clone();
    assert!(acked.len() > 300, "only {} spans acknowledged", acked.len());
    let lost: Vec<_> = acked
        .iter()
        .filter(|id| read_back.get(*id) != Some(&1))
        .collect();
    assert!(
        lost.is_empty(),
        "acknowledged but not read back once: {lost:?}"
    );
    let sent = sent.lock().unwrap();
    let stray: Vec<_> = read_back.keys().filter(|id| !sent.contains(*id)).collect();
    assert!(stray.is_empty(), "read back but never sent: {stray:?}");
}

/// A client that goes on sending a body the receiver refused (too large,
/// here 16 MiB over a 1 MiB bound) reads the refusal, not a reset.
#[test]
fn a_client_still_sending_a_refused_body_reads_the_refusal() {
    let recv = Recv::start(&["--max-body", "1M"], Stdio::null());
    let mut s = TcpStream::connect(recv.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let len = 16 << 20;
    s.write_all(
        format!("POST /v1/traces HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: {len}\r\n\r\n")
            .as_bytes(),
    )
    .unwrap();
    // The whole body goes out without a reset...
    let chunk = vec![b' '; 1 << 20];
    for k in 0..16 {
        if let Err(e) = s.write_all(&chunk) {
            panic!("reset after {k} MiB: {e}");
        }
    }
    // ...and the answer is there to read.
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413 "), "{answer:?}");
    let (code, err) = recv.stop();
    assert_eq!(code, 0, "{err}");
}
