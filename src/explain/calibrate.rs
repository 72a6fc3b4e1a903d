//! Turns a verdict's ranking score into a calibrated probability that the
//! verdict names the right agent and step.
//!
//! The ranking score orders candidates; it is no probability. What a
//! verdict is worth depends mostly on the detector that made it, so the
//! probability is how often verdicts of that detector were right on the
//! even-numbered Who&When Algorithm-Generated runs (`make bench-explain`
//! prints the counts, the reliability table and the expected calibration
//! error on the held-out odd-numbered runs), shrunk towards the overall
//! rate so a detector seen a few times is not trusted on those few alone.

/// Right verdicts and verdicts per detector on the runs fitted to.
const FITTED: &[(&str, u32, u32)] = &[
    ("bad_tool_call", 9, 18),
    ("empty_retrieval", 1, 2),
    ("fabricated_data", 5, 7),
    ("first_action", 7, 17),
    ("ignored_failure", 1, 1),
    ("ignored_instruction", 0, 1),
    ("lossy_handoff", 0, 2),
    ("repeated_call", 1, 1),
    ("task_drift", 6, 6),
    ("unsourced_values", 5, 7),
    ("value_provenance", 0, 1),
];

/// The share of right verdicts over all runs fitted to: where a detector's
/// own count is shrunk to.
const OVERALL: f64 = 0.56;
/// How many verdicts the overall rate weighs, against a detector's own.
const SHRINK: f64 = 4.0;
/// A detector never seen as a verdict where the fit was made (the policy
/// and environment detectors, whose runs Who&When lacks): a guess well
/// under the overall rate, as a rule unmeasured is worth less.
const UNSEEN: f64 = 0.35;
/// A verdict that abstains (only the positional prior) is worth at most
/// this: a prior is no evidence, whatever it scored where it was fitted.
const ABSTAINED_CAP: f64 = 0.3;

/// The probability that a verdict made by `detector` is right.
pub(crate) fn probability(detector: &str, abstained: bool) -> f64 {
    let p = FITTED
        .iter()
        .find(|(d, _, _)| *d == detector)
        .map_or(UNSEEN, |&(_, right, n)| {
            (f64::from(right) + SHRINK * OVERALL) / (f64::from(n) + SHRINK)
        });
    let p = if abstained { p.min(ABSTAINED_CAP) } else { p };
    (p * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_follow_the_fit_and_stay_below_one() {
        // A detector right every time it was seen is not certain.
        let drift = probability("task_drift", false);
        assert!(drift > OVERALL && drift < 1.0, "{drift}");
        assert_eq!(probability("no_such_detector", false), UNSEEN);
        assert!(probability("first_action", true) <= ABSTAINED_CAP);
        for (d, _, _) in FITTED {
            let p = probability(d, false);
            assert!((0.0..1.0).contains(&p), "{d}: {p}");
        }
    }
}
