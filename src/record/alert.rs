//! `alert` records: a pattern past its threshold, and what was sent.

use serde::{Deserialize, Serialize};

use super::AlertKind;

/// An `alert` record (triage-alert): what was decided for one scored
/// pattern, and what came of the send.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Alert {
    #[serde(default)]
    pub kind: AlertKind,
    pub pattern_id: String,
    pub display_name: String,
    pub final_score: f64,
    pub threshold: f64,
    /// fired, would_fire (--dry-run), suppressed (cooldown), below_threshold
    /// or failed.
    pub decision: String,
    /// Sends tried: 0 when nothing was sent.
    pub attempts: u32,
    /// The receiver's last HTTP status, when it answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// Why the last send failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The webhook without its secret path (`https://hooks.slack.com/…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<String>,
    /// When the pattern last fired (RFC 3339), for a suppressed alert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_fired: Option<String>,
    /// When the cooldown ends (RFC 3339), for a suppressed alert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooldown_until: Option<String>,
    /// The body a dry run would have sent, for a would_fire alert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<serde_json::Value>,
}
