//! CSV: one row per pattern with every field, for spreadsheets. Lists of
//! names are joined with ";", maps and samples are compact JSON. With no
//! patterns, the verdicts (else the findings, else the changes, their
//! nested fields as "frequency.before" columns) are the rows instead. A text
//! that a spreadsheet would run as a formula (=, +, -, @ first) gets a
//! leading apostrophe, as OWASP advises.

use std::io::{self, Write};

use serde_json::{Map, Value};

use super::model::{Report, value_text};

pub fn write(report: &Report, out: &mut dyn Write) -> io::Result<()> {
    let rows: Vec<Map<String, Value>> = if !report.patterns.is_empty() {
        report.patterns.iter().map(|p| p.to_json()).collect()
    } else if !report.verdicts.is_empty() {
        report.verdicts.iter().map(to_map).collect()
    } else if !report.findings.is_empty() {
        report.findings.iter().map(to_map).collect()
    } else {
        report.changes.iter().map(flatten).collect()
    };
    write_rows(&rows, out)
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
/// `kind`), then the rows.
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
    write_line(out, columns.iter().map(|c| c.to_string()))?;
    for row in rows {
        write_line(
            out,
            columns
                .iter()
                .map(|c| row.get(*c).map(field_text).unwrap_or_default()),
        )?;
    }
    Ok(())
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
        other => value_text(other),
    }
}

/// A text a spreadsheet will not run as a formula (a signed number such as
/// "+1.30" is left as it is: it is no formula).
fn inert(s: String) -> String {
    if s.starts_with(['=', '+', '-', '@', '\t', '\r']) && s.parse::<f64>().is_err() {
        format!("'{s}")
    } else {
        s
    }
}

fn write_line(out: &mut dyn Write, fields: impl Iterator<Item = String>) -> io::Result<()> {
    let mut line = String::new();
    for (i, f) in fields.enumerate() {
        if i > 0 {
            line.push(',');
        }
        line.push_str(&quote(&f));
    }
    line.push('\n');
    out.write_all(line.as_bytes())
}

/// RFC 4180 quoting: fields with a comma, quote or line break go in quotes,
/// their quotes doubled.
fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
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
        assert_eq!(quote("plain"), "plain");
        assert_eq!(quote("a,b"), "\"a,b\"");
        assert_eq!(quote("say \"hi\""), "\"say \"\"hi\"\"\"");
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
