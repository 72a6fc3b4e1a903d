//! A seeded byte-mutation fuzzer over a running triage-recv (on a loopback
//! socket) and its body decoding (`recv::export::to_line`). Mutants of
//! well-formed and hostile requests must never crash or hang it, every
//! answer must be an HTTP/1.1 response, no more answers than requests
//! may come back, and every line it writes (and every body it would
//! acknowledge) must be one triage-parse reads. A short run is part of `cargo test`;
//! the ignored long run (`make fuzz`) lasts TRIAGE_FUZZ_SECONDS (60);
//! TRIAGE_FUZZ_SEED picks another sequence. Inputs that ever failed are
//! kept in REGRESSIONS and replayed first.

// Prints the seed and the mutant that failed.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::process::Stdio;
use std::time::{Duration, Instant};

use triage::adapters::formats::otlp::check_line;
use triage::recv::export::{Encoding, to_line};

use crate::recv::Recv;

/// The body limit the reader is held to.
const LIMIT: usize = 4096;

/// Inputs that once broke an invariant; each must hold now.
const REGRESSIONS: &[&[u8]] = &[
    b"POST /v1/traces HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nPOST /v1/traces HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}",
    b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +3\r\n\r\nabc",
    b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: identity, chunked\r\n\r\n0\r\n\r\n",
    b"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n",
    b"POST / HTTP/1.1\nContent-Length: 0\n\n",
];

/// Well-formed and hostile requests the mutants start from.
fn seeds() -> Vec<Vec<u8>> {
    let json = br#"{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102","spanId":"03","name":"search","attributes":[{"key":"agent.id","value":{"stringValue":"planner"}}]}]}]}]}"#;
    let mut seeds: Vec<Vec<u8>> = vec![
        [
            format!(
                "POST /v1/traces HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                json.len()
            )
            .as_bytes(),
            json,
        ]
        .concat(),
        [
            &b"POST /v1/traces HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"[..],
            format!("{:x};ext=1\r\n", json.len()).as_bytes(),
            json,
            b"\r\n0\r\nTrailer: x\r\n\r\n",
        ]
        .concat(),
        b"POST /v1/traces HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcPOST /v1/traces HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nxGET / HTTP/1.1\r\nHost: h\r\n\r\n".to_vec(),
        b"POST /v1/traces HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\nbody".to_vec(),
        b"POST /v1/traces?x=1#f HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer t\r\nContent-Encoding: gzip\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n".to_vec(),
    ];
    seeds.extend(REGRESSIONS.iter().map(|r| r.to_vec()));
    seeds
}

/// xorshift64*: small, seeded, the same sequence everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Bytes and pieces that matter to HTTP framing.
const TOKENS: &[&[u8]] = &[
    b"\r\n",
    b"\n",
    b"\r",
    b"\r\n\r\n",
    b"Transfer-Encoding: chunked\r\n",
    b"Transfer-Encoding: gzip, chunked\r\n",
    b"Content-Length: 5\r\n",
    b"Content-Length: +5\r\n",
    b"Content-Length: 99999999999999999999\r\n",
    b"0\r\n\r\n",
    b"ffffffffffffffff\r\n",
    b"Expect: 100-continue\r\n",
    b"Connection: close\r\n",
    b" HTTP/1.0",
    b":",
    b";",
    b",",
    b" ",
    b"\t",
    b"\0",
    b"\xff",
];

/// One to four random edits of `input`.
fn mutate(input: &[u8], seeds: &[Vec<u8>], rng: &mut Rng) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(out.len() + 1);
        match rng.below(7) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] ^= 1 << rng.below(8);
            }
            1 if !out.is_empty() => {
                let i = rng.below(out.len());
                out[i] = rng.next() as u8;
            }
            2 => {
                let token = TOKENS[rng.below(TOKENS.len())];
                out.splice(at..at, token.iter().copied());
            }
            3 if !out.is_empty() => {
                let end = (at + 1 + rng.below(16)).min(out.len());
                out.drain(at.min(end)..end);
            }
            4 if !out.is_empty() => {
                let start = rng.below(out.len());
                let end = (start + 1 + rng.below(32)).min(out.len());
                let piece = out[start..end].to_vec();
                out.splice(at..at, piece);
            }
            5 => {
                let other = &seeds[rng.below(seeds.len())];
                let start = rng.below(other.len());
                let end = (start + 1 + rng.below(64)).min(other.len());
                out.splice(at..at, other[start..end].iter().copied());
            }
            _ => {
                let digit = b"0123456789abcdefABCDEF+-"[rng.below(24)];
                out.insert(at, digit);
            }
        }
    }
    out.truncate(64 * 1024);
    out
}

/// Sends `input` on a connection, closes its sending side, and checks
/// what comes back: HTTP/1.1 answers only, no more than the requests sent.
fn exchange(addr: &str, input: &[u8]) {
    let shown = || String::from_utf8_lossy(input).into_owned();
    let mut client = TcpStream::connect(addr).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    // The receiver may close early on a refusal; what it did not read is lost.
    let _ = client.write_all(input);
    let _ = client.shutdown(Shutdown::Write);
    let mut answer = Vec::new();
    if let Err(e) = client.read_to_end(&mut answer) {
        assert!(
            e.kind() != std::io::ErrorKind::WouldBlock && e.kind() != std::io::ErrorKind::TimedOut,
            "no answer within 20 s: {:?}",
            shown()
        );
    }
    let answer = String::from_utf8_lossy(&answer);
    // A status line: the version, three digits and a space (a message
    // may quote "HTTP/1.1" too).
    let answers = answer
        .match_indices("HTTP/1.")
        .filter(|(at, _)| {
            let b = answer.as_bytes();
            b.len() > at + 13
                && b[at + 8] == b' '
                && b[at + 9..at + 12].iter().all(u8::is_ascii_digit)
                && b[at + 12] == b' '
        })
        .count();
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1."),
        "{:?} -> {answer:?}",
        shown()
    );
    // A request line is at least "GET / HTTP/1.1" and a line end.
    let requests = input
        .windows(8)
        .filter(|w| w.starts_with(b"HTTP/1."))
        .count();
    assert!(
        answers <= requests.max(1),
        "{answers} answers to {requests} requests: {:?} -> {answer:?}",
        shown()
    );
}

/// A body the receiver would acknowledge must be one line triage-parse reads.
fn decode(body: &[u8]) {
    for encoding in [Encoding::Json, Encoding::Protobuf] {
        if let Ok(Some(line)) = to_line(body, encoding, false, LIMIT) {
            assert!(
                !line.contains(&b'\n'),
                "{:?}",
                String::from_utf8_lossy(body)
            );
            assert!(
                check_line(&line).is_ok_and(|n| n > 0),
                "acknowledged but unreadable: {:?} -> {:?}",
                String::from_utf8_lossy(body),
                String::from_utf8_lossy(&line)
            );
        }
    }
}

/// Runs mutants until `budget` is spent or `max` have run; returns how many.
fn fuzz(budget: Duration, max: usize) -> usize {
    let seed = std::env::var("TRIAGE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x7269_6167_6531u64);
    let dir = tempfile::tempdir().unwrap();
    let output = dir.path().join("spans.jsonl");
    let limit = LIMIT.to_string();
    let recv = Recv::start(
        &["-o", output.to_str().unwrap(), "--max-body", &limit],
        Stdio::null(),
    );
    let addr = recv.addr();
    let seeds = seeds();
    for input in &seeds {
        exchange(&addr, input);
    }
    let mut rng = Rng(seed | 1);
    let started = Instant::now();
    let mut runs = 0;
    while runs < max && started.elapsed() < budget {
        let base = &seeds[rng.below(seeds.len())];
        let mutant = mutate(base, &seeds, &mut rng);
        let caught = std::panic::catch_unwind(|| {
            exchange(&addr, &mutant);
            decode(&mutant);
        });
        if let Err(e) = caught {
            eprintln!("seed {seed}, run {runs}: add to REGRESSIONS: {mutant:?}");
            std::panic::resume_unwind(e);
        }
        runs += 1;
    }
    // Still serving, and every line it wrote is read by triage-parse.
    exchange(&addr, &seeds[0]);
    let (code, err) = recv.stop();
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("panick"), "{err}");
    let written = std::fs::read(&output).unwrap();
    assert!(written.is_empty() || written.ends_with(b"\n"));
    for line in written.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        assert!(
            check_line(line).is_ok_and(|n| n > 0),
            "written but unreadable: {:?}",
            String::from_utf8_lossy(line)
        );
    }
    runs
}

#[test]
fn mutated_requests_never_break_the_reader() {
    let runs = fuzz(Duration::from_secs(20), 3000);
    assert!(runs >= 500, "only {runs} mutants in the time allowed");
}

/// `make fuzz`: TRIAGE_FUZZ_SECONDS (60) of mutants.
#[test]
#[ignore]
fn fuzz_http_for_a_while() {
    let seconds = std::env::var("TRIAGE_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let runs = fuzz(Duration::from_secs(seconds), usize::MAX);
    eprintln!("{runs} mutants in {seconds} s, no failure");
}
