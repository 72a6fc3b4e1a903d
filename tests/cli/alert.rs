//! triage-alert against a webhook receiver on 127.0.0.1 started by each
//! test: what is sent, cooldown across runs, retries, failures, the lock.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{of_kind, records, scored_monday};
use serde_json::Value;

const SECRET: &str = "T0000/B0000/s3cretXYZ";

/// A webhook receiver answering the i-th request with `statuses[i]` (the
/// last one from then on), after `delay`; it keeps every body.
struct Hook {
    url: String,
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl Hook {
    fn start(statuses: &[u16], delay: Duration) -> Hook {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://{}/services/{SECRET}",
            listener.local_addr().unwrap()
        );
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let kept = bodies.clone();
        let statuses = statuses.to_vec();
        std::thread::spawn(move || {
            for (i, stream) in listener.incoming().enumerate() {
                let Ok(mut stream) = stream else { continue };
                let body = read_request(&mut stream);
                kept.lock()
                    .unwrap()
                    .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                std::thread::sleep(delay);
                let status = statuses[i.min(statuses.len() - 1)];
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                );
            }
        });
        Hook { url, bodies }
    }

    fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }
}

fn read_request(stream: &mut std::net::TcpStream) -> Vec<u8> {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            while data.len() < end + 4 + len {
                let n = stream.read(&mut buf).unwrap();
                assert!(n > 0, "request body cut short");
                data.extend_from_slice(&buf[..n]);
            }
            return data[end + 4..end + 4 + len].to_vec();
        }
        let n = stream.read(&mut buf).unwrap();
        if n == 0 {
            return Vec::new();
        }
        data.extend_from_slice(&buf[..n]);
    }
}

/// triage-alert with no configuration or webhook from the environment.
fn alert(args: &[&str], state: &Path) -> Command {
    let mut cmd = Command::new(common::bin("triage-alert"));
    cmd.args(args)
        .arg("--state")
        .arg(state)
        .env_remove("TRIAGE_CONFIG")
        .env_remove("TRIAGE_WEBHOOK_URL");
    cmd
}

/// Runs with `input` on stdin; returns (exit code, records, stderr).
fn run(mut cmd: Command, input: &[u8]) -> (i32, Vec<Value>, String) {
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A run that stops at once (no webhook) may exit before reading its
    // input: the pipe it closed is no failure of the test.
    if let Err(e) = child.stdin.take().unwrap().write_all(input) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        !stdout.to_lowercase().contains("s3cret") && !stderr.to_lowercase().contains("s3cret"),
        "the webhook secret leaked: {stdout}{stderr}"
    );
    (
        out.status.code().unwrap(),
        records(stdout.as_bytes()),
        stderr,
    )
}

fn decisions(recs: &[Value]) -> Vec<String> {
    of_kind(recs, "alert")
        .iter()
        .map(|a| a["decision"].as_str().unwrap().to_string())
        .collect()
}

const TOP: &str = "planner/dispatch_subtask/coordination_failure/retriever_state+task_queue_head";

#[test]
fn fires_once_then_the_cooldown_holds_across_runs() {
    let hook = Hook::start(&[200], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state/alert.json");
    let input = scored_monday();

    let (code, recs, err) = run(alert(&["--webhook", &hook.url], &state), &input);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        decisions(&recs),
        ["fired", "below_threshold", "below_threshold"]
    );
    let fired = of_kind(&recs, "alert")[0];
    assert_eq!(fired["pattern_id"], TOP);
    assert_eq!(fired["attempts"], 1);
    assert_eq!(fired["http_status"], 200);
    assert!(fired["webhook"].as_str().unwrap().ends_with("/…"));
    // Other records pass through.
    assert_eq!(of_kind(&recs, "batch").len(), 1);

    let sent = hook.bodies();
    assert_eq!(sent.len(), 1);
    let text = sent[0]["text"].as_str().unwrap();
    assert!(text.contains("score 13.00"), "{text}");
    assert!(
        text.contains(
            "*[planner] dispatch_subtask / coordination_failure / retriever_state+task_queue_head*"
        ),
        "{text}"
    );
    assert!(
        text.contains("Frequency: 11 events across 3 runs"),
        "{text}"
    );
    assert!(text.contains("Recovery rate: 0%"), "{text}");
    assert_eq!(sent[0]["pattern_id"], TOP);
    assert_eq!(sent[0]["agent_id"], "planner");
    assert_eq!(sent[0]["tool_name"], "dispatch_subtask");
    assert_eq!(sent[0]["classification"], "coordination_failure");
    assert_eq!(sent[0]["final_score"], 13.0);
    assert_eq!(sent[0]["severity_score"], 15.0);
    assert_eq!(sent[0]["recovery_rate"], 0.0);

    // A second run within the hour: suppressed, nothing sent.
    let (code, recs, _) = run(alert(&["--webhook", &hook.url], &state), &input);
    assert_eq!(code, 0);
    let suppressed = of_kind(&recs, "alert")[0];
    assert_eq!(suppressed["decision"], "suppressed");
    assert!(
        suppressed["cooldown_until"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );
    assert_eq!(hook.bodies().len(), 1);

    // Without a cooldown it fires again; a lower threshold fires the rest.
    let (_, recs, _) = run(
        alert(
            &[
                "--webhook",
                &hook.url,
                "--cooldown",
                "0",
                "--threshold",
                "5",
            ],
            &state,
        ),
        &input,
    );
    assert_eq!(decisions(&recs), ["fired", "fired", "fired"]);
    assert_eq!(hook.bodies().len(), 4);
}

#[test]
fn a_failed_send_is_retried_exits_2_and_does_not_start_the_cooldown() {
    let down = Hook::start(&[500], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("alert.json");
    let args = ["--retries", "2", "--backoff", "0"];
    let mut cmd = alert(&args, &state);
    cmd.args(["--webhook", &down.url]);
    let (code, recs, err) = run(cmd, &scored_monday());
    assert_eq!(code, 2);
    let failed = of_kind(&recs, "alert")[0];
    assert_eq!(failed["decision"], "failed");
    assert_eq!(failed["attempts"], 3);
    assert_eq!(failed["http_status"], 500);
    assert_eq!(down.bodies().len(), 3);
    assert!(err.contains("not delivered"), "{err}");

    // The next run, with the receiver back, fires at once.
    let up = Hook::start(&[200], Duration::ZERO);
    let mut cmd = alert(&args, &state);
    cmd.args(["--webhook", &up.url]);
    let (code, recs, _) = run(cmd, &scored_monday());
    assert_eq!(code, 0);
    assert_eq!(decisions(&recs)[0], "fired");
}

#[test]
fn a_busy_receiver_is_retried_and_a_refusal_is_not() {
    let flaky = Hook::start(&[503, 429, 200], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = alert(&["--backoff", "0"], &dir.path().join("a.json"));
    cmd.args(["--webhook", &flaky.url]);
    let (code, recs, _) = run(cmd, &scored_monday());
    assert_eq!(code, 0);
    assert_eq!(of_kind(&recs, "alert")[0]["attempts"], 3);
    assert_eq!(of_kind(&recs, "alert")[0]["decision"], "fired");

    let refusing = Hook::start(&[404], Duration::ZERO);
    let mut cmd = alert(&["--backoff", "0"], &dir.path().join("b.json"));
    cmd.args(["--webhook", &refusing.url]);
    let (code, recs, _) = run(cmd, &scored_monday());
    assert_eq!(code, 2);
    assert_eq!(of_kind(&recs, "alert")[0]["attempts"], 1);
    assert_eq!(refusing.bodies().len(), 1);
}

#[test]
fn a_receiver_that_does_not_answer_times_out() {
    let silent = Hook::start(&[200], Duration::from_secs(30));
    let dir = tempfile::tempdir().unwrap();
    let args = ["--timeout", "0.3", "--retries", "1", "--backoff", "0"];
    let mut cmd = alert(&args, &dir.path().join("s.json"));
    cmd.args(["--webhook", &silent.url]);
    let (code, recs, _) = run(cmd, &scored_monday());
    assert_eq!(code, 2);
    let failed = of_kind(&recs, "alert")[0];
    assert_eq!(failed["decision"], "failed");
    assert_eq!(failed["attempts"], 2);
    assert!(
        failed["error"].as_str().unwrap().contains("timeout"),
        "{failed}"
    );
}

#[test]
fn dry_run_sends_nothing_and_keeps_no_state() {
    let hook = Hook::start(&[200], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("alert.json");
    let mut cmd = alert(&["--dry-run"], &state);
    cmd.env("TRIAGE_WEBHOOK_URL", &hook.url);
    let (code, recs, _) = run(cmd, &scored_monday());
    assert_eq!(code, 0);
    assert_eq!(
        decisions(&recs),
        ["would_fire", "below_threshold", "below_threshold"]
    );
    assert!(hook.bodies().is_empty());
    assert!(!state.exists());
    // Each would_fire alert shows the body a real run sends, and only it.
    let alerts = of_kind(&recs, "alert");
    assert!(alerts[1].get("payload").is_none(), "{}", alerts[1]);
    let mut real = alert(&["--payload", "slack"], &dir.path().join("real.json"));
    real.env("TRIAGE_WEBHOOK_URL", &hook.url);
    let mut dry = alert(&["--dry-run", "--payload", "slack"], &state);
    dry.env("TRIAGE_WEBHOOK_URL", &hook.url);
    let (_, dry_recs, _) = run(dry, &scored_monday());
    run(real, &scored_monday());
    assert_eq!(hook.bodies().len(), 1);
    assert_eq!(of_kind(&dry_recs, "alert")[0]["payload"], hook.bodies()[0]);
}

#[test]
fn the_report_json_document_is_read_too() {
    let doc = common::ok(
        "triage",
        &["report", "--format", "json", "examples/monday.ndjson"],
        b"",
    );
    let dir = tempfile::tempdir().unwrap();
    let (code, recs, err) = run(
        alert(
            &["--dry-run", "--threshold", "5"],
            &dir.path().join("s.json"),
        ),
        &doc,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(decisions(&recs), ["would_fire", "would_fire", "would_fire"]);
}

/// A markdown report (the forgotten `--format json`) is refused at its
/// first line, not skipped line by line into "no alerts"; a dry run
/// checks the webhook URL it would use.
#[test]
fn a_markdown_report_or_a_bad_url_is_an_error_even_on_a_dry_run() {
    let md = common::ok("triage", &["report", "examples/monday.ndjson"], b"");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("s.json");
    let (code, recs, err) = run(alert(&["--dry-run"], &state), &md);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("<stdin>:1: not triage records"), "{err}");
    assert!(of_kind(&recs, "alert").is_empty());
    let (code, _, err) = run(
        alert(&["--dry-run", "--webhook", "notaurl"], &state),
        &scored_monday(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not an http:// or https:// URL"), "{err}");
}

#[test]
fn the_flag_beats_the_environment_which_beats_the_configuration() {
    let from_config = Hook::start(&[200], Duration::ZERO);
    let from_env = Hook::start(&[200], Duration::ZERO);
    let from_flag = Hook::start(&[200], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("triage.toml");
    std::fs::write(
        &config,
        format!(
            "[alerting]\nwebhook_url = \"{}\"\nthreshold = 7\ncooldown_seconds = 0\n",
            from_config.url
        ),
    )
    .unwrap();
    let state = dir.path().join("s.json");
    let with_config = |extra: &[&str]| {
        let mut cmd = alert(extra, &state);
        cmd.arg("--config").arg(&config);
        cmd
    };
    let (_, recs, _) = run(with_config(&[]), &scored_monday());
    // threshold 7 from the configuration: two patterns fire.
    assert_eq!(decisions(&recs), ["fired", "fired", "below_threshold"]);
    assert_eq!(from_config.bodies().len(), 2);

    let mut cmd = with_config(&[]);
    cmd.env("TRIAGE_WEBHOOK_URL", &from_env.url);
    run(cmd, &scored_monday());
    assert_eq!(from_env.bodies().len(), 2);

    let mut cmd = with_config(&["--webhook", &from_flag.url]);
    cmd.env("TRIAGE_WEBHOOK_URL", &from_env.url);
    run(cmd, &scored_monday());
    assert_eq!(from_flag.bodies().len(), 2);
    assert_eq!(from_env.bodies().len(), 2);
    assert_eq!(from_config.bodies().len(), 2);
}

#[test]
fn two_runs_at_once_fire_a_pattern_once() {
    let slow = Hook::start(&[200], Duration::from_millis(300));
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("alert.json");
    let input = scored_monday();
    let runs: Vec<_> = (0..2)
        .map(|_| {
            let cmd = alert(&["--webhook", &slow.url], &state);
            let input = input.clone();
            std::thread::spawn(move || run(cmd, &input))
        })
        .collect();
    let mut all: Vec<String> = Vec::new();
    for r in runs {
        let (code, recs, err) = r.join().unwrap();
        assert_eq!(code, 0, "{err}");
        all.push(decisions(&recs)[0].clone());
    }
    all.sort();
    assert_eq!(all, ["fired", "suppressed"]);
    assert_eq!(slow.bodies().len(), 1);
}

#[test]
fn discord_and_json_payloads() {
    let hook = Hook::start(&[200], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    for (i, shape) in ["discord", "json"].iter().enumerate() {
        let mut cmd = alert(&["--payload", shape], &dir.path().join(format!("{i}.json")));
        cmd.args(["--webhook", &hook.url]);
        assert_eq!(run(cmd, &scored_monday()).0, 0);
    }
    let sent = hook.bodies();
    let content = sent[0]["content"].as_str().unwrap();
    assert!(
        content.contains("**Triage alert**: score 13.00"),
        "{content}"
    );
    assert!(content.contains(r"dispatch\_subtask"), "{content}");
    assert_eq!(sent[0]["allowed_mentions"]["parse"], serde_json::json!([]));
    assert_eq!(sent[1]["pattern_id"], TOP);
    assert_eq!(sent[1]["runs_seen"], 3);
    assert!(
        sent[1]["text"]
            .as_str()
            .unwrap()
            .starts_with("Triage alert: score 13.00")
    );
}

#[test]
fn without_a_webhook_or_scores_it_says_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = run(alert(&[], &dir.path().join("s.json")), &scored_monday());
    assert_eq!(code, 2);
    assert!(err.contains("no webhook: pass --webhook URL"), "{err}");

    let unscored = common::ok(
        "triage-group",
        &[],
        &common::ok("triage-parse", &["examples/monday.ndjson"], b""),
    );
    let (code, _, err) = run(alert(&["--dry-run"], &dir.path().join("s.json")), &unscored);
    assert_eq!(code, 2);
    assert!(
        err.contains("has no scores; run triage-score first"),
        "{err}"
    );
}

#[test]
fn a_last_fired_in_the_future_is_ignored_with_a_warning() {
    let hook = Hook::start(&[200], Duration::ZERO);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("alert.json");
    let far = 32_503_680_000i64; // year 3000
    std::fs::write(
        &state,
        serde_json::json!({"version": 1, "last_fired": {TOP: far}}).to_string(),
    )
    .unwrap();
    let (code, recs, err) = run(alert(&["--webhook", &hook.url], &state), &scored_monday());
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(&format!(
            "pattern {TOP} last fired at Unix second {far}, in the future; entry ignored"
        )),
        "{err}"
    );
    assert_eq!(decisions(&recs)[0], "fired");
    assert_eq!(hook.bodies().len(), 1);
    let saved: Value = serde_json::from_slice(&std::fs::read(&state).unwrap()).unwrap();
    assert!(saved["last_fired"][TOP].as_i64().unwrap() < far);
}

#[test]
fn a_receiver_echoing_the_secret_segment_or_path_never_leaks_it() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://{}/services/{SECRET}?sig=s3cretSIG#s3cretFRAG",
        listener.local_addr().unwrap()
    );
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            read_request(&mut stream);
            // The whole segment, then pieces of it: its first eight
            // characters and an upper-cased copy.
            let body = "bad token s3cretXYZ for /services/T0000/B0000/s3cretXYZ?sig=s3cretSIG (s3cretSIG, s3cretFRAG); \
                        seen s3cretXY and S3CRETXYZ";
            let _ = write!(
                stream,
                "HTTP/1.1 403 X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let dir = tempfile::tempdir().unwrap();
    // run() fails the test if "s3cret" shows anywhere in the output.
    let (code, recs, err) = run(
        alert(&["--webhook", &url], &dir.path().join("s.json")),
        &scored_monday(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("the receiver answered 403: bad token …"),
        "{err}"
    );
    assert_eq!(decisions(&recs)[0], "failed");
}
