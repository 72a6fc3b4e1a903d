//! Turns a verdict's ranking score into a calibrated probability that the
//! verdict names the right agent and step, for the kind of system the run
//! comes from.
//!
//! The ranking score orders candidates; it is no probability. What a
//! verdict is worth depends on the detector that made it and on the kind
//! of system: a rule right two times in three on multi-agent chats may be
//! right one time in ten on a web-browsing team. So the probability is how
//! often verdicts of that detector were right on labelled runs of the same
//! kind (`make bench-explain` prints the counts, and measures each kind
//! with its own runs left out of the fit), shrunk towards that kind's
//! overall rate so a detector seen a few times is not trusted on those few
//! alone. A run of a kind no labelled set covers is capped at the
//! detector's worst kind, and its verdict says so.

use std::sync::OnceLock;

use super::kind::SystemKind;

/// Right verdicts and verdicts per detector and kind, on the labelled sets
/// (`make bench-explain -- --fit` prints these rows).
const FITTED: &[(&str, SystemKind, u32, u32)] = &[
    ("bad_tool_call", SystemKind::MultiAgentChat, 7, 13),
    ("empty_retrieval", SystemKind::MultiAgentChat, 1, 2),
    ("fabricated_data", SystemKind::MultiAgentChat, 4, 6),
    ("first_action", SystemKind::MultiAgentChat, 7, 17),
    ("ignored_failure", SystemKind::MultiAgentChat, 1, 1),
    ("ignored_instruction", SystemKind::MultiAgentChat, 0, 1),
    ("lossy_handoff", SystemKind::MultiAgentChat, 0, 2),
    ("repeated_call", SystemKind::MultiAgentChat, 1, 1),
    ("task_drift", SystemKind::MultiAgentChat, 6, 6),
    ("unsourced_values", SystemKind::MultiAgentChat, 5, 7),
    ("value_provenance", SystemKind::MultiAgentChat, 0, 1),
    ("claimed_lookup", SystemKind::ToolUse, 0, 1),
    ("fabricated_data", SystemKind::ToolUse, 0, 1),
    ("first_action", SystemKind::ToolUse, 0, 26),
    ("point_of_no_return", SystemKind::ToolUse, 39, 62),
    ("repeated_call", SystemKind::ToolUse, 0, 3),
    ("unconfirmed_action", SystemKind::ToolUse, 10, 21),
    ("unrequested_handoff", SystemKind::ToolUse, 2, 2),
];

/// How many verdicts a kind's overall rate weighs, against a detector's own.
const SHRINK: f64 = 4.0;
/// The most a detector never seen as a verdict on a kind is worth there:
/// a rule unmeasured is worth less than the kind's overall rate.
const UNSEEN: f64 = 0.35;
/// A verdict that abstains (only a locator) is worth at most this, unless
/// its locator was measured on at least [`MEASURED`] runs of the kind: a
/// prior is no evidence where nobody counted how often it is right.
const ABSTAINED_CAP: f64 = 0.3;
/// Verdicts of a locator on one kind that make its rate a measurement.
const MEASURED: u32 = 10;
/// Verdicts of a locator on one kind, right half the time or more, that
/// make its step a claim there.
const EVIDENCE_RUNS: u32 = 20;
/// The environment variable that leaves one kind's rows out of the fit, to
/// measure how confidences hold on a kind they were not fitted on.
pub(crate) const HOLD_OUT_VAR: &str = "TRIAGE_EXPLAIN_HOLD_OUT_KIND";

/// A probability, and why it was capped when it was.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Calibrated {
    pub probability: f64,
    /// Set when the run is unlike every calibration set.
    pub caveat: Option<String>,
}

/// The fitted rows in use: all of them, or without the kind
/// [`HOLD_OUT_VAR`] names.
fn fitted() -> &'static [(&'static str, SystemKind, u32, u32)] {
    static ROWS: OnceLock<Vec<(&'static str, SystemKind, u32, u32)>> = OnceLock::new();
    ROWS.get_or_init(|| {
        let held_out = std::env::var(HOLD_OUT_VAR)
            .ok()
            .and_then(|k| SystemKind::named(&k));
        without(held_out)
    })
}

fn without(held_out: Option<SystemKind>) -> Vec<(&'static str, SystemKind, u32, u32)> {
    FITTED
        .iter()
        .copied()
        .filter(|r| Some(r.1) != held_out)
        .collect()
}

/// The probability that a verdict made by `detector` on a run of `kind` is
/// right.
pub(crate) fn probability(detector: &str, abstained: bool, kind: SystemKind) -> Calibrated {
    calibrate(fitted(), detector, abstained, kind)
}

fn calibrate(
    rows: &[(&str, SystemKind, u32, u32)],
    detector: &str,
    abstained: bool,
    kind: SystemKind,
) -> Calibrated {
    let mut kinds: Vec<SystemKind> = rows.iter().map(|r| r.1).collect();
    kinds.sort_unstable();
    kinds.dedup();
    let (p, caveat) = if kinds.contains(&kind) {
        (estimate(rows, detector, kind), None)
    } else {
        let worst = kinds
            .iter()
            .map(|&k| (estimate(rows, detector, k), k))
            .min_by(|a, b| a.0.total_cmp(&b.0));
        match worst {
            Some((p, k)) => (
                p,
                Some(format!(
                    "this run reads as {}, unlike every set the confidence was measured on \
                     ({}): capped at {detector}'s worst kind ({})",
                    kind.name(),
                    kinds
                        .iter()
                        .map(|k| k.name())
                        .collect::<Vec<_>>()
                        .join(", "),
                    k.name()
                )),
            ),
            None => (
                0.0,
                Some("no calibration set: the confidence is unmeasured".to_string()),
            ),
        }
    };
    // A locator measured often enough on runs of this kind is worth what
    // it scored there; unmeasured, a prior is no evidence.
    let measured = caveat.is_none()
        && rows
            .iter()
            .any(|r| r.0 == detector && r.1 == kind && r.3 >= MEASURED);
    let p = if abstained && !measured {
        p.min(ABSTAINED_CAP)
    } else {
        p
    };
    Calibrated {
        probability: (p * 100.0).round() / 100.0,
        caveat,
    }
}

/// Right and all verdicts of a locator on runs of `kind`, when it was
/// counted on enough of them ([`EVIDENCE_RUNS`]) and right at least half
/// the time: then where it points is evidence on that kind, not a prior.
pub(crate) fn locator_as_evidence(detector: &str, kind: SystemKind) -> Option<(u32, u32)> {
    fitted()
        .iter()
        .find(|r| r.0 == detector && r.1 == kind)
        .filter(|r| r.3 >= EVIDENCE_RUNS && 2 * r.2 >= r.3)
        .map(|r| (r.2, r.3))
}

/// A detector's rate on one kind, shrunk towards the kind's overall rate.
fn estimate(rows: &[(&str, SystemKind, u32, u32)], detector: &str, kind: SystemKind) -> f64 {
    let (right, n) = rows
        .iter()
        .filter(|r| r.1 == kind)
        .fold((0, 0), |(r, n), row| (r + row.2, n + row.3));
    let overall = if n == 0 {
        0.0
    } else {
        f64::from(right) / f64::from(n)
    };
    rows.iter()
        .find(|r| r.0 == detector && r.1 == kind)
        .map_or(overall.min(UNSEEN), |&(_, _, right, n)| {
            (f64::from(right) + SHRINK * overall) / (f64::from(n) + SHRINK)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROWS: &[(&str, SystemKind, u32, u32)] = &[
        ("good", SystemKind::MultiAgentChat, 9, 10),
        ("poor", SystemKind::MultiAgentChat, 2, 10),
        ("good", SystemKind::Coding, 1, 10),
        ("poor", SystemKind::Coding, 5, 10),
        ("few", SystemKind::Coding, 3, 3),
    ];

    #[test]
    fn a_kind_with_a_set_gets_its_own_rate_shrunk_and_below_one() {
        let c = calibrate(ROWS, "good", false, SystemKind::MultiAgentChat);
        assert!(c.caveat.is_none());
        assert!(c.probability > 0.55 && c.probability < 0.9, "{c:?}");
        let c = calibrate(ROWS, "good", false, SystemKind::Coding);
        assert!(c.probability < 0.3, "{c:?}");
    }

    #[test]
    fn an_unlike_run_is_capped_at_the_worst_kind_and_says_so() {
        let c = calibrate(ROWS, "good", false, SystemKind::WebBrowsing);
        assert_eq!(
            c.probability,
            calibrate(ROWS, "good", false, SystemKind::Coding).probability
        );
        let caveat = c.caveat.unwrap();
        assert!(
            caveat.contains("web browsing") && caveat.contains("coding agent"),
            "{caveat}"
        );
    }

    #[test]
    fn unseen_detectors_and_abstentions_stay_low() {
        let c = calibrate(ROWS, "never", false, SystemKind::MultiAgentChat);
        assert!(c.probability <= UNSEEN);
        // A locator seen a few times is capped; one counted often enough on
        // the kind is worth its rate, but not on a kind unlike the sets.
        assert!(calibrate(ROWS, "few", true, SystemKind::Coding).probability <= ABSTAINED_CAP);
        let c = calibrate(ROWS, "good", true, SystemKind::MultiAgentChat);
        assert!(c.probability > ABSTAINED_CAP, "{c:?}");
        let c = calibrate(ROWS, "good", true, SystemKind::WebBrowsing);
        assert!(c.probability <= ABSTAINED_CAP, "{c:?}");
        assert_eq!(
            calibrate(&[], "good", false, SystemKind::Coding).probability,
            0.0
        );
    }

    #[test]
    fn holding_a_kind_out_drops_its_rows() {
        let rows = without(Some(SystemKind::MultiAgentChat));
        assert!(rows.iter().all(|r| r.1 != SystemKind::MultiAgentChat));
        for &(d, k, right, n) in FITTED {
            assert!(right <= n, "{d} {k:?}");
            let p = probability(d, false, k).probability;
            assert!((0.0..1.0).contains(&p), "{d}: {p}");
        }
    }
}
