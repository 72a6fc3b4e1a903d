//! Scoring and ranking patterns: the reference's model (DESIGN.md §3) with
//! the configured weights, window and multiplier.

use rustc_hash::FxHashMap as HashMap;

use crate::config::ScoringConfig;
use crate::group::{median_recovery, recovered_within};
use crate::record::{Batch, Pattern, Scores};

/// Occurrences at which confidence reaches 1.
const CONFIDENCE_THRESHOLD: f64 = 5.0;
/// Fewer runs than this give "insufficient data".
const TREND_MIN_RUNS: usize = 3;
/// Recent and baseline windows hold this many runs once there are twice as many.
const TREND_WINDOW: usize = 3;
const TREND_BAND: f64 = 0.3;

/// Scores every pattern and sorts them by final score, highest first; equal
/// scores keep their first-appearance order.
///
/// The scoring configuration owns the recovery window (DESIGN.md §3): each
/// pattern's `recovered` is recounted with it from `recovery_latencies`, so
/// that it and `recovery_rate` never contradict each other. Returns how
/// many patterns had been counted with another window (grouped with a
/// different configuration), for the caller to warn about.
pub fn score(batch: &Batch, patterns: &mut [Pattern], cfg: &ScoringConfig) -> usize {
    let max_freq = patterns
        .iter()
        .map(|p| p.frequency)
        .max()
        .unwrap_or(1)
        .max(1);
    // Fx, not SipHash: one lookup per run of every pattern.
    let run_pos: HashMap<&str, usize> = batch
        .run_order
        .iter()
        .enumerate()
        .map(|(i, r)| (r.as_str(), i))
        .collect();
    let windows = trend_windows(batch.run_order.len());
    let ordered = windows.as_ref().map(|w| time_ordered(batch, w));
    let mut recounted = 0;
    for p in patterns.iter_mut() {
        let recovered = recovered_within(&p.recovery_latencies, cfg.recovery_window);
        if p.recovered != recovered {
            p.recovered = recovered;
            recounted += 1;
        }
        let s = score_one(p, max_freq, batch.runs_total, cfg);
        let trend = match (&windows, ordered) {
            (None, _) => "insufficient data".to_string(),
            (Some(_), Some(Err(why))) => why.to_string(),
            (Some(w), _) => trend(p, &run_pos, w).to_string(),
        };
        p.score = Some(Scores { trend, ..s });
    }
    patterns.sort_by(|a, b| {
        let fa = a.score.as_ref().map_or(0.0, |s| s.final_score);
        let fb = b.score.as_ref().map_or(0.0, |s| s.final_score);
        fb.total_cmp(&fa)
    });
    for (i, p) in patterns.iter_mut().enumerate() {
        if let Some(s) = p.score.as_mut() {
            s.rank = i as u64 + 1;
        }
    }
    recounted
}

fn score_one(p: &Pattern, max_freq: u64, runs_total: u64, cfg: &ScoringConfig) -> Scores {
    let freq = p.frequency.max(1) as f64;
    // Same operation order as the reference, so the floats agree bit for bit.
    let frequency_score = (p.frequency as f64 / max_freq as f64) * 10.0;
    let recovery_rate = if p.frequency == 0 {
        0.0
    } else {
        p.recovered as f64 / freq
    };
    let multiplier = if recovery_rate > 0.0 {
        1.0
    } else {
        cfg.no_recovery_multiplier
    };
    let severity_score = cfg.weight(&p.failure_classification) * 10.0 * multiplier;
    let final_score = frequency_score * cfg.frequency_weight + severity_score * cfg.severity_weight;
    let confidence = (p.frequency as f64 / CONFIDENCE_THRESHOLD).min(1.0);
    Scores {
        frequency_score,
        severity_score,
        recovery_rate,
        final_score,
        confidence,
        confidence_label: confidence_label(confidence).to_string(),
        median_recovery_latency: median_recovery(&p.recovery_latencies, cfg.recovery_window),
        runs_seen: p.run_counts.0.len() as u64,
        runs_total,
        trend: String::new(),
        rank: 0,
    }
}

/// high ≥ 0.8, medium ≥ 0.4, low below.
pub(crate) fn confidence_label(c: f64) -> &'static str {
    if c >= 0.8 {
        "high"
    } else if c >= 0.4 {
        "medium"
    } else {
        "low"
    }
}

/// Run index ranges compared for the trend: (baseline, recent).
struct TrendWindows {
    baseline: std::ops::Range<usize>,
    recent: std::ops::Range<usize>,
}

fn trend_windows(n: usize) -> Option<TrendWindows> {
    if n < TREND_MIN_RUNS {
        return None;
    }
    Some(if n >= 2 * TREND_WINDOW {
        TrendWindows {
            baseline: n - 2 * TREND_WINDOW..n - TREND_WINDOW,
            recent: n - TREND_WINDOW..n,
        }
    } else {
        TrendWindows {
            baseline: 0..n / 2,
            recent: n / 2..n,
        }
    })
}

/// Whether the recent window's runs came after the baseline's: with
/// timestamps, the baseline's latest start before the recent window's
/// earliest. When they tie, which runs are "recent" is a matter of ids, not
/// of time, and the trend would invent a direction: "started together".
fn time_ordered(batch: &Batch, w: &TrendWindows) -> Result<(), &'static str> {
    let at = |i: usize| batch.run_first_timestamps.get(i).cloned().flatten();
    let at = |i: usize| {
        at(i)
            .as_deref()
            .and_then(crate::timestamp::Timestamp::parse)
    };
    let last_base = w.baseline.clone().filter_map(at).max();
    let first_recent = w.recent.clone().map(at).collect::<Option<Vec<_>>>();
    match (last_base, first_recent.and_then(|r| r.into_iter().min())) {
        (Some(b), Some(r)) if b >= r => Err("started together"),
        // Apart in time, or (without timestamps) in input order, as the
        // reference orders runs.
        _ => Ok(()),
    }
}

fn trend(p: &Pattern, run_pos: &HashMap<&str, usize>, w: &TrendWindows) -> &'static str {
    let (mut base, mut recent) = (0u64, 0u64);
    for (run, n) in &p.run_counts.0 {
        match run_pos.get(&**run) {
            Some(i) if w.baseline.contains(i) => base += n,
            Some(i) if w.recent.contains(i) => recent += n,
            _ => {}
        }
    }
    let base_rate = base as f64 / w.baseline.len() as f64;
    let recent_rate = recent as f64 / w.recent.len() as f64;
    match (base_rate > 0.0, recent_rate > 0.0) {
        (false, true) => "new",
        (true, false) => "resolved",
        (false, false) => "stable",
        (true, true) => {
            let ratio = recent_rate / base_rate;
            if ratio >= 1.0 + TREND_BAND {
                "increasing"
            } else if ratio <= 1.0 - TREND_BAND {
                "decreasing"
            } else {
                "stable"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::record::RunCounts;
    use std::collections::BTreeMap;

    fn pattern(class: &str, freq: u64, lat: &[(u64, u64)], runs: &[(&str, u64)]) -> Pattern {
        Pattern {
            kind: crate::record::PatternKind,
            pattern_id: class.into(),
            display_name: class.into(),
            agent_id: "a".into(),
            tool_name: "t".into(),
            failure_classification: class.into(),
            divergence_fields: vec![],
            frequency: freq,
            recovered: 0,
            tail_unrecovered: 0,
            recovery_latencies: lat.iter().copied().collect::<BTreeMap<_, _>>(),
            run_counts: RunCounts(runs.iter().map(|(r, n)| ((*r).into(), *n)).collect()),
            day_counts: BTreeMap::new(),
            hour_counts: BTreeMap::new(),
            samples: vec![],
            score: None,
        }
    }

    fn batch(runs: &[&str]) -> Batch {
        Batch {
            kind: crate::record::BatchKind,
            runs_total: runs.len() as u64,
            run_order: runs.iter().map(|r| r.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn recovered_is_recounted_with_the_scoring_window() {
        let b = batch(&["r"]);
        // Grouped with a window of 1: the failure at offset 3 was not counted.
        let mut ps = vec![pattern("agent_error", 2, &[(1, 1), (3, 1)], &[("r", 2)])];
        ps[0].recovered = 1;
        assert_eq!(score(&b, &mut ps, &ScoringConfig::default()), 1);
        let s = ps[0].score.as_ref().unwrap();
        assert_eq!((ps[0].recovered, s.recovery_rate), (2, 1.0));
        let one = ScoringConfig {
            recovery_window: 1,
            ..ScoringConfig::default()
        };
        assert_eq!(score(&b, &mut ps, &one), 1);
        let s = ps[0].score.as_ref().unwrap();
        assert_eq!((ps[0].recovered, s.recovery_rate), (1, 0.5));
        assert_eq!(
            score(&b, &mut ps, &one),
            0,
            "same window: nothing recounted"
        );
    }

    fn scored(b: &Batch, ps: Vec<Pattern>) -> Vec<Pattern> {
        let mut ps = ps;
        score(b, &mut ps, &ScoringConfig::default());
        ps
    }

    #[test]
    fn single_unrecovered_agent_error_is_severity_ten_and_a_half() {
        let ps = scored(
            &batch(&["r"]),
            vec![pattern("agent_error", 1, &[], &[("r", 1)])],
        );
        let s = ps[0].score.as_ref().unwrap();
        assert_eq!(s.severity_score, 10.5);
        assert_eq!(s.frequency_score, 10.0);
        assert!((s.final_score - (4.0 + 6.3)).abs() < 1e-12);
        assert_eq!(s.confidence_label, "low");
        assert_eq!(s.median_recovery_latency, None);
        assert_eq!(s.trend, "insufficient data");
    }

    #[test]
    fn recovery_at_offset_three_counts_and_four_does_not() {
        let b = batch(&["r"]);
        let three = scored(&b, vec![pattern("agent_error", 1, &[(3, 1)], &[("r", 1)])]);
        assert_eq!(three[0].score.as_ref().unwrap().recovery_rate, 1.0);
        assert_eq!(three[0].score.as_ref().unwrap().severity_score, 7.0);
        let four = scored(&b, vec![pattern("agent_error", 1, &[(4, 1)], &[("r", 1)])]);
        assert_eq!(four[0].score.as_ref().unwrap().recovery_rate, 0.0);
        assert_eq!(four[0].score.as_ref().unwrap().severity_score, 10.5);
    }

    #[test]
    fn confidence_labels_at_one_two_four_five() {
        let b = batch(&["r"]);
        for (n, label) in [(1, "low"), (2, "medium"), (4, "high"), (5, "high")] {
            let ps = scored(&b, vec![pattern("x", n, &[], &[("r", n)])]);
            assert_eq!(ps[0].score.as_ref().unwrap().confidence_label, label, "{n}");
        }
    }

    #[test]
    fn median_is_pythons() {
        let p = pattern("x", 4, &[(1, 1), (2, 2), (3, 1)], &[]);
        assert_eq!(median_recovery(&p.recovery_latencies, 3), Some(2.0));
        let p = pattern("x", 2, &[(1, 1), (2, 1)], &[]);
        assert_eq!(median_recovery(&p.recovery_latencies, 3), Some(1.5));
    }

    #[test]
    fn trends() {
        let six = batch(&["1", "2", "3", "4", "5", "6"]);
        let t = |runs: &[(&str, u64)]| {
            scored(&six, vec![pattern("x", 1, &[], runs)])[0]
                .score
                .clone()
                .unwrap()
                .trend
        };
        assert_eq!(t(&[("5", 1)]), "new");
        assert_eq!(t(&[("2", 1)]), "resolved");
        assert_eq!(t(&[("2", 1), ("5", 2)]), "increasing");
        assert_eq!(t(&[("2", 3), ("5", 2)]), "decreasing");
        assert_eq!(t(&[("2", 1), ("5", 1)]), "stable");
        // Outside both windows only: stable.
        let seven = batch(&["0", "1", "2", "3", "4", "5", "6"]);
        let ps = scored(&seven, vec![pattern("x", 1, &[], &[("0", 1)])]);
        assert_eq!(ps[0].score.as_ref().unwrap().trend, "stable");
        // Split half below six runs.
        let four = batch(&["1", "2", "3", "4"]);
        let ps = scored(&four, vec![pattern("x", 1, &[], &[("3", 1)])]);
        assert_eq!(ps[0].score.as_ref().unwrap().trend, "new");
    }

    #[test]
    fn ties_keep_first_appearance_order() {
        let b = batch(&["r"]);
        let ps = scored(
            &b,
            vec![
                pattern("agent_error", 1, &[], &[("r", 1)]),
                pattern("coordination_failure", 1, &[], &[("r", 1)]),
                pattern("agent_error", 1, &[], &[("r", 1)]),
            ],
        );
        let order: Vec<&str> = ps
            .iter()
            .map(|p| p.failure_classification.as_str())
            .collect();
        assert_eq!(
            order,
            ["coordination_failure", "agent_error", "agent_error"]
        );
        assert_eq!(ps[2].score.as_ref().unwrap().rank, 3);
    }
}
