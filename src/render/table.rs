//! The terminal table: every pattern on one row, sized to the terminal,
//! coloured only when asked (a terminal without NO_COLOR).

use std::io::{self, Write};

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Color, ContentArrangement, Table};

use super::model::{ChangeTable, Report, ReportPattern};
use super::words;
use super::{
    FINDINGS_IN_TEXT, RenderOptions, TableStyle, all_clear_text, more_findings_text, skipped_text,
    summary_text,
};

pub fn write(report: &Report, opts: &RenderOptions, out: &mut dyn Write) -> io::Result<()> {
    if !report.is_comparison() {
        writeln!(out, "{}", summary_text(report, opts.top))?;
        if let Some(text) = skipped_text(report.skipped()) {
            writeln!(out, "{text}")?;
        }
        if report.patterns.is_empty() {
            writeln!(out, "{}", all_clear_text(report))?;
        } else {
            writeln!(out, "{}", pattern_table(report, opts))?;
        }
    }
    if !report.verdicts.is_empty() {
        writeln!(out, "\nRoot causes per failed run")?;
        writeln!(out, "{}", verdict_table(report, opts.table))?;
    }
    if !report.findings.is_empty() {
        writeln!(out, "\nFindings")?;
        writeln!(out, "{}", finding_table(report, opts.table))?;
        if let Some(more) = more_findings_text(report) {
            writeln!(out, "{more}")?;
        }
    }
    for t in report.change_tables() {
        writeln!(out, "\n{}", t.title)?;
        writeln!(out, "{}", change_table(&t, opts.table))?;
    }
    Ok(())
}

fn new_table(style: TableStyle, header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .force_no_tty();
    if let Some(w) = style.width {
        t.set_width(w);
    }
    if style.color {
        t.enforce_styling();
    }
    t.set_header(header.iter().map(Cell::new));
    t
}

fn pattern_table(report: &Report, opts: &RenderOptions) -> Table {
    let mut t = new_table(
        opts.table,
        &[
            "#",
            "Pattern",
            "Category",
            "Events",
            "Runs",
            "Trend",
            "Recovered",
            "Severity",
            "Score",
            "Confidence",
        ],
    );
    for rp in &report.patterns {
        t.add_row(pattern_row(rp, opts));
    }
    for col in [0, 3, 4, 6, 7, 8] {
        if let Some(c) = t.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

fn pattern_row(rp: &ReportPattern, opts: &RenderOptions) -> Vec<Cell> {
    let p = &rp.pattern;
    let Some(s) = rp.scores() else {
        return Vec::new();
    };
    let color = opts.table.color;
    let score = Cell::new(format!("{:.2}", s.final_score));
    vec![
        Cell::new(s.rank),
        trace_cell(&p.display_name),
        paint(
            trace_cell(&words::classification_label(&p.failure_classification)),
            class_color(&p.failure_classification),
            color,
        ),
        Cell::new(p.frequency),
        Cell::new(format!("{}/{}", s.runs_seen, s.runs_total)),
        Cell::new(&s.trend),
        Cell::new(words::percent(s.recovery_rate)),
        Cell::new(format!(
            "{:.2}/{:.2}",
            s.severity_score,
            opts.scoring.max_severity()
        )),
        paint(score, score_color(s.final_score), color),
        Cell::new(&s.confidence_label),
    ]
}

/// A cell of text that came from a trace: control characters (escape
/// sequences that would drive the terminal) are shown as U+FFFD.
fn trace_cell(s: &str) -> Cell {
    if s.chars().any(char::is_control) {
        Cell::new(
            s.chars()
                .map(|c| if c.is_control() { '\u{fffd}' } else { c })
                .collect::<String>(),
        )
    } else {
        Cell::new(s)
    }
}

fn paint(cell: Cell, fg: Color, on: bool) -> Cell {
    if on { cell.fg(fg) } else { cell }
}

/// Red for what needs attention now, yellow for soon, green for later; the
/// HTML dashboard uses the same thresholds.
fn score_color(score: f64) -> Color {
    if score > 10.0 {
        Color::Red
    } else if score > 6.0 {
        Color::Yellow
    } else {
        Color::Green
    }
}

fn class_color(class: &str) -> Color {
    match class {
        "coordination_failure" => Color::Yellow,
        "agent_error" => Color::Red,
        "information_lag" => Color::Blue,
        "environment_constraint" => Color::Magenta,
        _ => Color::Grey,
    }
}

fn verdict_table(report: &Report, style: TableStyle) -> Table {
    let mut t = new_table(
        style,
        &[
            "Run",
            "Agent",
            "Step",
            "Category",
            "Blame",
            "Confidence",
            "Evidence",
        ],
    );
    for v in &report.verdicts {
        t.add_row(vec![
            trace_cell(&v.run_id),
            trace_cell(&v.agent_id),
            Cell::new(v.step),
            trace_cell(&v.category),
            trace_cell(&v.blame),
            Cell::new(format!("{:.2}", v.confidence)),
            trace_cell(&v.evidence.join(" ")),
        ]);
    }
    t
}

fn finding_table(report: &Report, style: TableStyle) -> Table {
    let mut t = new_table(
        style,
        &[
            "Run", "Step", "Agent", "Category", "Finding", "Kind", "Evidence",
        ],
    );
    for f in report.findings.iter().take(FINDINGS_IN_TEXT) {
        t.add_row(vec![
            trace_cell(&f.run_id),
            Cell::new(f.step),
            trace_cell(&f.agent_id),
            trace_cell(&f.category),
            trace_cell(&f.title),
            Cell::new(if f.symptom { "symptom" } else { "suspect" }),
            trace_cell(&f.evidence.join(" ")),
        ]);
    }
    t
}

fn change_table(ct: &ChangeTable, style: TableStyle) -> Table {
    let header: Vec<&str> = ct.columns.iter().map(String::as_str).collect();
    let mut t = new_table(style, &header);
    for row in &ct.rows {
        t.add_row(row.iter().map(|c| trace_cell(c)));
    }
    t
}
