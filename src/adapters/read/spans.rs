//! What the span formats (`otel`, `otlp`, `langfuse`, `langsmith`) share:
//! status codes, span kinds, divergence lists, span times, the order of a
//! span tree, the names agents and tools hide behind span-name prefixes and
//! the ids already given to events.

// Maps of one trace's spans, never iterated in an order that shows: the
// fast hash will do.
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// Ids already given to events, as hashes: the last million or two, so
/// that memory stays bounded on an endless stream of spans.
#[derive(Default)]
pub(crate) struct RecentIds {
    // The keys are digests already: the cheap hash spreads them well enough.
    current: HashSet<u64>,
    older: HashSet<u64>,
}

impl RecentIds {
    pub(crate) const GENERATION: usize = 1 << 20;

    pub(crate) fn contains(&self, id: &str) -> bool {
        self.contains_hash(id_hash(id))
    }

    pub(crate) fn contains_hash(&self, h: u64) -> bool {
        self.current.contains(&h) || self.older.contains(&h)
    }

    pub(crate) fn insert(&mut self, id: &str) {
        self.insert_hash(id_hash(id));
    }

    pub(crate) fn insert_hash(&mut self, h: u64) {
        if self.current.len() >= Self::GENERATION {
            self.older = std::mem::take(&mut self.current);
        }
        self.current.insert(h);
    }
}

/// A hash of an id, the same in every run.
pub(crate) fn id_hash(id: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    id.hash(&mut h);
    h.finish()
}

/// A span's status code, from the name or number a trace file spells it with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum StatusCode {
    #[default]
    Unset,
    Ok,
    Error,
    /// Neither a known name nor a known number.
    Unknown,
}

impl StatusCode {
    /// Reads the OTLP enum names ("STATUS_CODE_OK"), their short forms
    /// ("OK") in any case, and numbers written as text.
    pub(crate) fn from_name(name: &str) -> StatusCode {
        let name = name.trim();
        let short = name
            .get(..12)
            .filter(|p| p.eq_ignore_ascii_case("STATUS_CODE_"))
            .map_or(name, |_| &name[12..]);
        match short.to_ascii_uppercase().as_str() {
            "UNSET" => StatusCode::Unset,
            "OK" => StatusCode::Ok,
            "ERROR" => StatusCode::Error,
            _ => short
                .parse::<f64>()
                .map_or(StatusCode::Unknown, StatusCode::from_number),
        }
    }

    /// The OTLP enum numbers: 0 unset, 1 ok, 2 error.
    pub(crate) fn from_number(n: f64) -> StatusCode {
        match n {
            0.0 => StatusCode::Unset,
            1.0 => StatusCode::Ok,
            2.0 => StatusCode::Error,
            _ => StatusCode::Unknown,
        }
    }
}

/// Passes the failure event `from` states on to event `to`, marked
/// inferred with `failure_source` "inherited": for a parent whose children
/// record nothing of the failure it reports.
pub(crate) fn inherit_failure(events: &mut [crate::record::EventOut<'_>], from: usize, to: usize) {
    let (error, class, cause) = (
        events[from].error.clone(),
        events[from].failure_classification.clone(),
        events[from].failure_cause.clone(),
    );
    let ev = &mut events[to];
    ev.action_succeeded = false;
    ev.failure_source = Some(crate::record::FailureSource::Carried);
    ev.failure_inferred = true;
    ev.error = error;
    ev.failure_classification = class;
    ev.failure_cause = cause;
}

/// A span that failed with the very error a child of it failed with, or
/// with one that quotes it (a framework's step wrapping its tool's
/// exception: "Error executing tool 'x': ConnectionError: …"), only
/// passed that failure up, as an exception leaving each span it crosses is
/// recorded on each: the failure is the child's, counted once, there.
/// Otherwise an agent's span, first in tree order though it failed last,
/// would read as a failure its own later steps recovered from. `parents`
/// holds each event's parent's position; parents come before their
/// children.
pub(crate) fn pass_failures_up(
    events: &mut [crate::record::EventOut<'_>],
    parents: &[Option<usize>],
) {
    // A failure pushed down to a child (`inherit_failure`) is the parent's
    // own, and stays there.
    fn own_error<'e>(e: &'e crate::record::EventOut<'_>) -> Option<&'e crate::record::ErrorInfo> {
        let carried = e.failure_source == Some(crate::record::FailureSource::Carried);
        e.error.as_ref().filter(|err| {
            !e.action_succeeded && !carried && (err.kind.is_some() || err.message.is_some())
        })
    }
    // Quoting a message of a few characters ("error") proves nothing.
    fn wraps(outer: &crate::record::ErrorInfo, inner: &crate::record::ErrorInfo) -> bool {
        let quoted = (inner.message.as_deref())
            .map(str::trim)
            .filter(|m| m.chars().count() >= 12);
        outer == inner
            || quoted.is_some_and(|m| outer.message.as_deref().is_some_and(|o| o.contains(m)))
    }
    let mut passed = vec![false; events.len()];
    for (k, parent) in parents.iter().enumerate() {
        if let Some(p) = *parent
            && p < k
            && let (Some(inner), Some(outer)) = (own_error(&events[k]), own_error(&events[p]))
            && wraps(outer, inner)
        {
            passed[p] = true;
        }
    }
    for (ev, _) in events
        .iter_mut()
        .zip(&passed)
        .filter(|(_, passed)| **passed)
    {
        ev.action_succeeded = true;
        ev.failure_source = None;
        ev.failure_inferred = false;
        ev.error = None;
        ev.failure_classification = None;
        ev.failure_cause = None;
    }
}

/// The order to emit a tree's events in: tree order, except that a span
/// still failed on its own account (not a failure handed down to it, nor
/// one `pass_failures_up` cleared) that spans its descendants in time comes
/// right after them. A span's status is set as it ends: an agent that gave
/// up after its tool calls failed last, not first, and read first its own
/// steps would seem to recover from it. A span that ended before its
/// children did (some tracers hang sequential steps under the first)
/// keeps its place, as does one whose times are not all known. `times`
/// holds each event's span start and end; `parents` each event's parent's
/// position, parents before their children.
pub(crate) fn emission_order(
    events: &[crate::record::EventOut<'_>],
    parents: &[Option<usize>],
    times: &[(Option<i128>, Option<i128>)],
) -> Vec<usize> {
    let n = events.len();
    // Each subtree's last position and the span of its descendants' times
    // (None once one is unknown), children first.
    let mut last = (0..n).collect::<Vec<_>>();
    let mut below: Vec<Option<(i128, i128)>> = vec![None; n];
    let mut known = vec![true; n];
    for k in (0..n).rev() {
        let Some(p) = parents[k].filter(|&p| p < k) else {
            continue;
        };
        last[p] = last[p].max(last[k]);
        let mine = match times[k] {
            (Some(s), Some(e)) if known[k] => Some(match below[k] {
                Some((bs, be)) => (s.min(bs), e.max(be)),
                None => (s, e),
            }),
            _ => None,
        };
        match mine {
            Some((s, e)) => {
                below[p] = Some(below[p].map_or((s, e), |(bs, be)| (bs.min(s), be.max(e))));
            }
            None => known[p] = false,
        }
    }
    let fails_last = |k: usize| {
        let ev = &events[k];
        let own = !ev.action_succeeded
            && ev.failure_source != Some(crate::record::FailureSource::Carried);
        match (times[k], below[k]) {
            ((Some(s), Some(e)), Some((bs, be))) if own && known[k] && last[k] > k => {
                s <= bs && e >= be
            }
            _ => false,
        }
    };
    let mut order = Vec::with_capacity(n);
    // Spans waiting for the end of their subtree, innermost last.
    let mut waiting: Vec<usize> = Vec::new();
    for k in 0..n {
        while let Some(&w) = waiting.last().filter(|&&w| last[w] < k) {
            order.push(w);
            waiting.pop();
        }
        if fails_last(k) {
            waiting.push(k);
        } else {
            order.push(k);
        }
    }
    order.extend(waiting.into_iter().rev());
    order
}

/// Whether a run without a verdict of its own failed, from its events in
/// the order they happened: a failure stands until a call of the same
/// agent and tool that started after it ended succeeds (a retry that
/// worked, as an agent framework retries a tool whose arguments it
/// refused), so that a run whose only failure was retried away is not
/// called failed. A call running beside the failure retried nothing, and
/// a failure the trace labels with its class is never settled.
#[derive(Default)]
pub(crate) struct Unsettled {
    /// Per (agent, tool) hash with failures no later call settled: when
    /// the latest of them ended (`i128::MIN` when unknown: any later call
    /// settles it).
    pending: HashMap<u64, i128>,
    labelled: bool,
}

impl Unsettled {
    /// Takes in an event and its span's start and end.
    pub(crate) fn note(
        &mut self,
        ev: &crate::record::EventOut<'_>,
        (start, end): (Option<i128>, Option<i128>),
    ) {
        let key = {
            use std::hash::{Hash, Hasher};
            let mut h = rustc_hash::FxHasher::default();
            ev.agent_id.hash(&mut h);
            ev.action_taken.tool_name.hash(&mut h);
            h.finish()
        };
        if ev.failure_source == Some(crate::record::FailureSource::Label) {
            self.labelled = true;
        } else if !ev.action_succeeded || ev.failure_classification.is_some() {
            let ended = end.unwrap_or(i128::MIN);
            let latest = self.pending.entry(key).or_insert(ended);
            *latest = (*latest).max(ended);
        } else if let Some(&failed_at) = self.pending.get(&key)
            && start.is_none_or(|s| s >= failed_at)
        {
            self.pending.remove(&key);
        }
    }

    pub(crate) fn failed(&self) -> bool {
        self.labelled || !self.pending.is_empty()
    }
}

/// The event `span_kind` an OpenInference span kind stands for.
pub(crate) fn kind_from_openinference(kind: &str) -> Option<&'static str> {
    Some(match kind.to_ascii_uppercase().as_str() {
        "AGENT" => "agent",
        "LLM" => "llm",
        "TOOL" => "tool",
        "RETRIEVER" | "RERANKER" | "EMBEDDING" => "retrieval",
        "CHAIN" | "GUARDRAIL" | "EVALUATOR" | "UNKNOWN" => "other",
        _ => return None,
    })
}

/// The event `span_kind` a GenAI `gen_ai.operation.name` stands for.
pub(crate) fn kind_from_operation(op: &str) -> Option<&'static str> {
    Some(match op {
        "invoke_agent" | "create_agent" => "agent",
        "chat" | "text_completion" | "generate_content" | "embeddings" | "call_llm" => "llm",
        "execute_tool" => "tool",
        _ => return None,
    })
}

/// Divergence fields written as one comma-separated text.
pub(crate) fn split_divergence(text: &str) -> impl Iterator<Item = &str> {
    text.split(',').map(str::trim).filter(|f| !f.is_empty())
}

/// Whole milliseconds from `start` to `end`, when both are known and in
/// order.
pub(crate) fn duration_ms(start: Option<i128>, end: Option<i128>) -> Option<i64> {
    match (start, end) {
        // In i64 where it fits: an i128's division is a library call.
        (Some(s), Some(e)) if e >= s => Some(match i64::try_from(e - s) {
            Ok(d) => d / 1_000_000,
            Err(_) => ((e - s) / 1_000_000) as i64,
        }),
        _ => None,
    }
}

/// Unix nanoseconds written as digits (OTLP/JSON writes int64 as text).
pub(crate) fn nanos_from_text(text: &str) -> Option<i128> {
    let t = text.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse().ok()
}

/// What ordering a span tree needs to know of one span.
pub(crate) trait TreeNode {
    fn node_id(&self) -> &str;
    fn parent_id(&self) -> Option<&str>;
    /// Start in Unix nanoseconds; spans without one sort last.
    fn start_nanos(&self) -> Option<i128>;
}

/// The spans `members` (indices into `nodes`) in pre-order of their tree,
/// siblings by start time, each with the index of its parent in the tree
/// (so a parent always comes before its children). Spans whose parent is
/// missing are roots; spans caught in a parent cycle are walked from the
/// first of them, so every span comes out exactly once.
pub(crate) fn preorder<T: TreeNode>(nodes: &[T], members: &[usize]) -> Vec<(usize, Option<usize>)> {
    // Positions in `members` throughout, and the children of each in one
    // array (by parent, then start): every trace is ordered once, so its
    // bookkeeping is vectors rather than maps.
    let n = members.len();
    let mut by_id: HashMap<&str, usize> = HashMap::default();
    by_id.reserve(n);
    for (k, &i) in members.iter().enumerate() {
        by_id.entry(nodes[i].node_id()).or_insert(k);
    }
    let parent: Vec<Option<usize>> = (0..n)
        .map(|k| {
            let p = *by_id.get(nodes[members[k]].parent_id()?)?;
            (p != k).then_some(p)
        })
        .collect();
    let start = |k: usize| {
        let i = members[k];
        (nodes[i].start_nanos().unwrap_or(i128::MAX), i)
    };
    // Children of k are kids[first[k]..first[k + 1]].
    let mut first = vec![0usize; n + 1];
    for p in parent.iter().flatten() {
        first[p + 1] += 1;
    }
    for k in 0..n {
        first[k + 1] += first[k];
    }
    let mut kids = vec![0usize; first[n]];
    let mut filled = first.clone();
    let mut roots = Vec::new();
    for (k, p) in parent.iter().enumerate() {
        match p {
            Some(p) => {
                kids[filled[*p]] = k;
                filled[*p] += 1;
            }
            None => roots.push(k),
        }
    }
    roots.sort_by_key(|&k| start(k));
    for k in 0..n {
        kids[first[k]..first[k + 1]].sort_by_key(|&c| start(c));
    }
    let mut visited = vec![false; n];
    let mut out = Vec::with_capacity(n);
    let mut stack = Vec::new();
    for from in roots.into_iter().chain(0..n) {
        if visited[from] {
            continue;
        }
        stack.push((from, None));
        while let Some((k, parent)) = stack.pop() {
            if std::mem::replace(&mut visited[k], true) {
                continue;
            }
            stack.extend(
                kids[first[k]..first[k + 1]]
                    .iter()
                    .rev()
                    .map(|&c| (c, Some(k))),
            );
            out.push((members[k], parent.map(|p: usize| members[p])));
        }
    }
    out
}

/// Groups `0..n` by a key in first-appearance order (a file's traces).
pub(crate) fn group_in_order<'a>(keys: impl Iterator<Item = &'a str>) -> Vec<Vec<usize>> {
    let mut index: HashMap<&str, usize> = HashMap::default();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, key) in keys.enumerate() {
        let g = *index.entry(key).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
    }
    groups
}

/// The agent an agent span's name names: "invoke_agent planner" and
/// "agent_run [planner]" are the planner. None when nothing is left.
pub(crate) fn agent_from_span_name(name: &str) -> Option<&str> {
    let name = name.trim_start();
    let name = ["invoke_agent ", "agent_run "]
        .iter()
        .find_map(|p| name.strip_prefix(p))
        .unwrap_or(name)
        .trim();
    let name = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(name)
        .trim();
    (!name.is_empty()).then_some(name)
}

/// The tool a tool span's name names: "execute_tool search",
/// "running tool: search" and "tool.search" are the search tool.
pub(crate) fn tool_from_span_name(name: &str) -> &str {
    let name = name.trim_start();
    [
        "execute_tool ",
        "running tool: ",
        "running tool ",
        "tool.",
        "tool: ",
    ]
    .iter()
    .find_map(|p| name.strip_prefix(p))
    .map(str::trim)
    .filter(|n| !n.is_empty())
    .unwrap_or(name.trim_end())
}

/// A `service.name` that names something: the SDKs' default
/// ("unknown_service", "unknown_service:python") names nothing.
pub(crate) fn named_service(name: &str) -> Option<&str> {
    let name = name.trim();
    (!name.is_empty() && !name.starts_with("unknown_service")).then_some(name)
}

/// An id as OTLP/JSON writes it, so a span and its children's parent ids
/// match whatever form the file used: hex in lower case without `0x`,
/// base64 of 8 or 16 bytes as hex; UUIDs and opaque ids as they are. A
/// decimal string past 64 bits (a 128-bit integer id, quoted on reading)
/// becomes 32 hex digits.
pub(crate) fn normal_id(id: &str) -> String {
    let bytes = id.as_bytes();
    // Ids as the SDKs write them: lowercase hex of 16 or 32 digits. A
    // table answers for a byte in one load; two range tests per byte were
    // most of the time ids took.
    if matches!(bytes.len(), 16 | 32) && bytes.iter().all(|b| LOWER_HEX[usize::from(*b)]) {
        return id.to_string();
    }
    let id = id.trim();
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
    if let Some(rest) = id.strip_prefix("0x").or_else(|| id.strip_prefix("0X"))
        && hex(rest)
    {
        let width = if rest.len() > 16 { 32 } else { 16 };
        return format!("{:0>width$}", rest.to_ascii_lowercase());
    }
    if matches!(id.len(), 16 | 32) && hex(id) {
        return id.to_ascii_lowercase();
    }
    if id.len() >= 20
        && id.bytes().all(|b| b.is_ascii_digit())
        && let Ok(n) = id.parse::<u128>()
        && n > u128::from(u64::MAX)
    {
        return format!("{n:032x}");
    }
    if let Some(bytes) = base64_id(id) {
        return bytes.iter().map(|b| format!("{b:02x}")).collect();
    }
    id.to_string()
}

/// Which bytes are lowercase hex digits.
static LOWER_HEX: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = matches!(b as u8, b'0'..=b'9' | b'a'..=b'f');
        b += 1;
    }
    table
};

/// An integer id in hex: trace ids 32 digits, span ids 16.
pub(crate) fn int_id(n: u128, trace: bool) -> String {
    if trace {
        format!("{n:032x}")
    } else {
        format!("{n:016x}")
    }
}

/// The bytes of a base64 id of 8 or 16 bytes (padded or not); None for
/// anything else, hex ids included (their length never matches).
fn base64_id(id: &str) -> Option<Vec<u8>> {
    let body = id.trim_end_matches('=');
    if !matches!(
        (id.len(), body.len()),
        (12, 11) | (11, 11) | (24, 22) | (22, 22)
    ) {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        })
    };
    let mut bits = 0u32;
    let mut held = 0;
    let mut out = Vec::with_capacity(16);
    for c in body.bytes() {
        bits = (bits << 6) | value(c)?;
        held += 6;
        if held >= 8 {
            held -= 8;
            out.push((bits >> held) as u8);
            bits &= (1 << held) - 1;
        }
    }
    // Base64 of whole bytes leaves the last character's spare bits zero;
    // an opaque id that only looks like base64 ("span-tool-1") would lose
    // them, and two such ids become one.
    (bits == 0).then_some(out)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_names_and_numbers() {
        for ok in ["STATUS_CODE_OK", "OK", "ok", "1"] {
            assert_eq!(StatusCode::from_name(ok), StatusCode::Ok, "{ok}");
        }
        for unset in ["STATUS_CODE_UNSET", "UNSET", "0"] {
            assert_eq!(StatusCode::from_name(unset), StatusCode::Unset, "{unset}");
        }
        for err in ["STATUS_CODE_ERROR", "ERROR", "Error", "2"] {
            assert_eq!(StatusCode::from_name(err), StatusCode::Error, "{err}");
        }
        assert_eq!(StatusCode::from_name("STATUS_CODE_"), StatusCode::Unknown);
        assert_eq!(StatusCode::from_name("fine"), StatusCode::Unknown);
        assert_eq!(StatusCode::from_number(3.0), StatusCode::Unknown);
    }

    #[test]
    fn divergence_text_is_split_and_trimmed() {
        let got: Vec<_> = split_divergence(" a, b,,c ").collect();
        assert_eq!(got, ["a", "b", "c"]);
    }

    #[test]
    fn nanos() {
        assert_eq!(
            nanos_from_text("1544712660000000000"),
            Some(1_544_712_660_000_000_000)
        );
        assert_eq!(nanos_from_text("-1"), None);
    }

    struct N(&'static str, Option<&'static str>, Option<i128>);
    impl TreeNode for N {
        fn node_id(&self) -> &str {
            self.0
        }
        fn parent_id(&self) -> Option<&str> {
            self.1
        }
        fn start_nanos(&self) -> Option<i128> {
            self.2
        }
    }

    #[test]
    fn preorder_puts_parents_first_and_siblings_by_start() {
        let nodes = [
            N("c2", Some("r"), Some(30)),
            N("g", Some("c1"), Some(15)),
            N("c1", Some("r"), Some(10)),
            N("r", None, Some(5)),
            N("x", Some("y"), Some(1)),
            N("y", Some("x"), Some(2)),
        ];
        let order = preorder(&nodes, &[0, 1, 2, 3, 4, 5]);
        let ids: Vec<_> = order.iter().map(|(i, _)| nodes[*i].0).collect();
        assert_eq!(ids, ["r", "c1", "g", "c2", "x", "y"]);
        assert_eq!(order[1].1, Some(3));
        assert_eq!(order[0].1, None);
    }

    #[test]
    fn a_failure_wrapped_by_its_parent_is_counted_once_at_the_child() {
        use crate::record::{ErrorInfo, EventOut};
        let failed = |kind: &str, message: &str| {
            let mut e = EventOut::new("e", "r", 0, "a", "t", false);
            e.error = Some(ErrorInfo {
                kind: Some(kind.into()),
                message: Some(message.into()),
            });
            e
        };
        let tool = "ConnectionError: weather service unreachable";
        let mut events = [
            failed(
                "AgentToolExecutionError",
                &format!("Error executing tool 'w': {tool}"),
            ),
            failed("ConnectionError", tool),
            failed("GaveUp", "no weather today"),
            failed("ValueError", "error"),
        ];
        pass_failures_up(&mut events, &[None, Some(0), None, Some(2)]);
        let still: Vec<bool> = events.iter().map(|e| !e.action_succeeded).collect();
        // The step quoting its tool's error passed it up; a parent's own
        // error stays, whatever a child's short message says.
        assert_eq!(still, [false, true, true, true]);
    }

    #[test]
    fn a_retry_that_worked_settles_a_failure() {
        use crate::record::EventOut;
        let call = |tool: &'static str, ok: bool| EventOut::new("e", "r", 0, "a", tool, ok);
        let at = |start: i128, end: i128| (Some(start), Some(end));
        let mut run = Unsettled::default();
        run.note(&call("find_user", false), at(0, 10));
        run.note(&call("chat", true), at(11, 20));
        assert!(run.failed(), "another tool's success settles nothing");
        run.note(&call("find_user", true), at(21, 30));
        assert!(!run.failed());
        run.note(&call("refund", false), (None, None));
        assert!(run.failed());
        run.note(&call("refund", true), (None, None));
        assert!(!run.failed(), "without times, order tells");
        let mut other_agent = Unsettled::default();
        other_agent.note(&call("x", false), at(0, 10));
        other_agent.note(&EventOut::new("e", "r", 0, "b", "x", true), at(11, 20));
        assert!(other_agent.failed(), "another agent's call is no retry");
        // A call running beside the failure retried nothing.
        let mut parallel = Unsettled::default();
        parallel.note(&call("fetch", false), at(10, 50));
        parallel.note(&call("fetch", true), at(11, 20));
        assert!(parallel.failed());
        // A failure the trace labels stays.
        let mut labelled = Unsettled::default();
        let mut label = call("chat", true);
        label.failure_source = Some(crate::record::FailureSource::Label);
        label.failure_classification = Some("hallucinated_tool_result".into());
        labelled.note(&label, at(0, 10));
        labelled.note(&call("chat", true), at(11, 20));
        assert!(labelled.failed());
    }

    #[test]
    fn a_span_failing_around_its_children_comes_after_them() {
        use crate::record::{EventOut, FailureSource};
        let ev = |ok: bool| EventOut::new("e", "r", 0, "a", "t", ok);
        // 0 agent (failed, 0..100) > 1 tool (10..20) > 2 call (12..18);
        // 0 > 3 tool (30..40); 4 a root of its own after it.
        let events = [ev(false), ev(true), ev(true), ev(true), ev(true)];
        let parents = [None, Some(0), Some(1), Some(0), None];
        let times = [
            (Some(0), Some(100)),
            (Some(10), Some(20)),
            (Some(12), Some(18)),
            (Some(30), Some(40)),
            (Some(200), Some(210)),
        ];
        assert_eq!(emission_order(&events, &parents, &times), [1, 2, 3, 0, 4]);
        // Nested: the failed tool comes after its call, the agent after all.
        let mut nested = events.clone();
        nested[1].action_succeeded = false;
        assert_eq!(emission_order(&nested, &parents, &times), [2, 1, 3, 0, 4]);
        // Ended before its children did: a sequence hung under its first
        // step, kept in tree order.
        let mut early = times;
        early[0].1 = Some(5);
        assert_eq!(emission_order(&events, &parents, &early), [0, 1, 2, 3, 4]);
        // A descendant's end unknown: nothing to go by.
        let mut unknown = times;
        unknown[2].1 = None;
        assert_eq!(emission_order(&events, &parents, &unknown), [0, 1, 2, 3, 4]);
        // A failure handed down to it is the parent's, not the child's.
        let mut carried = events.clone();
        carried[0].action_succeeded = true;
        carried[1].action_succeeded = false;
        carried[1].failure_source = Some(FailureSource::Carried);
        assert_eq!(emission_order(&carried, &parents, &times), [0, 1, 2, 3, 4]);
    }

    #[test]
    fn names_without_their_prefixes() {
        assert_eq!(
            agent_from_span_name("invoke_agent planner"),
            Some("planner")
        );
        assert_eq!(
            agent_from_span_name("agent_run [hello_agent]"),
            Some("hello_agent")
        );
        assert_eq!(agent_from_span_name("Critic"), Some("Critic"));
        assert_eq!(agent_from_span_name("invoke_agent "), None);
        assert_eq!(tool_from_span_name("execute_tool say_hello"), "say_hello");
        assert_eq!(tool_from_span_name("running tool: get_pun"), "get_pun");
        assert_eq!(tool_from_span_name("tool.ByeTool"), "ByeTool");
        assert_eq!(tool_from_span_name("grep"), "grep");
        assert_eq!(named_service("unknown_service:python"), None);
        assert_eq!(named_service("shop"), Some("shop"));
    }

    #[test]
    fn ids_in_every_form_become_otlp_hex() {
        assert_eq!(
            normal_id("0x5b8efff798038103d269b633813fc60c"),
            "5b8efff798038103d269b633813fc60c"
        );
        assert_eq!(normal_id("0xabc"), "0000000000000abc");
        assert_eq!(normal_id("EEE19B7EC3C1B174"), "eee19b7ec3c1b174");
        assert_eq!(
            normal_id("W47/95gDgQPSabYzgT/GDA=="),
            "5b8efff798038103d269b633813fc60c"
        );
        assert_eq!(normal_id("7uGbfsPBsXQ="), "eee19b7ec3c1b174");
        assert_eq!(
            normal_id("39712373237291850001929057769826244787"),
            "1de0532b350588ff152b1edf6bf358b3"
        );
        assert_eq!(
            normal_id("4a8f63f6-7626-4416-a874-fc7bd2c3f005"),
            "4a8f63f6-7626-4416-a874-fc7bd2c3f005"
        );
        assert_eq!(normal_id("sp-0002"), "sp-0002");
        // Eleven characters that are not canonical base64 stay as written,
        // so two of them do not become one id.
        assert_eq!(normal_id("span-tool-1"), "span-tool-1");
        assert_eq!(normal_id("span-tool-2"), "span-tool-2");
        assert_eq!(normal_id("1234"), "1234");
        assert_eq!(int_id(255, false), "00000000000000ff");
        assert_eq!(int_id(7, true), "00000000000000000000000000000007");
    }
}
