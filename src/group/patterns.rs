//! One pattern's accumulator, its samples, and the finished `pattern`
//! record with its display name and id.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::SAMPLES_PER_PATTERN;
use super::recovery::{LatencyCounts, recovered_within};
use crate::config::TAIL_RISK_WINDOW;
use crate::plumbing::intern::Interner;
use crate::record::{EventView, Pattern, RunCounts, Sample};
use crate::timestamp::Timestamp;

/// A failure signature's running totals.
pub(super) struct PatternAcc {
    pub(super) agent_id: String,
    pub(super) tool_name: String,
    pub(super) classification: String,
    pub(super) divergence_fields: Vec<String>,
    pub(super) frequency: u64,
    pub(super) latencies: LatencyCounts,
    /// (run number, failures), sorted by run number, which is the runs'
    /// first-appearance order: runs mostly arrive in that order, so this
    /// grows at its end and costs eight bytes a run.
    pub(super) run_counts: Vec<(u32, u32)>,
    /// Failures per UTC day, by days since the epoch (named at the end).
    pub(super) day_counts: BTreeMap<i64, u64>,
    /// Failures per UTC hour, by hours since the epoch.
    pub(super) hour_counts: BTreeMap<i64, u64>,
    pub(super) samples: Vec<Sample>,
    /// Each sample's event time: with timestamps, the earliest failures
    /// are kept, whatever order the inputs came in.
    pub(super) sample_times: Vec<Option<Timestamp>>,
}

impl PatternAcc {
    pub(super) fn count_run(&mut self, run: u32, n: u64) {
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        match self.run_counts.last_mut() {
            Some((last, c)) if *last == run => *c = c.saturating_add(n),
            Some((last, _)) if *last > run => {
                match self.run_counts.binary_search_by_key(&run, |e| e.0) {
                    Ok(i) => self.run_counts[i].1 = self.run_counts[i].1.saturating_add(n),
                    Err(i) => self.run_counts.insert(i, (run, n)),
                }
            }
            _ => self.run_counts.push((run, n)),
        }
    }

    /// Keeps a sample while fewer than five are kept, or in place of the
    /// latest kept one when `at` is earlier; `make` runs only then (or on a
    /// tie in time, which turn, step and event id then settle, so the kept
    /// samples do not depend on the order the inputs came in).
    pub(super) fn add_sample(&mut self, at: Option<Timestamp>, make: impl FnOnce() -> Sample) {
        if self.samples.len() < SAMPLES_PER_PATTERN {
            self.samples.push(make());
            self.sample_times.push(at);
            return;
        }
        let Some(at) = at else { return };
        let latest = (0..self.samples.len())
            .filter_map(|i| self.sample_times[i].map(|t| (t, sample_order(&self.samples[i]), i)))
            .max()
            .map(|(t, _, i)| (t, i));
        let Some((t, i)) = latest else { return };
        if at < t {
            self.samples[i] = make();
            self.sample_times[i] = Some(at);
        } else if at == t {
            let sample = make();
            if sample_order(&sample) < sample_order(&self.samples[i]) {
                self.samples[i] = sample;
            }
        }
    }
}

/// How samples of the same time are ordered: independent of input order.
pub(super) fn sample_order(s: &Sample) -> (i64, u64, &str) {
    (s.turn, s.step, &s.event_id)
}

pub(super) fn finish_pattern(
    acc: PatternAcc,
    runs: &Interner,
    position: &[u32],
    window: u64,
) -> Pattern {
    let latencies = acc.latencies.into_map();
    let recovered = recovered_within(&latencies, window);
    let tail_unrecovered =
        acc.frequency - recovered_within(&latencies, TAIL_RISK_WINDOW).min(acc.frequency);
    Pattern {
        kind: crate::record::PatternKind,
        pattern_id: pattern_id(
            &acc.agent_id,
            &acc.tool_name,
            &acc.classification,
            &acc.divergence_fields,
        ),
        display_name: display_name(
            &acc.agent_id,
            &acc.tool_name,
            &acc.classification,
            &acc.divergence_fields,
        ),
        agent_id: acc.agent_id,
        tool_name: acc.tool_name,
        failure_classification: acc.classification,
        divergence_fields: acc.divergence_fields,
        frequency: acc.frequency,
        recovered,
        tail_unrecovered,
        recovery_latencies: latencies,
        run_counts: RunCounts(
            acc.run_counts
                .into_iter()
                .map(|(r, n)| (crate::record::shared_run_id(runs.name(r)), u64::from(n)))
                .collect(),
        ),
        day_counts: acc
            .day_counts
            .into_iter()
            .map(|(d, n)| (Timestamp::from_day_number(d).day(), n))
            .collect(),
        hour_counts: acc
            .hour_counts
            .into_iter()
            .map(|(h, n)| (Timestamp::from_hour_number(h).to_string(), n))
            .collect(),
        samples: {
            let mut samples = acc.samples;
            let at = |s: &Sample| runs.get(&s.run_id).map(|r| position[r as usize]);
            samples.sort_by_key(|s| (at(s), s.turn, s.step));
            samples
        },
        score: None,
    }
}

/// The text a reader needs from a failing event: its error, its output, or
/// nothing.
pub(super) fn sample_text(ev: &EventView<'_>) -> Option<String> {
    let err = ev.error.as_ref();
    let text = err
        .and_then(|e| e.message.clone().or_else(|| e.kind.clone()))
        .or_else(|| ev.output.as_deref().map(str::to_string))?;
    Some(text.chars().take(300).collect())
}

/// `[agent] tool / classification / field+field` (or `no-divergence`).
pub fn display_name(agent: &str, tool: &str, class: &str, divs: &[String]) -> String {
    let div = if divs.is_empty() {
        "no-divergence".to_string()
    } else {
        divs.join("+")
    };
    format!("[{agent}] {tool} / {class} / {div}")
}

/// A readable id that never collides: `agent/tool/class/field+field`, with
/// `%`, `/`, `+`, `~`, white space and control characters percent-encoded
/// inside each part and `~` standing for no divergence fields.
pub fn pattern_id(agent: &str, tool: &str, class: &str, divs: &[String]) -> String {
    let mut id = String::new();
    for part in [agent, tool, class] {
        escape_id_part(part, &mut id);
        id.push('/');
    }
    if divs.is_empty() {
        id.push('~');
    }
    for (i, d) in divs.iter().enumerate() {
        if i > 0 {
            id.push('+');
        }
        escape_id_part(d, &mut id);
    }
    id
}

pub(super) fn escape_id_part(s: &str, out: &mut String) {
    for c in s.chars() {
        if matches!(c, '%' | '/' | '+' | '~') || c.is_whitespace() || c.is_control() {
            let mut b = [0u8; 4];
            for byte in c.encode_utf8(&mut b).bytes() {
                let _ = write!(out, "%{byte:02X}");
            }
        } else {
            out.push(c);
        }
    }
}
