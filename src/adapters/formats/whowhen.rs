//! The `whowhen` format: one Who&When benchmark run per JSON file (a
//! `history` of chat messages), read into one event per message and one
//! `run` record. The benchmark's answer labels (who and when) are never
//! read; its `is_correct` verdict on the final answer is the run's outcome.

use std::io::Read;

use serde_json::{Map, Value};

use crate::adapters::formats::Format;
use crate::adapters::read::code_reply::{self, last_code_block, mark_exit_status};
use crate::adapters::read::shape::Shape;
use crate::adapters::sink::Sink;
use crate::record::{EventOut, RunRec, Src};

/// Reads one Who&When file from `r` into `sink`.
pub(crate) fn read(mut r: impl Read, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let path = sink.path().to_string();
    let data = crate::adapters::read::document::read_document(&mut r, sink)?;
    if let Some((line, reason)) = crate::adapters::read::document::not_utf8(&data) {
        return sink.skip(line, &reason);
    }
    let value: Value = match serde_json::from_slice(&data) {
        Ok(v) => v,
        Err(e) => {
            let line = Some(e.line() as u64).filter(|l| *l > 0);
            let reason = crate::adapters::read::document::document_reason(&e);
            return sink.skip(line, &reason);
        }
    };
    let Value::Object(obj) = value else {
        return sink.skip(None, "expected a JSON object with a \"history\" list");
    };
    let Some(Value::Array(history)) = obj.get("history") else {
        return sink.skip(None, "missing field \"history\" (a list of messages)");
    };
    let run_id = run_id_of(&obj, sink.file_name());
    let mut previous_text = "";
    for (step, message) in history.iter().enumerate() {
        let Some(msg) = message.as_object() else {
            sink.skip(None, format!("history[{step}]: expected an object"))?;
            continue;
        };
        let text = msg.get("content").and_then(Value::as_str).unwrap_or("");
        let ev = event_of(msg, text, previous_text, &run_id, step, &path, sink);
        sink.emit_event(&ev)?;
        previous_text = text;
    }
    let run = RunRec {
        task_id: obj.get("question_ID").and_then(scalar_text),
        task: obj
            .get("question")
            .and_then(Value::as_str)
            .map(str::to_string),
        expected: obj
            .get("ground_truth")
            .or_else(|| obj.get("groundtruth"))
            .and_then(scalar_text),
        src: Some(Src {
            path: path.into(),
            line: 1,
        }),
        ..RunRec::judged(run_id, outcome_of(&obj))
    };
    sink.emit_run(&run)?;
    Ok(())
}

/// The run's outcome: the benchmark's own verdict on the final answer
/// (`is_correct`), and "failed" without one, as every run of the benchmark
/// is a failure. (The hand-crafted set's `is_corrected` is not read: what it
/// says is not documented.)
fn outcome_of(obj: &Map<String, Value>) -> bool {
    matches!(obj.get("is_correct"), Some(Value::Bool(true)))
}

/// The task id when the file has one (ids are unique across the benchmark),
/// otherwise the file name.
fn run_id_of(obj: &Map<String, Value>, file_name: String) -> String {
    match obj.get("question_ID").and_then(scalar_text) {
        Some(id) if !id.is_empty() => id,
        _ => file_name,
    }
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// One history message as an event. `previous_text` is the message before
/// it: the code a tool output belongs to comes from there.
fn event_of<'a>(
    msg: &'a Map<String, Value>,
    text: &str,
    previous_text: &str,
    run_id: &str,
    step: usize,
    path: &str,
    sink: &Sink<'_>,
) -> EventOut<'a> {
    let speaker = speaker_of(msg);
    let agent = agent_of(speaker).to_string();
    let action = action_of(&agent, text);
    let mut ev = EventOut::new(
        format!("{run_id}:{step}"),
        run_id.to_string(),
        step as i64,
        agent,
        action.tool_name(),
        true,
    );
    let settings = &sink.settings;
    let (output, digest) = settings.text(text);
    ev.output = Some(output);
    ev.output_digest = Some(digest);
    ev.span_kind = Some(action.span_kind());
    if action == Action::CodeExecution {
        if let Some(code) = last_code_block(previous_text) {
            let (input, digest) = settings.text(code);
            ev.input = Some(input);
            ev.input_digest = Some(digest);
        }
        mark_exit_status(&mut ev, text);
        settings.infer_failure(&mut ev);
    }
    ev.src = Some(Src {
        path: path.to_string().into(),
        line: 1,
    });
    ev
}

/// The speaker: `name` in the Algorithm-Generated files, `role` in the
/// Hand-Crafted ones (where `role` is not a bare chat role).
fn speaker_of(msg: &Map<String, Value>) -> &str {
    let name = msg.get("name").and_then(Value::as_str).unwrap_or("");
    if !name.trim().is_empty() {
        return name.trim();
    }
    msg.get("role")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or("unknown")
}

/// The agent behind a speaker: "Orchestrator (-> WebSurfer)" and
/// "Orchestrator (thought)" are both the Orchestrator.
pub(crate) fn agent_of(speaker: &str) -> &str {
    match speaker.find(" (") {
        Some(i) if speaker.ends_with(')') => speaker[..i].trim(),
        _ => speaker,
    }
}

/// What a message did, read from its speaker and content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    /// The output of running code (a terminal's reply).
    CodeExecution,
    /// A web page as a browsing agent saw it.
    WebBrowse,
    /// A file as a file-reading agent saw it.
    FileRead,
    Message,
}

impl Action {
    fn tool_name(self) -> &'static str {
        match self {
            Action::CodeExecution => code_reply::CODE_TOOL,
            Action::WebBrowse => "web_browse",
            Action::FileRead => "file_read",
            Action::Message => "message",
        }
    }

    /// A terminal's reply is a tool's output; browsing and file agents
    /// act on their own, so their steps are an agent's.
    fn span_kind(self) -> &'static str {
        match self {
            Action::Message => "message",
            Action::CodeExecution => "tool",
            Action::WebBrowse | Action::FileRead => "agent",
        }
    }
}

fn action_of(agent: &str, text: &str) -> Action {
    let lower_agent = agent.to_ascii_lowercase();
    let head = text.trim_start();
    if code_reply::is_reply(head) || lower_agent.contains("terminal") {
        return Action::CodeExecution;
    }
    if head.starts_with("Address: http") || head.contains("\nViewport position:") {
        return Action::WebBrowse;
    }
    if lower_agent.contains("filesurfer") || head.starts_with("Address: file://") {
        return Action::FileRead;
    }
    if lower_agent.contains("websurfer") {
        return Action::WebBrowse;
    }
    Action::Message
}

/// The `whowhen` row of the format table.
pub(crate) const FORMAT: Format = Format {
    name: "whowhen",
    help: "Who&When benchmark runs: one JSON object with a `history` per file.",
    claims: Some(claims),
    read: |r, _, sink| read(r, sink),
};

/// A Who&When run: an object with a `history` and one of the benchmark's
/// own keys (or a `history` too long to see past).
fn claims(shape: &Shape<'_>) -> bool {
    !shape.top_is_list
        && shape.has("history")
        && (shape.has("mistake_agent") || shape.has("question") || shape.cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orchestrator_variants_are_one_agent() {
        assert_eq!(agent_of("Orchestrator (-> WebSurfer)"), "Orchestrator");
        assert_eq!(agent_of("Orchestrator (thought)"), "Orchestrator");
        assert_eq!(agent_of("Excel_Expert"), "Excel_Expert");
    }

    #[test]
    fn actions_come_from_speaker_and_content() {
        assert_eq!(
            action_of("Computer_terminal", "exitcode: 1 (execution failed)"),
            Action::CodeExecution
        );
        assert_eq!(
            action_of("ComputerTerminal", "hello"),
            Action::CodeExecution
        );
        assert_eq!(
            action_of("WebSurfer", "I typed 'x' into the search bar"),
            Action::WebBrowse
        );
        assert_eq!(
            action_of("Excel_Expert", "Here is the plan"),
            Action::Message
        );
    }

    #[test]
    fn code_block_is_the_last_fence() {
        let msg = "first\n```python\nprint(1)\n```\nthen\n```sh\npip install x\n```\nrun it";
        assert_eq!(last_code_block(msg), Some("pip install x\n"));
        assert_eq!(last_code_block("no code"), None);
    }

    /// Reads `json` as a Who&When file; returns the records written.
    fn read_records(json: &str) -> Vec<Value> {
        let mut out = Vec::new();
        let mut diag = crate::plumbing::diag::Diag::new("test", true);
        {
            let writer = crate::plumbing::framing::RecordWriter::new(
                Box::new(&mut out) as Box<dyn std::io::Write>,
                false,
            );
            let mut sink = Sink::new(
                writer,
                &mut diag,
                crate::plumbing::diag::OnBadInput::Stop,
                crate::adapters::settings::DecodeSettings::default(),
            );
            read(json.as_bytes(), &mut sink).unwrap();
            sink.flush().unwrap();
        }
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn hand_crafted_runs_name_the_speaker_in_role() {
        let json = r#"{"is_corrected": false, "question": "Which stop?", "ground_truth": "Elm St",
            "mistake_agent": "WebSurfer", "mistake_step": "2", "mistake_reason": "clicked the wrong link",
            "history": [
              {"role": "human", "content": "Which stop?"},
              {"role": "Orchestrator (-> WebSurfer)", "content": "Search the timetable."},
              {"role": "WebSurfer", "content": "I typed 'timetable' into the search bar."},
              {"role": "Orchestrator (thought)", "content": "Ask the terminal."},
              {"role": "ComputerTerminal", "content": "exitcode: 1 (execution failed)\nNameError: x"}
            ]}"#;
        let recs = read_records(json);
        let events: Vec<Value> = recs
            .iter()
            .filter(|r| r["kind"] == "event")
            .cloned()
            .collect();
        let agents: Vec<&str> = events
            .iter()
            .map(|e| e["agent_id"].as_str().unwrap())
            .collect();
        assert_eq!(
            agents,
            [
                "human",
                "Orchestrator",
                "WebSurfer",
                "Orchestrator",
                "ComputerTerminal"
            ]
        );
        let tools = crate::adapters::tool_names(&events);
        assert_eq!(
            tools,
            [
                "message",
                "message",
                "web_browse",
                "message",
                "code_execution"
            ]
        );
        assert_eq!(events[4]["action_succeeded"], false);
        assert_eq!(events[2]["step"], 2);
        let run = recs.iter().find(|r| r["kind"] == "run").unwrap();
        assert_eq!(run["outcome"], "failed");
        assert_eq!(run["task"], "Which stop?");
        assert_eq!(run["expected"], "Elm St");
        let all = serde_json::to_string(&recs).unwrap();
        assert!(
            !all.contains("mistake") && !all.contains("wrong link"),
            "labels must not leak: {all}"
        );
    }

    #[test]
    fn a_run_marked_correct_succeeded() {
        for (json, outcome) in [
            (r#"{"is_correct": true, "history": []}"#, "succeeded"),
            (r#"{"is_corrected": true, "history": []}"#, "failed"),
            (r#"{"is_correct": false, "history": []}"#, "failed"),
            (r#"{"history": []}"#, "failed"),
        ] {
            let recs = read_records(json);
            let run = recs.iter().find(|r| r["kind"] == "run").unwrap();
            assert_eq!(run["outcome"], outcome, "{json}");
        }
    }

    #[test]
    fn algorithm_generated_runs_name_the_speaker_in_name() {
        let json = r#"{"is_correct": false, "question": "Sum?", "ground_truth": "3", "question_ID": "q1",
            "history": [
              {"role": "assistant", "name": "Math_Expert", "content": "```python\nprint(1+1)\n```"},
              {"role": "user", "name": "Computer_terminal", "content": "exitcode: 0 (execution succeeded)\nCode output: 2"}
            ]}"#;
        let recs = read_records(json);
        let events: Vec<_> = recs.iter().filter(|r| r["kind"] == "event").collect();
        assert_eq!(events[0]["agent_id"], "Math_Expert");
        assert_eq!(events[1]["run_id"], "q1");
        assert_eq!(
            events[1]["input"], "print(1+1)\n",
            "a terminal's input is the code it ran"
        );
        assert_eq!(events[1]["action_succeeded"], true);
    }

    #[test]
    fn detection_needs_history_and_a_benchmark_key() {
        use crate::adapters::detect::detect;
        let whowhen = |head: &[u8]| detect(None, head) == FORMAT;
        assert!(whowhen(
            br#"{"is_correct": false, "question": "q", "history": []}"#
        ));
        assert!(!whowhen(br#"{"history": []}"#));
        assert!(!whowhen(br#"[{"question": "q", "history": []}]"#));
    }
}
