//! The `langsmith` format: LangSmith runs. The SDKs' batch payloads
//! (`{"post": [...], "patch": [...]}`), lists of runs and JSONL of runs, as
//! `client.list_runs` exports them. A run's create and update payloads are
//! merged by run id (an update may carry only its `dotted_order`); each
//! trace is one run of triage, its runs in `dotted_order`, emitted once
//! complete (see `trace_window`): an update that comes after is late.

use std::io::Read;

// Maps of one trace's runs, never iterated: the fast hash will do.
use rustc_hash::FxHashMap as HashMap;
use serde_json::{Map, Value};

use crate::adapters::formats::Format;
use crate::adapters::read::pruned_value::{Members, names};
use crate::adapters::read::shape::Shape;
use crate::adapters::read::spans;
use crate::adapters::read::trace_window::{Hold, Traces, Window, push_held, warn_late};
use crate::adapters::read::tree::{Carried, Node, RunEmitter};
use crate::adapters::read::value::{decoded, describe, nanos_of, str_of, text_of};
use crate::adapters::settings::DecodeSettings;
use crate::adapters::sink::Sink;
use crate::adapters::unreadable::Unreadable;
use crate::record::{ErrorInfo, FailureSource};
use crate::timestamp::Timestamp;

/// Metadata keys that name the agent a run belongs to.
const AGENT_KEYS: &[&str] = &[
    "gen_ai.agent.name",
    "lc_agent_name",
    "agent_name",
    "agent.name",
];

/// The members of run payloads and of the batches that hold them that
/// this reader looks at; the rest of each line (a run's `serialized`
/// signature, its events) is skipped as it is parsed.
static MEMBERS: Members = Members {
    kept: &[
        "id",
        "dotted_order",
        "trace_id",
        "parent_run_id",
        "name",
        "run_type",
        "start_time",
        "end_time",
        "status",
        "error",
        "inputs",
        "outputs",
    ],
    within: &[
        ("post", &MEMBERS),
        ("patch", &MEMBERS),
        ("runs", &MEMBERS),
        ("extra", &EXTRA),
    ],
};

/// What is read of a run's `extra`: the names of its metadata that say
/// the agent.
static EXTRA: Members = Members {
    kept: &[],
    within: &[("metadata", &EXTRA_METADATA)],
};

static EXTRA_METADATA: Members = Members {
    kept: &EXTRA_METADATA_NAMES,
    within: &[],
};

const EXTRA_METADATA_NAMES: [&str; 5] = names(&[AGENT_KEYS, &["langgraph_node"]]);

/// Reads LangSmith runs from `r` into `sink`; emits each trace once
/// complete (see `trace_window`).
pub(crate) fn read(r: impl Read + Send, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let settings = sink.settings.clone();
    let mut window = Window::new(sink.settings.trace_window, Runs::default());
    // Each line's payloads are found and read on the pool; merged here in
    // order.
    let on_pool = |_: u64, value: Result<Value, Unreadable>| {
        let mut found = Payloads::default();
        match value {
            Ok(v) => found.collect(v, &settings),
            Err(reason) => found.reasons.push(reason.to_string()),
        }
        found
    };
    crate::adapters::read::lines::streamed_values(
        r,
        sink,
        Some(&MEMBERS),
        on_pool,
        |line, found, sink| {
            for reason in found.reasons {
                sink.skip(Some(line), &reason)?;
            }
            for payload in found.payloads {
                // An update goes to the trace its run is held in, whatever
                // it says of its trace.
                let trace = window.traces().trace_of(&payload.key);
                let trace = trace.map_or(payload.trace, str::to_string);
                window.push((Payload { trace, ..payload }, line), sink)?;
            }
            Ok(())
        },
    )?;
    let (_, late) = window.finish(sink)?;
    warn_late(late, "late-run", ("run payloads", "payload"), sink);
    Ok(())
}

/// The run payloads one JSON value holds, each read into what its run's
/// node needs, and why parts of it were not read.
#[derive(Default)]
struct Payloads {
    payloads: Vec<Payload>,
    reasons: Vec<String>,
}

impl Payloads {
    fn collect(&mut self, v: Value, settings: &DecodeSettings) {
        match v {
            Value::Array(items) => items
                .into_iter()
                .for_each(|item| self.collect(item, settings)),
            Value::Object(mut obj) => {
                let batch: Vec<Value> = ["post", "patch", "runs"]
                    .iter()
                    .filter_map(|k| obj.remove(*k))
                    .collect();
                if !batch.is_empty() {
                    return batch.into_iter().for_each(|b| self.collect(b, settings));
                }
                match run_key(&obj) {
                    Some(key) => {
                        let fields = Fields::of(&obj, settings);
                        let trace = fields.trace().unwrap_or_else(|| key.clone());
                        self.payloads.push(Payload { trace, key, fields });
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

/// One create or update payload of a run.
struct Payload {
    /// The trace it belongs to.
    trace: String,
    /// The run's id.
    key: String,
    fields: Fields,
}

/// A member of a run as a payload sets it: not at all, to an empty value
/// (`null`, `""`, `[]`, `{}`), or to a value; what the node reads of it
/// either way.
#[derive(Debug, Default)]
enum Slot<T> {
    #[default]
    Absent,
    Empty(T),
    Set(T),
}

impl<T> Slot<T> {
    fn of(v: Option<&Value>, read: impl FnOnce(&Value) -> T) -> Self {
        match v {
            None => Slot::Absent,
            Some(v) if is_empty(v) => Slot::Empty(read(v)),
            Some(v) => Slot::Set(read(v)),
        }
    }

    /// Merges what a later payload sets: a value wins, except that an
    /// empty one never hides a filled one (a create payload's `"outputs":
    /// {}` read after the update's outputs).
    fn merge(&mut self, later: Slot<T>) {
        match (&*self, later) {
            (_, Slot::Absent) | (Slot::Empty(_) | Slot::Set(_), Slot::Empty(_)) => {}
            (_, later) => *self = later,
        }
    }

    fn get(&self) -> Option<&T> {
        match self {
            Slot::Absent => None,
            Slot::Empty(t) | Slot::Set(t) => Some(t),
        }
    }
}

impl<T: Clone> Slot<Option<T>> {
    /// What the member says, if it says anything.
    fn value(&self) -> Option<T> {
        self.get().cloned().flatten()
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// What a run's node reads of its payloads, member by member, each read
/// (texts cut) as soon as its payload is: a run held until its trace is
/// complete is held small.
#[derive(Debug, Default)]
struct Fields {
    dotted_order: Slot<Dotted>,
    /// The agent and the fallback agent `extra.metadata` names.
    extra: Slot<(Option<String>, Option<String>)>,
    name: Slot<Option<String>>,
    run_type: Slot<Option<String>>,
    parent_run_id: Slot<Option<String>>,
    trace_id: Slot<Option<String>>,
    /// The input text and its digest, and the inputs of a tool run.
    inputs: Slot<(Option<CutText>, Option<Value>)>,
    start_time: Slot<Option<i128>>,
    end_time: Slot<Option<i128>>,
    error: Slot<Option<ErrorInfo>>,
    status: Slot<Option<String>>,
    /// The output text and its digest, and the usage as JSON text: held
    /// as a value, a map of maps takes ten times the room.
    outputs: Slot<(Option<CutText>, Option<String>)>,
}

/// A text cut to the configured size, and the digest of the whole.
type CutText = (String, String);

/// What a dotted order says: the run's start, its parent and the trace's
/// root.
#[derive(Debug)]
struct Dotted {
    start: Option<i128>,
    parent: Option<String>,
    root: Option<String>,
}

impl Fields {
    fn of(run: &Map<String, Value>, settings: &DecodeSettings) -> Self {
        let text = |t: Option<String>| t.map(|t| settings.text(&t));
        let run_type = Slot::of(run.get("run_type"), |v| str_of(Some(v)));
        let tool_or_unknown = run_type
            .get()
            .is_none_or(|t| kind_of(t.as_deref()) == "tool");
        Fields {
            dotted_order: Slot::of(run.get("dotted_order"), |v| {
                let dotted = str_of(Some(v)).unwrap_or_default();
                let segments = dotted_segments(&dotted);
                let n = segments.len();
                Dotted {
                    start: segments.last().and_then(|(t, _)| *t),
                    parent: (n >= 2).then(|| segments[n - 2].1.to_string()),
                    root: segments.first().map(|(_, root)| root.to_string()),
                }
            }),
            extra: Slot::of(run.get("extra"), |extra| {
                let metadata = extra.get("metadata").map(decoded);
                let metadata = metadata.as_deref().and_then(Value::as_object);
                let name = |keys: &[&str]| {
                    debug_assert!(
                        keys.iter().all(|k| EXTRA_METADATA.kept.contains(k)),
                        "{keys:?} are looked up in extra.metadata but not all read"
                    );
                    keys.iter()
                        .find_map(|k| str_of(metadata.and_then(|m| m.get(*k))))
                };
                (name(AGENT_KEYS), name(&["langgraph_node"]))
            }),
            name: Slot::of(run.get("name"), |v| str_of(Some(v))),
            run_type,
            parent_run_id: Slot::of(run.get("parent_run_id"), |v| str_of(Some(v))),
            trace_id: Slot::of(run.get("trace_id"), |v| str_of(Some(v))),
            inputs: Slot::of(run.get("inputs"), |v| {
                let tool_input = Some(v)
                    .filter(|_| tool_or_unknown)
                    .map(|v| decoded(v).into_owned())
                    .filter(Value::is_object);
                (text(input_text(v)), tool_input)
            }),
            start_time: Slot::of(run.get("start_time"), |v| nanos_of(Some(v))),
            end_time: Slot::of(run.get("end_time"), |v| nanos_of(Some(v))),
            error: Slot::of(run.get("error"), |v| text_of(v).map(|e| error_info(&e))),
            status: Slot::of(run.get("status"), |v| str_of(Some(v))),
            outputs: Slot::of(run.get("outputs"), |v| {
                let usage = v
                    .get("usage_metadata")
                    .filter(|u| u.is_object())
                    .map(Value::to_string);
                (text(output_text(v)), usage)
            }),
        }
    }

    /// Merges a later payload of the same run.
    fn merge(&mut self, later: Fields) {
        self.dotted_order.merge(later.dotted_order);
        self.extra.merge(later.extra);
        self.name.merge(later.name);
        self.run_type.merge(later.run_type);
        self.parent_run_id.merge(later.parent_run_id);
        self.trace_id.merge(later.trace_id);
        self.inputs.merge(later.inputs);
        self.start_time.merge(later.start_time);
        self.end_time.merge(later.end_time);
        self.error.merge(later.error);
        self.status.merge(later.status);
        self.outputs.merge(later.outputs);
        if self.kind() != "tool"
            && let Slot::Empty((_, tool_input)) | Slot::Set((_, tool_input)) = &mut self.inputs
        {
            *tool_input = None;
        }
    }

    fn dotted(&self) -> Option<&Dotted> {
        self.dotted_order.get()
    }

    /// The trace its `trace_id` or its dotted order's root names.
    fn trace(&self) -> Option<String> {
        self.trace_id
            .value()
            .or_else(|| self.dotted()?.root.clone())
    }

    fn parent(&self) -> Option<String> {
        self.parent_run_id
            .value()
            .or_else(|| self.dotted()?.parent.clone())
    }

    fn end(&self) -> Option<i128> {
        self.end_time.value()
    }

    /// The dotted order is the order: its last segment is the run's start.
    fn start(&self) -> Option<i128> {
        self.dotted()
            .and_then(|d| d.start)
            .or_else(|| self.start_time.value())
    }

    fn kind(&self) -> &'static str {
        kind_of(self.run_type.get().and_then(Option::as_deref))
    }

    /// An `error` text is a failure the run states (`error`); `status:
    /// error` without one is its status.
    fn failure(&self) -> Option<(FailureSource, ErrorInfo)> {
        if let Some(error) = self.error.value() {
            return Some((FailureSource::Error, error));
        }
        let status = self.status.get()?.as_deref()?;
        status.eq_ignore_ascii_case("error").then(|| {
            let message = Some("the run's status is error".to_string());
            (
                FailureSource::Status,
                ErrorInfo {
                    kind: None,
                    message,
                },
            )
        })
    }

    /// The run's node; `id` its id, `trace` the trace it was held in.
    fn into_node(self, id: &str, trace: &str) -> Node {
        let kind = self.kind();
        let name = self.name.value().unwrap_or_default();
        let failure = self.failure();
        let stated_ok = self
            .status
            .get()
            .and_then(Option::as_deref)
            .is_some_and(|s| s.eq_ignore_ascii_case("success"))
            && failure.is_none();
        let (agent, fallback_agent) = self.extra.get().cloned().unwrap_or_default();
        let (start, end, parent) = (self.start(), self.end(), self.parent());
        let run = self.trace().unwrap_or_else(|| trace.to_string());
        let (input, tool_input) = match self.inputs {
            Slot::Absent => (None, None),
            Slot::Empty(i) | Slot::Set(i) => i,
        };
        let (output, usage) = match self.outputs {
            Slot::Absent => (None, None),
            Slot::Empty(o) | Slot::Set(o) => o,
        };
        let (input, input_digest) = input.unzip();
        let (output, output_digest) = output.unzip();
        Node {
            run,
            id: id.to_string(),
            parent,
            start,
            end,
            kind,
            agent,
            span_agent: None,
            fallback_agent,
            tool: (kind == "tool").then(|| spans::tool_from_span_name(&name).to_string()),
            failure,
            stated_ok,
            input,
            input_digest,
            tool_input: tool_input.filter(|_| kind == "tool"),
            output,
            output_digest,
            usage: usage.and_then(|u| serde_json::from_str(&u).ok()),
            name,
            ..Node::default()
        }
    }
}

/// The event kind of a run type; "other" when it has none.
fn kind_of(run_type: Option<&str>) -> &'static str {
    run_type
        .and_then(spans::kind_from_run_type)
        .unwrap_or("other")
}

/// One run of a held trace, its payloads merged.
struct HeldRun {
    key: String,
    fields: Fields,
    /// The line it was first seen on.
    line: u64,
    seq: usize,
}

/// One trace's runs, in first-appearance order.
#[derive(Default)]
struct HeldRuns {
    runs: Vec<HeldRun>,
    index: HashMap<String, usize>,
}

/// How run payloads are held and emitted: merged by run id, numbered in
/// first-appearance order.
#[derive(Default)]
struct Runs {
    seq: usize,
    /// The trace each run of a held trace is held in.
    held: HashMap<String, String>,
    emitter: RunEmitter,
}

impl Runs {
    /// The trace the run `key` is held in, if it is.
    fn trace_of(&self, key: &str) -> Option<&str> {
        self.held.get(key).map(String::as_str)
    }
}

impl Traces for Runs {
    type Item = (Payload, u64);
    type Held = HeldRuns;
    type Carried = Carried;

    fn trace_id((payload, _): &(Payload, u64)) -> &str {
        &payload.trace
    }

    fn time((payload, _): &(Payload, u64)) -> Option<i128> {
        payload.fields.end().or_else(|| payload.fields.start())
    }

    fn hold(&mut self, trace: &mut HeldRuns, (payload, line): (Payload, u64)) -> Hold {
        let run = match trace.index.get(&payload.key) {
            Some(&i) => {
                trace.runs[i].fields.merge(payload.fields);
                &trace.runs[i]
            }
            None => {
                self.held.insert(payload.key.clone(), payload.trace);
                trace.index.insert(payload.key.clone(), trace.runs.len());
                let run = HeldRun {
                    key: payload.key,
                    fields: payload.fields,
                    line,
                    seq: self.seq,
                };
                push_held(&mut trace.runs, run);
                self.seq += 1;
                &trace.runs[trace.runs.len() - 1]
            }
        };
        let ends_root = run.fields.parent().is_none() && run.fields.end().is_some();
        Hold::Kept { ends_root }
    }

    fn emit(
        &mut self,
        trace: HeldRuns,
        carried: Option<Carried>,
        sink: &mut Sink<'_>,
    ) -> anyhow::Result<Option<Carried>> {
        let nodes: Vec<Node> = trace
            .runs
            .into_iter()
            .map(|run| {
                let held = self.held.remove(&run.key).unwrap_or_default();
                Node {
                    line: Some(run.line),
                    seq: run.seq,
                    ..run.fields.into_node(&run.key, &held)
                }
            })
            .collect();
        self.emitter
            .emit_trace(&nodes, &std::collections::HashMap::new(), carried, sink)
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

/// The `langsmith` row of the format table.
pub(crate) const FORMAT: Format = Format {
    name: "langsmith",
    help: "LangSmith runs: create/update payloads, lists or JSONL of runs.",
    claims: Some(claims),
    read: |r, _, sink| read(r, sink),
};

/// The LangSmith SDK's batch payload, or a run.
fn claims(shape: &Shape<'_>) -> bool {
    (!shape.top_is_list && (shape.has("post") || shape.has("patch")))
        || shape.has("dotted_order")
        || shape.has("run_type")
}

#[cfg(test)]
mod tests {

    use crate::adapters::split_records;
    use serde_json::{Value, json};

    fn records(input: &str) -> (Vec<Value>, Vec<Value>, Value) {
        split_records(crate::adapters::formats::langsmith::FORMAT, "t.json", input)
    }

    const ROOT: &str = "20250101T000000000000Zaaaa";

    /// Every member the reader looks at is in [`super::MEMBERS`]: each
    /// line of each real export reads the same pruned as whole.
    #[test]
    fn real_exports_read_the_same_with_only_the_members_read() {
        let settings = super::DecodeSettings::default();
        let mut read = 0;
        for (path, whole) in crate::adapters::read::pruned_value::export_values("langsmith") {
            let mut line = whole.to_string().into_bytes();
            let pruned = super::MEMBERS.parse(&mut line).unwrap();
            let payloads = |v: Value| {
                let mut found = super::Payloads::default();
                found.collect(v, &settings);
                let payloads: Vec<_> = found
                    .payloads
                    .iter()
                    .map(|p| format!("{} {} {:?}", p.trace, p.key, p.fields))
                    .collect();
                (payloads, found.reasons)
            };
            let (from_whole, from_pruned) = (payloads(whole), payloads(pruned));
            assert_eq!(from_whole, from_pruned, "{path:?}");
            read += from_whole.0.len();
        }
        assert!(read >= 20, "{read} payloads");
    }

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
            [
                json!({"kind": "run", "run_id": "aaaa", "outcome": "failed", "reason": "error", "task": "what?"})
            ]
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

    /// LangChain records a tool's exception on every run it leaves: the
    /// tool failed, and the chains above only passed that failure up.
    #[test]
    fn an_error_passed_up_the_runs_is_the_tools_alone() {
        let run = |id: &str, parent: Option<&str>, start: u64, run_type: &str| {
            json!({"id": id, "trace_id": "p", "parent_run_id": parent, "name": id, "run_type": run_type,
                   "start_time": start, "error": "KeyError('A-17')"})
            .to_string()
        };
        let input = [
            run("p", None, 1_700_000_000_000, "chain"),
            run("t", Some("p"), 1_700_000_001_000, "tool"),
        ]
        .join("\n");
        let (evs, runs, _) = records(&input);
        let failed: Vec<_> = evs
            .iter()
            .map(|e| (e["event_id"].as_str().unwrap(), &e["action_succeeded"]))
            .collect();
        assert_eq!(failed, [("p", &json!(true)), ("t", &json!(false))]);
        assert_eq!(runs[0]["outcome"], "failed");
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
