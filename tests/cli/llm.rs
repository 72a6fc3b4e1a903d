//! Narratives and the judge end to end: the real binaries against a mock
//! LLM server on 127.0.0.1 that each test starts. It checks what is sent
//! (path, headers, cached system block, model), answers as told (errors,
//! retries, narratives, picks) and counts the requests.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use assert_cmd::Command;
use common::{EPOCH, of_kind, records, scored_monday};
use serde_json::{Value, json};

/// One request the mock received.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    /// Lowercase names.
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The user message's text, whichever API.
    fn user_text(&self) -> String {
        let msgs = self.body["messages"].as_array().unwrap();
        let user = msgs.iter().find(|m| m["role"] == "user").unwrap();
        user["content"].as_str().unwrap().to_string()
    }
}

/// What the mock answers: status, extra headers, body.
type Answer = (u16, Vec<(&'static str, String)>, String);

struct Mock {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    max_in_flight: Arc<AtomicUsize>,
}

impl Mock {
    /// A server whose answer to the n-th request (0-based) is `answer(n, &request)`.
    fn start(answer: impl Fn(usize, &Seen) -> Answer + Send + Sync + 'static) -> Mock {
        Mock::start_slow(Duration::ZERO, answer)
    }

    /// As [`Mock::start`], waiting `delay` before each answer.
    fn start_slow(
        delay: Duration,
        answer: impl Fn(usize, &Seen) -> Answer + Send + Sync + 'static,
    ) -> Mock {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let max_in_flight = Arc::new(AtomicUsize::new(0));
        let answer = Arc::new(answer);
        let (s, inf, max) = (seen.clone(), in_flight.clone(), max_in_flight.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (s, inf, max, answer) = (s.clone(), inf.clone(), max.clone(), answer.clone());
                std::thread::spawn(move || {
                    let now = inf.fetch_add(1, Ordering::SeqCst) + 1;
                    max.fetch_max(now, Ordering::SeqCst);
                    // A request stops counting as in flight before its
                    // answer is sent: the client may send the next one as
                    // soon as it has read it, before this thread runs on.
                    serve(conn, &s, delay, &*answer, &|| {
                        inf.fetch_sub(1, Ordering::SeqCst);
                    });
                });
            }
        });
        Mock {
            port,
            seen,
            max_in_flight,
        }
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// Reads one request (Content-Length body), answers it and closes.
fn serve(
    conn: TcpStream,
    seen: &Mutex<Vec<Seen>>,
    delay: Duration,
    answer: &(dyn Fn(usize, &Seen) -> Answer + Send + Sync),
    answering: &dyn Fn(),
) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        answering();
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':').unwrap();
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    let req = Seen {
        method,
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    };
    let n = {
        let mut s = seen.lock().unwrap();
        s.push(req.clone());
        s.len() - 1
    };
    std::thread::sleep(delay);
    let (status, extra, body) = answer(n, &req);
    let mut resp = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
        body.len()
    );
    for (k, v) in extra {
        resp.push_str(&format!("{k}: {v}\r\n"));
    }
    resp.push_str("\r\n");
    resp.push_str(&body);
    answering();
    let mut conn = conn;
    let _ = conn.write_all(resp.as_bytes());
}

const KEY: &str = "sk-test-0123456789secret";

/// An Anthropic answer whose text is `text`, with fixed usage.
fn anthropic_text(text: &str) -> Answer {
    let body = json!({"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5",
        "content":[{"type":"text","text":text}],"stop_reason":"end_turn",
        "usage":{"input_tokens":100,"output_tokens":20,"cache_read_input_tokens":80,"cache_creation_input_tokens":0}});
    (200, vec![], body.to_string())
}

/// A narrative naming the pattern the request was about.
fn narrative_for(req: &Seen) -> String {
    let user = req.user_text();
    let data = user.split_once("<trace_data>\n").unwrap().1;
    let data: Value = serde_json::from_str(data.strip_suffix("\n</trace_data>").unwrap()).unwrap();
    json!({
        "narrative": format!("The {} agent fails {} times.", data["agent"].as_str().unwrap(), data["occurrences"]),
        "fix": format!("Validate the {} call.", data["tool"].as_str().unwrap()),
    })
    .to_string()
}

/// A binary with a clean LLM environment and a fixed report date.
fn bin(name: &str) -> Command {
    let mut cmd = common::cmd(name);
    for var in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "TRIAGE_CONFIG",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("SOURCE_DATE_EPOCH", EPOCH).env("NO_COLOR", "1");
    cmd
}

fn anthropic_at(mock: &Mock, name: &str) -> Command {
    let mut cmd = bin(name);
    cmd.env("ANTHROPIC_BASE_URL", mock.base())
        .env("ANTHROPIC_API_KEY", KEY);
    cmd
}

/// Runs `cmd` on `stdin`; returns (exit code, stdout, stderr).
fn run(cmd: &mut Command, stdin: Vec<u8>) -> (i32, Vec<u8>, String) {
    let out = cmd.write_stdin(stdin).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn narrate_sends_the_anthropic_shape_and_the_narratives_reach_the_report() {
    let mock = Mock::start(|_, req| anthropic_text(&narrative_for(req)));
    let (code, out, err) = run(
        anthropic_at(&mock, "triage-explain").arg("--narrate"),
        scored_monday(),
    );
    assert_eq!(code, 0, "{err}");
    let seen = mock.seen();
    assert_eq!(seen.len(), 3, "the top 3 patterns are narrated");
    for req in &seen {
        assert_eq!(req.method, "POST");
        assert_eq!(req.path, "/v1/messages");
        assert_eq!(req.header("x-api-key"), Some(KEY));
        assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
        assert_eq!(req.header("content-type"), Some("application/json"));
        assert_eq!(req.body["model"], "claude-haiku-4-5");
        let system = req.body["system"]
            .as_array()
            .expect("system is a list of blocks");
        assert_eq!(system[0]["type"], "text");
        assert_eq!(system[0]["cache_control"], json!({"type": "ephemeral"}));
        assert!(system[0]["text"].as_str().unwrap().contains("<trace_data>"));
        assert!(req.user_text().contains("<trace_data>"));
    }
    let recs = records(&out);
    let patterns = of_kind(&recs, "pattern");
    assert_eq!(patterns.len(), 3, "every pattern passes through");
    let top = patterns.iter().find(|p| p["rank"] == 1).unwrap();
    assert_eq!(top["narrative"], "The planner agent fails 11 times.");
    assert_eq!(top["fix"], "Validate the dispatch_subtask call.");
    assert_eq!(top["narrative_model"], "claude-haiku-4-5");
    assert!(
        err.contains(
            "3 requests to claude-haiku-4-5: 300 input tokens (240 read from cache, 0 written to cache), 60 output tokens"
        ),
        "usage is summed on stderr: {err}"
    );
    assert!(!err.contains(KEY));

    let (code, md, err) = run(&mut bin("triage-render"), out.clone());
    assert_eq!(code, 0, "{err}");
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("> The planner agent fails 11 times.\n"), "{md}");
    assert!(md.contains("**AI-suggested fix:** Validate the dispatch_subtask call."));
    let (_, html, _) = run(bin("triage-render").args(["-f", "html"]), out);
    let html = String::from_utf8(html).unwrap();
    assert!(html.contains("The planner agent fails 11 times."));
    assert!(html.contains("<strong>Suggested fix:</strong> Validate the dispatch_subtask call."));
}

#[test]
fn triage_report_ai_analysis_narrates_the_top_patterns_in_one_process() {
    let mock = Mock::start(|_, req| anthropic_text(&narrative_for(req)));
    let (code, md, err) = run(
        anthropic_at(&mock, "triage").args([
            "report",
            "examples/monday.ndjson",
            "--ai-analysis",
            "--top",
            "2",
        ]),
        Vec::new(),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(mock.seen().len(), 2);
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("> The planner agent fails 11 times."), "{md}");
    assert!(md.contains("> The executor agent fails"), "{md}");
    assert_eq!(md.matches("**AI-suggested fix:**").count(), 2);
    assert!(err.contains("2 requests to claude-haiku-4-5"), "{err}");
}

#[test]
fn openai_compatible_servers_get_a_bearer_key_and_the_chosen_model() {
    let mock = Mock::start(|_, req| {
        let body = json!({"choices":[{"message":{"role":"assistant","content":narrative_for(req)}}],
            "usage":{"prompt_tokens":50,"completion_tokens":10,"prompt_tokens_details":{"cached_tokens":32}}});
        (200, vec![], body.to_string())
    });
    let (code, out, err) = run(
        bin("triage-explain")
            .env("OPENAI_BASE_URL", format!("{}/v1", mock.base()))
            .env("OPENAI_API_KEY", KEY)
            .args(["--narrate", "--top", "1", "--model", "qwen2.5-7b"]),
        scored_monday(),
    );
    assert_eq!(code, 0, "{err}");
    let seen = mock.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].path, "/v1/chat/completions");
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(seen[0].body["model"], "qwen2.5-7b");
    assert_eq!(seen[0].body["messages"][0]["role"], "system");
    let recs = records(&out);
    let narrated: Vec<_> = of_kind(&recs, "pattern")
        .into_iter()
        .filter(|p| p.get("narrative").is_some())
        .collect();
    assert_eq!(narrated.len(), 1);
    assert_eq!(narrated[0]["rank"], 1);
    assert_eq!(narrated[0]["narrative_model"], "qwen2.5-7b");
    assert!(err.contains("50 input tokens (32 read from cache"), "{err}");
}

#[test]
fn busy_and_failing_answers_are_retried_until_one_succeeds() {
    let mock = Mock::start(|n, req| match n {
        0 => (
            429,
            vec![("retry-after", "0".into())],
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#.into(),
        ),
        1 => (
            503,
            vec![("retry-after", "0".into())],
            "Service Unavailable".into(),
        ),
        _ => anthropic_text(&narrative_for(req)),
    });
    let (code, out, err) = run(
        anthropic_at(&mock, "triage-explain").args(["--narrate", "--top", "1"]),
        scored_monday(),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(mock.seen().len(), 3, "two retries, then the answer");
    let recs = records(&out);
    assert!(
        of_kind(&recs, "pattern")
            .iter()
            .any(|p| p["narrative"] == "The planner agent fails 11 times.")
    );
    assert!(
        err.contains("1 request to"),
        "only answered requests count: {err}"
    );
}

#[test]
fn a_provider_that_keeps_failing_leaves_the_pattern_unnarrated_with_a_warning() {
    let mock = Mock::start(|_, _| (500, vec![("retry-after", "0".into())], "{}".into()));
    let (code, out, err) = run(
        anthropic_at(&mock, "triage-explain").args(["--narrate", "--top", "1"]),
        scored_monday(),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(mock.seen().len(), 4, "the request and 3 retries");
    assert!(err.contains("warning: pattern "), "{err}");
    assert!(
        err.contains("no narrative: no answer after 4 attempts: HTTP 500"),
        "{err}"
    );
    let recs = records(&out);
    assert_eq!(of_kind(&recs, "pattern").len(), 3);
    assert!(
        of_kind(&recs, "pattern")
            .iter()
            .all(|p| p.get("narrative").is_none())
    );
}

#[test]
fn a_refused_key_is_a_clear_error_that_never_shows_the_key() {
    let mock = Mock::start(|_, _| {
        let body = json!({"type":"error","error":{"type":"authentication_error","message":format!("invalid x-api-key {KEY}")}});
        (401, vec![], body.to_string())
    });
    let (code, _, err) = run(
        anthropic_at(&mock, "triage-explain").args(["--narrate", "--concurrency", "1"]),
        scored_monday(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("triage-explain: error: "), "{err}");
    assert!(err.contains("HTTP 401"), "{err}");
    assert!(err.contains("check ANTHROPIC_API_KEY"), "{err}");
    assert!(!err.contains(KEY), "the key leaked: {err}");
    assert!(!err.contains("0123456789secret"), "the key leaked: {err}");
    assert_eq!(
        mock.seen().len(),
        1,
        "no retry and no further request after a refusal"
    );
}

#[test]
fn a_missing_key_is_a_usage_error_before_anything_is_read() {
    let (code, out, err) = run(bin("triage-explain").arg("--narrate"), scored_monday());
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("ANTHROPIC_API_KEY is not set"), "{err}");
    assert!(err.contains("--narrate"), "{err}");
    let (code, _, err) = run(
        bin("triage").args([
            "report",
            "examples/monday.ndjson",
            "--ai-analysis",
            "--provider",
            "openai",
        ]),
        Vec::new(),
    );
    assert_eq!(code, 2);
    assert!(err.contains("OPENAI_API_KEY is not set"), "{err}");
}

#[test]
fn a_slow_provider_times_out_as_the_config_file_says() {
    let mock = Mock::start_slow(Duration::from_secs(4), |_, req| {
        anthropic_text(&narrative_for(req))
    });
    let config = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(config.path(), "[llm]\nretries = 0\ntimeout_seconds = 1\n").unwrap();
    let started = std::time::Instant::now();
    let (code, out, err) = run(
        anthropic_at(&mock, "triage-explain")
            .args(["--narrate", "--top", "1", "--config"])
            .arg(config.path()),
        scored_monday(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the timeout did not cut the wait"
    );
    assert!(
        err.contains("no narrative: no answer after 1 attempt: timed out"),
        "{err}"
    );
    assert_eq!(mock.seen().len(), 1, "retries = 0");
    assert!(
        of_kind(&records(&out), "pattern")
            .iter()
            .all(|p| p.get("narrative").is_none())
    );
}

#[test]
fn narrate_refuses_patterns_that_are_not_scored() {
    let mock = Mock::start(|_, req| anthropic_text(&narrative_for(req)));
    let events = common::ok("triage-parse", &["examples/monday.ndjson"], b"");
    let grouped = common::ok("triage-group", &[], &events);
    let (code, _, err) = run(
        anthropic_at(&mock, "triage-explain").arg("--narrate"),
        grouped,
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("not scored: pipe them through triage-score first"),
        "{err}"
    );
    assert!(mock.seen().is_empty());
}

#[test]
fn no_more_requests_are_in_flight_than_the_concurrency_allows() {
    let mock = Mock::start_slow(Duration::from_millis(150), |_, req| {
        anthropic_text(&narrative_for(req))
    });
    let (code, _, err) = run(
        anthropic_at(&mock, "triage-explain").args(["--narrate", "--concurrency", "1"]),
        scored_monday(),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(mock.seen().len(), 3);
    assert_eq!(mock.max_in_flight.load(Ordering::SeqCst), 1);
}

fn parsed(file: &str) -> Vec<u8> {
    common::ok("triage-parse", &["-q", file], b"")
}

fn verdicts(out: &[u8]) -> Vec<Value> {
    of_kind(&records(out), "verdict")
        .into_iter()
        .cloned()
        .collect()
}

#[test]
fn the_judge_reranks_a_verdicts_candidates_and_says_why() {
    let events = parsed("examples/explain/injection.ndjson");
    let (_, plain, _) = run(&mut bin("triage-explain"), events.clone());
    let before = verdicts(&plain).remove(0);
    assert_eq!(before["candidates"].as_array().unwrap().len(), 3);

    let mock = Mock::start(|_, _| {
        anthropic_text(r#"{"choice": 2, "reason": "The page text it obeyed came first."}"#)
    });
    let (code, out, err) = run(anthropic_at(&mock, "triage-explain").arg("--judge"), events);
    assert_eq!(code, 0, "{err}");
    let seen = mock.seen();
    assert_eq!(
        seen.len(),
        1,
        "one request per verdict with candidates to choose from"
    );
    let user = seen[0].user_text();
    assert!(
        user.contains("\"number\":3"),
        "the three candidates are sent: {user}"
    );
    let after = verdicts(&out).remove(0);
    assert_eq!(after["candidates"][0], before["candidates"][1]);
    assert_eq!(after["candidates"][1], before["candidates"][0]);
    assert_eq!(after["step"], before["candidates"][1]["step"]);
    assert_eq!(after["agent_id"], before["candidates"][1]["agent_id"]);
    assert_eq!(
        after["judge"],
        json!({"model":"claude-haiku-4-5","choice":2,"reranked":true,"reason":"The page text it obeyed came first."})
    );

    let (_, md, _) = run(&mut bin("triage-render"), out);
    let md = String::from_utf8(md).unwrap();
    assert!(
        md.contains("The LLM judge (claude-haiku-4-5) moved candidate 2 first: The page text it obeyed came first."),
        "{md}"
    );
}

#[test]
fn an_unusable_judgement_keeps_the_rules_order_with_a_warning() {
    let events = parsed("examples/explain/loop.ndjson");
    let (_, plain, _) = run(&mut bin("triage-explain"), events.clone());
    for answer in [r#"{"choice": 7, "reason": "x"}"#, "I think the second one."] {
        let mock = Mock::start(move |_, _| anthropic_text(answer));
        let (code, out, err) = run(
            anthropic_at(&mock, "triage-explain").arg("--judge"),
            events.clone(),
        );
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("the rules' order stands"), "{err}");
        assert_eq!(verdicts(&out), verdicts(&plain), "{answer}");
    }
}

#[test]
fn the_whole_run_judge_names_any_step_checked_against_the_run() {
    let events = parsed("examples/explain/injection.ndjson");
    let (_, plain, _) = run(&mut bin("triage-explain"), events.clone());
    let before = verdicts(&plain).remove(0);
    let listed: Vec<u64> = before["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["step"].as_u64().unwrap())
        .collect();
    // The first step of the run, which the rules did not list, by its agent.
    let recs = records(&events);
    let first = of_kind(&recs, "event")
        .into_iter()
        .find(|e| !listed.contains(&e["step"].as_u64().unwrap()))
        .cloned()
        .expect("an unlisted step");
    let (step, agent) = (
        first["step"].as_u64().unwrap(),
        first["agent_id"].as_str().unwrap().to_string(),
    );
    let answer =
        json!({"step": step, "agent": agent, "reason": "It set the wrong goal."}).to_string();
    let mock = Mock::start(move |_, _| anthropic_text(&answer));
    let (code, out, err) = run(
        anthropic_at(&mock, "triage-explain").arg("--judge-run"),
        events.clone(),
    );
    assert_eq!(code, 0, "{err}");
    let user = mock.seen()[0].user_text();
    assert!(
        user.contains("\"hints\""),
        "the findings go as hints: {user}"
    );
    let after = verdicts(&out).remove(0);
    assert_eq!(after["step"], step);
    assert_eq!(after["agent_id"], agent.as_str());
    assert_eq!(after["candidates"][0]["detector"], "judge");
    assert_eq!(after["judge"]["choice"], 0);
    let (_, md, _) = run(&mut bin("triage-render"), out);
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("which the rules did not list"), "{md}");

    // A step the run lacks is refused and the rules' verdict stands.
    let mock = Mock::start(|_, _| anthropic_text(r#"{"step": 999, "agent": "x", "reason": "r"}"#));
    let (code, out, err) = run(
        anthropic_at(&mock, "triage-explain").arg("--judge-run"),
        events,
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("which the run does not have"), "{err}");
    assert_eq!(verdicts(&out), verdicts(&plain));
}
