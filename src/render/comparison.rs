//! The comparison report made from triage-diff's `change` records: the
//! reference's sections (score summary, headline, classification deltas,
//! new, resolved and persisting patterns) as titled tables and lists of
//! text that markdown, the terminal table and HTML each lay out. Change
//! records of a shape this build does not know become one generic table
//! per scope instead.

use serde_json::{Map, Value};

use super::words;
use super::words::value_text;
use crate::record::{
    ClassificationChange, CountChange, PassRateChange, PatternChange, RunTotals, ScoreChange,
    SideSummary, SummaryChange, TaskChange,
};

/// Items a list or table shows before it counts the rest (JSON has them all).
pub(crate) const ROWS_SHOWN: usize = 20;

/// The body of a section.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Block {
    Table {
        columns: Vec<String>,
        rows: Vec<Vec<String>>,
    },
    List(Vec<String>),
    /// One line of text, shown when a section has nothing to list.
    Line(String),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Section {
    pub title: String,
    pub block: Block,
    /// Rows or items left out (see [`ROWS_SHOWN`]).
    pub more: usize,
}

impl Section {
    /// Keeps at most `rows` rows or items, counting the rest in `more`.
    fn limit(&mut self, rows: usize) {
        let len = match &mut self.block {
            Block::Table { rows: r, .. } => {
                let len = r.len();
                r.truncate(rows);
                len
            }
            Block::List(items) => {
                let len = items.len();
                items.truncate(rows);
                len
            }
            Block::Line(_) => return,
        };
        self.more += len.saturating_sub(rows);
    }
}

/// A comparison: what each side was read from, then its sections.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Comparison {
    /// "Before: before.ndjson (3 runs, 30 events)" and the same for after.
    pub sides: Vec<(String, String)>,
    pub sections: Vec<Section>,
}

/// The comparison the change records make, or `None` without any.
/// Pattern lists show at most `rows` rows.
pub(crate) fn comparison(changes: &[Map<String, Value>], rows: usize) -> Option<Comparison> {
    if changes.is_empty() {
        return None;
    }
    Some(typed(changes, rows).unwrap_or_else(|| generic(changes)))
}

fn typed(changes: &[Map<String, Value>], rows: usize) -> Option<Comparison> {
    let mut summary: Option<SummaryChange> = None;
    let mut classes: Vec<ClassificationChange> = Vec::new();
    let mut patterns: Vec<PatternChange> = Vec::new();
    let mut pass_rate: Option<PassRateChange> = None;
    let mut tasks: Vec<TaskChange> = Vec::new();
    for c in changes {
        let v = Value::Object(c.clone());
        match c.get("scope").and_then(Value::as_str)? {
            "summary" => summary = Some(serde_json::from_value(v).ok()?),
            "classification" => classes.push(serde_json::from_value(v).ok()?),
            "pattern" => patterns.push(serde_json::from_value(v).ok()?),
            "pass_rate" => pass_rate = Some(serde_json::from_value(v).ok()?),
            "task" => tasks.push(serde_json::from_value(v).ok()?),
            _ => return None,
        }
    }
    let mut out = Comparison::default();
    if let Some(s) = &summary {
        out.sides = vec![side("Before", &s.before), side("After", &s.after)];
        if let Some(p) = pass_rate
            .as_ref()
            .filter(|p| p.before.pass_rate.is_some() || p.after.pass_rate.is_some())
        {
            out.sections.push(pass_rate_section(p));
            if !tasks.is_empty() {
                let mut t = task_section(&tasks);
                t.limit(rows);
                out.sections.push(t);
            }
        }
        out.sections.push(summary_section(s));
        out.sections.push(list(
            "Headline",
            s.headlines.clone(),
            "No changes between the two batches.",
        ));
    }
    out.sections.push(class_section(&classes));
    if !classes.is_empty() {
        out.sections.push(per_run_section(&classes));
    }
    out.sections
        .extend(pattern_sections(&patterns).into_iter().map(|mut s| {
            s.limit(rows);
            s
        }));
    Some(out)
}

fn side(name: &str, s: &SideSummary) -> (String, String) {
    let (named, more) = super::first_named(&s.sources);
    (
        name.to_string(),
        format!(
            "{}{} ({}, {})",
            named.join(", "),
            super::more_sources_text(more),
            words::count(s.runs, "run", "runs"),
            words::count(s.events, "event", "events")
        ),
    )
}

fn count_row(name: &str, c: &CountChange) -> Vec<String> {
    vec![
        name.to_string(),
        c.before.to_string(),
        c.after.to_string(),
        c.label.clone(),
    ]
}

fn score_row(name: &str, c: &ScoreChange) -> Vec<String> {
    vec![
        name.to_string(),
        format!("{:.2}", c.before),
        format!("{:.2}", c.after),
        c.label.clone(),
    ]
}

fn summary_section(s: &SummaryChange) -> Section {
    let rows = vec![
        count_row("Distinct incident patterns", &s.patterns),
        count_row("Failure events", &s.failure_events),
        count_row("Unrecovered events", &s.unrecovered_events),
        count_row(
            "Coordination failure events",
            &s.coordination_failure_events,
        ),
        score_row("Top final score", &s.top_final_score),
        score_row("Mean final score", &s.mean_final_score),
    ];
    table(
        "Score summary (final scores are scaled within each batch: compare counts, not scores)",
        &["Metric", "Before", "After", "Δ"],
        rows,
    )
}

/// A p-value as a reader wants it: "p = 0.012", or "p < 0.001".
pub(crate) fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_string()
    } else {
        format!("p = {p:.3}")
    }
}

/// "42.0%"
pub(crate) fn pct_text(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// "42.0% (95% CI 35.4-48.9%)"
pub(crate) fn rate_with_interval(t: &RunTotals) -> String {
    match (t.pass_rate, t.pass_rate_low, t.pass_rate_high) {
        (Some(r), Some(lo), Some(hi)) => format!(
            "{} (95% CI {:.1}-{:.1}%)",
            pct_text(r),
            lo * 100.0,
            hi * 100.0
        ),
        _ => "unknown".to_string(),
    }
}

/// "McNemar's exact test over 50 paired tasks: 3 newly failing, 1 fixed"
/// or "Fisher's exact test on the two proportions".
pub(crate) fn test_text(p: &PassRateChange) -> String {
    match (p.test.as_str(), p.pairs) {
        ("paired", Some(n)) => format!(
            "McNemar's exact test over {}: {} newly failing, {} fixed",
            match p.paired_by.as_deref() {
                Some("trial") => words::count(n, "paired task trial", "paired task trials"),
                _ => words::count(n, "paired task", "paired tasks"),
            },
            p.newly_failing.unwrap_or(0),
            p.fixed.unwrap_or(0)
        ),
        ("unpaired", _) => "Fisher's exact test on the two proportions".to_string(),
        _ => "no test".to_string(),
    }
}

/// Runs and pass rates of both sides, with their intervals and the test.
fn pass_rate_section(p: &PassRateChange) -> Section {
    let rate = rate_with_interval;
    let rows = vec![
        vec![
            "Runs".to_string(),
            p.before.runs.to_string(),
            p.after.runs.to_string(),
            String::new(),
        ],
        vec![
            "Failed runs".to_string(),
            p.before.failed.to_string(),
            p.after.failed.to_string(),
            String::new(),
        ],
        vec![
            "Runs of unknown outcome".to_string(),
            p.before.unknown.to_string(),
            p.after.unknown.to_string(),
            String::new(),
        ],
        vec![
            "Pass rate".to_string(),
            rate(&p.before),
            rate(&p.after),
            match p.test.as_str() {
                "none" => p.label.clone(),
                _ => format!("{} ({})", p.label, test_text(p)),
            },
        ],
    ];
    table("Runs", &["Metric", "Before", "After", "Δ"], rows)
}

/// Tasks that newly fail, then those fixed.
fn task_section(tasks: &[TaskChange]) -> Section {
    let rows = tasks
        .iter()
        .map(|t| {
            vec![
                t.task_id.clone(),
                t.trial.map(|n| n.to_string()).unwrap_or_default(),
                t.status.replace('_', " "),
                t.run_before.clone(),
                t.run_after.clone(),
            ]
        })
        .collect();
    table(
        "Tasks whose outcome changed",
        &["Task", "Trial", "Change", "Run before", "Run after"],
        rows,
    )
}

/// Failure events per run on each side, and how likely the rise is by
/// chance: what `--fail-on regression` judges, so batches of different
/// sizes compare.
fn per_run_section(classes: &[ClassificationChange]) -> Section {
    let rows = classes
        .iter()
        .map(|c| {
            vec![
                words::classification_label(&c.classification).into_owned(),
                format!("{:.2}", c.per_run_before),
                format!("{:.2}", c.per_run_after),
                match c.rise_p_value {
                    Some(p) if c.per_run_after > c.per_run_before => p_text(p),
                    _ => "no rise".to_string(),
                },
            ]
        })
        .collect();
    table(
        "Failure events per run",
        &["Classification", "Before", "After", "Chance of the rise"],
        rows,
    )
}

fn class_section(classes: &[ClassificationChange]) -> Section {
    let rows = classes
        .iter()
        .map(|c| {
            vec![
                words::classification_label(&c.classification).into_owned(),
                c.frequency.before.to_string(),
                c.frequency.after.to_string(),
                c.frequency.label.clone(),
                c.unrecovered.before.to_string(),
                c.unrecovered.after.to_string(),
                c.unrecovered.label.clone(),
                c.latency_label.clone(),
            ]
        })
        .collect();
    table(
        "Classification deltas",
        &[
            "Classification",
            "Before",
            "After",
            "Δ frequency",
            "Unrecovered before",
            "Unrecovered after",
            "Δ unrecovered",
            "Δ recovery latency",
        ],
        rows,
    )
}

fn pattern_sections(patterns: &[PatternChange]) -> Vec<Section> {
    let with_status = |status: &'static str| patterns.iter().filter(move |p| p.status == status);
    let new = with_status("new")
        .map(|p| {
            format!(
                "{} — {}",
                p.display_name,
                words::count(p.frequency.after, "occurrence", "occurrences")
            )
        })
        .collect();
    let resolved = with_status("resolved")
        .map(|p| {
            format!(
                "{} — was {}",
                p.display_name,
                words::count(p.frequency.before, "occurrence", "occurrences")
            )
        })
        .collect();
    let persisting: Vec<Vec<String>> = with_status("persisting")
        .map(|p| {
            vec![
                p.display_name.clone(),
                p.frequency.before.to_string(),
                p.frequency.after.to_string(),
                p.frequency.label.clone(),
            ]
        })
        .collect();
    let persisting = if persisting.is_empty() {
        line("Persisting patterns", "None.")
    } else {
        table(
            "Persisting patterns",
            &["Pattern", "Before", "After", "Δ frequency"],
            persisting,
        )
    };
    vec![
        list("New patterns (in after only)", new, "None."),
        list("Resolved patterns (in before only)", resolved, "None."),
        persisting,
    ]
}

fn table(title: &str, columns: &[&str], mut rows: Vec<Vec<String>>) -> Section {
    let more = rows.len().saturating_sub(ROWS_SHOWN);
    rows.truncate(ROWS_SHOWN);
    Section {
        title: title.to_string(),
        block: Block::Table {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows,
        },
        more,
    }
}

fn list(title: &str, mut items: Vec<String>, when_empty: &str) -> Section {
    if items.is_empty() {
        return line(title, when_empty);
    }
    let more = items.len().saturating_sub(ROWS_SHOWN);
    items.truncate(ROWS_SHOWN);
    Section {
        title: title.to_string(),
        block: Block::List(items),
        more,
    }
}

fn line(title: &str, text: &str) -> Section {
    Section {
        title: title.to_string(),
        block: Block::Line(text.to_string()),
        more: 0,
    }
}

/// Fields that name which kind of change a record is.
const GROUP_FIELDS: &[&str] = &["scope", "level", "type", "subject"];

/// One table per kind of change, a column per field in the order the
/// fields first appear: newer triage-diff output still shows.
fn generic(changes: &[Map<String, Value>]) -> Comparison {
    let mut groups: Vec<(String, Vec<&Map<String, Value>>)> = Vec::new();
    for c in changes {
        let group = GROUP_FIELDS
            .iter()
            .find_map(|f| c.get(*f).and_then(Value::as_str))
            .unwrap_or("")
            .to_string();
        match groups.iter_mut().find(|(g, _)| *g == group) {
            Some((_, members)) => members.push(c),
            None => groups.push((group, vec![c])),
        }
    }
    let sections = groups
        .into_iter()
        .map(|(group, members)| generic_table(&group, &members))
        .collect();
    Comparison {
        sides: Vec::new(),
        sections,
    }
}

fn generic_table(group: &str, members: &[&Map<String, Value>]) -> Section {
    let mut columns: Vec<String> = Vec::new();
    for m in members {
        for k in m.keys() {
            let skip = k == "kind" || GROUP_FIELDS.contains(&k.as_str());
            if !skip && !columns.contains(k) {
                columns.push(k.clone());
            }
        }
    }
    let rows = members
        .iter()
        .map(|m| {
            columns
                .iter()
                .map(|c| m.get(c).map(value_text).unwrap_or_default())
                .collect()
        })
        .collect();
    let title = match group {
        "" => "Changes".to_string(),
        g => format!("Changes: {g}"),
    };
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    table(&title, &columns, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn maps(lines: &[&str]) -> Vec<Map<String, Value>> {
        lines
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn unknown_shapes_group_into_tables_by_scope() {
        let c = comparison(&maps(&[
            r#"{"kind":"change","scope":"summary","metric":"failures","before":27,"after":19,"delta":"down 30%"}"#,
            r#"{"kind":"change","scope":"other","pattern_id":"p","status":"new","after_score":7.0272}"#,
            r#"{"kind":"change","scope":"summary","metric":"top","before":13.0,"after":13.0,"delta":"stable"}"#,
        ]), ROWS_SHOWN)
        .unwrap();
        assert_eq!(c.sections.len(), 2);
        assert_eq!(c.sections[0].title, "Changes: summary");
        let Block::Table { columns, rows } = &c.sections[0].block else {
            panic!("a table")
        };
        assert_eq!(columns, &["metric", "before", "after", "delta"]);
        assert_eq!(rows[1], ["top", "13", "13", "stable"]);
        assert_eq!(c.sections[1].title, "Changes: other");
        assert!(comparison(&[], ROWS_SHOWN).is_none());
    }

    #[test]
    fn long_lists_are_capped_and_counted() {
        let items: Vec<String> = (0..25).map(|i| i.to_string()).collect();
        let s = list("New", items, "None.");
        assert_eq!(s.more, 5);
        assert!(matches!(&s.block, Block::List(v) if v.len() == ROWS_SHOWN));
        assert_eq!(
            list("New", vec![], "None.").block,
            Block::Line("None.".into())
        );
    }
}
