//! Sending one payload to the webhook: a timeout per attempt, retries with
//! exponential backoff for failures worth retrying (no answer, 408, 429,
//! 5xx, honouring Retry-After), and messages that never show the URL, which
//! is a secret (whoever has it can post to the channel).

use std::io::Read;
use std::time::Duration;

/// Waits longer than this between attempts are cut to it.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// Bytes of a refusing receiver's answer quoted in the error.
const ANSWER_QUOTED: u64 = 200;

/// How to reach the webhook.
pub struct Webhook {
    agent: ureq::Agent,
    url: String,
    redacted: String,
    retries: u32,
    backoff: Duration,
}

/// What came of sending one payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendReport {
    pub delivered: bool,
    pub attempts: u32,
    /// The receiver's last HTTP status, when it answered.
    pub status: Option<u16>,
    pub error: Option<String>,
    /// The webhook, redacted.
    pub webhook: String,
}

/// One attempt's result.
enum Attempt {
    Delivered(u16),
    /// Worth another try, after at least the given wait when the receiver
    /// asked for one.
    Retry {
        status: Option<u16>,
        error: String,
        wait: Option<Duration>,
    },
    GiveUp {
        status: Option<u16>,
        error: String,
    },
}

impl Webhook {
    /// A webhook at `url` (http or https): each attempt may take `timeout`,
    /// failures worth it are tried `retries` more times, waiting `backoff`,
    /// then twice as long each time.
    pub fn new(
        url: &str,
        timeout: Duration,
        retries: u32,
        backoff: Duration,
    ) -> anyhow::Result<Self> {
        let redacted = redact(url);
        let lower = url.to_ascii_lowercase();
        if !(lower.starts_with("http://") || lower.starts_with("https://")) {
            anyhow::bail!("webhook {redacted}: not an http:// or https:// URL");
        }
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            // A redirected POST would be re-sent as GET or to a place the
            // operator did not name.
            .max_redirects(0)
            .user_agent(concat!("triage-alert/", env!("CARGO_PKG_VERSION")))
            .build()
            .new_agent();
        Ok(Webhook {
            agent,
            url: url.to_string(),
            redacted,
            retries,
            backoff,
        })
    }

    /// The URL as messages may show it.
    pub fn redacted(&self) -> &str {
        &self.redacted
    }

    /// POSTs `body` (JSON) until it is delivered, refused for good, or the
    /// retries are spent.
    pub fn send(&self, body: &[u8]) -> SendReport {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let (status, error, wait) = match self.attempt(body) {
                Attempt::Delivered(status) => {
                    return self.report(true, attempts, Some(status), None);
                }
                Attempt::GiveUp { status, error } => {
                    return self.report(false, attempts, status, Some(error));
                }
                Attempt::Retry {
                    status,
                    error,
                    wait,
                } => (status, error, wait),
            };
            if attempts > self.retries {
                return self.report(false, attempts, status, Some(error));
            }
            let backoff = crate::http_retry::backoff(self.backoff, attempts).min(MAX_WAIT);
            std::thread::sleep(wait.map_or(backoff, |w| w.max(backoff)).min(MAX_WAIT));
        }
    }

    fn attempt(&self, body: &[u8]) -> Attempt {
        let response = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/json")
            .send(body);
        let mut response = match response {
            Ok(r) => r,
            Err(e) => {
                let error = self.scrub(&e.to_string());
                return if transient(&e) {
                    Attempt::Retry {
                        status: None,
                        error,
                        wait: None,
                    }
                } else {
                    Attempt::GiveUp {
                        status: None,
                        error,
                    }
                };
            }
        };
        let status = response.status().as_u16();
        if (200..300).contains(&status) {
            return Attempt::Delivered(status);
        }
        let wait = crate::http_retry::retry_after(&response);
        let mut answer = String::new();
        let _ = response
            .body_mut()
            .as_reader()
            .take(ANSWER_QUOTED)
            .read_to_string(&mut answer);
        let answer = answer.split_whitespace().collect::<Vec<_>>().join(" ");
        let error = if answer.is_empty() {
            format!("the receiver answered {status}")
        } else {
            format!("the receiver answered {status}: {}", self.scrub(&answer))
        };
        if crate::http_retry::worth_retrying(status) {
            Attempt::Retry {
                status: Some(status),
                error,
                wait,
            }
        } else {
            Attempt::GiveUp {
                status: Some(status),
                error,
            }
        }
    }

    fn report(
        &self,
        delivered: bool,
        attempts: u32,
        status: Option<u16>,
        error: Option<String>,
    ) -> SendReport {
        SendReport {
            delivered,
            attempts,
            status,
            error,
            webhook: self.redacted.clone(),
        }
    }

    /// `msg` with the URL, and its secret path on its own, replaced.
    fn scrub(&self, msg: &str) -> String {
        let mut msg = msg.replace(&self.url, &self.redacted);
        if let Some(path) = secret_part(&self.url).filter(|p| p.len() > 1) {
            msg = msg.replace(path, "/…");
        }
        msg
    }
}

/// Failures another attempt may cure: the receiver could not be reached or
/// did not answer in time.
fn transient(e: &ureq::Error) -> bool {
    matches!(
        e,
        ureq::Error::Io(_)
            | ureq::Error::Timeout(_)
            | ureq::Error::ConnectionFailed
            | ureq::Error::HostNotFound
            | ureq::Error::Protocol(_)
    )
}

/// Everything after the host: where a webhook keeps its secret.
fn secret_part(url: &str) -> Option<&str> {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[after_scheme..];
    let cut = rest.find(['/', '?', '#'])?;
    Some(&rest[cut..])
}

/// The URL with everything after the host (and any user:password@) replaced
/// by "…": `https://hooks.slack.com/…`.
pub fn redact(url: &str) -> String {
    let (scheme, rest) = match url.find("://") {
        Some(i) => (&url[..i + 3], &url[i + 3..]),
        None => ("", url),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit('@').next().unwrap_or_default();
    if scheme.is_empty() || host.is_empty() {
        return "(a webhook URL)".to_string();
    }
    if rest.len() > authority.len() || authority.len() > host.len() {
        format!("{scheme}{host}/…")
    } else {
        format!("{scheme}{host}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_keeps_only_scheme_and_host() {
        assert_eq!(
            redact("https://hooks.slack.com/services/T000/B000/XXXX"),
            "https://hooks.slack.com/…"
        );
        assert_eq!(
            redact("http://user:pw@127.0.0.1:8080/hook?key=s3cret"),
            "http://127.0.0.1:8080/…"
        );
        assert_eq!(redact("http://example.com"), "http://example.com");
        assert_eq!(redact("hooks.slack.com/services/T/B/X"), "(a webhook URL)");
    }

    #[test]
    fn scrubbing_removes_the_url_and_its_path() {
        let w = Webhook::new(
            "https://hooks.example.com/services/T/B/s3cret",
            Duration::from_secs(1),
            0,
            Duration::ZERO,
        )
        .unwrap();
        let msg = w.scrub(
            "bad uri: https://hooks.example.com/services/T/B/s3cret, also /services/T/B/s3cret",
        );
        assert!(!msg.contains("s3cret"), "{msg}");
        assert!(msg.contains("https://hooks.example.com/…"), "{msg}");
    }

    #[test]
    fn only_http_urls_are_accepted_and_the_error_hides_the_secret() {
        let e = Webhook::new("ftp://h/s3cret", Duration::from_secs(1), 0, Duration::ZERO)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("not an http"), "{e}");
        assert!(!e.contains("s3cret"), "{e}");
    }
}
