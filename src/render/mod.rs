//! triage-render's logic: a [`Report`] of scored records written as
//! markdown, a terminal table, an HTML dashboard, JSON or CSV. Callable
//! in-process (`triage report`) through [`render`].

pub mod chart;
pub mod comparison;
pub mod csv;
mod escape;
pub mod html;
pub mod json;
mod markup;
pub mod md;
pub mod model;
pub mod table;
pub mod words;

use std::borrow::Cow;
use std::io::Write;

use clap::ValueEnum;

use crate::config::{LinksConfig, ScoringConfig};
use crate::timestamp::Timestamp;

pub use model::{Report, ReportPattern};

/// The output formats.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// The morning report as markdown.
    #[default]
    Md,
    /// A table for the terminal.
    Table,
    /// A self-contained HTML dashboard.
    Html,
    /// One JSON document with every record and field.
    Json,
    /// One CSV row per pattern with every field.
    Csv,
}

/// The time series' buckets (`--bucket`).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bucket {
    Hour,
    Day,
}

/// The failures of every pattern per bucket asked with `--bucket`: the
/// unit ("hour", "day") and (bucket, failures) with every bucket between
/// the first and the last, so quiet ones show as 0. `None` without
/// `--bucket` or timestamps.
pub(crate) fn failures_per_bucket(
    report: &Report,
    bucket: Option<Bucket>,
) -> Option<(&'static str, Vec<(String, u64)>)> {
    bucket?;
    let axis = report.trend_axis_by(bucket);
    let unit = match (axis.by_hour, axis.by_day) {
        (true, _) => "hour",
        (_, true) => "day",
        _ => return None,
    };
    let mut totals = vec![0u64; axis.labels.len()];
    for rp in &report.patterns {
        for (t, n) in totals.iter_mut().zip(axis.counts(&rp.pattern)) {
            *t += n as u64;
        }
    }
    Some((unit, axis.labels.into_iter().zip(totals).collect()))
}

/// Verdicts and findings the markdown report and the terminal table list
/// at most (the rest are counted; JSON and CSV have them all).
pub(crate) const ROWS_IN_TEXT: usize = 20;

/// Verdicts and findings the HTML dashboard lists at most.
pub(crate) const ROWS_IN_HTML: usize = 500;

/// The bidi embedding, override and isolate controls (U+202A-U+202E,
/// U+2066-U+2069) and the invisible direction marks (U+200E, U+200F,
/// U+061C): they reorder the text around them on screen, so a name could
/// show as something else ("Trojan Source").
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{061C}'
    )
}

/// A character JSON may carry raw that a terminal would act on or reorder:
/// a bidi control, or a C1 control (U+0080-U+009F; U+009B alone starts an
/// escape sequence on many terminals). serde escapes C0 controls itself.
fn acts_on_a_terminal(c: char) -> bool {
    is_bidi_control(c) || ('\u{80}'..='\u{9f}').contains(&c)
}

/// JSON text with each bidi or C1 control written as a `\uXXXX` escape:
/// the document parses to the same strings, but shows them inert and in
/// order on a screen. Outside strings JSON is ASCII, so every such
/// character is in a string.
pub(crate) fn escape_for_terminal(json: String) -> String {
    if !json.chars().any(acts_on_a_terminal) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 64);
    for c in json.chars() {
        if acts_on_a_terminal(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// A character of trace text no report shows as it is.
fn unsafe_char(c: char) -> bool {
    c.is_control() || is_bidi_control(c)
}

/// Text from a trace on one line: a tab or line break reads as a space,
/// any other control character (an escape sequence that would drive the
/// terminal) or bidi control as U+FFFD.
pub(crate) fn one_line(s: &str) -> Cow<'_, str> {
    if s.chars().any(unsafe_char) {
        Cow::Owned(
            s.chars()
                .map(|c| match c {
                    '\t' | '\n' | '\r' => ' ',
                    c if unsafe_char(c) => '\u{fffd}',
                    c => c,
                })
                .collect(),
        )
    } else {
        Cow::Borrowed(s)
    }
}

/// Text from a trace that may span lines: tabs and line breaks stay (a
/// lone carriage return, which would overwrite the line on a terminal,
/// becomes a line break), any other control character or bidi control
/// becomes U+FFFD.
pub(crate) fn inert_lines(s: &str) -> Cow<'_, str> {
    if !s.chars().any(|c| unsafe_char(c) && c != '\t' && c != '\n') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' => out.push('\n'),
            '\t' | '\n' => out.push(c),
            c if unsafe_char(c) => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// "and 5 more (all of them in --format json)"
pub(crate) fn more_rows_text(more: usize) -> Option<String> {
    (more > 0).then(|| format!("and {more} more (all of them in --format json)"))
}

/// Samples a pattern shows at most in a report (JSON has them all).
pub(crate) const SAMPLES_SHOWN: usize = 3;

/// The first sentence of a verdict's evidence: what a reader needs to
/// tell whether the root cause is believable.
pub(crate) fn first_evidence(v: &crate::record::Verdict) -> Option<&str> {
    let first = v
        .evidence
        .iter()
        .map(|e| e.trim())
        .find(|e| !e.is_empty())?;
    Some(match first.find(". ") {
        Some(i) => &first[..=i],
        None => first,
    })
}

/// Input paths a report names before it only counts the rest.
pub(crate) const SOURCES_NAMED: usize = 10;

/// The first [`SOURCES_NAMED`] input paths, and how many more there are.
pub(crate) fn named_sources(report: &Report) -> (Vec<&str>, usize) {
    let (named, more) = first_named(report.sources());
    (named.iter().map(|s| s.path.as_str()).collect(), more)
}

/// The first [`SOURCES_NAMED`] of `all`, and how many more there are.
pub(crate) fn first_named<T>(all: &[T]) -> (&[T], usize) {
    let named = &all[..all.len().min(SOURCES_NAMED)];
    (named, all.len() - named.len())
}

/// " and 5 more"
pub(crate) fn more_sources_text(rest: usize) -> String {
    if rest == 0 {
        String::new()
    } else {
        format!(" and {rest} more")
    }
}

/// How the terminal table is drawn.
#[derive(Debug, Clone, Copy, Default)]
pub struct TableStyle {
    /// Columns to fit into; `None` for no limit (not a terminal).
    pub width: Option<u16>,
    pub color: bool,
}

/// Everything a format needs besides the records.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    pub format: OutputFormat,
    /// Patterns the markdown report details and the HTML charts follow.
    pub top: usize,
    /// The scoring model the patterns were scored with: its recovery window,
    /// multiplier and weights appear in the texts.
    pub scoring: ScoringConfig,
    /// The date the report gives as its own.
    pub generated: Timestamp,
    /// Seconds after which the HTML page reloads itself.
    pub refresh: Option<u64>,
    /// Where run ids link to (`[links]`).
    pub links: LinksConfig,
    /// The time series' buckets; `None`: days, or runs within one day.
    pub bucket: Option<Bucket>,
    pub table: TableStyle,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            format: OutputFormat::Md,
            top: 3,
            scoring: ScoringConfig::default(),
            generated: Timestamp(0),
            refresh: None,
            links: LinksConfig::default(),
            bucket: None,
            table: TableStyle::default(),
        }
    }
}

/// Writes `report` in the chosen format.
pub fn render(report: &Report, opts: &RenderOptions, out: &mut dyn Write) -> anyhow::Result<()> {
    let needs_scores = matches!(
        opts.format,
        OutputFormat::Md | OutputFormat::Table | OutputFormat::Html
    );
    if needs_scores && !report.is_scored() {
        anyhow::bail!(
            "pattern records are not scored: pipe them through triage-score first \
             (or use --format json or csv)"
        );
    }
    match opts.format {
        OutputFormat::Md => md::write(report, opts, out)?,
        OutputFormat::Table => table::write(report, opts, out)?,
        OutputFormat::Html => html::write(report, opts, out)?,
        OutputFormat::Json => json::write(report, opts, out)?,
        OutputFormat::Csv => csv::write(report, out)?,
    }
    out.flush()?;
    Ok(())
}

/// The time a report is dated: SOURCE_DATE_EPOCH when set (reproducible
/// output), else now.
pub(crate) fn report_time() -> anyhow::Result<Timestamp> {
    match std::env::var("SOURCE_DATE_EPOCH") {
        Ok(v) if !v.trim().is_empty() => {
            let secs: i64 = v.trim().parse().map_err(|_| {
                anyhow::anyhow!("SOURCE_DATE_EPOCH must be whole seconds since 1970, not {v:?}")
            })?;
            Ok(Timestamp::from_unix_nanos(secs as i128 * 1_000_000_000))
        }
        _ => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default();
            Ok(Timestamp::from_unix_nanos(now.as_nanos() as i128))
        }
    }
}

/// "2026-04-25 08:38 UTC"
pub(crate) fn date_text(t: Timestamp) -> String {
    let rfc = t.to_string();
    format!("{} {} UTC", &rfc[..10], &rfc[11..16])
}

/// The summary line: "116 of 200 runs failed (58%), 3 incident patterns,
/// top 3 worth your attention." Without a known outcome: "3 runs analyzed
/// (no outcome known), …". Of root causes alone: "4 of 7 runs failed (57%),
/// 3 with no known outcome, 4 root-cause verdicts."
pub(crate) fn summary_text(report: &Report, top: usize) -> String {
    let runs = words::count(report.runs_total(), "run", "runs");
    if report.is_root_causes_only() {
        // Verdicts without run records: their runs failed, though no
        // record says so; "no outcome known" would mislead.
        let lead = runs_text(report)
            .filter(|_| report.outcomes().known() > 0)
            .unwrap_or_else(|| format!("{runs} analyzed"));
        let what = match report.verdicts.len() {
            0 => words::count(report.findings.len() as u64, "finding", "findings"),
            n => words::count(n as u64, "root-cause verdict", "root-cause verdicts"),
        };
        return format!("{lead}, {what}.");
    }
    let lead = runs_text(report).unwrap_or_else(|| format!("{runs} analyzed"));
    let n = report.patterns.len();
    if n == 0 {
        return format!("{lead}, no incident patterns.");
    }
    let shown = top.min(n);
    let top_part = if shown == 1 {
        "the top one".to_string()
    } else {
        format!("top {shown}")
    };
    format!(
        "{lead}, {}, {top_part} worth your attention.",
        words::count(n as u64, "incident pattern", "incident patterns")
    )
}

/// "116 of 200 runs failed (58%)", with ", 12 with no known outcome" when
/// some state none, or "3 runs analyzed (no outcome known)"; none without
/// runs.
pub(crate) fn runs_text(report: &Report) -> Option<String> {
    let c = report.outcomes();
    if c.total == 0 {
        return None;
    }
    if c.known() == 0 {
        return Some(format!(
            "{} analyzed (no outcome known)",
            words::count(c.total, "run", "runs")
        ));
    }
    let mut text = format!(
        "{} of {} failed ({})",
        c.failed,
        words::count(c.total, "run", "runs"),
        words::percent(c.failed as f64 / c.total as f64)
    );
    if c.unknown() > 0 {
        text.push_str(&format!(", {} with no known outcome", c.unknown()));
    }
    Some(text)
}

/// Where tasks ran several times: "50 tasks × 4 trials: pass^1 0.42,
/// pass^2 0.27, …; 20 tasks never passed."
pub(crate) fn tasks_text(t: &crate::outcomes::TaskSummary) -> String {
    let trials: Vec<u64> = t.tasks.iter().map(|t| t.trials).collect();
    let (lo, hi) = (
        trials.iter().min().copied().unwrap_or(0),
        trials.iter().max().copied().unwrap_or(0),
    );
    let each = if lo == hi {
        format!("{lo} trials each")
    } else {
        format!("{lo} to {hi} trials each")
    };
    let ks: Vec<String> = t
        .pass_hat
        .iter()
        .map(|(k, p)| format!("pass^{k} {p:.2}"))
        .collect();
    let never = match t.never_passed() {
        0 => String::new(),
        n => format!("; {} never passed", words::count(n as u64, "task", "tasks")),
    };
    format!(
        "{}, {each}: {}{never}.",
        words::count(t.tasks.len() as u64, "task", "tasks"),
        ks.join(", ")
    )
}

/// Tasks a report lists as the worst.
pub(crate) const WORST_TASKS: usize = 5;

/// Run ids a report names per group of failed runs with no failing step.
pub(crate) const RUNS_NAMED: usize = 10;

/// "89 of the 116 failed runs have no failure event: only their outcome
/// says they failed."
pub(crate) fn silent_lead(silent: u64, failed: u64) -> String {
    match (silent, failed) {
        (1, 1) => "The failed run has no failure event: only its outcome says it failed.".into(),
        (s, f) if s == f => format!(
            "All {s} failed runs have no failure event: only their outcome says they failed."
        ),
        (1, f) => format!(
            "1 of the {f} failed runs has no failure event: only its outcome says it failed."
        ),
        (s, f) => format!(
            "{s} of the {f} failed runs have no failure event: only their outcome says they failed."
        ),
    }
}

/// The heading of a group of failed runs with no failing step.
pub(crate) fn silent_heading(g: &crate::outcomes::SilentFailures) -> String {
    let why = g.reason.map_or("failed, no reason stated", |r| r.label());
    format!(
        "{why}: {}",
        words::count(g.runs.len() as u64, "run", "runs")
    )
}

/// What a group of failed runs with no failing step means.
pub(crate) fn silent_explanation(g: &crate::outcomes::SilentFailures) -> &'static str {
    use crate::record::OutcomeReason as R;
    match g.reason {
        Some(R::WrongAnswer) => "the scorer marked the answer wrong, though no step failed",
        Some(R::LowScore) => "the score or reward fell short of a pass, though no step failed",
        Some(R::NotSubmitted) => "the run ended without submitting an answer",
        Some(R::Error) => "the run ended on an error that no step records",
        Some(R::Timeout) => "a time, token or step limit ended the run",
        None => "the source says the run failed, and nothing more",
    }
}

/// Whether a group's runs are each named with what they said: not when
/// every run said the one thing the group's line already shows.
pub(crate) fn messages_per_run(g: &crate::outcomes::SilentFailures) -> bool {
    !matches!(g.stated.as_slice(), [one] if one.runs == g.runs.len() as u64)
}

/// Messages a line shows of what failed runs said ended them.
pub(crate) const MESSAGES_SHOWN: usize = 3;

/// "What the runs said: “exit_cost” (25 runs), “exit_context” (15 runs)
/// and 2 more.": none when no run of the group said anything.
pub(crate) fn stated_text(g: &crate::outcomes::SilentFailures) -> Option<String> {
    if g.stated.is_empty() {
        return None;
    }
    let shown: Vec<String> = g
        .stated
        .iter()
        .take(MESSAGES_SHOWN)
        .map(|s| {
            format!(
                "“{}” ({})",
                one_line(&s.message),
                words::count(s.runs, "run", "runs")
            )
        })
        .collect();
    let more = match g.stated.len().saturating_sub(MESSAGES_SHOWN) {
        0 => String::new(),
        n => format!(
            " and {} more",
            words::count(n as u64, "message", "messages")
        ),
    };
    Some(format!("What the runs said: {}{more}.", shown.join(", ")))
}

/// "3 input lines could not be read; see stderr."
pub(crate) fn skipped_text(skipped: u64) -> Option<String> {
    (skipped > 0).then(|| {
        format!(
            "{} could not be read; see stderr.",
            words::count(skipped, "input line", "input lines")
        )
    })
}

/// The line a report with no patterns shows instead of them: all clear
/// only when runs were read and none failed. None for a report of root
/// causes, which never had patterns to show.
pub(crate) fn all_clear_text(report: &Report) -> Option<String> {
    if report.is_root_causes_only() {
        return None;
    }
    let failures = report.failures_total();
    let c = report.outcomes();
    Some(match report.runs_total() {
        0 => "Nothing to report: no runs were read.".to_string(),
        _ if failures > 0 => format!(
            "No patterns to show, though the batch counts {}: see the warnings.",
            words::count(failures, "failure event", "failure events")
        ),
        runs if c.failed > 0 => format!(
            "No failure events, but {} of {} failed: see the failed runs below.",
            c.failed,
            words::count(runs, "run", "runs")
        ),
        runs if c.unknown() > 0 => format!(
            "No failure events in {}, but {} no known outcome: not an all clear.",
            words::count(runs, "run", "runs"),
            if c.unknown() == runs {
                "they have".to_string()
            } else {
                format!("{} of them have", c.unknown())
            }
        ),
        // What could not be read may hold the failures.
        runs if report.skipped() > 0 => format!(
            "No failures in the {} read, but {} could not be read: not an all clear.",
            words::count(runs, "run", "runs"),
            words::count(report.skipped(), "input line", "input lines")
        ),
        runs => format!(
            "All clear: no failures in {}.",
            words::count(runs, "run", "runs")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_is_minutes_in_utc() {
        let t = Timestamp::from_unix_nanos(1_777_106_280 * 1_000_000_000);
        assert_eq!(date_text(t), "2026-04-25 08:38 UTC");
    }

    #[test]
    fn summary_counts_in_words() {
        let r = Report::default();
        assert_eq!(
            summary_text(&r, 3),
            "0 runs analyzed, no incident patterns."
        );
        assert_eq!(
            skipped_text(1).unwrap(),
            "1 input line could not be read; see stderr."
        );
        assert_eq!(skipped_text(0), None);
    }
}
