//! What the exports of tracing platforms and agent event logs share
//! (`langfuse`, `langsmith`, `managed-agent`, `atif`): reading a file as a
//! stream of JSON values whatever its framing, JSON nested inside strings,
//! texts of inputs and outputs, and emitting a trace's observations as
//! events in tree order with each one's agent resolved (a trace at a time,
//! once the reader's window has it complete).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::spans::{self, RecentIds, TreeNode};
use super::{DecodeSettings, Sink, Unreadable};
use crate::record::{ErrorInfo, EventOut, JsonVal, Outcome, OutcomeReason, RunRec, Src};
use crate::timestamp::Timestamp;

// ---- framing: one document, a list, JSONL, concatenated documents ----

/// Every JSON value of `doc` in order with the line it starts on, or why a
/// part could not be read. When the first line holds a whole value the
/// input is JSONL: each line is read on its own, so a bad line costs that
/// line. Otherwise it is one or more documents one after another, read
/// until the first one that is broken (what follows cannot be told apart).
pub(crate) fn json_values(
    doc: &[u8],
) -> Box<dyn Iterator<Item = (u64, Result<Value, Unreadable>)> + '_> {
    let doc = doc.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(doc);
    let mut lines = doc.split(|b| *b == b'\n');
    let first = lines.find(|l| !l.trim_ascii().is_empty());
    let multi_line = first.is_some_and(
        |l| matches!(serde_json::from_slice::<serde::de::IgnoredAny>(l), Err(e) if e.is_eof()),
    );
    if !multi_line {
        return Box::new(
            doc.split(|b| *b == b'\n')
                .enumerate()
                .filter(|(_, l)| !l.trim_ascii().is_empty())
                .map(|(i, l)| (i as u64 + 1, value_of_line(l))),
        );
    }
    if let Err(e) = std::str::from_utf8(doc) {
        let line = 1 + memchr::memchr_iter(b'\n', &doc[..e.valid_up_to()]).count() as u64;
        return Box::new(std::iter::once((line, Err(Unreadable::NotUtf8))));
    }
    Box::new(Documents {
        doc,
        stream: serde_json::Deserializer::from_slice(doc).into_iter(),
        lines: LineCounter::default(),
        done: false,
    })
}

fn value_of_line(line: &[u8]) -> Result<Value, Unreadable> {
    if std::str::from_utf8(line).is_err() {
        return Err(Unreadable::NotUtf8);
    }
    serde_json::from_slice(line).map_err(|e| Unreadable::Json(crate::io::diag::json_reason(&e)))
}

/// Documents one after another, up to the first broken one.
struct Documents<'d> {
    doc: &'d [u8],
    stream: serde_json::StreamDeserializer<'d, serde_json::de::SliceRead<'d>, Value>,
    lines: LineCounter,
    done: bool,
}

impl Iterator for Documents<'_> {
    type Item = (u64, Result<Value, Unreadable>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let start = self.stream.byte_offset();
        let space = self.doc[start..]
            .iter()
            .take_while(|b| b.is_ascii_whitespace());
        let line = self.lines.at(self.doc, start + space.count());
        match self.stream.next()? {
            Ok(v) => Some((line, Ok(v))),
            Err(e) => {
                self.done = true;
                let at = if e.line() > 0 { e.line() as u64 } else { line };
                let why = crate::io::diag::json_reason(&e);
                Some((at, Err(Unreadable::Json(why))))
            }
        }
    }
}

/// Line numbers of offsets that only grow, counted once.
#[derive(Default)]
struct LineCounter {
    offset: usize,
    line: u64,
}

impl LineCounter {
    fn at(&mut self, doc: &[u8], offset: usize) -> u64 {
        self.line += memchr::memchr_iter(b'\n', &doc[self.offset..offset]).count() as u64;
        self.offset = offset;
        self.line + 1
    }
}

// ---- values: nested JSON, texts, times ----

/// A value with JSON written inside strings decoded (twice-encoded JSON
/// too); texts that are not JSON objects or lists stay as they are, and
/// are borrowed, not copied.
pub(crate) fn decoded(v: &Value) -> Cow<'_, Value> {
    let mut out = Cow::Borrowed(v);
    for _ in 0..2 {
        let inner = match out.as_ref() {
            Value::String(s) if holds_json(s) => serde_json::from_str::<Value>(s).ok(),
            _ => None,
        };
        match inner {
            Some(inner) => out = Cow::Owned(inner),
            None => break,
        }
    }
    out
}

/// [`decoded`], of a value the caller owns.
pub(crate) fn decoded_owned(v: Value) -> Value {
    match decoded(&v) {
        Cow::Owned(inner) => inner,
        Cow::Borrowed(_) => v,
    }
}

/// Whether a text may be JSON worth decoding: an object, a list or a
/// string.
fn holds_json(s: &str) -> bool {
    let t = s.trim_start();
    t.starts_with('{') || t.starts_with('[') || t.starts_with('"')
}

/// The text of an input or output: a string (decoded when it holds JSON
/// text), the text parts of a content list, or compact JSON.
pub(crate) fn text_of(v: &Value) -> Option<String> {
    match decoded(v).as_ref() {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) if !parts.is_empty() && parts.iter().all(is_text_part) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        other => Some(other.to_string()),
    }
    .filter(|t| !t.trim().is_empty())
}

/// A content block of type "text" (the Anthropic and OpenAI shape).
fn is_text_part(p: &Value) -> bool {
    p.get("type").and_then(Value::as_str) == Some("text")
        && p.get("text").is_some_and(Value::is_string)
}

/// What kind of JSON value `v` is, for a message.
pub(crate) fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Non-empty text of a JSON string, or of a number.
pub(crate) fn str_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A time written as ISO 8601 (any offset), as [seconds, nanoseconds], or
/// as an epoch number in seconds, milliseconds, microseconds or nanoseconds
/// (told apart by size; integers are read exactly, never through a float),
/// as Unix nanoseconds.
pub(crate) fn nanos_of(v: Option<&Value>) -> Option<i128> {
    let nanos = match v? {
        Value::String(s) => match s.trim().parse::<i128>() {
            Ok(n) => epoch_integer(n),
            Err(_) => Timestamp::parse(s).map(|t| t.0),
        },
        Value::Number(n) => match n.as_i64() {
            Some(i) => epoch_integer(i128::from(i)),
            None => n
                .as_f64()
                .and_then(Timestamp::from_epoch_number)
                .map(|t| t.0),
        },
        // [seconds, nanoseconds], as JavaScript's hrtime writes it.
        Value::Array(pair) => match pair.as_slice() {
            [Value::Number(s), Value::Number(ns)] => {
                Some(i128::from(s.as_i64()?) * 1_000_000_000 + i128::from(ns.as_i64()?))
            }
            _ => None,
        },
        _ => None,
    };
    nanos.filter(|n| *n > 0)
}

fn epoch_integer(n: i128) -> Option<i128> {
    Some(match n.abs() {
        a if a < 100_000_000_000 => n * 1_000_000_000,
        a if a < 100_000_000_000_000 => n * 1_000_000,
        a if a < 100_000_000_000_000_000 => n * 1_000,
        _ => n,
    })
}

/// The event `span_kind` a LangSmith run type (also a Langfuse
/// observation's `langsmith.span.kind`) stands for.
pub(crate) fn kind_from_run_type(run_type: &str) -> Option<&'static str> {
    Some(match run_type.to_ascii_lowercase().as_str() {
        "llm" | "chat_model" => "llm",
        "tool" => "tool",
        "retriever" | "embedding" => "retrieval",
        "chain" | "prompt" | "parser" => "other",
        _ => return None,
    })
}

// ---- one observation (span, run, step) as an event ----

/// One observation of a trace, decoded: what its event needs. Texts are
/// whole; they are cut when the event is made.
#[derive(Debug, Default)]
pub(crate) struct Node {
    pub run: String,
    pub id: String,
    pub parent: Option<String>,
    pub start: Option<i128>,
    pub end: Option<i128>,
    pub name: String,
    pub kind: &'static str,
    /// The agent the observation names in an attribute; children without
    /// one inherit it.
    pub agent: Option<String>,
    /// The agent an agent span's name names, taken when no ancestor named
    /// one (nested agent spans of a framework are steps of the outer agent).
    pub span_agent: Option<String>,
    /// The agent to fall back on when neither it nor an ancestor names
    /// one: a LangGraph node, then the service.
    pub fallback_agent: Option<String>,
    pub tool: Option<String>,
    /// Why it failed (status, error, exception) and the error.
    pub failure: Option<(&'static str, ErrorInfo)>,
    /// The observation states that it succeeded (LangSmith's `status:
    /// success`): on a root, the run's own verdict.
    pub stated_ok: bool,
    pub input: Option<String>,
    pub tool_input: Option<Value>,
    pub output: Option<String>,
    /// Digests of the whole texts, once [`Node::cut`] cut them.
    pub input_digest: Option<String>,
    pub output_digest: Option<String>,
    pub usage: Option<Value>,
    pub line: Option<u64>,
    /// Its position among the input's observations, which tells apart
    /// events that share an id.
    pub seq: usize,
}

impl Node {
    /// Cuts the texts to the configured size (keeping the digests of the
    /// whole) and drops what its event will not use, so a large export's
    /// observations are held small until their trace is emitted.
    pub(crate) fn cut(mut self, settings: &DecodeSettings) -> Self {
        let cut = |text: Option<String>| match text {
            Some(t) => {
                let (kept, digest) = settings.text(&t);
                (Some(kept), Some(digest))
            }
            None => (None, None),
        };
        (self.input, self.input_digest) = cut(self.input.take());
        (self.output, self.output_digest) = cut(self.output.take());
        if self.kind != "tool" {
            self.tool_input = None;
        }
        self
    }
}

impl TreeNode for Node {
    fn node_id(&self) -> &str {
        &self.id
    }
    fn parent_id(&self) -> Option<&str> {
        self.parent.as_deref()
    }
    fn start_nanos(&self) -> Option<i128> {
        self.start
    }
}

/// What a trace's run record says besides its id.
#[derive(Debug, Default, Clone)]
pub(crate) struct RunInfo {
    pub task: Option<String>,
}

/// What an emitted trace's run hands on to observations of it that come
/// late: the agent its root names, and what its run record says so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct Continued {
    agent: Option<String>,
    verdict: Verdict,
    task: Option<String>,
}

/// What a run's outcome is made of: its roots, how many state success,
/// whether one failed, and whether any event failed.
#[derive(Debug, Clone, Copy, Default)]
struct Verdict {
    roots: usize,
    roots_ok: usize,
    root_failed: bool,
    failed: bool,
}

impl Verdict {
    /// A root that states its outcome is the run's verdict: a failure
    /// below it that the run recovered from stays an event. Otherwise, as
    /// in span formats, a failure recorded anywhere fails the run.
    fn outcome(&self) -> Outcome {
        if self.root_failed {
            Outcome::Failed
        } else if self.roots > 0 && self.roots_ok == self.roots {
            Outcome::Succeeded
        } else if self.failed {
            Outcome::Failed
        } else {
            Outcome::Unknown
        }
    }
}

/// Turns complete traces of observations into events and run records:
/// what the traces of one input share (the event ids given).
#[derive(Default)]
pub(crate) struct RunEmitter {
    used: RecentIds,
}

impl RunEmitter {
    /// Emits the nodes of each run of a trace (in first-appearance order)
    /// in pre-order of their tree, then the run's record: failed when its
    /// root failed, else unknown (no error recorded is not proof of
    /// success); its task is the one `runs` gives, else the first root's
    /// input. `continues` is what a part of the trace emitted before hands
    /// on: nodes whose parent is not here hang under its root. Returns
    /// what this part hands on.
    pub(crate) fn emit_trace(
        &mut self,
        nodes: &[Node],
        runs: &HashMap<String, RunInfo>,
        continues: Option<Continued>,
        sink: &mut Sink<'_>,
    ) -> anyhow::Result<Option<Continued>> {
        let mut hands_on = None;
        for members in spans::group_in_order(nodes.iter().map(|n| n.run.as_str())) {
            let part = Part {
                nodes,
                members: &members,
                continues: continues.clone(),
            };
            hands_on = Some(self.emit_run(part, runs, sink)?);
        }
        Ok(hands_on)
    }

    fn emit_run(
        &mut self,
        part: Part<'_>,
        runs: &HashMap<String, RunInfo>,
        sink: &mut Sink<'_>,
    ) -> anyhow::Result<Continued> {
        let Part {
            nodes,
            members,
            continues,
        } = part;
        let run = &nodes[members[0]].run;
        let first_turn = sink.next_step(run) as i64;
        let late = continues.is_some();
        let Continued {
            agent: root_agent,
            mut verdict,
            task,
        } = continues.unwrap_or_default();
        let mut agents: HashMap<usize, Option<String>> = HashMap::new();
        let mut position: HashMap<usize, usize> = HashMap::new();
        let mut events = Vec::with_capacity(members.len());
        let mut parents = Vec::with_capacity(members.len());
        let mut root_input = None;
        let mut own_root_agent = None;
        for (i, parent) in spans::preorder(nodes, members) {
            let node = &nodes[i];
            // Late, a node whose parent was emitted before is not a root.
            let orphan = late && parent.is_none() && node.parent.is_some();
            let inherited = match parent {
                Some(p) => agents.get(&p).cloned().flatten(),
                None if orphan => root_agent.clone(),
                None => None,
            };
            let own = node
                .agent
                .clone()
                .or(inherited)
                .or_else(|| node.span_agent.clone());
            agents.insert(i, own.clone());
            let agent = own
                .clone()
                .or_else(|| node.fallback_agent.clone())
                .unwrap_or_else(|| "unknown".to_string());
            let id = unique_id(&node.id, node.seq, &mut self.used);
            let turn = first_turn + events.len() as i64;
            if parent.is_none() && !orphan {
                root_input = root_input.or_else(|| node.input.clone());
                own_root_agent = own_root_agent.or(Some(own));
                verdict.roots += 1;
                verdict.roots_ok += usize::from(node.stated_ok);
                verdict.root_failed |= node.failure.is_some();
            }
            position.insert(i, events.len());
            parents.push(parent.and_then(|p| position.get(&p).copied()));
            events.push(event_of(node, id, agent, turn, sink));
        }
        inherit_failures(&mut events, &parents);
        verdict.failed |= events
            .iter()
            .any(|ev| !ev.action_succeeded || ev.failure_classification.is_some());
        for ev in &events {
            sink.emit(ev)?;
        }
        let info = runs.get(run).cloned().unwrap_or_default();
        let task = info.task.or(task).or(root_input);
        let outcome = verdict.outcome();
        sink.emit_run(&RunRec {
            reason: (outcome == Outcome::Failed).then_some(OutcomeReason::Error),
            task: task.clone(),
            ..RunRec::new(run.as_str(), outcome)
        })?;
        Ok(Continued {
            agent: own_root_agent.flatten().or(root_agent),
            verdict,
            task,
        })
    }
}

/// The nodes of one run of a trace (`members` of `nodes`), and what a
/// part of it emitted before hands on.
struct Part<'n> {
    nodes: &'n [Node],
    members: &'n [usize],
    continues: Option<Continued>,
}

/// A failure a span states (status, error, exception) while none of its
/// children records one surfaced in one of them: the last child gets it
/// too, marked inferred with `failure_source` "inherited". `parents` holds
/// each event's parent's position; parents come before their children.
fn inherit_failures(events: &mut [EventOut<'_>], parents: &[Option<usize>]) {
    // Each parent's last child, and whether any child failed, in one pass.
    let mut last_kid = vec![None; events.len()];
    let mut kid_failed = vec![false; events.len()];
    for (k, parent) in parents.iter().enumerate() {
        if let Some(p) = *parent
            && p < k
        {
            last_kid[p] = Some(k);
            kid_failed[p] |= !events[k].action_succeeded;
        }
    }
    for p in 0..events.len() {
        let stated = matches!(
            events[p].failure_source,
            Some("status" | "error" | "exception")
        );
        if events[p].action_succeeded || !stated || kid_failed[p] {
            continue;
        }
        if let Some(last) = last_kid[p] {
            spans::inherit_failure(events, p, last);
        }
    }
}

/// The ids an input's events have been given.
pub(crate) trait UsedIds {
    fn has(&self, id: &str) -> bool;
    fn add(&mut self, id: &str);
}

impl UsedIds for HashSet<String> {
    fn has(&self, id: &str) -> bool {
        self.contains(id)
    }
    fn add(&mut self, id: &str) {
        self.insert(id.to_string());
    }
}

impl UsedIds for RecentIds {
    fn has(&self, id: &str) -> bool {
        self.contains(id)
    }
    fn add(&mut self, id: &str) {
        self.insert(id);
    }
}

/// The id, unless an earlier event of the input had it.
pub(crate) fn unique_id(id: &str, index: usize, used: &mut impl UsedIds) -> String {
    let id = if id.is_empty() || used.has(id) {
        format!("{id}#{index}")
    } else {
        id.to_string()
    };
    used.add(&id);
    id
}

fn event_of<'a>(
    node: &'a Node,
    id: String,
    agent: String,
    turn: i64,
    sink: &Sink<'_>,
) -> EventOut<'a> {
    // A nameless observation (a Langfuse generation sent without a name)
    // is named by its kind, so patterns never group under "".
    let tool = [node.tool.as_deref(), Some(node.name.as_str())]
        .into_iter()
        .flatten()
        .find(|t| !t.trim().is_empty())
        .unwrap_or(node.kind);
    let mut ev = EventOut::new(id, node.run.as_str(), turn, agent, tool, true);
    ev.action_taken.tool_input = node
        .tool_input
        .clone()
        .filter(|_| node.kind == "tool")
        .filter(Value::is_object)
        .map(JsonVal::Serde);
    ev.set_time_nanos(node.start);
    ev.span_id = (!node.id.is_empty()).then(|| node.id.as_str().into());
    ev.parent_span_id = node.parent.as_deref().map(Into::into);
    ev.span_kind = Some(node.kind);
    ev.usage = node.usage.clone().map(JsonVal::Serde);
    ev.latency_ms = spans::duration_ms(node.start, node.end).map(|total| {
        JsonVal::Latency(crate::record::Latency {
            total: Some(total),
            ..Default::default()
        })
    });
    if let Some((source, error)) = &node.failure {
        ev.action_succeeded = false;
        ev.failure_source = Some(source);
        ev.error = Some(error.clone());
    }
    ev.input = node.input.clone();
    ev.input_digest = node.input_digest.clone();
    ev.output = node.output.clone();
    ev.output_digest = node.output_digest.clone();
    ev.src = node.line.map(|line| Src {
        path: sink.path().to_string().into(),
        line,
    });
    sink.settings.infer_failure(&mut ev);
    ev
}

/// Sets an event's input and output, cut to the configured size, with the
/// digests of the whole texts.
pub(crate) fn set_texts(
    ev: &mut EventOut<'_>,
    input: Option<&str>,
    output: Option<&str>,
    settings: &DecodeSettings,
) {
    if let Some(text) = input {
        let (cut, digest) = settings.text(text);
        ev.input = Some(cut);
        ev.input_digest = Some(digest);
    }
    if let Some(text) = output {
        let (cut, digest) = settings.text(text);
        ev.output = Some(cut);
        ev.output_digest = Some(digest);
    }
}

/// The records one adapter writes for `input`, for the adapters' tests:
/// events, run records, and the source record.
#[cfg(test)]
pub(crate) fn split_records(
    format: super::Format,
    name: &str,
    input: &str,
) -> (Vec<Value>, Vec<Value>, Value) {
    let mut recs = super::records_of(format, name, input.as_bytes());
    let source = recs.pop().unwrap();
    let (events, runs) = recs.into_iter().partition(|r| r["kind"] == "event");
    (events, runs, source)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lines_and_values(doc: &str) -> Vec<(u64, Result<Value, Unreadable>)> {
        json_values(doc.as_bytes()).collect()
    }

    #[test]
    fn every_framing_gives_its_values_and_lines() {
        let got = lines_and_values("{\"a\":1}\n{\"a\":2}\n");
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].0, 2);
        let got = lines_and_values("\u{feff}{\n  \"a\": 1\n}\n{\n  \"a\": 2\n}");
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].0, got[1].0), (1, 4));
        let got = lines_and_values("[1,2]\n[\"x\", {\"b\": 3}]\n");
        assert_eq!(got[1].1.as_ref().unwrap(), &json!(["x", {"b": 3}]));
    }

    #[test]
    fn a_bad_line_costs_only_that_line() {
        let got = lines_and_values("{\"a\":1}\nnot json\n\n{\"a\":3}\n{\"a\":");
        let ok: Vec<_> = got
            .iter()
            .filter(|(_, v)| v.is_ok())
            .map(|(l, _)| *l)
            .collect();
        let bad: Vec<_> = got
            .iter()
            .filter(|(_, v)| v.is_err())
            .map(|(l, _)| *l)
            .collect();
        assert_eq!(ok, [1, 4]);
        assert_eq!(bad, [2, 5]);
        let got: Vec<_> = json_values(b"{\"a\":1}\r\n\xff\r\n{\"a\":3}\r\n").collect();
        assert_eq!(got.len(), 3);
        assert_eq!(got[1], (2, Err(Unreadable::NotUtf8)));
        assert_eq!(got[2].0, 3);
        assert!(json_values(b"").next().is_none());
    }

    #[test]
    fn a_broken_document_ends_the_reading() {
        // Complete lines inside a document cut short are not read as values.
        let cut = "{\n  \"observations\": [\n    {\"id\": \"a\"},\n    {\"id\": \"b\"";
        let got = lines_and_values(cut);
        assert_eq!(got.len(), 1);
        assert!(got[0].1.is_err());
        let got = lines_and_values("{\n \"a\": 1\n}\n{\n \"a\": x\n}\n{\"a\": 3}\n");
        assert!(got[0].1.is_ok());
        assert_eq!((got.len(), got[1].0), (2, 5));
        let got: Vec<_> = json_values(b"{\n \"a\": \"\xff\"\n}\n").collect();
        assert_eq!(got, [(2, Err(Unreadable::NotUtf8))]);
    }

    #[test]
    fn json_inside_strings_is_decoded_even_twice() {
        assert_eq!(*decoded(&json!("{\"a\":1}")), json!({"a": 1}));
        assert_eq!(*decoded(&json!("\"{\\\"a\\\":1}\"")), json!({"a": 1}));
        assert_eq!(*decoded(&json!("plain")), json!("plain"));
        assert_eq!(text_of(&json!("\"Say hi\"")).unwrap(), "Say hi");
        assert_eq!(
            text_of(&json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]))
                .unwrap(),
            "a\nb"
        );
        assert_eq!(text_of(&json!({"x": 1})).unwrap(), "{\"x\":1}");
        assert_eq!(text_of(&json!("  ")), None);
    }

    #[test]
    fn times_in_every_spelling() {
        let iso = nanos_of(Some(&json!("2024-10-11T20:58:23.298773+00:00")));
        assert_eq!(iso, Some(1_728_680_303_298_773_000));
        assert_eq!(
            nanos_of(Some(&json!(1_728_803_137_170u64))),
            Some(1_728_803_137_170_000_000)
        );
        assert_eq!(
            nanos_of(Some(&json!("2025-06-06 11:31:33.965"))),
            nanos_of(Some(&json!("2025-06-06T13:31:33.965+02:00")))
        );
        assert_eq!(nanos_of(Some(&json!(null))), None);
        let ns = 1_728_803_137_170_000_001u64;
        assert_eq!(nanos_of(Some(&json!(ns))), Some(i128::from(ns)));
        assert_eq!(nanos_of(Some(&json!(ns.to_string()))), Some(i128::from(ns)));
        assert_eq!(
            nanos_of(Some(&json!(1_728_803_137))),
            Some(1_728_803_137_000_000_000)
        );
        let hrtime = json!([1_728_803_137, 5]);
        assert_eq!(nanos_of(Some(&hrtime)), Some(1_728_803_137_000_000_005));
    }
}
