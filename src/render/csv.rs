//! CSV: one table, one row per pattern with every field (and one per
//! reason failed runs without a failing step failed for), for
//! spreadsheets. Lists of names are joined with ";", maps and samples are
//! compact JSON. With no patterns, the verdicts (else the findings, else the
//! pattern changes of a comparison, their nested fields as
//! "frequency.before" columns) are the rows instead; [`left_out`] names the
//! records of other kinds, which a table of these columns cannot hold. A
//! text that a spreadsheet would run as a formula (=, +, -, @ first) gets a
//! leading apostrophe, as OWASP advises.

use std::io::{self, Write};

use serde_json::{Map, Value};

use super::model::Report;
use super::words;
use super::words::value_text;

/// The kinds of record a CSV can be a table of, in the order one is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowKind {
    Pattern,
    Verdict,
    Finding,
    Change,
}

impl RowKind {
    const ALL: [RowKind; 4] = [Self::Pattern, Self::Verdict, Self::Finding, Self::Change];

    fn count(self, report: &Report) -> usize {
        match self {
            Self::Pattern => report.patterns.len(),
            Self::Verdict => report.verdicts.len(),
            Self::Finding => report.findings.len(),
            Self::Change => report.changes.len(),
        }
    }

    /// The kind's name, singular and plural.
    fn nouns(self) -> (&'static str, &'static str) {
        match self {
            Self::Pattern => ("pattern", "patterns"),
            Self::Verdict => ("verdict", "verdicts"),
            Self::Finding => ("finding", "findings"),
            Self::Change => ("change", "changes"),
        }
    }
}

/// The first kind the report has records of.
fn row_kind(report: &Report) -> Option<RowKind> {
    RowKind::ALL.into_iter().find(|k| k.count(report) > 0)
}

/// What the CSV leaves out ("3 verdicts and 12 findings"), or None when it
/// holds every record: the kinds other than the one its rows are.
pub(crate) fn left_out(report: &Report) -> Option<String> {
    let rows = row_kind(report)?;
    let others: Vec<String> = RowKind::ALL
        .into_iter()
        .filter(|k| *k != rows && k.count(report) > 0)
        .map(|k| {
            let (one, many) = k.nouns();
            words::count(k.count(report) as u64, one, many)
        })
        .collect();
    (!others.is_empty()).then(|| {
        format!(
            "the CSV has one row per {} and leaves out {} (--format json or md shows every record)",
            rows.nouns().0,
            others.join(" and ")
        )
    })
}

pub(crate) fn write(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let mut rows: Vec<Map<String, Value>> = match row_kind(report) {
        None => silent_rows(report),
        Some(RowKind::Pattern) => report
            .patterns
            .iter()
            .map(|p| p.to_json())
            .chain(silent_rows(report))
            .collect(),
        Some(RowKind::Verdict) => report.verdicts.iter().map(to_map).collect(),
        Some(RowKind::Finding) => report.findings.iter().map(to_map).collect(),
        Some(RowKind::Change) => change_rows(&report.changes),
    };
    // The batch's run outcomes on every row of a report: a spreadsheet of
    // patterns still says how many runs failed.
    if !report.is_comparison() && report.batch.is_some() {
        let c = report.outcomes();
        for row in &mut rows {
            row.insert("batch_runs".into(), c.total.into());
            row.insert("batch_runs_failed".into(), c.failed.into());
            row.insert("batch_runs_unknown".into(), c.unknown().into());
        }
    }
    write_rows(&rows, out)
}

/// Failed runs with no failing step, one row per reason after the
/// patterns, in the patterns' columns: `pattern_id` `runs/<reason>`,
/// `frequency` and `runs_seen` the runs, `run_ids` them all.
fn silent_rows(report: &Report) -> Vec<Map<String, Value>> {
    let total = report.runs_total();
    report
        .silent_failures()
        .into_iter()
        .map(|g| {
            let reason = g.reason.map_or("failed", |r| r.as_str());
            let mut row = Map::new();
            row.insert("pattern_id".into(), format!("runs/{reason}").into());
            row.insert(
                "display_name".into(),
                format!(
                    "failed runs with no failing step: {}",
                    super::silent_heading(&g)
                )
                .into(),
            );
            row.insert("failure_classification".into(), reason.into());
            row.insert("frequency".into(), (g.runs.len() as u64).into());
            row.insert("runs_seen".into(), (g.runs.len() as u64).into());
            row.insert("runs_total".into(), total.into());
            row.insert("run_ids".into(), g.runs.into());
            row
        })
        .collect()
}

/// A comparison's pattern changes: the summary and classification changes
/// are their totals, and a table of all three would have columns for each.
/// Without pattern changes (no failures on either side), the classification
/// changes.
fn change_rows(changes: &[Map<String, Value>]) -> Vec<Map<String, Value>> {
    let of_scope = |scope: &str| -> Vec<Map<String, Value>> {
        changes
            .iter()
            .filter(|c| c.get("scope").and_then(Value::as_str) == Some(scope))
            .map(flatten)
            .collect()
    };
    let patterns = of_scope("pattern");
    if patterns.is_empty() {
        of_scope("classification")
    } else {
        patterns
    }
}

fn to_map<T: serde::Serialize>(rec: &T) -> Map<String, Value> {
    match serde_json::to_value(rec) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// Nested objects as dotted columns: {"frequency":{"before":1}} gives
/// "frequency.before".
fn flatten(rec: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (k, v) in rec {
        match v {
            Value::Object(inner) => {
                for (ik, iv) in flatten(inner) {
                    out.insert(format!("{k}.{ik}"), iv);
                }
            }
            other => {
                out.insert(k.clone(), other.clone());
            }
        }
    }
    out
}

/// Writes a header of every field any row has (in first-seen order, without
/// `kind`), then the rows; fields are quoted as RFC 4180 asks, only when
/// they need it.
fn write_rows(rows: &[Map<String, Value>], out: &mut dyn Write) -> io::Result<()> {
    let mut columns: Vec<&str> = Vec::new();
    for row in rows {
        for k in row.keys() {
            if k != "kind" && !columns.contains(&k.as_str()) {
                columns.push(k);
            }
        }
    }
    if columns.is_empty() {
        return Ok(());
    }
    let mut csv = csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Necessary)
        .from_writer(out);
    csv.write_record(&columns).map_err(io_error)?;
    for row in rows {
        csv.write_record(
            columns
                .iter()
                .map(|c| row.get(*c).map(field_text).unwrap_or_default()),
        )
        .map_err(io_error)?;
    }
    csv.flush()
}

/// The io error under a csv one, so a reader that left (a broken pipe) is
/// still told from a failure.
fn io_error(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    }
}

fn field_text(v: &Value) -> String {
    match v {
        Value::Array(items) if items.iter().all(Value::is_string) => inert(
            items
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(";"),
        ),
        Value::String(s) => inert(s.clone()),
        Value::Number(n) => n.to_string(),
        // JSON text: serde escapes control characters, not bidi ones.
        other => super::escape_for_terminal(value_text(other)),
    }
}

/// A text a spreadsheet will not run as a formula (a signed number such as
/// "+1.30" is left as it is: it is no formula), and a terminal will not run
/// as escape sequences or reorder (see [`inert_lines`](super::inert_lines)).
fn inert(s: String) -> String {
    let s = match super::inert_lines(&s) {
        std::borrow::Cow::Borrowed(_) => s,
        std::borrow::Cow::Owned(clean) => clean,
    };
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) && s.parse::<f64>().is_err() {
        format!("'{s}")
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_fields_become_dotted_columns() {
        let rec = serde_json::json!({"scope":"summary","frequency":{"before":1,"after":{"x":2}}});
        let flat = flatten(rec.as_object().unwrap());
        let keys: Vec<&str> = flat.keys().map(String::as_str).collect();
        assert_eq!(keys, ["scope", "frequency.before", "frequency.after.x"]);
    }

    #[test]
    fn quotes_only_what_needs_it() {
        let row = |v: Value| v.as_object().unwrap().clone();
        let rows = [row(
            serde_json::json!({"a": "plain", "b": "a,b", "c": "say \"hi\"", "d": "two\nlines"}),
        )];
        let mut out = Vec::new();
        write_rows(&rows, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "a,b,c,d\nplain,\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\"\n"
        );
    }

    #[test]
    fn lists_join_and_maps_stay_json() {
        assert_eq!(field_text(&serde_json::json!(["a", "b"])), "a;b");
        assert_eq!(
            field_text(&serde_json::json!("=HYPERLINK(\"x\")")),
            "'=HYPERLINK(\"x\")"
        );
        assert_eq!(field_text(&serde_json::json!(-1.5)), "-1.5");
        assert_eq!(field_text(&serde_json::json!("+1.30")), "+1.30");
        assert_eq!(field_text(&serde_json::json!({"r1": 2})), "{\"r1\":2}");
        assert_eq!(
            field_text(&serde_json::json!(7.027272727272727)),
            "7.027272727272727"
        );
    }
}
