//! `run`, `source` and `batch` records: what each run and input was, and a
//! batch's totals.

use super::*;

/// A `run` record: what the source knows of a whole run.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct RunRec {
    pub kind: Kind,
    pub run_id: String,
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// The rules the agent was told to follow (a system prompt's policy),
    /// when the source carries them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<Src<'static>>,
}

/// A `source` record: what was read from one input.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct SourceRec {
    #[serde(default = "source_kind")]
    pub kind: Kind,
    pub path: String,
    pub format: String,
    pub events: u64,
    pub runs: u64,
    pub skipped: u64,
}

pub(super) fn source_kind() -> Kind {
    Kind::Source
}

/// The `batch` record: totals over everything a stage read.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Batch {
    pub kind: Kind,
    pub runs_total: u64,
    /// Runs in time order (each run's earliest event timestamp); runs
    /// without one keep their place after the run they followed in the input.
    pub run_order: Vec<String>,
    /// Each run's earliest event timestamp, aligned with `run_order` (null
    /// for a run without one): what merging shards orders their runs by.
    /// Absent when no event had a timestamp.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub run_first_timestamps: Vec<Option<String>>,
    pub events_total: u64,
    pub failures_total: u64,
    pub skipped: u64,
    pub sources: Vec<SourceRec>,
    pub first_timestamp: Option<String>,
    pub last_timestamp: Option<String>,
    /// The recovery window (turns) `recovered` was counted with, written by
    /// triage-score, so a report states the window its numbers mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_window: Option<u64>,
}

impl Default for Batch {
    /// An empty batch: no runs, no events.
    fn default() -> Self {
        Batch {
            kind: Kind::Batch,
            runs_total: 0,
            run_order: Vec::new(),
            run_first_timestamps: Vec::new(),
            events_total: 0,
            failures_total: 0,
            skipped: 0,
            sources: Vec::new(),
            first_timestamp: None,
            last_timestamp: None,
            recovery_window: None,
        }
    }
}

/// Run id → count, kept in first-appearance order. Run ids are shared
/// between patterns (every pattern of a batch names the same runs), so a
/// reader holds each id once however many patterns name it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunCounts(pub Vec<(std::sync::Arc<str>, u64)>);

thread_local! {
    // Fx rather than SipHash: hashing each run id of every pattern's
    // run_counts was a tenth of triage-score's time, as it is for the
    // grouper's own interners.
    static RUN_IDS: std::cell::RefCell<rustc_hash::FxHashSet<std::sync::Arc<str>>> =
        std::cell::RefCell::new(rustc_hash::FxHashSet::default());
}

/// The shared copy of a run id.
pub fn shared_run_id(id: &str) -> std::sync::Arc<str> {
    RUN_IDS.with(|ids| {
        let mut ids = ids.borrow_mut();
        if let Some(a) = ids.get(id) {
            return a.clone();
        }
        let a: std::sync::Arc<str> = id.into();
        ids.insert(a.clone());
        a
    })
}

impl Serialize for RunCounts {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(&**k, v)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for RunCounts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RunCounts;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of run id to count")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<RunCounts, A::Error> {
                let mut out = Vec::with_capacity(a.size_hint().unwrap_or(0));
                while let Some((k, v)) = a.next_entry::<Cow<'de, str>, u64>()? {
                    out.push((shared_run_id(&k), v));
                }
                Ok(RunCounts(out))
            }
        }
        d.deserialize_map(V)
    }
}
