//! What readers are told while they decode: the time filter, the cut of
//! texts, the document limit, the classifier and the trace window.

use crate::classify::Classifier;
use crate::record::EventOut;
use crate::timestamp::Timestamp;

/// The window `--trace-window` sets by default: five minutes.
pub(crate) const DEFAULT_WINDOW_NANOS: i128 = 300 * 1_000_000_000;

/// Keeps events whose timestamp lies in [since, until); events without a
/// timestamp are kept.
#[derive(Debug, Clone, Copy, Default)]
pub struct TimeFilter {
    pub since: Option<Timestamp>,
    pub until: Option<Timestamp>,
}

impl TimeFilter {
    /// True when --since or --until was given.
    pub(crate) fn is_set(&self) -> bool {
        self.since.is_some() || self.until.is_some()
    }

    /// True when an event at `ts` is in range; an event without a time is
    /// kept (see [`Sink::count_untimed`]).
    pub(crate) fn keeps(&self, ts: Option<Timestamp>) -> bool {
        let Some(ts) = ts else { return true };
        self.since.is_none_or(|s| ts >= s) && self.until.is_none_or(|u| ts < u)
    }
}

/// The default of `--max-document`, in bytes: a span list decodes to some
/// thirty times its size, so this is already several GiB of memory.
pub(crate) const DEFAULT_MAX_DOCUMENT: u64 = 256 << 20;

/// Settings adapters read while decoding, shared across threads.
#[derive(Clone)]
pub struct DecodeSettings {
    pub filter: TimeFilter,
    /// Input and output texts are cut to this many bytes.
    pub text_limit: usize,
    /// Formats read as whole documents refuse inputs larger than this.
    pub document_limit: u64,
    pub classifier: Classifier,
    /// How long a trace of a span stream is held after its last span, in
    /// nanoseconds of span time; None holds traces until the input ends.
    pub trace_window: Option<i128>,
}

impl Default for DecodeSettings {
    fn default() -> Self {
        DecodeSettings {
            filter: TimeFilter::default(),
            text_limit: 2000,
            document_limit: DEFAULT_MAX_DOCUMENT,
            classifier: Classifier::default(),
            trace_window: Some(DEFAULT_WINDOW_NANOS),
        }
    }
}

impl DecodeSettings {
    /// Cuts `text` to the limit at a character boundary; returns the kept
    /// text and the digest of the whole.
    pub(crate) fn text(&self, text: &str) -> (String, String) {
        crate::record::cut_text(text, self.text_limit)
    }

    /// Marks an unlabeled failure's cause ([`Classifier::infer_failure`]).
    pub(crate) fn infer_failure(&self, ev: &mut EventOut<'_>) {
        self.classifier.infer_failure(ev);
    }
}
