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
pub(crate) struct Webhook {
    agent: ureq::Agent,
    url: String,
    redacted: String,
    retries: u32,
    backoff: Duration,
}

/// What came of sending one payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SendReport {
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
    pub(crate) fn new(
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

    /// POSTs `body` (JSON) until it is delivered, refused for good, or the
    /// retries are spent.
    pub(crate) fn send(&self, body: &[u8]) -> SendReport {
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

    /// `msg` with every secret part of the URL replaced, wherever it
    /// appears: the whole URL, what follows the host, and each user
    /// name, password, path segment, query value and fragment alone (a
    /// receiver may echo one segment, or the path without the fragment).
    fn scrub(&self, msg: &str) -> String {
        scrub(msg, &self.url, &self.redacted)
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

/// Parts shorter than this are left in messages: they guard no secret,
/// and replacing them would garble every word that holds them.
const MIN_SECRET_CHARS: usize = 3;

/// `msg` with the secret parts of `url` replaced (see [`Webhook::scrub`]).
fn scrub(msg: &str, url: &str, redacted: &str) -> String {
    let mut secrets: Vec<(String, &str)> = vec![(url.to_string(), redacted)];
    if let Some(tail) = secret_part(url) {
        // The path with and without its query and fragment.
        for cut in [
            tail.len(),
            tail.find('#').unwrap_or(tail.len()),
            tail.find(['?', '#']).unwrap_or(tail.len()),
        ] {
            secrets.push((tail[..cut].to_string(), "/…"));
        }
    }
    for part in secret_parts(url) {
        if let Some(decoded) = percent_decoded(part) {
            secrets.push((decoded, "…"));
        }
        secrets.push((part.to_string(), "…"));
    }
    secrets.retain(|(s, _)| s.chars().count() >= MIN_SECRET_CHARS);
    // Longest first, so a URL is replaced whole rather than piece by piece.
    secrets.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
    let mut hits: Vec<(usize, usize, &str)> = Vec::new();
    for (secret, replacement) in &secrets {
        for (start, _) in msg.match_indices(secret.as_str()) {
            let end = start + secret.len();
            if !hits.iter().any(|&(s, e, _)| start < e && s < end) {
                hits.push((start, end, replacement));
            }
        }
    }
    hits.sort_unstable_by_key(|&(s, _, _)| s);
    let mut out = String::with_capacity(msg.len());
    let mut at = 0;
    for (start, end, replacement) in hits {
        out.push_str(&msg[at..start]);
        out.push_str(replacement);
        at = end;
    }
    out.push_str(&msg[at..]);
    let tokens: Vec<&str> = secret_parts(url)
        .into_iter()
        .filter(|p| is_token(p))
        .collect();
    scrub_fragments(&out, &tokens)
}

/// Pieces of a secret shorter than this are left in messages.
const MIN_FRAGMENT_CHARS: usize = 6;

/// True when a part of the URL is a token rather than a word of its path
/// ("services", "hooks"): it holds a digit or a capital, or is long.
fn is_token(part: &str) -> bool {
    part.len() >= 16
        || part
            .chars()
            .any(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
}

/// `msg` with every piece of `tokens` of [`MIN_FRAGMENT_CHARS`] or more
/// replaced, in any letter case: a receiver that echoes the first eight
/// characters of a token, or an upper-cased copy, prints none of it.
fn scrub_fragments(msg: &str, tokens: &[&str]) -> String {
    let lowered: Vec<String> = tokens
        .iter()
        .map(|t| t.to_ascii_lowercase())
        .filter(|t| t.len() >= MIN_FRAGMENT_CHARS)
        .collect();
    if lowered.is_empty() {
        return msg.to_string();
    }
    let grams: std::collections::HashSet<&str> = lowered
        .iter()
        .flat_map(|t| {
            (0..=t.len() - MIN_FRAGMENT_CHARS).filter_map(|i| t.get(i..i + MIN_FRAGMENT_CHARS))
        })
        .collect();
    // Lower-casing ASCII keeps every byte offset, so spans found in the
    // lowered text cut the original at the same places.
    let lower = msg.to_ascii_lowercase();
    let mut out = String::with_capacity(msg.len());
    let (mut at, mut i) = (0, 0);
    while i + MIN_FRAGMENT_CHARS <= lower.len() {
        let hit = lower
            .get(i..i + MIN_FRAGMENT_CHARS)
            .is_some_and(|w| grams.contains(w));
        if !hit {
            i += 1;
            continue;
        }
        let mut end = i + MIN_FRAGMENT_CHARS;
        while end < lower.len()
            && lower
                .get(i..=end)
                .is_some_and(|piece| lowered.iter().any(|t| t.contains(piece)))
        {
            end += 1;
        }
        out.push_str(&msg[at..i]);
        out.push('…');
        at = end;
        i = end;
    }
    out.push_str(&msg[at..]);
    out
}

/// The user name, password, path segments, query keys and values, and
/// fragment of `url`.
fn secret_parts(url: &str) -> Vec<&str> {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[after_scheme..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let mut parts = Vec::new();
    if let Some((userinfo, _)) = authority.rsplit_once('@') {
        parts.push(userinfo);
        parts.extend(userinfo.split(':'));
    }
    let (before_fragment, fragment) = tail.split_once('#').unwrap_or((tail, ""));
    let (path, query) = before_fragment
        .split_once('?')
        .unwrap_or((before_fragment, ""));
    parts.extend(path.split('/'));
    for pair in query.split('&') {
        parts.push(pair);
        if let Some((key, value)) = pair.split_once('=') {
            parts.extend([key, value]);
        }
    }
    parts.push(fragment);
    parts.retain(|p| !p.is_empty());
    parts
}

/// `part` with its %XX escapes decoded, when it has any and they decode
/// to text.
fn percent_decoded(part: &str) -> Option<String> {
    if !part.contains('%') {
        return None;
    }
    let bytes = part.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
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
pub(crate) fn redact(url: &str) -> String {
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
    fn every_secret_part_is_scrubbed_alone_too() {
        let url = "https://bot:pw%21x@hooks.example.com/api/webhooks/12345/TOKENabc?key=qv%20alue&sig=SIGxyz#frag-secret";
        let redacted = redact(url);
        for (echo, gone) in [
            ("bad token TOKENabc", "TOKENabc"),
            ("no hook 12345 here", "12345"),
            (
                "POST /api/webhooks/12345/TOKENabc?key=qv%20alue&sig=SIGxyz failed",
                "TOKENabc",
            ),
            ("path /api/webhooks/12345/TOKENabc unknown", "TOKENabc"),
            ("signature SIGxyz expired", "SIGxyz"),
            ("key 'qv alue' revoked", "qv alue"),
            ("fragment frag-secret", "frag-secret"),
            ("user bot, password pw!x", "pw!x"),
            (url, "TOKENabc"),
        ] {
            let msg = scrub(echo, url, &redacted);
            assert!(!msg.contains(gone), "{echo} -> {msg}");
            assert!(msg.contains('…'), "{echo} -> {msg}");
        }
        assert_eq!(
            scrub(&format!("at {url}."), url, &redacted),
            "at https://hooks.example.com/…."
        );
        // Short parts guard nothing and are left alone.
        let short = "http://h.example/a/b/LONGSECRET";
        assert_eq!(scrub("a b LONGSECRET", short, &redact(short)), "a b …");
    }

    #[test]
    fn any_piece_of_a_token_of_six_characters_or_more_is_scrubbed_in_any_case() {
        let url = "https://hooks.slack.com/services/T0AB12CD/B0XY98ZW/Qm9vYmFyYmF6cXV4eHl6";
        let redacted = redact(url);
        for echo in [
            "invalid_token: Qm9vYmFy",
            "INVALID: QM9VYMFYYMF6CXV4EHL6",
            "segment mFyYmF6 rejected",
            "team t0ab12cd unknown",
        ] {
            let msg = scrub(echo, url, &redacted);
            assert!(msg.contains('…'), "{echo} -> {msg}");
            let lower = msg.to_ascii_lowercase();
            for piece in ["qm9vymfy", "mfyymf6", "t0ab12", "cxv4eh"] {
                assert!(!lower.contains(piece), "{echo} -> {msg}");
            }
        }
        // Five characters in common, and other text, stay.
        assert_eq!(scrub("code Qm9vY ok", url, &redacted), "code Qm9vY ok");
        assert_eq!(
            scrub("channel archived", url, &redacted),
            "channel archived"
        );
        assert_eq!(scrub("naïve café", url, &redacted), "naïve café");
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
