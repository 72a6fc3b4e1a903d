//! What the webhook receives: the alert text and the pattern's numbers, in
//! the shape of a Slack or Discord incoming webhook or as plain JSON.

use clap::ValueEnum;
use serde_json::{Value, json};

use crate::config::LinksConfig;
use crate::record::{Pattern, Scores};
use crate::render::words::{count, percent};

/// The receiver's payload shape.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PayloadFormat {
    /// `text` in Slack mrkdwn, plus the pattern's fields; links not unfurled.
    #[default]
    Slack,
    /// `content` in Discord markdown, mentions and embeds disabled.
    Discord,
    /// The pattern's fields and a plain `text`, for any other receiver.
    Json,
}

/// Discord refuses `content` longer than this many characters.
const DISCORD_MAX_CHARS: usize = 2000;
/// Discord's message flag SUPPRESS_EMBEDS (1 << 2).
const DISCORD_SUPPRESS_EMBEDS: u64 = 1 << 2;

/// The payload for `pattern` in `format`.
pub(crate) fn payload(
    format: PayloadFormat,
    pattern: &Pattern,
    scores: &Scores,
    links: &LinksConfig,
) -> Value {
    match format {
        PayloadFormat::Slack => {
            let mut v = fields(pattern, scores);
            v["text"] = Value::String(text(pattern, scores, links, &Slack));
            // A URL in trace text must not make Slack fetch it.
            v["unfurl_links"] = Value::Bool(false);
            v["unfurl_media"] = Value::Bool(false);
            v
        }
        PayloadFormat::Discord => json!({
            "content": truncate_chars(&text(pattern, scores, links, &Discord), DISCORD_MAX_CHARS),
            // Text from traces must never ping @everyone or a role.
            "allowed_mentions": {"parse": []},
            // Nor fetch a URL in it to build a preview.
            "flags": DISCORD_SUPPRESS_EMBEDS,
        }),
        PayloadFormat::Json => {
            let mut v = fields(pattern, scores);
            let extra = json!({
                "display_name": pattern.display_name,
                "frequency": pattern.frequency,
                "runs_seen": scores.runs_seen,
                "runs_total": scores.runs_total,
                "rank": scores.rank,
                "trend": scores.trend,
                "text": text(pattern, scores, links, &Plain),
            });
            if let (Value::Object(v), Value::Object(extra)) = (&mut v, extra) {
                v.extend(extra);
            }
            v
        }
    }
}

/// What the share of failed runs of a batch pages with: "116 of 200 runs
/// failed (58%), at or above 30%", in the receiver's shape.
pub(crate) fn failed_runs_payload(
    format: PayloadFormat,
    failed: u64,
    total: u64,
    threshold: f64,
) -> Value {
    let rate = if total == 0 {
        0.0
    } else {
        failed as f64 / total as f64
    };
    let line = |m: &dyn Markup| {
        format!(
            "{}{}: {} of {} of known outcome failed ({}), at or above {}",
            m.siren(),
            m.bold("Triage alert"),
            failed,
            count(total, "run", "runs"),
            percent(rate),
            percent(threshold)
        )
    };
    let fields = json!({
        "pattern_id": FAILED_RUNS_ID,
        "runs_failed": failed,
        "runs_known": total,
        "failed_run_rate": rate,
        "threshold": threshold,
    });
    match format {
        PayloadFormat::Slack => {
            let mut v = fields;
            v["text"] = Value::String(line(&Slack));
            v["unfurl_links"] = Value::Bool(false);
            v["unfurl_media"] = Value::Bool(false);
            v
        }
        PayloadFormat::Discord => json!({
            "content": line(&Discord),
            "allowed_mentions": {"parse": []},
            "flags": DISCORD_SUPPRESS_EMBEDS,
        }),
        PayloadFormat::Json => {
            let mut v = fields;
            v["text"] = Value::String(line(&Plain));
            v
        }
    }
}

/// The id the failed-run rate alerts under (its cooldown is kept by it).
pub(crate) const FAILED_RUNS_ID: &str = "runs/failed";

/// The fields every receiver that reads JSON gets (the reference's set).
fn fields(pattern: &Pattern, scores: &Scores) -> Value {
    json!({
        "pattern_id": pattern.pattern_id,
        "agent_id": pattern.agent_id,
        "tool_name": pattern.tool_name,
        "classification": pattern.failure_classification,
        "final_score": scores.final_score,
        "severity_score": scores.severity_score,
        "recovery_rate": scores.recovery_rate,
    })
}

/// How a receiver marks up the alert text.
trait Markup {
    fn siren(&self) -> &'static str;
    fn bold(&self, s: &str) -> String;
    fn quote(&self) -> &'static str;
    /// Text from a trace, made inert.
    fn escape(&self, s: &str) -> String;
    /// `label` linking to `url`.
    fn link(&self, url: &str, label: &str) -> String;
}

struct Slack;
struct Discord;
struct Plain;

impl Markup for Slack {
    fn siren(&self) -> &'static str {
        ":rotating_light: "
    }
    fn bold(&self, s: &str) -> String {
        format!("*{s}*")
    }
    fn quote(&self) -> &'static str {
        ">"
    }
    // Slack reads <!channel> and <url|label> as control sequences. Its
    // mrkdwn has no escape for `*`, `~` or a backquote, which would end the
    // bold name early: they become look-alikes (∗ ∼ ˋ).
    fn escape(&self, s: &str) -> String {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('*', "\u{2217}")
            .replace('~', "\u{223C}")
            .replace('`', "\u{02CB}")
    }
    fn link(&self, url: &str, label: &str) -> String {
        format!(
            "<{}|{}>",
            url.replace(['<', '>', '|'], ""),
            self.escape(label)
        )
    }
}

impl Markup for Discord {
    fn siren(&self) -> &'static str {
        "\u{1F6A8} "
    }
    fn bold(&self, s: &str) -> String {
        format!("**{s}**")
    }
    fn quote(&self) -> &'static str {
        "> "
    }
    fn escape(&self, s: &str) -> String {
        let mut out = String::with_capacity(s.len());
        for c in s.chars() {
            if matches!(
                c,
                '\\' | '*' | '_' | '~' | '`' | '|' | '>' | '<' | '@' | '#' | '[' | ']'
            ) {
                out.push('\\');
            }
            out.push(c);
        }
        out
    }
    fn link(&self, url: &str, label: &str) -> String {
        format!(
            "[{}](<{}>)",
            self.escape(label),
            url.replace(['<', '>'], "")
        )
    }
}

impl Markup for Plain {
    fn siren(&self) -> &'static str {
        ""
    }
    fn bold(&self, s: &str) -> String {
        s.to_string()
    }
    fn quote(&self) -> &'static str {
        ""
    }
    fn escape(&self, s: &str) -> String {
        s.to_string()
    }
    fn link(&self, url: &str, label: &str) -> String {
        format!("{label} ({url})")
    }
}

/// "Triage alert: score 13.00", the pattern, how often and in how many
/// runs, and how often it recovered; with `[links] run_url`, the runs of
/// its earliest failures, linked.
fn text(pattern: &Pattern, scores: &Scores, links: &LinksConfig, m: &dyn Markup) -> String {
    let q = m.quote();
    let mut runs: Vec<&str> = Vec::new();
    for s in &pattern.samples {
        if !runs.contains(&s.run_id.as_str()) && runs.len() < crate::render::SAMPLES_SHOWN {
            runs.push(&s.run_id);
        }
    }
    let linked: Vec<String> = runs
        .iter()
        .filter_map(|r| Some(m.link(&links.run(r)?, r)))
        .collect();
    let runs_line = if linked.is_empty() {
        String::new()
    } else {
        format!("\n{q}Runs: {}", linked.join(", "))
    };
    let body = format!(
        "{siren}{title}: score {score:.2}\n{q}{name}\n{q}Frequency: {events} across {runs}\n{q}Recovery rate: {rate}",
        siren = m.siren(),
        title = m.bold("Triage alert"),
        score = scores.final_score,
        name = m.bold(&m.escape(&crate::render::one_line(&pattern.display_name))),
        events = count(pattern.frequency, "event", "events"),
        runs = count(scores.runs_seen, "run", "runs"),
        rate = percent(scores.recovery_rate),
    );
    body + &runs_line
}

fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let keep: String = s.chars().take(max.saturating_sub(1)).collect();
    keep + "\u{2026}"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scored(name: &str, frequency: u64, runs: u64, rate: f64) -> (Pattern, Scores) {
        let p: Pattern = serde_json::from_value(json!({"kind":"pattern","pattern_id":"planner/dispatch/coordination_failure/~",
            "display_name":name,"agent_id":"planner","tool_name":"dispatch","failure_classification":"coordination_failure",
            "divergence_fields":[],"frequency":frequency,"recovered":0,"tail_unrecovered":0,"recovery_latencies":{},
            "run_counts":{},"samples":[],
            "frequency_score":10.0,"severity_score":15.0,"recovery_rate":rate,"final_score":13.0,
            "confidence":1.0,"confidence_label":"high","median_recovery_latency":null,
            "runs_seen":runs,"runs_total":3,"trend":"stable","rank":1}))
        .unwrap();
        let s = p.score.clone().unwrap();
        (p, s)
    }

    #[test]
    fn slack_text_has_score_name_frequency_runs_and_recovery() {
        let (p, s) = scored("[planner] dispatch", 5, 3, 0.0);
        let v = payload(PayloadFormat::Slack, &p, &s, &LinksConfig::default());
        assert_eq!(
            v["text"],
            ":rotating_light: *Triage alert*: score 13.00\n>*[planner] dispatch*\n>Frequency: 5 events across 3 runs\n>Recovery rate: 0%"
        );
        assert_eq!(v["pattern_id"], "planner/dispatch/coordination_failure/~");
        assert_eq!(v["classification"], "coordination_failure");
        assert_eq!(v["final_score"], 13.0);
        assert_eq!(v["severity_score"], 15.0);
        assert_eq!(v["recovery_rate"], 0.0);
    }

    #[test]
    fn one_event_in_one_run_is_singular() {
        let (p, s) = scored("x", 1, 1, 1.0);
        let v = payload(PayloadFormat::Json, &p, &s, &LinksConfig::default());
        assert!(
            v["text"]
                .as_str()
                .unwrap()
                .contains("Frequency: 1 event across 1 run\n"),
            "{v}"
        );
        assert_eq!(v["runs_seen"], 1);
    }

    #[test]
    fn trace_text_cannot_ping_or_break_markup() {
        let (p, s) = scored("<!channel> @everyone *x*", 2, 2, 0.5);
        let slack = payload(PayloadFormat::Slack, &p, &s, &LinksConfig::default());
        let t = slack["text"].as_str().unwrap();
        assert!(t.contains("&lt;!channel&gt;"), "{t}");
        assert!(!t.contains("<!channel>"), "{t}");
        assert!(t.contains("@everyone \u{2217}x\u{2217}"), "{t}");
        let discord = payload(PayloadFormat::Discord, &p, &s, &LinksConfig::default());
        assert_eq!(discord["allowed_mentions"]["parse"], json!([]));
        let c = discord["content"].as_str().unwrap();
        assert!(c.contains(r"\<!channel\> \@everyone \*x\*"), "{c}");
    }

    #[test]
    fn urls_in_trace_text_are_never_fetched_for_a_preview() {
        let (p, s) = scored("https://attacker.example/x", 2, 2, 0.5);
        let slack = payload(PayloadFormat::Slack, &p, &s, &LinksConfig::default());
        assert_eq!(slack["unfurl_links"], json!(false));
        assert_eq!(slack["unfurl_media"], json!(false));
        let discord = payload(PayloadFormat::Discord, &p, &s, &LinksConfig::default());
        assert_eq!(discord["flags"], json!(4));
    }

    #[test]
    fn a_name_stays_on_its_quoted_bold_line_and_links_stay_text() {
        let (p, s) = scored("fetch\n*oops*\r\n[click](https://x.example)", 2, 2, 0.5);
        let slack = payload(PayloadFormat::Slack, &p, &s, &LinksConfig::default());
        let t = slack["text"].as_str().unwrap();
        assert_eq!(
            t.lines().nth(1),
            Some(">*fetch \u{2217}oops\u{2217}  [click](https://x.example)*"),
            "{t}"
        );
        let discord = payload(PayloadFormat::Discord, &p, &s, &LinksConfig::default());
        let c = discord["content"].as_str().unwrap();
        assert_eq!(
            c.lines().nth(1),
            Some(r"> **fetch \*oops\*  \[click\](https://x.example)**"),
            "{c}"
        );
        assert_eq!(c.lines().count(), 4, "{c}");
    }

    #[test]
    fn discord_content_fits_its_limit() {
        let (p, s) = scored(&"é".repeat(5000), 2, 2, 0.5);
        let c = payload(PayloadFormat::Discord, &p, &s, &LinksConfig::default())["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(c.chars().count(), DISCORD_MAX_CHARS);
        assert!(c.ends_with('\u{2026}'));
    }
}
