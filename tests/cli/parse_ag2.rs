//! triage-parse and explain on AG2 chat logs generated with the real
//! library (tests/data/ag2: a scripted model client, offline): a group
//! chat's messages, a chat history seen from the agent that started it and
//! a saved ChatResult read alike, the task the first message whatever role
//! the history gives it, an executor's reply the failed run of the code it
//! was sent, and explain blaming the code's author.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::Value;

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/ag2")
        .join(format!("{name}.json"))
}

fn parse(name: &str) -> Vec<Value> {
    let path = sample(name);
    let (code, out, err) = common::run("triage-parse", &[path.to_str().unwrap()], b"");
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "warnings: {err}");
    common::records(&out)
}

fn steps(recs: &[Value]) -> Vec<(String, String, bool)> {
    recs.iter()
        .filter(|r| r["kind"] == "event")
        .map(|r| {
            (
                r["agent_id"].as_str().unwrap().to_string(),
                r["action_taken"]["tool_name"].as_str().unwrap().to_string(),
                r["action_succeeded"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn task(recs: &[Value]) -> &str {
    recs.iter()
        .find(|r| r["kind"] == "run")
        .and_then(|r| r["task"].as_str())
        .unwrap()
}

#[test]
fn a_group_chat_and_the_history_of_its_starter_read_alike() {
    let chat = parse("groupchat-code-error");
    let history = parse("chat-history-code-error");
    assert_eq!(steps(&chat), steps(&history));
    let own = |a: &str, t: &str, ok| (a.to_string(), t.to_string(), ok);
    assert_eq!(
        steps(&chat),
        [
            own("executor", "message", true),
            own("coder", "message", true),
            own("executor", "code_execution", false),
            own("coder", "message", true),
        ]
    );
    // The history calls the starter's own messages the assistant's.
    let want = "Count the characters in data/missing_input.csv using Python.";
    assert_eq!(task(&chat), want);
    assert_eq!(task(&history), want);
    let ran = chat
        .iter()
        .find(|r| r["action_taken"]["tool_name"] == "code_execution")
        .unwrap();
    assert!(ran["input"].as_str().unwrap().contains("missing_input.csv"));
    assert_eq!(ran["error"]["type"], "exit code 1");
}

#[test]
fn a_saved_chat_result_and_a_tool_that_raised_once() {
    for name in ["chat-result-tool-error", "groupchat-tool-error"] {
        let recs = parse(name);
        let calls: Vec<bool> = steps(&recs)
            .into_iter()
            .filter(|s| s.1 == "fetch_weather")
            .map(|s| s.2)
            .collect();
        assert_eq!(calls, [false, true], "{name}");
        assert_eq!(
            steps(&recs).len(),
            4,
            "{name}: a call's content \"None\" is no message"
        );
        assert!(task(&recs).starts_with("What's the weather in"), "{name}");
    }
}

#[test]
fn explain_blames_the_coder_whose_code_the_executor_ran() {
    for name in ["groupchat-code-error", "chat-history-code-error"] {
        let path = sample(name);
        let (_, parsed, _) = common::run("triage-parse", &[path.to_str().unwrap()], b"");
        let (code, out, err) = common::run("triage-explain", &["--unknown-outcome"], &parsed);
        assert_eq!(code, 0, "{err}");
        let verdict = common::records(&out)
            .into_iter()
            .find(|r| r["kind"] == "verdict")
            .unwrap();
        assert_eq!(
            (&verdict["agent_id"], &verdict["step"]),
            (&"coder".into(), &1.into()),
            "{name}: {verdict}"
        );
        assert!(verdict["confidence"].as_f64().unwrap() < 0.5);
    }
}
