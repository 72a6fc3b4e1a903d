//! `event` records written by hand: the bytes serde's derive writes for
//! [`EventOut`], without its per-field machinery (a third of the time of
//! writing a span's event went there).

use super::event::{ErrorInfo, EventOut, FailureSource, JsonVal};
use crate::plumbing::json_text::write_str;

impl EventOut<'_> {
    /// Appends the record as serde_json writes it, less its closing brace:
    /// the sink adds the step and closes it.
    pub(crate) fn write_open(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"kind\":");
        write_str(out, self.kind);
        text(out, "event_id", &self.event_id);
        text(out, "run_id", &self.run_id);
        out.extend_from_slice(b",\"turn\":");
        out.extend_from_slice(itoa::Buffer::new().format(self.turn).as_bytes());
        text(out, "agent_id", &self.agent_id);
        out.extend_from_slice(b",\"action_taken\":{\"tool_name\":");
        write_str(out, &self.action_taken.tool_name);
        if let Some(input) = &self.action_taken.tool_input {
            value(out, "tool_input", input);
        }
        out.extend_from_slice(if self.action_succeeded {
            b"},\"action_succeeded\":true"
        } else {
            b"},\"action_succeeded\":false"
        });
        if let Some(t) = self.timestamp {
            out.extend_from_slice(b",\"timestamp\":\"");
            t.write_rfc3339(out);
            out.push(b'"');
        }
        optional_text(
            out,
            "failure_classification",
            self.failure_classification.as_deref(),
        );
        optional_text(
            out,
            "failure_source",
            self.failure_source.map(FailureSource::as_str),
        );
        if self.failure_inferred {
            out.extend_from_slice(b",\"failure_inferred\":true");
        }
        optional_text(out, "failure_cause", self.failure_cause.as_deref());
        if !self.divergence_fields.is_empty() {
            out.extend_from_slice(b",\"divergence_fields\":[");
            for (i, field) in self.divergence_fields.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, field);
            }
            out.push(b']');
        }
        for (name, v) in [
            ("divergence_age", &self.divergence_age),
            ("latency_ms", &self.latency_ms),
            ("usage", &self.usage),
            ("message_context", &self.message_context),
        ] {
            if let Some(v) = v {
                value(out, name, v);
            }
        }
        optional_text(out, "span_id", self.span_id.as_deref());
        optional_text(out, "parent_span_id", self.parent_span_id.as_deref());
        optional_text(out, "span_kind", self.span_kind);
        if let Some(error) = &self.error {
            write_error(out, error);
        }
        optional_text(out, "error_digest", self.error_digest.as_deref());
        optional_text(out, "tool_input_digest", self.tool_input_digest.as_deref());
        optional_text(out, "input", self.input.as_deref());
        optional_text(out, "input_digest", self.input_digest.as_deref());
        optional_text(out, "output", self.output.as_deref());
        optional_text(out, "output_digest", self.output_digest.as_deref());
        if let Some(src) = &self.src {
            out.extend_from_slice(b",\"src\":{\"path\":");
            write_str(out, &src.path);
            out.extend_from_slice(b",\"line\":");
            out.extend_from_slice(itoa::Buffer::new().format(src.line).as_bytes());
            out.push(b'}');
        }
    }
}

/// `,"name":` then the text.
fn text(out: &mut Vec<u8>, name: &str, text: &str) {
    out.extend_from_slice(b",\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
    write_str(out, text);
}

fn optional_text(out: &mut Vec<u8>, name: &str, t: Option<&str>) {
    if let Some(t) = t {
        text(out, name, t);
    }
}

/// A value: a span's latency (one per span) by hand; one taken over from
/// the input, of any shape, by serde.
fn value(out: &mut Vec<u8>, name: &str, v: &JsonVal<'_>) {
    out.extend_from_slice(b",\"");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
    let JsonVal::Latency(latency) = v else {
        // Writing into a Vec cannot fail, and every JsonVal serializes.
        let _ = serde_json::to_writer(&mut *out, v);
        return;
    };
    let members = [
        ("llm", latency.llm),
        ("tool", latency.tool),
        ("total", latency.total),
    ];
    object(out, members, |out, ms| {
        out.extend_from_slice(itoa::Buffer::new().format(ms).as_bytes());
    });
}

/// An object of the members that are set, each value written by `write`.
fn object<T>(
    out: &mut Vec<u8>,
    members: impl IntoIterator<Item = (&'static str, Option<T>)>,
    write: impl Fn(&mut Vec<u8>, T),
) {
    out.push(b'{');
    let mut first = true;
    for (name, value) in members {
        let Some(value) = value else { continue };
        if !first {
            out.push(b',');
        }
        first = false;
        out.push(b'"');
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b"\":");
        write(out, value);
    }
    out.push(b'}');
}

fn write_error(out: &mut Vec<u8>, e: &ErrorInfo) {
    out.extend_from_slice(b",\"error\":");
    let members = [
        ("type", e.kind.as_deref()),
        ("message", e.message.as_deref()),
    ];
    object(out, members, write_str);
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use proptest::prelude::*;

    use super::*;
    use crate::record::{Latency, Src};

    fn by_hand(ev: &EventOut<'_>) -> String {
        let mut out = Vec::new();
        ev.write_open(&mut out);
        out.push(b'}');
        String::from_utf8(out).unwrap()
    }

    fn text() -> impl Strategy<Value = String> {
        "(\\PC|[\\x00-\\x1f\"\\\\]){0,20}"
    }

    prop_compose! {
        fn event()(
            ids in proptest::collection::vec(text(), 5),
            turn in any::<i64>(),
            succeeded in any::<bool>(),
            optional in proptest::collection::vec(proptest::option::of(text()), 11),
            time in proptest::option::of(crate::timestamp::Timestamp::WRITABLE),
            inferred in any::<bool>(),
            divergence in proptest::collection::vec(text(), 0..3),
            latency in proptest::option::of((any::<Option<i64>>(), any::<Option<i64>>())),
            input in proptest::option::of(proptest::collection::btree_map(text(), any::<i32>(), 0..3)),
            line in any::<u64>(),
            source in any::<bool>(),
        ) -> EventOut<'static> {
            let [event_id, run_id, agent_id, tool_name, path] = <[String; 5]>::try_from(ids).unwrap();
            let [class, cause, span, parent, error_type, error_message, text_in, digest_in, text_out, digest_out, usage] =
                <[Option<String>; 11]>::try_from(optional).unwrap();
            let mut ev = EventOut::new(event_id, run_id, turn, agent_id, tool_name, succeeded);
            ev.action_taken.tool_input = input.map(|m| JsonVal::Serde(serde_json::json!(m)));
            ev.timestamp = time.map(crate::timestamp::Timestamp::from_unix_nanos);
            ev.failure_classification = class.map(Cow::Owned);
            ev.failure_source = cause.as_ref().map(|_| FailureSource::Status);
            ev.failure_inferred = inferred;
            ev.failure_cause = cause;
            ev.divergence_fields = divergence.into_iter().map(Cow::Owned).collect();
            ev.latency_ms = latency.map(|(llm, total)| JsonVal::Latency(Latency { llm, tool: total.map(|t| t / 2), total }));
            ev.usage = usage.map(|u| JsonVal::Serde(serde_json::json!({"model": u, "input_tokens": 3})));
            ev.span_id = span.map(Cow::Owned);
            ev.parent_span_id = parent.map(Cow::Owned);
            ev.span_kind = ev.span_id.as_ref().map(|_| "tool");
            ev.error = (error_type.is_some() || error_message.is_some() || inferred).then_some(ErrorInfo {
                kind: error_type,
                message: error_message,
            });
            ev.input = text_in;
            ev.input_digest = digest_in;
            ev.output = text_out;
            ev.output_digest = digest_out;
            ev.src = source.then_some(Src { path: Cow::Owned(path), line });
            ev
        }
    }

    /// What the grouper reads of a view, owned, with an absent list and
    /// an empty one alike (an empty one is not written).
    fn grouper_reads(v: &crate::record::EventView<'_>) -> String {
        let fields = (
            (v.event_id.to_string(), v.run_id.to_string(), v.turn, v.step),
            (v.agent_id.to_string(), v.action_taken.tool_name.to_string()),
            (
                v.action_succeeded,
                v.failure_classification.as_deref().map(str::to_string),
            ),
            v.divergence_fields
                .iter()
                .flatten()
                .map(|d| d.to_string())
                .collect::<Vec<_>>(),
            v.error
                .as_ref()
                .map(|e| (e.kind.clone(), e.message.clone())),
            v.output.as_deref().map(str::to_string),
        );
        format!("{fields:?}")
    }

    proptest! {
        /// Whatever fields are set, the bytes serde's derive writes.
        #[test]
        fn writes_what_serde_writes(ev in event()) {
            prop_assert_eq!(by_hand(&ev), serde_json::to_string(&ev).unwrap());
        }

        /// Each way a stage gets an event's view agrees with serde's reading
        /// of the event's record: the view a reader hands over in process
        /// (`EventOut::view`, its time beside it as an instant) and the record
        /// scanner's (`stream`, the time read from the text).
        #[test]
        fn every_view_of_an_event_is_the_one_serde_reads(ev in event(), step in 0u64..1_000_000) {
            let mut line = Vec::new();
            ev.write_open(&mut line);
            line.extend_from_slice(format!(",\"step\":{step}}}\n").as_bytes());
            let serde: crate::record::EventView<'_> = serde_json::from_slice(&line).unwrap();
            prop_assert_eq!(grouper_reads(&ev.view(step)), grouper_reads(&serde));
            let serde_time = serde.timestamp.as_deref().and_then(crate::timestamp::Timestamp::parse);
            prop_assert_eq!(ev.timestamp, serde_time);
            let mut scanned = Vec::new();
            let mut diag = crate::plumbing::diag::Diag::new("test", true);
            crate::stream::read_records_from(
                "t",
                std::io::Cursor::new(line.clone()),
                None,
                &mut diag,
                crate::plumbing::diag::OnBadInput::Skip,
                crate::stream::Kindless::Passed,
                |rec, _, _| {
                    if let crate::stream::Record::Event { event, at, .. } = rec {
                        scanned.push((grouper_reads(event), *at));
                    }
                    Ok(())
                },
            )
            .unwrap();
            prop_assert_eq!(scanned, vec![(grouper_reads(&serde), serde_time)]);
        }
    }

    /// A time given in nanoseconds is written as RFC 3339 text; zero (an
    /// unset OTLP time) is no time.
    #[test]
    fn a_time_in_nanoseconds_is_written_as_text() {
        let mut ev = EventOut::new("e", "r", 0, "a", "t", true);
        ev.set_time_nanos(Some(0));
        assert!(!by_hand(&ev).contains("timestamp"));
        ev.set_time_nanos(Some(1_544_712_660_000_000_000));
        assert!(by_hand(&ev).contains(r#""timestamp":"2018-12-13T14:51:00Z""#));
        ev.set_time_nanos(Some(1_544_712_660_250_000_000));
        assert!(by_hand(&ev).contains(r#""timestamp":"2018-12-13T14:51:00.25Z""#));
    }
}
