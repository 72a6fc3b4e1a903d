//! Comparing two scored batches: the summary, per-classification and
//! per-pattern changes with the reference's labels, and the conditions
//! `--fail-on` gates CI on.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use crate::config::ScoringConfig;
use crate::group::{median_recovery, recovered_within};
use crate::outcomes::{self, OutcomeCounts};
use crate::pipeline::{Analysis, AnalyzeOptions, analyze};
use crate::plumbing::diag::Diag;
use crate::plumbing::input::{self, Input};
use crate::record::{
    Change, ChangeScope, ClassificationChange, CountChange, Outcome, PassRateChange, Pattern,
    PatternChange, RunRec, RunTotals, ScoreChange, SideSummary, SummaryChange, TaskChange,
};
use crate::render::comparison::{p_text, pct_text, rate_with_interval, test_text};
use crate::render::words::classification_label;

/// A larger side with fewer occurrences than this makes a label tentative.
const TENTATIVE_BELOW: u64 = 5;

/// "up N%", "down N%" (rounded half to even), "new", "resolved" or
/// "stable"; " (tentative)" on a directional label when asked.
pub(crate) fn pct_change(before: u64, after: u64, tentative: bool) -> String {
    let label = match (before, after) {
        (0, 0) => return "stable".into(),
        (0, _) => "new".to_string(),
        (_, 0) => "resolved".to_string(),
        (b, a) if b == a => return "stable".into(),
        (b, a) => {
            let pct = ((a as f64 - b as f64) / b as f64 * 100.0).round_ties_even();
            if pct == 0.0 {
                return "stable".into();
            }
            if pct > 0.0 {
                format!("up {pct:.0}%")
            } else {
                format!("down {:.0}%", pct.abs())
            }
        }
    };
    if tentative {
        format!("{label} (tentative)")
    } else {
        label
    }
}

fn turns(x: f64) -> String {
    let unit = if x == 1.0 { "turn" } else { "turns" };
    format!("{x} {unit}")
}

/// The change in median recovery latency, in the reference's words.
pub(crate) fn latency_change(before: Option<f64>, after: Option<f64>) -> String {
    match (before, after) {
        (None, None) => "n/a".into(),
        (None, Some(a)) => format!("new ({})", turns(a)),
        (Some(b), None) => format!("no recoveries (was {})", turns(b)),
        (Some(b), Some(a)) => {
            let d = a - b;
            if d.abs() < 0.05 {
                format!("stable ({})", turns(a))
            } else {
                let sign = if d > 0.0 { '+' } else { '-' };
                format!("{sign}{:.1} turns ({b} → {a})", d.abs())
            }
        }
    }
}

/// "+x.xx", "-x.xx" or "stable" (under 0.005).
pub(crate) fn score_delta(before: f64, after: f64) -> String {
    let d = after - before;
    if d.abs() < 0.005 {
        "stable".into()
    } else {
        format!("{}{:.2}", if d > 0.0 { '+' } else { '-' }, d.abs())
    }
}

fn count_change(before: u64, after: u64, tentative: bool) -> CountChange {
    CountChange {
        before,
        after,
        delta: after as i64 - before as i64,
        label: pct_change(before, after, tentative),
    }
}

fn score_change(before: f64, after: f64) -> ScoreChange {
    ScoreChange {
        before,
        after,
        delta: after - before,
        label: score_delta(before, after),
    }
}

fn final_score(p: &Pattern) -> f64 {
    p.score.as_ref().map_or(0.0, |s| s.final_score)
}

fn unrecovered(p: &Pattern, window: u64) -> u64 {
    p.frequency
        .saturating_sub(recovered_within(&p.recovery_latencies, window))
}

/// Per-classification totals of one side.
#[derive(Default)]
struct ClassTotals {
    frequency: u64,
    unrecovered: u64,
    latencies: BTreeMap<u64, u64>,
    /// None while no pattern of the classification was seen.
    top_score: Option<f64>,
}

fn class_totals(patterns: &[Pattern], window: u64) -> BTreeMap<String, ClassTotals> {
    let mut out: BTreeMap<String, ClassTotals> = BTreeMap::new();
    for p in patterns {
        let t = out.entry(p.failure_classification.clone()).or_default();
        t.frequency += p.frequency;
        t.unrecovered += unrecovered(p, window);
        for (o, n) in p.recovery_latencies.range(1..=window) {
            *t.latencies.entry(*o).or_insert(0) += n;
        }
        let score = final_score(p);
        t.top_score = Some(t.top_score.map_or(score, |top| top.max(score)));
    }
    out
}

fn side_summary(a: &Analysis) -> SideSummary {
    SideSummary {
        sources: a.batch.sources.iter().map(|s| s.path.clone()).collect(),
        runs: a.batch.runs_total,
        events: a.batch.events_total,
    }
}

/// The change records of `before` → `after`: the summary first, then one
/// per classification (by name), then the patterns: new, resolved,
/// persisting, each by frequency with ties by pattern id.
pub(crate) fn compare(before: &Analysis, after: &Analysis, cfg: &ScoringConfig) -> Vec<Change> {
    let w = cfg.recovery_window;
    let (bc, ac) = (
        class_totals(&before.patterns, w),
        class_totals(&after.patterns, w),
    );
    let classes: BTreeSet<&String> = bc.keys().chain(ac.keys()).collect();
    // Failures come in streaks, so counts per run vary more than a
    // Poisson count does: each class's rise is tested on its counts
    // shrunk by that class's overdispersion (quasi-Poisson).
    let (rb, ra) = (before.batch.runs_total, after.batch.runs_total);
    let dispersion = |class: &str| {
        outcomes::dispersion(&[
            (per_run_counts(before, class), rb),
            (per_run_counts(after, class), ra),
        ])
    };
    let rise = |b: u64, a: u64, phi: f64| {
        let shrink = |n: u64| (n as f64 / phi).round() as u64;
        outcomes::rate_rise(shrink(b), rb, shrink(a), ra)
    };
    let empty = ClassTotals::default();
    let class_changes: Vec<ClassificationChange> = classes
        .into_iter()
        .map(|c| {
            let (b, a) = (bc.get(c).unwrap_or(&empty), ac.get(c).unwrap_or(&empty));
            let tentative = b.frequency.max(a.frequency) < TENTATIVE_BELOW;
            let phi = dispersion(c);
            let (mb, ma) = (
                median_recovery(&b.latencies, w),
                median_recovery(&a.latencies, w),
            );
            ClassificationChange {
                classification: c.clone(),
                frequency: count_change(b.frequency, a.frequency, tentative),
                unrecovered: count_change(b.unrecovered, a.unrecovered, tentative),
                median_latency_before: mb,
                median_latency_after: ma,
                latency_label: latency_change(mb, ma),
                top_score_before: b.top_score,
                top_score_after: a.top_score,
                tentative,
                per_run_before: per_run(b.frequency, rb),
                per_run_after: per_run(a.frequency, ra),
                rise_p_value: Some(rise(b.frequency, a.frequency, phi)),
                unrecovered_rise_p_value: Some(rise(b.unrecovered, a.unrecovered, phi)),
            }
        })
        .collect();
    let pattern_changes = pattern_changes(before, after, w);
    let summary = summary_change(before, after, w, &class_changes, &pattern_changes);
    let (pass_rate, tasks) = pass_rate_change(&before.runs, &after.runs);
    let mut out = vec![change(ChangeScope::Summary(summary))];
    out.push(change(ChangeScope::PassRate(pass_rate)));
    out.extend(tasks.into_iter().map(|t| change(ChangeScope::Task(t))));
    out.extend(
        class_changes
            .into_iter()
            .map(|c| change(ChangeScope::Classification(c))),
    );
    out.extend(
        pattern_changes
            .into_iter()
            .map(|p| change(ChangeScope::Pattern(p))),
    );
    out
}

/// Events per run; 0 without runs.
fn per_run(n: u64, runs: u64) -> f64 {
    if runs == 0 {
        0.0
    } else {
        n as f64 / runs as f64
    }
}

/// A class's failure events in each run that had one (runs without are 0).
fn per_run_counts(a: &Analysis, class: &str) -> Vec<u64> {
    let mut by_run: HashMap<&str, u64> = HashMap::new();
    for p in a
        .patterns
        .iter()
        .filter(|p| p.failure_classification == class)
    {
        for (run, n) in &p.run_counts.0 {
            *by_run.entry(run).or_insert(0) += n;
        }
    }
    by_run.into_values().collect()
}

fn run_totals(runs: &[RunRec]) -> RunTotals {
    let c = OutcomeCounts::of(runs);
    let (lo, hi) = outcomes::wilson_95(c.succeeded, c.known());
    let known = c.known() > 0;
    RunTotals {
        runs: c.total,
        failed: c.failed,
        succeeded: c.succeeded,
        unknown: c.unknown(),
        pass_rate: c.pass_rate(),
        pass_rate_low: known.then_some(lo),
        pass_rate_high: known.then_some(hi),
    }
}

/// How runs of the two sides pair up: by task where each side ran each
/// task once, else by task and trial; over the tasks (or trials) both
/// sides ran with a known outcome, when those are at least half of each
/// side's. None when no key is unique on a side or too few are shared.
fn pairing<'r>(
    before: &'r [RunRec],
    after: &'r [RunRec],
) -> Option<(Vec<(&'r RunRec, &'r RunRec)>, &'static str)> {
    type Key<'a> = (&'a str, Option<u64>);
    let keyed = |runs: &'r [RunRec], with_trial: bool| -> Option<BTreeMap<Key<'r>, &'r RunRec>> {
        let mut out = BTreeMap::new();
        for r in runs.iter().filter(|r| r.outcome != Outcome::Unknown) {
            let task = r.task_id.as_deref()?;
            let key = (task, if with_trial { Some(r.trial?) } else { None });
            if out.insert(key, r).is_some() {
                return None;
            }
        }
        (!out.is_empty()).then_some(out)
    };
    let by = |with_trial| -> Option<Vec<(&'r RunRec, &'r RunRec)>> {
        let (b, a) = (keyed(before, with_trial)?, keyed(after, with_trial)?);
        let pairs: Vec<(&RunRec, &RunRec)> = b
            .iter()
            .filter_map(|(k, rb)| Some((*rb, *a.get(k)?)))
            .collect();
        (pairs.len() * 2 >= b.len() && pairs.len() * 2 >= a.len()).then_some(pairs)
    };
    by(false)
        .map(|p| (p, "task"))
        .or_else(|| by(true).map(|p| (p, "trial")))
}

/// The pass rates of both sides, and the tasks that flipped: paired by
/// task where both sides ran the same ones (McNemar's exact test), else
/// the two proportions (Fisher's exact test); one-sided, for a drop.
fn pass_rate_change(before: &[RunRec], after: &[RunRec]) -> (PassRateChange, Vec<TaskChange>) {
    let (b, a) = (run_totals(before), run_totals(after));
    let mut tasks = Vec::new();
    let mut paired_by = None;
    let (test, pairs, p_value) = match (b.pass_rate, a.pass_rate) {
        (Some(_), Some(_)) => match pairing(before, after) {
            Some((pairs, by)) => {
                paired_by = Some(by.to_string());
                for (rb, ra) in &pairs {
                    let status = match (rb.outcome, ra.outcome) {
                        (Outcome::Succeeded, Outcome::Failed) => "newly_failing",
                        (Outcome::Failed, Outcome::Succeeded) => "fixed",
                        _ => continue,
                    };
                    tasks.push(TaskChange {
                        status: status.to_string(),
                        task_id: rb.task_id.clone().unwrap_or_default(),
                        trial: if rb.trial == ra.trial { rb.trial } else { None },
                        run_before: rb.run_id.clone(),
                        run_after: ra.run_id.clone(),
                    });
                }
                let worse = tasks.iter().filter(|t| t.status == "newly_failing").count() as u64;
                let better = tasks.len() as u64 - worse;
                (
                    "paired",
                    Some(pairs.len() as u64),
                    Some(outcomes::mcnemar_worse(worse, better)),
                )
            }
            None => (
                "unpaired",
                None,
                Some(outcomes::fisher_worse(
                    b.failed,
                    b.failed + b.succeeded,
                    a.failed,
                    a.failed + a.succeeded,
                )),
            ),
        },
        _ => ("none", None, None),
    };
    // Newly failing first, each by task.
    tasks.sort_by(|x, y| {
        (x.status != "newly_failing")
            .cmp(&(y.status != "newly_failing"))
            .then_with(|| crate::record::natural_cmp(&x.task_id, &y.task_id))
            .then(x.trial.cmp(&y.trial))
    });
    let newly_failing = tasks.iter().filter(|t| t.status == "newly_failing").count() as u64;
    let label = match (b.pass_rate, a.pass_rate, p_value) {
        (Some(rb), Some(ra), Some(p)) => {
            let points = (ra - rb) * 100.0;
            if points.abs() < 0.05 {
                "stable".to_string()
            } else if points < 0.0 {
                format!("down {:.1} points ({})", -points, p_text(p))
            } else {
                format!("up {points:.1} points")
            }
        }
        _ => "n/a: no run of known outcome on a side".to_string(),
    };
    let fixed = tasks.len() as u64 - newly_failing;
    (
        PassRateChange {
            before: b,
            after: a,
            test: test.to_string(),
            pairs,
            paired_by,
            newly_failing: pairs.map(|_| newly_failing),
            fixed: pairs.map(|_| fixed),
            p_value,
            label,
        },
        tasks,
    )
}

fn change(scope: ChangeScope) -> Change {
    Change {
        kind: crate::record::ChangeKind,
        change: scope,
    }
}

fn summary_change(
    before: &Analysis,
    after: &Analysis,
    window: u64,
    classes: &[ClassificationChange],
    patterns: &[PatternChange],
) -> SummaryChange {
    let totals = |ps: &[Pattern]| {
        let failures: u64 = ps.iter().map(|p| p.frequency).sum();
        let unrec: u64 = ps.iter().map(|p| unrecovered(p, window)).sum();
        let coord: u64 = ps
            .iter()
            .filter(|p| p.failure_classification == "coordination_failure")
            .map(|p| p.frequency)
            .sum();
        let top = ps.iter().map(final_score).fold(0.0, f64::max);
        let mean = if ps.is_empty() {
            0.0
        } else {
            ps.iter().map(final_score).sum::<f64>() / ps.len() as f64
        };
        (ps.len() as u64, failures, unrec, coord, top, mean)
    };
    let b = totals(&before.patterns);
    let a = totals(&after.patterns);
    SummaryChange {
        before: side_summary(before),
        after: side_summary(after),
        patterns: count_change(b.0, a.0, false),
        failure_events: count_change(b.1, a.1, false),
        unrecovered_events: count_change(b.2, a.2, false),
        coordination_failure_events: count_change(b.3, a.3, false),
        top_final_score: score_change(b.4, a.4),
        mean_final_score: score_change(b.5, a.5),
        headlines: headlines(classes, patterns),
    }
}

/// The facts a reader should see first. Unlike the reference, unrecovered
/// and latency changes are reported even when the frequency did not change.
fn headlines(classes: &[ClassificationChange], patterns: &[PatternChange]) -> Vec<String> {
    let mut out = Vec::new();
    for c in classes {
        let label = classification_label(&c.classification);
        if c.frequency.label != "stable" {
            out.push(format!(
                "{label}: {} ({} → {})",
                c.frequency.label, c.frequency.before, c.frequency.after
            ));
        }
        if c.unrecovered.label != "stable" {
            out.push(format!(
                "{label} unrecovered: {} ({} → {})",
                c.unrecovered.label, c.unrecovered.before, c.unrecovered.after
            ));
        }
        if c.latency_label != "n/a" && !c.latency_label.starts_with("stable") {
            out.push(format!("{label} recovery latency: {}", c.latency_label));
        }
    }
    for (status, prefix) in [("new", "new pattern"), ("resolved", "resolved")] {
        for p in patterns.iter().filter(|p| p.status == status).take(3) {
            out.push(format!("{prefix}: {}", p.display_name));
        }
    }
    out
}

fn pattern_changes(before: &Analysis, after: &Analysis, window: u64) -> Vec<PatternChange> {
    let bi: HashMap<&str, &Pattern> = before
        .patterns
        .iter()
        .map(|p| (p.pattern_id.as_str(), p))
        .collect();
    let ai: HashMap<&str, &Pattern> = after
        .patterns
        .iter()
        .map(|p| (p.pattern_id.as_str(), p))
        .collect();
    let mut new = Vec::new();
    let mut resolved = Vec::new();
    let mut persisting = Vec::new();
    for p in &after.patterns {
        match bi.get(p.pattern_id.as_str()) {
            None => new.push(pattern_change("new", None, Some(p), window)),
            Some(b) => persisting.push(pattern_change("persisting", Some(b), Some(p), window)),
        }
    }
    for p in &before.patterns {
        if !ai.contains_key(p.pattern_id.as_str()) {
            resolved.push(pattern_change("resolved", Some(p), None, window));
        }
    }
    let by_after = |x: &PatternChange, y: &PatternChange| {
        y.frequency
            .after
            .cmp(&x.frequency.after)
            .then_with(|| x.pattern_id.cmp(&y.pattern_id))
    };
    new.sort_by(by_after);
    persisting.sort_by(by_after);
    resolved.sort_by(|x, y| {
        y.frequency
            .before
            .cmp(&x.frequency.before)
            .then_with(|| x.pattern_id.cmp(&y.pattern_id))
    });
    new.into_iter().chain(resolved).chain(persisting).collect()
}

fn pattern_change(
    status: &str,
    b: Option<&Pattern>,
    a: Option<&Pattern>,
    window: u64,
) -> PatternChange {
    let p = a.or(b).expect("a pattern is on one side at least");
    let freq = |x: Option<&Pattern>| x.map_or(0, |p| p.frequency);
    let unrec = |x: Option<&Pattern>| x.map_or(0, |p| unrecovered(p, window));
    PatternChange {
        status: status.to_string(),
        pattern_id: p.pattern_id.clone(),
        display_name: p.display_name.clone(),
        agent_id: p.agent_id.clone(),
        tool_name: p.tool_name.clone(),
        failure_classification: p.failure_classification.clone(),
        divergence_fields: p.divergence_fields.clone(),
        frequency: count_change(freq(b), freq(a), false),
        unrecovered: count_change(unrec(b), unrec(a), false),
        final_score_before: b.map(final_score),
        final_score_after: a.map(final_score),
        tentative: freq(b).max(freq(a)) < TENTATIVE_BELOW,
    }
}

/// A condition under which triage-diff exits 1.
#[derive(Debug, Clone, PartialEq)]
pub enum FailOn {
    /// Any pattern that only the after side has.
    New,
    /// More failure or unrecovered events in any classification, beyond
    /// the tolerance. Not a higher score: scores are scaled to each batch's
    /// most frequent pattern, so one classification's rises when the others
    /// fall (`score>=X` gates on scores).
    Regression,
    /// Any pattern on the after side scoring at least this.
    ScoreAtLeast(f64),
    /// The pass rate fell, significantly at `--alpha`.
    PassRate,
    /// The pass rate after is below this (a share, 0 to 1).
    PassRateBelow(f64),
}

impl FailOn {
    /// "2 regressions", "1 new pattern", "3 patterns scoring >= 8"
    pub(crate) fn count_text(&self, n: usize) -> String {
        let one = n == 1;
        match self {
            FailOn::New if one => "1 new pattern".to_string(),
            FailOn::New => format!("{n} new patterns"),
            FailOn::Regression if one => "1 regression".to_string(),
            FailOn::Regression => format!("{n} regressions"),
            FailOn::ScoreAtLeast(x) if one => format!("1 pattern scoring >= {x}"),
            FailOn::ScoreAtLeast(x) => format!("{n} patterns scoring >= {x}"),
            FailOn::PassRate => "the pass rate dropped".to_string(),
            FailOn::PassRateBelow(x) => format!("the pass rate is below {}", pct_text(*x)),
        }
    }
}

impl std::fmt::Display for FailOn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FailOn::New => f.write_str("new"),
            FailOn::Regression => f.write_str("regression"),
            FailOn::ScoreAtLeast(x) => write!(f, "score>={x}"),
            FailOn::PassRate => f.write_str("pass-rate"),
            FailOn::PassRateBelow(x) => write!(f, "pass-rate<{}", pct_text(*x)),
        }
    }
}

impl std::str::FromStr for FailOn {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "new" => Ok(FailOn::New),
            "regression" => Ok(FailOn::Regression),
            "pass-rate" => Ok(FailOn::PassRate),
            _ if s.starts_with("pass-rate<") => {
                let x = s["pass-rate<".len()..].trim();
                let (num, scale) = match x.strip_suffix('%') {
                    Some(n) => (n, 100.0),
                    None => (x, 1.0),
                };
                let v = num
                    .trim()
                    .parse::<f64>()
                    .map_err(|_| format!("{s:?}: {x:?} is not a number"))?
                    / scale;
                if !(0.0..=1.0).contains(&v) {
                    return Err(format!(
                        "{s:?}: a pass rate is between 0 and 1 (or 0% and 100%)"
                    ));
                }
                Ok(FailOn::PassRateBelow(v))
            }
            _ => {
                let x = s.strip_prefix("score>=").ok_or_else(|| {
                    format!("{s:?}: expected new, regression, score>=X, pass-rate or pass-rate<X")
                })?;
                x.trim()
                    .parse::<f64>()
                    .map(FailOn::ScoreAtLeast)
                    .map_err(|_| format!("{s:?}: {x:?} is not a number"))
            }
        }
    }
}

/// The reasons the condition holds, one sentence each (empty: it does not).
/// Why a gate holds: what tripped it and the sentence that says how.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reason {
    /// The classification label or pattern name the gate tripped on.
    pub subject: String,
    pub text: String,
}

/// What a gate leaves unjudged: a classification or pattern with fewer
/// events than `min_events` on its larger side cannot trip it.
#[derive(Debug, Clone, Copy, Default)]
pub struct GateOptions {
    /// Percent a count may grow before `regression` holds.
    pub tolerance_pct: f64,
    pub min_events: u64,
    /// The significance a rise (`regression`) or drop (`pass-rate`) must
    /// reach to trip a gate.
    pub alpha: f64,
}

/// The reasons `cond` holds, and how many classifications or patterns it
/// would have tripped on but for `min_events`.
pub(crate) fn failing(
    cond: &FailOn,
    changes: &[Change],
    opts: GateOptions,
) -> (Vec<Reason>, usize) {
    let grew = |b: f64, a: f64| a > b * (1.0 + opts.tolerance_pct / 100.0) + 1e-9;
    let small = |c: &CountChange| c.before.max(c.after) < opts.min_events;
    let mut out = Vec::new();
    // Pass-rate reasons: judged on runs, not on --min-events.
    let mut direct = Vec::new();
    let mut below = 0;
    let mut add = |count: &CountChange, reason: Reason| {
        if small(count) {
            below += 1;
        } else {
            out.push(reason);
        }
    };
    for c in changes {
        match (&c.change, cond) {
            (ChangeScope::Pattern(p), FailOn::New) if p.status == "new" => add(
                &p.frequency,
                Reason {
                    subject: p.display_name.clone(),
                    text: format!(
                        "new pattern: {} ({})",
                        p.display_name,
                        words_count(p.frequency.after)
                    ),
                },
            ),
            (ChangeScope::Pattern(p), FailOn::ScoreAtLeast(x)) => {
                if let Some(s) = p.final_score_after.filter(|s| s >= x) {
                    add(
                        &p.frequency,
                        Reason {
                            subject: p.display_name.clone(),
                            text: format!("{} scores {s:.2} (>= {x})", p.display_name),
                        },
                    );
                }
            }
            (ChangeScope::PassRate(p), FailOn::PassRate) => {
                if let (Some(rb), Some(ra), Some(pv)) =
                    (p.before.pass_rate, p.after.pass_rate, p.p_value)
                    && ra < rb
                    && pv < opts.alpha
                {
                    direct.push(Reason {
                        subject: "pass rate".to_string(),
                        text: format!(
                            "pass rate fell from {} to {}, {} ({}; alpha {})",
                            rate_with_interval(&p.before),
                            rate_with_interval(&p.after),
                            p_text(pv),
                            test_text(p),
                            opts.alpha
                        ),
                    });
                }
            }
            (ChangeScope::PassRate(p), FailOn::PassRateBelow(x)) => {
                if let Some(ra) = p.after.pass_rate
                    && ra < *x
                {
                    direct.push(Reason {
                        subject: "pass rate".to_string(),
                        text: format!(
                            "pass rate {} is below {} (before: {})",
                            rate_with_interval(&p.after),
                            pct_text(*x),
                            rate_with_interval(&p.before)
                        ),
                    });
                }
            }
            (ChangeScope::Classification(k), FailOn::Regression) => {
                let label = classification_label(&k.classification);
                let (rb, ra) = (summary_runs(changes, false), summary_runs(changes, true));
                let rate = per_run;
                // Bonferroni: every classification is tested twice.
                let tests = 2 * changes
                    .iter()
                    .filter(|c| matches!(c.change, ChangeScope::Classification(_)))
                    .count()
                    .max(1);
                let level = opts.alpha / tests as f64;
                let rose: Vec<String> = [
                    ("failure events", &k.frequency, k.rise_p_value),
                    ("unrecovered events", &k.unrecovered, k.unrecovered_rise_p_value),
                ]
                .into_iter()
                .filter_map(|(what, count, p)| {
                    let (b, a) = (rate(count.before, rb), rate(count.after, ra));
                    let p = p.unwrap_or(1.0);
                    (grew(b, a) && p < level).then(|| {
                        format!(
                            "{what} per run rose from {b:.2} to {a:.2} ({} in {rb} runs to {} in {ra}; {}, below {} over {tests} tests)",
                            count.before,
                            count.after,
                            p_text(p),
                            opts.alpha
                        )
                    })
                })
                .collect();
                if !rose.is_empty() {
                    add(
                        &k.frequency,
                        Reason {
                            subject: label.to_string(),
                            text: format!("{label}: {}", rose.join(", ")),
                        },
                    );
                }
            }
            _ => {}
        }
    }
    out.extend(direct);
    (out, below)
}

/// Runs of one side, as the summary change states them.
fn summary_runs(changes: &[Change], after: bool) -> u64 {
    changes
        .iter()
        .find_map(|c| match &c.change {
            ChangeScope::Summary(s) => Some(if after { s.after.runs } else { s.before.runs }),
            _ => None,
        })
        .unwrap_or(0)
}

/// "1 event", "2 events"
fn words_count(n: u64) -> String {
    if n == 1 {
        "1 event".to_string()
    } else {
        format!("{n} events")
    }
}

/// Analyzes both sides and compares them.
pub(crate) fn compare_sides(
    before: &Path,
    after: &Path,
    opts: &AnalyzeOptions,
    diag: &mut Diag,
) -> anyhow::Result<Vec<Change>> {
    if before.as_os_str() == "-" && after.as_os_str() == "-" {
        anyhow::bail!("only one side can be stdin (-)");
    }
    let inputs = side_inputs(before, diag)?;
    let b = analyze(&inputs, opts, diag)?;
    input::refuse_empty_stdin(&inputs)?;
    something_to_compare(before, &b)?;
    let inputs = side_inputs(after, diag)?;
    let a = analyze(&inputs, opts, diag)?;
    input::refuse_empty_stdin(&inputs)?;
    something_to_compare(after, &a)?;
    let changes = compare(&b, &a, &opts.config.scoring);
    let sides = [
        (false, before, "empty-before", "AFTER counts as new"),
        (true, after, "empty-after", "BEFORE counts as resolved"),
    ];
    for (is_after, path, code, meaning) in sides {
        if side_is_empty(&changes, is_after) {
            diag.warn(
                code,
                format_args!(
                    "{}: no runs were read, so every pattern of {meaning}",
                    path.display()
                ),
            );
        }
    }
    Ok(changes)
}

/// Refuses a side that gave no events or patterns but did hold something:
/// records of other kinds (triage-explain's, triage-diff's own) or input
/// that could not be read. Compared as an empty batch, it would make
/// everything on the other side new, or pass every gate. An empty input
/// is an empty batch (a night without runs).
fn something_to_compare(side: &Path, a: &Analysis) -> anyhow::Result<()> {
    let read = a.batch.events_total > 0 || a.batch.runs_total > 0 || !a.patterns.is_empty();
    if read || (a.other.is_empty() && a.batch.skipped == 0) {
        return Ok(());
    }
    let mut kinds: Vec<String> = a
        .other
        .iter()
        .filter_map(|line| serde_json::from_slice::<KindOnly>(line).ok()?.kind)
        .collect();
    kinds.sort();
    kinds.dedup();
    let held = match (kinds.is_empty(), a.batch.skipped) {
        (false, _) => format!("it holds only {} records", kinds.join(", ")),
        (true, n) => format!("{n} of its lines or values could not be read"),
    };
    anyhow::bail!(
        "{}: nothing to compare: no events or patterns, and {held} (give trace files, events, or triage-group or triage-score output)",
        side.display()
    )
}

/// Whether the comparison's AFTER side (else BEFORE) read no runs, events
/// or patterns (the summary change says; the warning and the gate both
/// ask).
pub(crate) fn side_is_empty(changes: &[Change], after: bool) -> bool {
    changes.iter().any(|c| match &c.change {
        ChangeScope::Summary(s) => {
            let (totals, patterns) = if after {
                (&s.after, s.patterns.after)
            } else {
                (&s.before, s.patterns.before)
            };
            totals.runs == 0 && totals.events == 0 && patterns == 0
        }
        _ => false,
    })
}

#[derive(serde::Deserialize)]
struct KindOnly {
    kind: Option<String>,
}

/// A side's inputs: stdin, a file, or the trace files in a directory,
/// recursively and in path order (`io::input`), what else it holds named
/// in a warning.
pub(crate) fn side_inputs(path: &Path, diag: &mut Diag) -> anyhow::Result<Vec<Input>> {
    if path.as_os_str() == "-" {
        return input::resolve_inputs(&[]);
    }
    input::inputs(&[path.to_path_buf()], diag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_labels_follow_the_reference() {
        assert_eq!(pct_change(27, 19, false), "down 30%");
        assert_eq!(pct_change(18, 11, false), "down 39%");
        assert_eq!(pct_change(0, 0, true), "stable");
        assert_eq!(pct_change(0, 2, true), "new (tentative)");
        assert_eq!(pct_change(3, 0, true), "resolved (tentative)");
        assert_eq!(pct_change(6, 6, true), "stable");
        assert_eq!(pct_change(200, 201, false), "stable");
        assert_eq!(pct_change(10, 13, false), "up 30%");
        // Half to even: 2.5% rounds to 2, 3.5% to 4.
        assert_eq!(pct_change(200, 205, false), "up 2%");
        assert_eq!(pct_change(200, 207, false), "up 4%");
    }

    #[test]
    fn latency_labels_follow_the_reference() {
        assert_eq!(latency_change(None, None), "n/a");
        assert_eq!(latency_change(None, Some(2.0)), "new (2 turns)");
        assert_eq!(
            latency_change(Some(1.0), None),
            "no recoveries (was 1 turn)"
        );
        assert_eq!(latency_change(Some(2.0), Some(2.02)), "stable (2.02 turns)");
        assert_eq!(latency_change(Some(1.5), Some(3.0)), "+1.5 turns (1.5 → 3)");
        assert_eq!(latency_change(Some(3.0), Some(2.0)), "-1.0 turns (3 → 2)");
    }

    #[test]
    fn score_deltas() {
        assert_eq!(score_delta(7.1, 8.4), "+1.30");
        assert_eq!(score_delta(13.0, 13.004), "stable");
        assert_eq!(score_delta(5.0, 4.0), "-1.00");
    }

    #[test]
    fn fail_on_parses() {
        assert_eq!("new".parse::<FailOn>(), Ok(FailOn::New));
        assert_eq!(
            "score>=8.5".parse::<FailOn>(),
            Ok(FailOn::ScoreAtLeast(8.5))
        );
        assert!("score>x".parse::<FailOn>().is_err());
    }
}
