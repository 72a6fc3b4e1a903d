//! Retrying HTTP requests (webhooks, LLM providers): which answers are
//! worth another attempt, how long the server asks us to wait, and
//! exponential backoff with jitter.

use std::time::Duration;

/// 408, 429 and 5xx: answers another attempt may cure.
pub(crate) fn worth_retrying(status: u16) -> bool {
    matches!(status, 408 | 429 | 500..=599)
}

/// The wait a `Retry-After` header asks for in seconds; an HTTP date is
/// ignored and the caller's backoff applies.
pub(crate) fn retry_after<B>(response: &ureq::http::Response<B>) -> Option<Duration> {
    response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

/// `first`, then twice that, four times … for attempts 1, 2, 3 …, with up to
/// a quarter more at random, so clients that failed together do not retry
/// together.
pub(crate) fn backoff(first: Duration, attempt: u32) -> Duration {
    let base = first.saturating_mul(1 << attempt.saturating_sub(1).min(16));
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    base + base.mul_f64(f64::from(nanos % 1000) / 4000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_with_at_most_a_quarter_of_jitter() {
        let first = Duration::from_millis(500);
        for attempt in 1..6 {
            let want = first * (1 << (attempt - 1));
            let got = backoff(first, attempt);
            assert!(got >= want && got <= want + want / 4, "{attempt}: {got:?}");
        }
    }

    #[test]
    fn only_answers_another_attempt_may_cure_are_retried() {
        for status in [408, 429, 500, 503, 599] {
            assert!(worth_retrying(status), "{status}");
        }
        for status in [200, 301, 400, 401, 403, 404, 413] {
            assert!(!worth_retrying(status), "{status}");
        }
    }

    #[test]
    fn retry_after_reads_seconds_and_ignores_dates() {
        let with = |v: &str| {
            ureq::http::Response::builder()
                .header("Retry-After", v)
                .body(())
                .unwrap()
        };
        assert_eq!(retry_after(&with(" 2 ")), Some(Duration::from_secs(2)));
        assert_eq!(retry_after(&with("0.5")), Some(Duration::from_millis(500)));
        assert_eq!(retry_after(&with("Wed, 21 Oct 2015 07:28:00 GMT")), None);
        assert_eq!(retry_after(&with("-1")), None);
    }
}
