//! The `langsmith` format: LangSmith runs. The SDKs' batch payloads
//! (`{"post": [...], "patch": [...]}`), lists of runs and JSONL of runs, as
//! `client.list_runs` exports them. A run's create and update payloads are
//! merged by run id (an update may carry only its `dotted_order`); each
//! trace is one run of triage, its runs in `dotted_order`.

use std::collections::HashMap;
use std::io::Read;

use rayon::prelude::*;
use serde_json::{Map, Value};

use super::observations::{self, Node, decoded, describe, nanos_of, str_of, text_of};
use super::spans;
use super::{DecodeSettings, Sink, Unreadable};
use crate::record::ErrorInfo;
use crate::timestamp::Timestamp;

/// Metadata keys that name the agent a run belongs to.
const AGENT_KEYS: &[&str] = &[
    "gen_ai.agent.name",
    "lc_agent_name",
    "agent_name",
    "agent.name",
];

/// Reads LangSmith runs from `r` into `sink`; emits every trace at the end.
pub(crate) fn read(r: impl Read, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let mut runs = Runs::default();
    // Each line's payloads are found and cut to what is read on the pool;
    // merged here in order.
    let on_pool = |_: u64, value: Result<Value, Unreadable>| {
        let mut found = Payloads::default();
        match value {
            Ok(v) => found.collect(v),
            Err(reason) => found.reasons.push(reason.to_string()),
        }
        found
    };
    super::json_lines::values_with(r, sink, on_pool, |line, found, sink| {
        for (key, payload) in found.payloads {
            runs.merge(key, payload, line);
        }
        for reason in found.reasons {
            sink.skip(Some(line), &reason)?;
        }
        Ok(())
    })?;
    let nodes = runs.into_nodes(&sink.settings);
    observations::emit_runs(&nodes, &HashMap::new(), sink)
}

/// The run payloads one JSON value holds, by run id, and why parts of it
/// were not read.
#[derive(Default)]
struct Payloads {
    payloads: Vec<(String, Map<String, Value>)>,
    reasons: Vec<String>,
}

/// The members of a payload a run's node reads: the others are dropped as
/// soon as it is read.
const READ: &[&str] = &[
    "dotted_order",
    "extra",
    "name",
    "run_type",
    "parent_run_id",
    "trace_id",
    "inputs",
    "start_time",
    "end_time",
    "error",
    "status",
    "outputs",
];

impl Payloads {
    fn collect(&mut self, v: Value) {
        match v {
            Value::Array(items) => items.into_iter().for_each(|item| self.collect(item)),
            Value::Object(mut obj) => {
                let batch: Vec<Value> = ["post", "patch", "runs"]
                    .iter()
                    .filter_map(|k| obj.remove(*k))
                    .collect();
                if !batch.is_empty() {
                    return batch.into_iter().for_each(|b| self.collect(b));
                }
                match run_key(&obj) {
                    Some(key) => {
                        obj.retain(|k, _| READ.contains(&k.as_str()));
                        self.payloads.push((key, obj));
                    }
                    None => self
                        .reasons
                        .push("not a LangSmith run: no \"id\" or \"dotted_order\"".to_string()),
                }
            }
            other => self.reasons.push(format!(
                "expected a LangSmith run, got {}",
                describe(&other)
            )),
        }
    }
}

/// Run payloads merged by run id, in first-appearance order, with the line
/// each was first seen on.
#[derive(Default)]
struct Runs {
    order: Vec<String>,
    merged: HashMap<String, (Map<String, Value>, u64)>,
}

impl Runs {
    /// Merges a payload into its run: fields it sets win, except that an
    /// empty value never hides a filled one (a create payload's `"outputs":
    /// {}` read after the update's outputs).
    fn merge(&mut self, key: String, obj: Map<String, Value>, line: u64) {
        let (run, _) = self.merged.entry(key.clone()).or_insert_with(|| {
            self.order.push(key);
            (Map::new(), line)
        });
        for (k, v) in obj {
            let empty = match &v {
                Value::Null => true,
                Value::String(s) => s.is_empty(),
                Value::Array(a) => a.is_empty(),
                Value::Object(o) => o.is_empty(),
                _ => false,
            };
            if !empty || !run.contains_key(&k) {
                run.insert(k, v);
            }
        }
    }

    /// The runs' nodes, in first-appearance order, made on the pool.
    fn into_nodes(mut self, settings: &DecodeSettings) -> Vec<Node> {
        let runs: Vec<_> = std::mem::take(&mut self.order)
            .into_iter()
            .filter_map(|key| {
                let (run, line) = self.merged.remove(&key)?;
                Some((key, run, line))
            })
            .collect();
        runs.into_par_iter()
            .map(|(key, run, line)| node_of(&key, &run, line).cut(settings))
            .collect()
    }
}

/// A run's id: its `id`, else the id its `dotted_order` ends with.
fn run_key(obj: &Map<String, Value>) -> Option<String> {
    str_of(obj.get("id")).or_else(|| {
        let dotted = str_of(obj.get("dotted_order"))?;
        dotted_segments(&dotted)
            .last()
            .map(|(_, id)| id.to_string())
    })
}

/// The segments of a dotted order: each run from the root down as its start
/// time (`20241013T070537170001Z`) and its id.
fn dotted_segments(dotted: &str) -> Vec<(Option<i128>, &str)> {
    dotted
        .split('.')
        .filter_map(|seg| {
            let z = seg.find('Z')?;
            Some((dotted_time(&seg[..z]), &seg[z + 1..]))
        })
        .collect()
}

/// `YYYYMMDDTHHMMSSffffff` as Unix nanoseconds.
fn dotted_time(t: &str) -> Option<i128> {
    if t.len() < 15 || !t.is_ascii() {
        return None;
    }
    let iso = format!(
        "{}-{}-{}T{}:{}:{}.{}Z",
        &t[0..4],
        &t[4..6],
        &t[6..8],
        &t[9..11],
        &t[11..13],
        &t[13..15],
        &t[15..]
    );
    Timestamp::parse(&iso).map(|ts| ts.0)
}

fn node_of(id: &str, run: &Map<String, Value>, line: u64) -> Node {
    let dotted = str_of(run.get("dotted_order")).unwrap_or_default();
    let segments = dotted_segments(&dotted);
    let metadata = match run
        .get("extra")
        .and_then(|e| e.get("metadata"))
        .map(decoded)
    {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let meta_name = |keys: &[&str]| keys.iter().find_map(|k| str_of(metadata.get(*k)));
    let name = str_of(run.get("name")).unwrap_or_default();
    let kind = str_of(run.get("run_type"))
        .and_then(|t| observations::kind_from_run_type(&t))
        .unwrap_or("other");
    let parent = str_of(run.get("parent_run_id")).or_else(|| {
        let n = segments.len();
        (n >= 2).then(|| segments[n - 2].1.to_string())
    });
    let trace = str_of(run.get("trace_id"))
        .or_else(|| segments.first().map(|(_, root)| root.to_string()))
        .unwrap_or_else(|| id.to_string());
    let inputs = run.get("inputs");
    Node {
        run: trace,
        id: id.to_string(),
        parent,
        // The dotted order is the order: its last segment is the run's start.
        start: segments
            .last()
            .and_then(|(t, _)| *t)
            .or_else(|| nanos_of(run.get("start_time"))),
        end: nanos_of(run.get("end_time")),
        kind,
        agent: meta_name(AGENT_KEYS),
        span_agent: None,
        fallback_agent: meta_name(&["langgraph_node"]),
        tool: (kind == "tool").then(|| spans::tool_from_span_name(&name).to_string()),
        failure: failure_of(run),
        stated_ok: str_of(run.get("status")).is_some_and(|s| s.eq_ignore_ascii_case("success"))
            && failure_of(run).is_none(),
        input: inputs.and_then(input_text),
        tool_input: inputs.map(decoded),
        output: run.get("outputs").and_then(output_text),
        usage: run
            .get("outputs")
            .and_then(|o| o.get("usage_metadata"))
            .filter(|u| u.is_object())
            .cloned(),
        line: Some(line),
        name,
        ..Node::default()
    }
}

/// An `error` text is a failure the run states (`error`); `status: error`
/// without one is its status.
fn failure_of(run: &Map<String, Value>) -> Option<(&'static str, ErrorInfo)> {
    if let Some(error) = run.get("error").and_then(text_of) {
        return Some(("error", error_info(&error)));
    }
    let status = str_of(run.get("status"))?;
    status.eq_ignore_ascii_case("error").then(|| {
        let message = Some("the run's status is error".to_string());
        (
            "status",
            ErrorInfo {
                kind: None,
                message,
            },
        )
    })
}

/// The type and message of a Python or JS error text: `ValueError('boom')`,
/// `ValueError: boom`, or a traceback after either.
fn error_info(text: &str) -> ErrorInfo {
    let line = crate::classify::first_line(text);
    let ident_end = line
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(line.len());
    let ident = &line[..ident_end];
    let rest = &line[ident_end..];
    let typed = !ident.is_empty()
        && ident.chars().next().is_some_and(char::is_uppercase)
        && (rest.starts_with('(') || rest.starts_with(':'));
    ErrorInfo {
        kind: typed.then(|| ident.to_string()),
        message: Some(line),
    }
}

/// The text of a run's inputs: a single text field as it is, else JSON.
fn input_text(inputs: &Value) -> Option<String> {
    single_text(inputs).or_else(|| text_of(inputs))
}

/// The text of a run's outputs: a chat completion's message, a single text
/// field, else JSON.
fn output_text(outputs: &Value) -> Option<String> {
    let message = outputs
        .pointer("/choices/0/message/content")
        .or_else(|| outputs.pointer("/generations/0/0/text"))
        .and_then(text_of);
    message
        .or_else(|| single_text(outputs))
        .or_else(|| text_of(outputs))
}

fn single_text(v: &Value) -> Option<String> {
    match v.as_object()? {
        m if m.len() == 1 => m
            .values()
            .next()
            .and_then(Value::as_str)
            .map(str::to_string),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::Format;
    use super::super::observations::split_records;
    use serde_json::{Value, json};

    fn records(input: &str) -> (Vec<Value>, Vec<Value>, Value) {
        split_records(Format::Langsmith, "t.json", input)
    }

    const ROOT: &str = "20250101T000000000000Zaaaa";

    #[test]
    fn updates_merge_into_creates_and_dotted_order_orders() {
        let child = format!("{ROOT}.20250101T000001000000Zbbbb");
        let late = format!("{ROOT}.20250101T000002000000Zcccc");
        let doc = json!({"post": [
            {"id": "cccc", "name": "search", "run_type": "tool", "trace_id": "aaaa", "dotted_order": late,
             "inputs": {"q": "x"}, "extra": {"metadata": {"langgraph_node": "tools"}}},
            {"id": "bbbb", "name": "ChatOpenAI", "run_type": "llm", "trace_id": "aaaa", "dotted_order": child,
             "outputs": {}},
            {"id": "aaaa", "name": "agent", "run_type": "chain", "trace_id": "aaaa", "dotted_order": ROOT,
             "inputs": {"question": "what?"}, "extra": {"metadata": {"lc_agent_name": "helper"}}}],
          "patch": [
            {"dotted_order": child, "trace_id": "aaaa", "outputs": {"choices": [{"message": {"content": "hi"}}]}},
            {"id": "cccc", "error": "ValueError('index closed')\n\nTraceback ..."}]});
        let (evs, runs, source) = records(&doc.to_string());
        let ids: Vec<_> = evs
            .iter()
            .map(|e| e["event_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["aaaa", "bbbb", "cccc"]);
        let agents: Vec<_> = evs
            .iter()
            .map(|e| e["agent_id"].as_str().unwrap())
            .collect();
        assert_eq!(agents, ["helper", "helper", "helper"]);
        assert_eq!(evs[1]["output"], "hi");
        assert_eq!(evs[1]["parent_span_id"], "aaaa");
        assert_eq!(evs[2]["action_taken"]["tool_name"], "search");
        assert_eq!(evs[2]["action_succeeded"], false);
        assert_eq!(evs[2]["failure_source"], "error");
        assert_eq!(
            evs[2]["error"],
            json!({"type": "ValueError", "message": "ValueError('index closed')"})
        );
        assert_eq!(evs[0]["timestamp"], "2025-01-01T00:00:00Z");
        assert_eq!(
            runs,
            [json!({"kind": "run", "run_id": "aaaa", "outcome": "failed", "task": "what?"})]
        );
        assert_eq!(source["skipped"], 0);
    }

    #[test]
    fn an_error_over_silent_children_is_inherited_by_the_last() {
        let run = |id: &str, parent: Option<&str>, start: u64, error: Option<&str>| {
            json!({"id": id, "trace_id": "p", "parent_run_id": parent, "name": id, "run_type": "chain",
                   "start_time": start, "error": error})
            .to_string()
        };
        let input = [
            run(
                "p",
                None,
                1_700_000_000_000,
                Some("GraphRecursionError: limit of 25 reached"),
            ),
            run("b", Some("p"), 1_700_000_002_000, None),
            run("a", Some("p"), 1_700_000_001_000, None),
        ]
        .join("\n");
        let (evs, _, _) = records(&input);
        let got: Vec<_> = evs
            .iter()
            .map(|e| (e["event_id"].as_str().unwrap(), &e["failure_source"]))
            .collect();
        assert_eq!(
            got,
            [
                ("p", &json!("error")),
                ("a", &Value::Null),
                ("b", &json!("inherited"))
            ]
        );
        assert_eq!(evs[2]["error"]["type"], "GraphRecursionError");
        assert_eq!(evs[2]["failure_inferred"], true);
        assert_eq!(evs[0].get("failure_inferred"), None);
    }

    /// A root run that states success is the run's verdict: a tool error
    /// below it, which the agent got past, stays a failure event.
    #[test]
    fn a_root_status_is_the_outcome_and_a_recovered_failure_stays_an_event() {
        let run = |id: &str, parent: Option<&str>, status: &str, error: Option<&str>| {
            json!({"id": id, "trace_id": "t", "parent_run_id": parent, "name": id,
                   "run_type": if parent.is_some() { "tool" } else { "chain" },
                   "start_time": 1_700_000_000_000u64, "status": status, "error": error})
            .to_string()
        };
        let recovered = [
            run("t", None, "success", None),
            run(
                "x",
                Some("t"),
                "error",
                Some("TimeoutError: search took 30 s"),
            ),
        ]
        .join("\n");
        let (evs, runs, _) = records(&recovered);
        assert_eq!(evs[1]["action_succeeded"], false);
        assert_eq!(runs[0]["outcome"], "succeeded");
        let failed = [
            run("t", None, "error", Some("ValueError: no answer")),
            run("x", Some("t"), "success", None),
        ]
        .join("\n");
        assert_eq!(records(&failed).1[0]["outcome"], "failed");
        // No verdict stated by the root: a failure anywhere fails the run.
        let unstated = [
            run("t", None, "pending", None),
            run("x", Some("t"), "error", Some("TimeoutError")),
        ]
        .join("\n");
        assert_eq!(records(&unstated).1[0]["outcome"], "failed");
    }

    #[test]
    fn jsonl_runs_and_unreadable_lines() {
        let input = "{\"id\":\"r\",\"name\":\"n\",\"run_type\":\"chain\",\"start_time\":1728803137170,\"status\":\"error\"}\n{\"foo\":1}\n";
        let (evs, runs, source) = records(input);
        assert_eq!(evs.len(), 1);
        assert_eq!(evs[0]["failure_source"], "status");
        assert_eq!(evs[0]["timestamp"], "2024-10-13T07:05:37.17Z");
        assert_eq!(runs[0]["outcome"], "failed");
        assert_eq!(source["skipped"], 1);
    }
}
