//! The HTML dashboard: one self-contained page that works offline and
//! without JavaScript (a content security policy forbids any script), with
//! summary tiles, inline SVG charts, a card per pattern and the root causes.
//! The page is written through [`super::markup::Page`], which escapes every text
//! unless the code says it is markup.

use std::io::{self, Write};

use super::comparison::{Block, Section};
use super::model::Report;
use super::words::{self, Urgency};
use super::{
    ROWS_IN_HTML, RenderOptions, all_clear_text, date_text, more_rows_text, more_sources_text,
    named_sources, skipped_text, summary_text,
};
use crate::config::TAIL_RISK_WINDOW;

mod cards;
mod charts;

use super::markup::{Page, html};
use cards::*;
use charts::*;

/// The colour of a classification (the same hues as the terminal table);
/// other labels get one of a few more, the same one for the same label.
fn class_color(class: &str) -> &'static str {
    const OTHERS: &[&str] = &["#94a3b8", "#2dd4bf", "#e879f9", "#a3e635", "#fb923c"];
    match class {
        "coordination_failure" => "#f59e0b",
        "agent_error" => "#ef4444",
        "information_lag" => "#3b82f6",
        "environment_constraint" => "#8b5cf6",
        "unclassified" => OTHERS[0],
        other => {
            let h = other
                .bytes()
                .fold(0usize, |h, b| h.wrapping_mul(31).wrapping_add(b as usize));
            OTHERS[1 + h % (OTHERS.len() - 1)]
        }
    }
}

/// Colours for the lines of the top patterns, in rank order.
const SERIES_COLORS: &[&str] = &[
    "#f97316", "#22d3ee", "#a3e635", "#f472b6", "#facc15", "#818cf8", "#34d399", "#fb7185",
];

/// Red for what needs attention now, amber for soon, green for later.
fn score_color(score: f64) -> &'static str {
    match words::urgency(score) {
        Urgency::Now => "#ef4444",
        Urgency::Soon => "#f59e0b",
        Urgency::Later => "#22c55e",
    }
}

/// Patterns the severity chart shows at most.
const MAX_BARS: usize = 20;

const STYLE: &str = r#"
:root{color-scheme:dark}
*{box-sizing:border-box}
body{margin:0;padding:20px 32px;background:#0f172a;color:#e2e8f0;font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
h1{font-size:24px;margin:0}
h2{font-size:13px;text-transform:uppercase;letter-spacing:.06em;color:#94a3b8;margin:0 0 12px}
h3{font-size:15px;margin:6px 0 10px;overflow-wrap:break-word}
.sub{color:#94a3b8;margin:4px 0 0}
.summary{font-weight:600;margin:12px 0 0}
.warn{color:#fbbf24;margin:8px 0 0}
.tiles{display:grid;grid-template-columns:repeat(auto-fit,minmax(160px,1fr));gap:12px;margin:14px 0}
.tile,.panel,.card{background:#1e293b;border:1px solid #334155;border-radius:12px;padding:12px 18px}
details>summary{cursor:pointer;color:#93c5fd}
details.more{margin-bottom:16px}
details.more>summary{font-size:13px;text-transform:uppercase;letter-spacing:.06em;margin-bottom:12px}
details.card>summary{list-style:none}
details.card[open]>summary{margin-bottom:8px}
a{color:#93c5fd}
.panel,.card{overflow-x:auto}
.tile .n{font-size:24px;font-weight:700;color:#fff}
.tile .l{color:#94a3b8}
.tile .s{color:#64748b;font-size:12px}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:16px;margin-bottom:24px}
.chart{display:block;font-size:13px}
.chart .tick{font-size:11px}
.chart .lbl,.chart .val,.chart .tick{fill:#94a3b8}
.chart .val{fill:#e2e8f0}
.chart .track{fill:#0f172a}
.chart .grid{stroke:#334155;stroke-width:1}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin-top:8px;color:#cbd5e1;font-size:12px}
.legend i{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:5px}
.empty{color:#64748b}
.cards{display:grid;gap:16px;margin-bottom:24px}
.head{display:flex;align-items:center;gap:10px;flex-wrap:wrap}
.rank{font-family:ui-monospace,monospace;color:#64748b}
.badge{padding:2px 10px;border-radius:999px;font-size:12px;font-weight:600;border:1px solid currentColor}
.who{color:#94a3b8;font-size:12px}
.score{margin-left:auto;font-size:24px;font-weight:700}
dl.metrics{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:8px 20px;margin:0 0 12px}
dl.metrics dt{color:#94a3b8;font-size:12px}
dl.metrics dd{margin:0;color:#fff;font-weight:500}
.rec{margin:4px 0 12px}
.track{height:8px;border-radius:4px;background:#334155;overflow:hidden}
.fill{height:8px;background:#3b82f6}
.rec span{color:#94a3b8;font-size:12px}
.why{color:#cbd5e1}
.why code,td code{color:#fde68a}
.ai{background:#0f172a;border:1px solid #334155;border-radius:8px;padding:10px 12px;margin:12px 0}
.ai b{display:block;color:#60a5fa;font-size:12px;text-transform:uppercase}
.action{border-top:1px solid #334155;padding-top:10px;color:#94a3b8;font-size:13px;margin-bottom:0}
.action strong{color:#cbd5e1}
table{width:100%;border-collapse:collapse;font-size:12px;margin:6px 0 10px}
th{text-align:left;color:#94a3b8;font-weight:600;border-bottom:1px solid #334155;padding:4px 8px 4px 0}
td{border-bottom:1px solid #1e293b;padding:4px 8px 4px 0;vertical-align:top;overflow-wrap:break-word}
.panel table td{border-bottom-color:#334155}
body>section.panel{margin-bottom:16px}
header+section.panel{margin-top:20px}
footer{color:#64748b;font-size:12px;margin-top:24px}
"#;

pub(crate) fn write(report: &Report, opts: &RenderOptions, out: &mut dyn Write) -> io::Result<()> {
    let mut page = Page::with_capacity(64 * 1024);
    open_page(&mut page, opts);
    write_header(&mut page, report, opts);
    // A report of root causes alone has no pattern figures for the tiles.
    if !report.is_comparison() && !report.is_root_causes_only() {
        write_tiles(&mut page, report, opts);
        if report.patterns.is_empty() {
            if let Some(text) = all_clear_text(report) {
                html!(page, r#"<p class="panel">{}</p>"#, text);
            }
            write_runs(&mut page, report, &opts.links);
        } else {
            // The first screen (1400×900): summary, top patterns, per agent;
            // the rest opens in place.
            write_top_table(&mut page, report, opts);
            write_agents(&mut page, report);
            page.lit("<div id=\"fold\"></div>\n");
            page.lit(
                "<details class=\"more\"><summary>Charts: scores, recovery, failures over time</summary>",
            );
            write_charts(&mut page, report, opts);
            page.lit("</details>\n");
            write_cards(&mut page, report, opts);
            write_runs(&mut page, report, &opts.links);
        }
    }
    write_verdicts(&mut page, report, &opts.links);
    write_changes(&mut page, report);
    html!(
        page,
        "<footer>triage-render {}</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    );
    out.write_all(page.as_str().as_bytes())
}

fn open_page(page: &mut Page, opts: &RenderOptions) {
    page.lit("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    page.lit("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    // No script may run, whatever a trace smuggles in; styles and images
    // are inline.
    page.lit(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n",
    );
    if let Some(secs) = opts.refresh {
        html!(page, "<meta http-equiv=\"refresh\" content=\"{}\">\n", secs);
    }
    html!(
        page,
        "<title>Triage report {}</title>\n<style>",
        date_text(opts.generated)
    );
    page.lit(STYLE);
    page.lit("</style>\n</head>\n<body>\n");
}

fn write_header(page: &mut Page, report: &Report, opts: &RenderOptions) {
    let title = if report.is_comparison() {
        "Triage comparison"
    } else {
        "Triage report"
    };
    let (named, rest) = named_sources(report);
    html!(
        page,
        "<header><h1>{}</h1><p class=\"sub\">Generated {}",
        title,
        date_text(opts.generated)
    );
    if !named.is_empty() {
        page.lit(" · sources: ");
        for (i, source) in named.iter().enumerate() {
            if i > 0 {
                page.lit(", ");
            }
            page.text(source);
        }
        page.text(&more_sources_text(rest));
    }
    page.lit("</p>");
    if !report.is_comparison() {
        html!(
            page,
            "<p class=\"summary\">{}</p>",
            summary_text(report, opts.top)
        );
    }
    if let Some(text) = skipped_text(report.skipped()) {
        html!(page, "<p class=\"warn\">{}</p>", text);
    }
    page.lit("</header>\n");
}

fn write_tiles(page: &mut Page, report: &Report, opts: &RenderOptions) {
    let top = report
        .patterns
        .first()
        .and_then(|p| p.scores())
        .map_or(0.0, |s| s.final_score);
    let max_final = words::max_final_score(&opts.scoring);
    let stuck: u64 = report
        .patterns
        .iter()
        .map(|p| p.pattern.tail_unrecovered)
        .sum();
    let tiles = [
        (
            report.runs_total().to_string(),
            "runs analyzed",
            runs_failed_text(report),
        ),
        (
            report.patterns.len().to_string(),
            "incident patterns",
            String::new(),
        ),
        (
            report.failures_total().to_string(),
            "failure events",
            format!("{stuck} unrecovered after {TAIL_RISK_WINDOW} turns"),
        ),
        (
            format!("{top:.2}"),
            "top final score",
            format!("out of {max_final:.2}"),
        ),
    ];
    page.lit("<section class=\"tiles\">");
    for (n, label, sub) in tiles {
        html!(
            page,
            "<div class=\"tile\"><div class=\"n\">{}</div><div class=\"l\">{}</div><div class=\"s\">{}</div></div>",
            n,
            label,
            sub
        );
    }
    page.lit("</section>\n");
}

/// "116 failed (58%)" under the runs tile; "no outcome known" when none
/// states one.
fn runs_failed_text(report: &Report) -> String {
    let c = report.outcomes();
    if c.known() == 0 {
        return "no outcome known".to_string();
    }
    let mut text = format!(
        "{} failed ({})",
        c.failed,
        words::percent(c.failed as f64 / c.total.max(1) as f64)
    );
    if c.unknown() > 0 {
        text.push_str(&format!(", {} unknown", c.unknown()));
    }
    text
}

/// Rows of the per-agent view on the first screen; the rest open in place.
const AGENT_ROWS_FIRST: usize = 6;

/// The top patterns, one row each, linking to their details below.
fn write_top_table(page: &mut Page, report: &Report, opts: &RenderOptions) {
    page.lit(
        "<section class=\"panel\" id=\"top\"><h2>Top patterns</h2><table><tr><th>#</th><th>Pattern</th>\
         <th>Category</th><th>Events</th><th>Runs</th><th>Trend</th><th>Recovered</th><th>Score</th></tr>",
    );
    for rp in report.patterns.iter().take(opts.top.clamp(1, MAX_CARDS)) {
        let Some(s) = rp.scores() else { continue };
        let p = &rp.pattern;
        html!(
            page,
            "<tr><td>{rank}</td><td><a href=\"#pattern-{rank}\">{name}</a></td><td style=\"color:{color}\">{label}</td>\
             <td>{events}</td><td>{seen}/{total}</td><td>{trend}</td><td>{recovered}</td><td style=\"color:{sc}\"><b>{score:.2}</b></td></tr>",
            rank = s.rank,
            name = p.display_name,
            color = class_color(&p.failure_classification),
            label = words::classification_label(&p.failure_classification),
            events = p.frequency,
            seen = s.runs_seen,
            total = s.runs_total,
            trend = s.trend,
            recovered = words::percent(s.recovery_rate),
            sc = score_color(s.final_score),
            score = s.final_score,
        );
    }
    page.lit("</table></section>\n");
}

/// The per-agent view: agent × classification, failures, unrecovered and
/// runs affected; the first rows on the first screen.
fn write_agents(page: &mut Page, report: &Report) {
    let rows = report.agent_view();
    let head = "<table><tr><th>Agent</th><th>Classification</th><th>Failures</th>\
                <th>Unrecovered</th><th>Runs affected</th></tr>";
    let row = |page: &mut Page, r: &super::model::AgentRow| {
        html!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}/{}</td></tr>",
            r.agent_id,
            words::classification_label(&r.classification),
            r.failures,
            r.unrecovered,
            r.runs_affected,
            report.runs_total()
        );
    };
    page.lit("<section class=\"panel\" id=\"agents\"><h2>Per agent</h2>");
    page.lit(head);
    let first = &rows[..rows.len().min(AGENT_ROWS_FIRST)];
    for r in first {
        row(page, r);
    }
    page.lit("</table>");
    let rest = &rows[first.len()..rows.len().min(ROWS_IN_HTML)];
    if !rest.is_empty() {
        html!(
            page,
            "<details><summary>{} more agent rows</summary>",
            rest.len()
        );
        page.lit(head);
        for r in rest {
            row(page, r);
        }
        page.lit("</table></details>");
    }
    write_more_rows(page, rows.len().saturating_sub(ROWS_IN_HTML));
    page.lit("</section>\n");
}

fn write_changes(page: &mut Page, report: &Report) {
    let Some(c) = report.comparison() else {
        return;
    };
    if !c.sides.is_empty() {
        page.lit("<section class=\"panel\"><dl class=\"metrics\">");
        for (name, side) in &c.sides {
            html!(page, "<div><dt>{}</dt><dd>{}</dd></div>", name, side);
        }
        page.lit("</dl></section>\n");
    }
    for section in &c.sections {
        write_section(page, section);
    }
}

/// "and 7 more (all of them in --format json)" under a list that was cut.
fn write_more_rows(page: &mut Page, more: usize) {
    if let Some(more) = more_rows_text(more) {
        html!(page, "<p class=\"empty\">{}</p>", more);
    }
}

fn write_section(page: &mut Page, section: &Section) {
    html!(page, "<section class=\"panel\"><h2>{}</h2>", section.title);
    match &section.block {
        Block::Table { columns, rows } => {
            page.lit("<table><tr>");
            for c in columns {
                html!(page, "<th>{}</th>", c);
            }
            page.lit("</tr>");
            for row in rows {
                page.lit("<tr>");
                for c in row {
                    html!(page, "<td>{}</td>", c);
                }
                page.lit("</tr>");
            }
            page.lit("</table>");
        }
        Block::List(items) => {
            page.lit("<ul>");
            for item in items {
                html!(page, "<li>{}</li>", item);
            }
            page.lit("</ul>");
        }
        Block::Line(line) => {
            html!(page, "<p class=\"empty\">{}</p>", line);
        }
    }
    write_more_rows(page, section.more);
    page.lit("</section>\n");
}
