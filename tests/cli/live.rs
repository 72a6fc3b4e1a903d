//! Live input: what a writer puts on a tool's stdin comes out while the
//! writer keeps it open (`tail -f log | triage-parse --line-buffered`).

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::Value;

/// Far longer than a hand-over takes (tens of milliseconds), so a loaded
/// machine does not fail the test; a reader holding lines until its input
/// ends never answers at all.
const PATIENCE: Duration = Duration::from_secs(30);

/// A tool running with its stdin held open by the test.
struct Live {
    child: Child,
    stdin: Option<ChildStdin>,
    records: Receiver<Value>,
}

impl Live {
    fn start(bin: &str, args: &[&str]) -> Live {
        let mut child = Command::new(common::bin(bin))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, records) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let record = serde_json::from_str(&line.unwrap()).unwrap();
                if tx.send(record).is_err() {
                    return;
                }
            }
        });
        Live {
            stdin: child.stdin.take(),
            child,
            records,
        }
    }

    fn write(&mut self, lines: &[impl AsRef<str>]) {
        let stdin = self.stdin.as_mut().unwrap();
        for line in lines {
            stdin.write_all(line.as_ref().as_bytes()).unwrap();
            stdin.write_all(b"\n").unwrap();
        }
        stdin.flush().unwrap();
    }

    /// The kinds and event ids of the next `n` records.
    fn next(&self, n: usize) -> Vec<String> {
        (0..n)
            .map(|_| {
                let r = self
                    .records
                    .recv_timeout(PATIENCE)
                    .expect("a record while stdin is still open");
                let id = r["event_id"].as_str().map(|id| format!(" {id}"));
                format!("{}{}", r["kind"].as_str().unwrap(), id.unwrap_or_default())
            })
            .collect()
    }
}

fn monday(n: usize) -> Vec<String> {
    std::fs::read_to_string("examples/monday.ndjson")
        .unwrap()
        .lines()
        .take(n)
        .map(str::to_string)
        .collect()
}

fn ids(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            format!("event {}", v["event_id"].as_str().unwrap())
        })
        .collect()
}

#[test]
fn events_come_out_while_the_writer_keeps_stdin_open() {
    let lines = monday(3);
    let mut parse = Live::start("triage-parse", &["--line-buffered"]);
    parse.write(&[&lines[0], &lines[1]]);
    let mut want = vec!["header".to_string()];
    want.extend(ids(&lines[..2]));
    assert_eq!(parse.next(3), want);

    // A line that arrives in two writes comes out once it is whole.
    let (start, end) = lines[2].split_at(20);
    parse
        .stdin
        .as_mut()
        .unwrap()
        .write_all(start.as_bytes())
        .unwrap();
    parse.stdin.as_mut().unwrap().flush().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    parse.write(&[end]);
    assert_eq!(parse.next(1), ids(&lines[2..]));

    drop(parse.stdin.take());
    assert_eq!(parse.next(1), ["source"]);
    assert!(parse.child.wait().unwrap().success());
}

#[test]
fn a_quiet_writer_gets_its_lines_through_without_line_buffering_too() {
    // Records are flushed when the input pauses, so a downstream stage sees
    // them without waiting for 256 KiB of output.
    let lines = monday(2);
    let mut parse = Live::start("triage-parse", &[]);
    parse.write(&[&lines[0], &lines[1]]);
    let mut want = vec!["header".to_string()];
    want.extend(ids(&lines));
    assert_eq!(parse.next(3), want);
    drop(parse.stdin.take());
    assert_eq!(parse.next(1), ["source"]);
    assert!(parse.child.wait().unwrap().success());
}

#[test]
fn an_alert_goes_out_while_the_scored_records_keep_coming() {
    let scored = String::from_utf8(common::scored_monday()).unwrap();
    let lines: Vec<&str> = scored.lines().collect();
    let first_pattern = lines
        .iter()
        .position(|l| l.contains(r#""kind":"pattern""#))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("alert.json");
    let args = [
        "--dry-run",
        "--line-buffered",
        "--threshold",
        "0",
        "--state",
    ];
    let mut alert = Live::start(
        "triage-alert",
        &[&args[..], &[state.to_str().unwrap()]].concat(),
    );
    alert.write(&lines[..=first_pattern]);
    // Its header, the records before the pattern passed through, and the
    // pattern's alert.
    let out = alert.next(first_pattern + 2);
    assert_eq!(out.last().map(String::as_str), Some("alert"), "{out:?}");
    alert.write(&lines[first_pattern + 1..]);
    drop(alert.stdin.take());
    assert!(alert.child.wait().unwrap().success());
}
