//! triage-alert: scored patterns in, a webhook POST for each that crosses
//! the threshold outside its cooldown, and one `alert` record per decision.

use std::io::{self, Read};
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use clap::Parser;

use crate::alert::payload::{FAILED_RUNS_ID, PayloadFormat, failed_runs_payload, payload};
use crate::alert::state::AlertState;
use crate::alert::webhook::Webhook;
use crate::alert::{AlertStatus, Decision, Policy, alert_record, failed_runs_record};
use crate::cli::{self, CommonArgs, ConfigArg, Tool};
use crate::plumbing::diag::{Diag, OnBadInput};
use crate::plumbing::framing::{RecordWriter, read_all};
use crate::plumbing::input::Input;
use crate::plumbing::{diag, input};
use crate::record::{Header, Kind, Pattern};
use crate::stream::{Kindless, Record, read_records_from};

/// Page someone when a failure pattern crosses the line.
///
/// For each scored pattern whose final score reaches the threshold and that
/// has not fired within the cooldown, POST a Slack, Discord or plain JSON
/// payload to a webhook. Writes one `alert` record per pattern saying what
/// was decided; other records pass through.
#[derive(Parser, Debug)]
#[command(name = "triage-alert", version)]
#[command(mut_arg("config", |a| a.help("Configuration file ([alerting] webhook_url, threshold, cooldown_seconds)")))]
pub struct Args {
    /// triage-score output, or the document of `triage report --format json`; none or `-` reads stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Webhook URL (a secret: messages show only its scheme and host). Else TRIAGE_WEBHOOK_URL, else
    /// [alerting] webhook_url.
    #[arg(
        long,
        value_name = "URL",
        env = "TRIAGE_WEBHOOK_URL",
        hide_env_values = true
    )]
    pub webhook: Option<String>,
    /// Fire for patterns whose final_score is at least this. Default: [alerting] threshold, else 10.
    #[arg(long, value_name = "SCORE", value_parser = cli::finite_number, allow_hyphen_values = true)]
    pub threshold: Option<f64>,
    /// A pattern that fired stays quiet this many seconds. Default: [alerting] cooldown_seconds, else 3600.
    #[arg(long, value_name = "SECONDS")]
    pub cooldown: Option<u64>,
    /// Also page when at least this share of the batch's runs of known outcome failed (0.3 or
    /// 30%), under the id `runs/failed` with its own cooldown; exit 2 when no run states its outcome.
    #[arg(long, value_name = "RATE", value_parser = cli::share)]
    pub failed_runs: Option<f64>,
    /// The receiver's payload shape.
    #[arg(long, value_enum, default_value = "slack")]
    pub payload: PayloadFormat,
    /// Cooldown state file, shared (under a lock) by every run that uses it.
    /// Default: $XDG_STATE_HOME/triage/alert-state.json (~/.local/state/triage/…).
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Decide and write the records (each would_fire alert with the `payload`
    /// it would send), but send nothing and leave the state alone.
    #[arg(long)]
    pub dry_run: bool,
    /// Seconds one attempt may take, connecting included.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub timeout: f64,
    /// Further attempts after a send that failed for a reason worth retrying
    /// (no answer, 408, 429, 5xx).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub retries: u32,
    /// Seconds before the first retry; each later wait doubles (Retry-After is honoured, up to 60).
    #[arg(long, value_name = "SECONDS", default_value_t = 1.0)]
    pub backoff: f64,
    #[command(flatten)]
    pub config: ConfigArg,
    #[command(flatten)]
    pub common: CommonArgs,
}

impl Tool for Args {
    const NAME: &'static str = "triage-alert";
    const MAN_SECTIONS: &'static [(&'static str, &'static str)] = &[
        (
            "DECISIONS",
            "Each pattern gets one alert record: fired (delivered), would_fire (--dry-run), suppressed (fired within \
the cooldown; last_fired and cooldown_until say when), below_threshold, or failed (not delivered after the retries; \
error says why). A failed send does not start the cooldown, so the next run tries again.",
        ),
        (
            "EXAMPLES",
            "triage-parse runs/*.ndjson | triage-group | triage-score | triage-alert --threshold 12\n\n\
triage report --format json runs/*.ndjson | triage-alert --dry-run | jq -c 'select(.kind==\"alert\")'\n\n\
*/15 * * * * triage report --format json /var/log/agents/*.jsonl | TRIAGE_WEBHOOK_URL=... triage-alert --payload discord -q",
        ),
    ];

    fn common(&self) -> &CommonArgs {
        &self.common
    }

    fn run(self, diag: &mut Diag) -> anyhow::Result<u8> {
        let config = self.config.load()?;
        let policy = Policy {
            threshold: self.threshold.unwrap_or(config.alerting.threshold),
            cooldown_secs: self.cooldown.unwrap_or(config.alerting.cooldown_seconds),
        };
        let webhook = self.webhook(config.alerting.webhook_url.as_deref())?;
        let state_path = match &self.state {
            Some(p) => p.clone(),
            None => AlertState::default_path()?,
        };
        let inputs = input::inputs(&self.files, diag)?;
        let links = config.links.clone();
        let mut state = if self.dry_run {
            AlertState::read(&state_path)?
        } else {
            AlertState::lock(&state_path)?
        };
        for (id, at) in state.drop_future(unix_now()) {
            diag.warn(
                "state",
                format_args!(
                    "{}: pattern {id} last fired at Unix second {at}, in the future; entry ignored",
                    state_path.display()
                ),
            );
        }
        let mut out = RecordWriter::stdout(self.common.line_buffered);
        out.record(&Header::for_tool(Self::NAME))?;
        let mut failed = 0u64;
        let mut batch_runs: Option<(u64, u64)> = None;
        let mut each = |item: Item, out: &mut Out, diag: &mut Diag| -> anyhow::Result<()> {
            let pattern = match item {
                Item::Pattern(p) => *p,
                Item::Runs { failed, known } => {
                    batch_runs = Some((failed, known));
                    return Ok(());
                }
            };
            let scores = pattern.score.as_ref().with_context(|| {
                format!(
                    "pattern {} has no scores; run triage-score first",
                    pattern.pattern_id
                )
            })?;
            let body = payload(self.payload, &pattern, scores, &links);
            let rec = self.page(
                &mut state,
                &webhook,
                &policy,
                Subject {
                    id: &pattern.pattern_id,
                    score: scores.final_score,
                    body,
                },
                &mut failed,
                diag,
            )?;
            out.record(&alert_record(
                &pattern,
                scores,
                &policy,
                &rec.0,
                rec.1.as_ref(),
                rec.2,
            ))?;
            Ok(())
        };
        for input in &inputs {
            for_each_pattern(input, &mut out, diag, self.common.on_bad_input(), &mut each)?;
        }
        if let Some(threshold) = self.failed_runs {
            let Some((runs_failed, total)) = batch_runs else {
                anyhow::bail!(
                    "--failed-runs needs the batch: give triage-score output or `triage report --format json`"
                );
            };
            if total == 0 {
                diag.warn(
                    "failed-runs",
                    format_args!(
                        "--failed-runs: no run of the batch states its outcome, so there is no share of failed runs to judge"
                    ),
                );
                out.flush()?;
                return Ok(cli::EXIT_ERROR);
            }
            let rate = runs_failed as f64 / total as f64;
            let run_policy = Policy {
                threshold,
                cooldown_secs: policy.cooldown_secs,
            };
            let body = failed_runs_payload(self.payload, runs_failed, total, threshold);
            let (outcome, report, preview) = self.page(
                &mut state,
                &webhook,
                &run_policy,
                Subject {
                    id: FAILED_RUNS_ID,
                    score: rate,
                    body,
                },
                &mut failed,
                diag,
            )?;
            out.record(&failed_runs_record(
                (runs_failed, total, rate),
                &run_policy,
                &outcome,
                report.as_ref(),
                preview,
            ))?;
        }
        input::refuse_empty_stdin(&inputs)?;
        out.flush()?;
        Ok(if failed > 0 {
            cli::EXIT_ERROR
        } else {
            cli::EXIT_OK
        })
    }
}

type Out = RecordWriter<io::BufWriter<crate::plumbing::outfile::Stdout>>;

/// What the inputs hand over: a scored pattern, or the batch's runs.
enum Item {
    Pattern(Box<Pattern>),
    /// Runs failed, and runs of known outcome (the share's denominator).
    Runs {
        failed: u64,
        known: u64,
    },
}

/// What may page: its id (the cooldown's key), the figure the threshold
/// is held against, and the body it would send.
struct Subject<'a> {
    id: &'a str,
    score: f64,
    body: serde_json::Value,
}

type Paged = (
    AlertStatus,
    Option<crate::alert::webhook::SendReport>,
    Option<serde_json::Value>,
);

impl Args {
    /// Decides for one subject and sends when it fires: the outcome, the
    /// send's report, and under --dry-run the body it would send.
    fn page(
        &self,
        state: &mut AlertState,
        webhook: &Option<Webhook>,
        policy: &Policy,
        subject: Subject<'_>,
        failed: &mut u64,
        diag: &mut Diag,
    ) -> anyhow::Result<Paged> {
        let now = unix_now();
        let decision = policy.decide(subject.score, state.last_fired(subject.id), now);
        Ok(match (decision, webhook) {
            (Decision::BelowThreshold, _) => (AlertStatus::BelowThreshold, None, None),
            (Decision::Suppressed { last, until }, _) => {
                (AlertStatus::Suppressed { last, until }, None, None)
            }
            (Decision::Fire, None) => {
                state.fired(subject.id, now);
                (AlertStatus::WouldFire, None, Some(subject.body))
            }
            (Decision::Fire, Some(hook)) => {
                let report = hook.send(&serde_json::to_vec(&subject.body)?);
                if report.delivered {
                    state.fired(subject.id, unix_now());
                    state.save()?;
                    (AlertStatus::Fired, Some(report), None)
                } else {
                    *failed += 1;
                    diag.warn(
                        "send-failed",
                        format_args!(
                            "{}: not delivered to {} after {}: {}",
                            subject.id,
                            report.webhook,
                            crate::render::words::count(
                                u64::from(report.attempts),
                                "attempt",
                                "attempts"
                            ),
                            report.error.as_deref().unwrap_or("unknown error")
                        ),
                    );
                    (AlertStatus::Failed, Some(report), None)
                }
            }
        })
    }

    /// The webhook to send to (flag, then TRIAGE_WEBHOOK_URL, then the
    /// configuration); `None` for a dry run.
    fn webhook(&self, configured: Option<&str>) -> anyhow::Result<Option<Webhook>> {
        let url = self
            .webhook
            .as_deref()
            .or(configured)
            .filter(|u| !u.trim().is_empty());
        let Some(url) = url else {
            anyhow::ensure!(
                self.dry_run,
                "no webhook: pass --webhook URL, set TRIAGE_WEBHOOK_URL or [alerting] webhook_url (or use --dry-run)"
            );
            return Ok(None);
        };
        // Checked on a dry run too: the dry run is where a typo should show.
        let hook = Webhook::new(
            url.trim(),
            seconds("--timeout", self.timeout)?,
            self.retries,
            seconds("--backoff", self.backoff)?,
        )?;
        Ok((!self.dry_run).then_some(hook))
    }
}

fn seconds(flag: &str, secs: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(secs)
        .map_err(|_| anyhow::anyhow!("{flag} {secs}: expected a number of seconds of zero or more"))
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// Bytes looked at to tell a JSON report document from NDJSON records.
const PEEK_BYTES: usize = 4096;

/// Hands each pattern of `input` to `each`: from triage records as they
/// stream in (other kinds pass through), or from the `patterns` of a
/// `triage report --format json` document.
fn for_each_pattern(
    input: &Input,
    out: &mut Out,
    diag: &mut Diag,
    on_bad: OnBadInput,
    each: &mut dyn FnMut(Item, &mut Out, &mut Diag) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let name = input.name();
    let mut reader = input.open()?;
    let head = peek_first_line(&mut reader)
        .map_err(|e| anyhow::anyhow!("{name}: {}", diag::io_reason(&e)))?;
    // Nothing at all before the end of input.
    if head.is_empty() {
        input::refuse_empty_stdin(std::slice::from_ref(input))?;
    }
    let reader = io::Cursor::new(head).chain(reader);
    let head = reader.get_ref().0.get_ref();
    if is_report_document(head) {
        return report_patterns(&name, reader, out, diag, each);
    }
    if !starts_like_json(head) {
        anyhow::bail!(
            "{name}:1: not triage records (a markdown or HTML report?): give triage-score output \
or `triage report --format json`"
        );
    }
    read_records_from(
        &name,
        reader,
        input.waiting(),
        diag,
        on_bad,
        Kindless::TRACE_FILE,
        |rec, loc, diag| {
            match rec {
                Record::Other {
                    kind: Some(Kind::Pattern),
                    line,
                } => {
                    let pattern = Pattern::from_line(line)
                        .with_context(|| format!("{loc}: bad pattern record"))?;
                    each(Item::Pattern(Box::new(pattern)), out, diag)
                        .with_context(|| loc.to_string())?;
                }
                Record::Other {
                    kind: Some(Kind::Batch),
                    line,
                } => {
                    let b: crate::record::Batch = serde_json::from_slice(line)
                        .with_context(|| format!("{loc}: bad batch record"))?;
                    each(
                        Item::Runs {
                            failed: b.runs_failed,
                            known: b.runs_failed + b.runs_succeeded,
                        },
                        out,
                        diag,
                    )?;
                    out.raw_line(line)?;
                }
                Record::Header(line) | Record::Other { line, .. } | Record::Untyped(line) => {
                    out.raw_line(line)?
                }
                Record::Event { .. } => {
                    anyhow::bail!(
                        "{loc}: an event record; triage-alert reads scored patterns (triage-score output)"
                    )
                }
            }
            Ok(())
        },
    )?;
    Ok(())
}

/// Reads up to the end of the first line (at most [`PEEK_BYTES`]).
fn peek_first_line(reader: &mut dyn Read) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(PEEK_BYTES);
    let mut byte = [0u8; 512];
    while head.len() < PEEK_BYTES && !head.contains(&b'\n') {
        match reader.read(&mut byte) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&byte[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(head)
}

/// A pretty-printed JSON document starts with a line holding only `{`;
/// a record line never does.
fn is_report_document(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    let first = head
        .split(|b| *b == b'\n')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace))
        .unwrap_or_default();
    first.trim_ascii() == b"{"
}

/// Whether the first line that is not blank opens a JSON value, as every
/// record and report document does.
fn starts_like_json(head: &[u8]) -> bool {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    head.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_none_or(|b| *b == b'{')
}

fn report_patterns(
    name: &str,
    reader: impl Read,
    out: &mut Out,
    diag: &mut Diag,
    each: &mut dyn FnMut(Item, &mut Out, &mut Diag) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    #[derive(serde::Deserialize)]
    struct Document {
        patterns: Vec<serde_json::Value>,
        #[serde(default)]
        runs_succeeded: u64,
        #[serde(default)]
        runs_failed: u64,
    }
    let bytes = read_all(reader).map_err(|e| anyhow::anyhow!("{name}: {}", diag::io_reason(&e)))?;
    let doc: Document = serde_json::from_slice(&bytes)
        .with_context(|| format!("{name}: not a `triage report --format json` document"))?;
    for (i, value) in doc.patterns.iter().cloned().enumerate() {
        let pattern: Pattern = serde_json::from_value(value)
            .with_context(|| format!("{name}: patterns[{i}]: bad pattern"))?;
        each(Item::Pattern(Box::new(pattern)), out, diag)
            .with_context(|| format!("{name}: patterns[{i}]"))?;
    }
    each(
        Item::Runs {
            failed: doc.runs_failed,
            known: doc.runs_failed + doc.runs_succeeded,
        },
        out,
        diag,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_document_is_told_from_records() {
        assert!(is_report_document(b"{\n  \"generated\": \"x\""));
        assert!(is_report_document(b"\xEF\xBB\xBF\n{\r\n"));
        assert!(!is_report_document(b"{\"kind\":\"header\",\"schema\":1}\n"));
        assert!(!is_report_document(b""));
    }

    #[test]
    fn negative_or_nan_seconds_are_refused() {
        assert!(seconds("--timeout", -1.0).is_err());
        assert!(seconds("--timeout", f64::NAN).is_err());
        assert_eq!(
            seconds("--backoff", 0.5).unwrap(),
            Duration::from_millis(500)
        );
    }
}
