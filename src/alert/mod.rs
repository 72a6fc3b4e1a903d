//! triage-alert's logic: whether a scored pattern pages someone (threshold
//! and cooldown), what the receiver is sent, and the `alert` record that
//! says what was decided.

pub mod payload;
pub mod state;
pub mod webhook;

use crate::record::{Alert, Pattern, Scores};
use crate::timestamp::Timestamp;

/// When a pattern pages: its score reaches `threshold` and it has not fired
/// within `cooldown_secs`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Policy {
    pub threshold: f64,
    pub cooldown_secs: u64,
}

/// What the policy says for one pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    Fire,
    BelowThreshold,
    /// Fired at `last`; quiet until `until` (Unix seconds).
    Suppressed {
        last: i64,
        until: i64,
    },
}

impl Policy {
    /// The decision for a pattern scoring `final_score` that last fired at
    /// `last_fired`, at Unix second `now`.
    pub(crate) fn decide(&self, final_score: f64, last_fired: Option<i64>, now: i64) -> Decision {
        // NaN never reaches the threshold.
        if final_score
            .partial_cmp(&self.threshold)
            .is_none_or(|o| o.is_lt())
        {
            return Decision::BelowThreshold;
        }
        let cooldown = i64::try_from(self.cooldown_secs).unwrap_or(i64::MAX);
        match last_fired {
            Some(last) if now < last.saturating_add(cooldown) => Decision::Suppressed {
                last,
                until: last.saturating_add(cooldown),
            },
            _ => Decision::Fire,
        }
    }
}

/// What became of one pattern's alert, as its `alert` record says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum AlertStatus {
    Fired,
    WouldFire,
    BelowThreshold,
    Suppressed { last: i64, until: i64 },
    Failed,
}

impl AlertStatus {
    fn decision(&self) -> &'static str {
        match self {
            AlertStatus::Fired => "fired",
            AlertStatus::WouldFire => "would_fire",
            AlertStatus::BelowThreshold => "below_threshold",
            AlertStatus::Suppressed { .. } => "suppressed",
            AlertStatus::Failed => "failed",
        }
    }
}

/// The `alert` record for `pattern`: the outcome, and the send's details
/// when one was tried.
pub(crate) fn alert_record(
    pattern: &Pattern,
    scores: &Scores,
    policy: &Policy,
    outcome: &AlertStatus,
    send: Option<&webhook::SendReport>,
    preview: Option<serde_json::Value>,
) -> Alert {
    let subject = (
        pattern.pattern_id.clone(),
        pattern.display_name.clone(),
        scores.final_score,
    );
    record(subject, policy, outcome, send, preview)
}

/// The `alert` record of the failed-run rate: `pattern_id` `runs/failed`,
/// `final_score` the share of runs that failed.
pub(crate) fn failed_runs_record(
    (failed, total, rate): (u64, u64, f64),
    policy: &Policy,
    outcome: &AlertStatus,
    send: Option<&webhook::SendReport>,
    preview: Option<serde_json::Value>,
) -> Alert {
    let name = format!(
        "{failed} of {} of known outcome failed ({})",
        crate::render::words::count(total, "run", "runs"),
        crate::render::words::percent(rate)
    );
    let subject = (payload::FAILED_RUNS_ID.to_string(), name, rate);
    record(subject, policy, outcome, send, preview)
}

/// An `alert` record of a subject (id, name, the figure held against the
/// threshold).
fn record(
    (pattern_id, display_name, final_score): (String, String, f64),
    policy: &Policy,
    outcome: &AlertStatus,
    send: Option<&webhook::SendReport>,
    preview: Option<serde_json::Value>,
) -> Alert {
    let (last_fired, cooldown_until) = match outcome {
        AlertStatus::Suppressed { last, until } => (Some(rfc3339(*last)), Some(rfc3339(*until))),
        _ => (None, None),
    };
    Alert {
        kind: crate::record::AlertKind,
        pattern_id,
        display_name,
        final_score,
        threshold: policy.threshold,
        decision: outcome.decision().to_string(),
        attempts: send.map_or(0, |s| s.attempts),
        http_status: send.and_then(|s| s.status),
        error: send.and_then(|s| s.error.clone()),
        webhook: send.map(|s| s.webhook.clone()),
        last_fired,
        cooldown_until,
        payload: preview,
    }
}

fn rfc3339(unix_secs: i64) -> String {
    Timestamp::from_unix_nanos(i128::from(unix_secs) * 1_000_000_000).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    const POLICY: Policy = Policy {
        threshold: 10.0,
        cooldown_secs: 3600,
    };

    #[test]
    fn threshold_is_inclusive_and_nan_never_fires() {
        assert_eq!(POLICY.decide(10.0, None, 0), Decision::Fire);
        assert_eq!(POLICY.decide(9.99, None, 0), Decision::BelowThreshold);
        assert_eq!(POLICY.decide(f64::NAN, None, 0), Decision::BelowThreshold);
    }

    #[test]
    fn cooldown_suppresses_until_it_has_passed() {
        assert_eq!(
            POLICY.decide(12.0, Some(1000), 1000 + 3599),
            Decision::Suppressed {
                last: 1000,
                until: 4600
            }
        );
        assert_eq!(POLICY.decide(12.0, Some(1000), 4600), Decision::Fire);
        let no_cooldown = Policy {
            cooldown_secs: 0,
            ..POLICY
        };
        assert_eq!(no_cooldown.decide(12.0, Some(1000), 1000), Decision::Fire);
    }

    #[test]
    fn a_huge_cooldown_does_not_overflow() {
        let forever = Policy {
            cooldown_secs: u64::MAX,
            ..POLICY
        };
        assert!(matches!(
            forever.decide(12.0, Some(5), 6),
            Decision::Suppressed { .. }
        ));
    }
}
