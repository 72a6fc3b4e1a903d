//! One TraceEvent line: the members it reads, found while the line is
//! scanned, read with the reference's rules and written back from the
//! input's own JSON text.

use std::borrow::Cow;

use super::values::{
    IntKeys, action, classification, describe, error_info, is_empty_object, is_plain_digits,
    is_string, lax_bool, lax_int, lax_timestamp, object_field, strict_str,
};
use super::{FailureTexts, GroupedEvent, TaskOutput, decoded};
use crate::adapters::unreadable::Unreadable;
use crate::plumbing::json_scan::{
    Field, LineScratch, ScanError, Stepped, Value, array_items, visit_object_in,
};
use crate::record::ErrorInfo;
use crate::timestamp::Timestamp;

/// The members of a line's object that a TraceEvent reads, found while
/// the line is scanned (members it does not read are only validated), with
/// what it reads of the objects among them; the last of duplicate keys
/// wins, as in Python's json module.
#[derive(Default)]
pub(super) struct TopLevel<'c> {
    values: [Option<Value<'c>>; TOP_FIELDS.len()],
    /// `action_taken`'s `tool_name` and `tool_input`.
    action: [Option<Value<'c>>; 2],
    /// `error`'s `type` and `message`.
    error: [Option<Value<'c>>; 2],
    /// By `Top` slot, for the objects of integers: set when a member holds
    /// something other than plain digits, so that its keys must be read.
    not_plain: u32,
}

/// A top-level member a TraceEvent reads: its slot in `TOP_FIELDS`, so
/// that reading a member costs no name comparison.
#[derive(Clone, Copy)]
pub(super) enum Top {
    Kind,
    EventId,
    RunId,
    AgentId,
    Turn,
    ActionSucceeded,
    ActionTaken,
    DivergenceFields,
    Timestamp,
    DivergenceAge,
    LatencyMs,
    Usage,
    MessageContext,
    FailureClassification,
    SpanId,
    ParentSpanId,
    Error,
    Input,
    Output,
}

impl Top {
    /// Every member, in the order of `TOP_FIELDS`.
    pub(super) const ALL: [Top; 19] = [
        Top::Kind,
        Top::EventId,
        Top::RunId,
        Top::AgentId,
        Top::Turn,
        Top::ActionSucceeded,
        Top::ActionTaken,
        Top::DivergenceFields,
        Top::Timestamp,
        Top::DivergenceAge,
        Top::LatencyMs,
        Top::Usage,
        Top::MessageContext,
        Top::FailureClassification,
        Top::SpanId,
        Top::ParentSpanId,
        Top::Error,
        Top::Input,
        Top::Output,
    ];
}

pub(super) const TOP_FIELDS: [&str; 19] = [
    "kind",
    "event_id",
    "run_id",
    "agent_id",
    "turn",
    "action_succeeded",
    "action_taken",
    "divergence_fields",
    "timestamp",
    "divergence_age",
    "latency_ms",
    "usage",
    "message_context",
    "failure_classification",
    "span_id",
    "parent_span_id",
    "error",
    "input",
    "output",
];

impl<'c> TopLevel<'c> {
    /// Scans a line that must hold one object, where it stands when `tail`
    /// (the buffer from the line's start) allows, else in a copy made in
    /// `scratch`. Reading members as they are scanned, rather than splitting
    /// the line and looking them up after, saved about 500 instructions an
    /// event.
    pub(super) fn scan(
        line: &'c str,
        tail: &'c [u8],
        scratch: &mut LineScratch,
    ) -> Result<Self, ScanError> {
        let mut top = TopLevel::default();
        visit_object_in(line, tail, scratch, |key, field| {
            let Some(slot) = field.slot_of(key, field_slot).map(|i| Top::ALL[i]) else {
                return field.skip();
            };
            let (value, scanned) = match slot {
                Top::ActionTaken => {
                    top.action = [None; 2];
                    field.members(|k, f| pick_member(k, f, &mut top.action, action_slot))?
                }
                Top::Error => {
                    top.error = [None; 2];
                    field.members(|k, f| pick_member(k, f, &mut top.error, error_slot))?
                }
                Top::DivergenceAge | Top::LatencyMs | Top::Usage | Top::MessageContext => {
                    let mut plain = true;
                    let scanned = field.members(|_, f| {
                        let (v, scanned) = f.value()?;
                        plain &= is_plain_digits(&v);
                        Ok(scanned)
                    })?;
                    let bit = 1 << slot as u32;
                    top.not_plain = if plain {
                        top.not_plain & !bit
                    } else {
                        top.not_plain | bit
                    };
                    scanned
                }
                _ => field.value()?,
            };
            top.values[slot as usize] = Some(value);
            Ok(scanned)
        })?;
        Ok(top)
    }

    #[inline]
    pub(super) fn get(&self, field: Top) -> Option<Value<'c>> {
        self.values[field as usize]
    }

    /// An object of integers' value, and whether its members all hold plain
    /// digits.
    pub(super) fn int_object(&self, field: Top) -> Option<(Value<'c>, bool)> {
        let plain = self.not_plain & (1 << field as u32) == 0;
        self.get(field).map(|v| (v, plain))
    }

    #[inline]
    pub(super) fn required(&self, field: Top) -> Result<Value<'c>, Unreadable> {
        self.get(field)
            .ok_or(Unreadable::Missing(TOP_FIELDS[field as usize].into()))
    }
}

/// Keeps a nested member's value in `slots`, at the index `slot` gives its
/// key (a `match`, which costs less than a search of the names); the others
/// are only validated.
pub(super) fn pick_member<'c, const N: usize>(
    key: Value<'c>,
    field: Field<'_, 'c, '_>,
    slots: &mut [Option<Value<'c>>; N],
    slot: fn(&str) -> Option<usize>,
) -> Result<Stepped, ScanError> {
    let Some(i) = field.slot_of(key, slot) else {
        return field.skip();
    };
    let (value, scanned) = field.value()?;
    slots[i] = Some(value);
    Ok(scanned)
}

/// The slot of a member of `action_taken` that a TraceEvent reads.
pub(super) fn action_slot(name: &str) -> Option<usize> {
    match name {
        "tool_name" => Some(0),
        "tool_input" => Some(1),
        _ => None,
    }
}

/// The slot of a member of `error` that a TraceEvent reads.
pub(super) fn error_slot(name: &str) -> Option<usize> {
    match name {
        "type" => Some(0),
        "message" => Some(1),
        _ => None,
    }
}

/// [`field_index`] as the position in `TOP_FIELDS`, for [`Field::slot_of`].
pub(super) fn field_slot(name: &str) -> Option<usize> {
    field_index(name).map(|t| t as usize)
}

/// The slot of a top-level member; a `match` compiles to a switch on length
/// and bytes, where searching `TOP_FIELDS` cost a comparison per name.
pub(super) fn field_index(name: &str) -> Option<Top> {
    Some(match name {
        "kind" => Top::Kind,
        "event_id" => Top::EventId,
        "run_id" => Top::RunId,
        "agent_id" => Top::AgentId,
        "turn" => Top::Turn,
        "action_succeeded" => Top::ActionSucceeded,
        "action_taken" => Top::ActionTaken,
        "divergence_fields" => Top::DivergenceFields,
        "timestamp" => Top::Timestamp,
        "divergence_age" => Top::DivergenceAge,
        "latency_ms" => Top::LatencyMs,
        "usage" => Top::Usage,
        "message_context" => Top::MessageContext,
        "failure_classification" => Top::FailureClassification,
        "span_id" => Top::SpanId,
        "parent_span_id" => Top::ParentSpanId,
        "error" => Top::Error,
        "input" => Top::Input,
        "output" => Top::Output,
        _ => return None,
    })
}

/// One TraceEvent, read with the reference's rules, keeping the input's own
/// JSON text for what is written back unchanged.
pub(super) struct TraceEvent<'c> {
    event_id: Value<'c>,
    pub(super) run_id: Cow<'c, str>,
    run_id_raw: &'c str,
    turn: i64,
    agent_id: Value<'c>,
    tool_name: Value<'c>,
    tool_input: Option<&'c str>,
    succeeded: bool,
    pub(super) timestamp: Option<Timestamp>,
    /// The timestamp's RFC 3339 text without its `Z`, when the input spelled
    /// it so.
    utc_text: Option<&'c str>,
    /// The classification and its JSON text.
    classification: Option<(Cow<'c, str>, Cow<'c, str>)>,
    divergence_fields: Vec<Value<'c>>,
    divergence_raw: Option<&'c str>,
    divergence_age: Option<&'c str>,
    latency_ms: Option<&'c str>,
    usage: Option<&'c str>,
    message_context: Option<&'c str>,
    span_id: Option<&'c str>,
    parent_span_id: Option<&'c str>,
    error: Option<ErrorInfo>,
    input: Option<&'c str>,
    output: Option<Value<'c>>,
    /// The input and output cut to `--max-text` (with the digest of the
    /// whole), when longer.
    input_cut: Option<(String, String)>,
    output_cut: Option<(String, String)>,
    /// The digest of the error message, when it was cut to `--max-text`.
    error_digest: Option<String>,
    /// The tool input's JSON text cut to `--max-text`, as a string, with
    /// the digest of the whole, when longer.
    tool_input_cut: Option<(String, String)>,
}

impl<'c> TraceEvent<'c> {
    /// Accepts exactly what agent-triage 0.1.0 accepts.
    // Inlined: returned by value, each event was copied once more per line.
    #[inline(always)]
    pub(super) fn read(obj: &TopLevel<'c>) -> Result<Self, Unreadable> {
        let event_id = strict_str(obj.required(Top::EventId)?, "event_id")?;
        let run = strict_str(obj.required(Top::RunId)?, "run_id")?;
        let agent_id = strict_str(obj.required(Top::AgentId)?, "agent_id")?;
        let turn = lax_int(&obj.required(Top::Turn)?, "turn")?;
        let succeeded = lax_bool(&obj.required(Top::ActionSucceeded)?, "action_succeeded")?;
        let (tool_name, tool_input) = action(obj.required(Top::ActionTaken)?, obj.action)?;
        let mut divergence_fields = Vec::new();
        let divergence_raw = match obj.get(Top::DivergenceFields) {
            None => None,
            Some(Value::Array(raw)) => {
                let mut items = Vec::new();
                array_items(raw, &mut items).map_err(|e| Unreadable::shape(e.to_string()))?;
                for (i, v) in items.iter().enumerate() {
                    strict_str(*v, &format!("divergence_fields[{i}]"))?;
                }
                divergence_fields = items;
                Some(raw)
            }
            Some(v) => {
                return Err(Unreadable::mistyped(
                    "divergence_fields",
                    "a list",
                    describe(&v),
                ));
            }
        };
        let (timestamp, utc_text) = match obj.get(Top::Timestamp) {
            None | Some(Value::Null) => (None, None),
            Some(v) => {
                let (t, text) = lax_timestamp(&v)?;
                (Some(t), text)
            }
        };
        let divergence_age = object_field(
            obj.int_object(Top::DivergenceAge),
            "divergence_age",
            IntKeys::<0>::All,
        )?
        .filter(|raw| !is_empty_object(raw));
        let latency_ms = object_field(
            obj.int_object(Top::LatencyMs),
            "latency_ms",
            IntKeys::Some(["llm", "tool", "total"]),
        )?;
        let usage = object_field(
            obj.int_object(Top::Usage),
            "usage",
            IntKeys::Some(["input_tokens", "output_tokens"]),
        )?;
        let message_context = object_field(
            obj.int_object(Top::MessageContext),
            "message_context",
            IntKeys::<0>::Some([]),
        )?
        .filter(|raw| !is_empty_object(raw));
        Ok(TraceEvent {
            event_id,
            run_id: run
                .as_str()
                .ok_or(Unreadable::shape("run_id: not a readable string"))?,
            run_id_raw: run.raw(),
            turn,
            agent_id,
            tool_name,
            tool_input,
            succeeded,
            timestamp,
            utc_text,
            classification: classification(obj.get(Top::FailureClassification)),
            divergence_fields,
            divergence_raw,
            divergence_age,
            latency_ms,
            usage,
            message_context,
            span_id: obj.get(Top::SpanId).filter(is_string).map(|v| v.raw()),
            parent_span_id: obj
                .get(Top::ParentSpanId)
                .filter(is_string)
                .map(|v| v.raw()),
            error: obj.get(Top::Error).and_then(|v| error_info(v, obj.error)),
            input: obj.get(Top::Input).filter(is_string).map(|v| v.raw()),
            output: obj.get(Top::Output).filter(is_string),
            input_cut: None,
            output_cut: None,
            error_digest: None,
            tool_input_cut: None,
        })
    }

    /// Cuts the input and output texts longer than `limit` bytes. The JSON
    /// text is never shorter than what it decodes to, so most texts are
    /// let through on their length alone.
    pub(super) fn cut_texts(&mut self, limit: usize) {
        let cut = |raw: &str| {
            if raw.len() <= limit + 2 {
                return None;
            }
            let text: String = serde_json::from_str(raw).ok()?;
            (text.len() > limit).then(|| crate::record::cut_text(&text, limit))
        };
        self.input_cut = self.input.and_then(cut);
        self.output_cut = self.output.and_then(|v| cut(v.raw()));
        if let Some(message) = self.error.as_mut().and_then(|e| e.message.as_mut())
            && message.len() > limit
        {
            let (kept, digest) = crate::record::cut_text(message, limit);
            *message = kept;
            self.error_digest = Some(digest);
        }
        self.tool_input_cut = self
            .tool_input
            .filter(|raw| raw.len() > limit)
            .map(|raw| crate::record::cut_text(raw, limit));
    }

    /// The `failure_source` member: why the event counts as failed.
    pub(super) fn failure_source_member(&self) -> &'static str {
        if self.classification.is_some() {
            ",\"failure_source\":\"label\""
        } else if !self.succeeded {
            ",\"failure_source\":\"status\""
        } else {
            ""
        }
    }

    /// Writes the `event` record without its closing brace (the sink adds
    /// the step), in the field order of [`crate::record::EventOut`].
    /// `src_head` is `,"src":{"path":PATH,"line":`. Keys are written with
    /// their punctuation in one piece: a copy per key, value and brace cost
    /// about 300 instructions an event more.
    pub(super) fn write_json(&self, buf: &mut Vec<u8>, src_head: &str, line: u64) {
        let mut w = JsonWriter(buf);
        w.member("{\"kind\":\"event\",\"event_id\":", self.event_id.raw());
        w.member(",\"run_id\":", self.run_id_raw);
        w.raw(",\"turn\":");
        w.int(self.turn);
        w.member(",\"agent_id\":", self.agent_id.raw());
        w.member(",\"action_taken\":{\"tool_name\":", self.tool_name.raw());
        match &self.tool_input_cut {
            Some((kept, _)) => {
                w.raw(",\"tool_input\":");
                w.serde(kept);
            }
            None => w.optional(",\"tool_input\":", self.tool_input),
        }
        w.raw(if self.succeeded {
            "},\"action_succeeded\":true"
        } else {
            "},\"action_succeeded\":false"
        });
        if let Some(t) = self.timestamp {
            w.raw(",\"timestamp\":\"");
            match self.utc_text {
                Some(text) => {
                    w.raw(text);
                    w.raw("Z\"");
                }
                None => {
                    t.write_rfc3339(w.0);
                    w.raw("\"");
                }
            }
        }
        w.optional(
            ",\"failure_classification\":",
            self.classification.as_ref().map(|(_, raw)| raw.as_ref()),
        );
        w.raw(self.failure_source_member());
        w.optional(
            ",\"divergence_fields\":",
            self.divergence_raw
                .filter(|_| !self.divergence_fields.is_empty()),
        );
        w.optional(",\"divergence_age\":", self.divergence_age);
        w.optional(",\"latency_ms\":", self.latency_ms);
        w.optional(",\"usage\":", self.usage);
        w.optional(",\"message_context\":", self.message_context);
        w.optional(",\"span_id\":", self.span_id);
        w.optional(",\"parent_span_id\":", self.parent_span_id);
        if let Some(e) = &self.error {
            w.raw(",\"error\":");
            w.serde(e);
        }
        if let Some(digest) = &self.error_digest {
            w.member(",\"error_digest\":", &format!("\"{digest}\""));
        }
        if let Some((_, digest)) = &self.tool_input_cut {
            w.member(",\"tool_input_digest\":", &format!("\"{digest}\""));
        }
        match &self.input_cut {
            Some((kept, digest)) => {
                w.raw(",\"input\":");
                w.serde(kept);
                w.member(",\"input_digest\":", &format!("\"{digest}\""));
            }
            None => w.optional(",\"input\":", self.input),
        }
        match &self.output_cut {
            Some((kept, digest)) => {
                w.raw(",\"output\":");
                w.serde(kept);
                w.member(",\"output_digest\":", &format!("\"{digest}\""));
            }
            None => w.optional(",\"output\":", self.output.map(|v| v.raw())),
        }
        w.raw(src_head);
        w.int(line as i64);
        w.raw("}");
    }

    /// The event as a grouper reads it, its texts appended to `out.texts`.
    /// A success needs only its run, agent, turn and time; the texts a
    /// failure's pattern and sample read are kept for failures alone.
    pub(super) fn grouped(&self, out: &mut TaskOutput) -> GroupedEvent {
        let failure = (!self.succeeded || self.classification.is_some()).then(|| {
            let divergence_from = out.divergence.len();
            for d in &self.divergence_fields {
                let text = out.put(&decoded(d));
                out.divergence.push(text);
            }
            let failure = FailureTexts {
                event_id: out.put(&decoded(&self.event_id)),
                tool_name: out.put(&decoded(&self.tool_name)),
                classification: self.classification.as_ref().map(|(c, _)| out.put(c)),
                divergence: (divergence_from, out.divergence.len()),
                output: match &self.output_cut {
                    Some((kept, _)) => Some(out.put(kept)),
                    None => self.output.as_ref().map(|o| out.put(&decoded(o))),
                },
                error: self.error.clone(),
            };
            out.failures.push(failure);
            out.failures.len() - 1
        });
        GroupedEvent {
            run_id: out.put(&self.run_id),
            agent_id: out.put(&decoded(&self.agent_id)),
            turn: self.turn,
            succeeded: self.succeeded,
            timestamp: self.timestamp,
            failure,
        }
    }
}

/// Appends JSON text to a buffer.
pub(super) struct JsonWriter<'b>(&'b mut Vec<u8>);

impl JsonWriter<'_> {
    pub(super) fn raw(&mut self, s: &str) {
        self.0.extend_from_slice(s.as_bytes());
    }

    /// `key` (its punctuation included) then `raw`, which is JSON text
    /// already.
    pub(super) fn member(&mut self, key: &str, raw: &str) {
        self.raw(key);
        self.raw(raw);
    }

    /// [`JsonWriter::member`] when there is a value.
    pub(super) fn optional(&mut self, key: &str, raw: Option<&str>) {
        if let Some(raw) = raw {
            self.member(key, raw);
        }
    }

    pub(super) fn int(&mut self, n: i64) {
        self.0
            .extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }

    pub(super) fn serde<T: serde::Serialize>(&mut self, v: &T) {
        let _ = serde_json::to_writer(&mut *self.0, v);
    }
}
