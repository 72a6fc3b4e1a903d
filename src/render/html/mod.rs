//! The HTML dashboard: one self-contained page that works offline and
//! without JavaScript (a content security policy forbids any script), with
//! summary tiles, inline SVG charts, a card per pattern and the root causes.
//! Every text that came from a trace goes through [`escape`].

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};

use super::chart::{self, Bar, Series};
use super::comparison::{Block, Section};
use super::escape::escape;
use super::model::{Report, ReportPattern};
use super::words::{self, Markup, Urgency};
use super::{
    ROWS_IN_HTML, RenderOptions, SAMPLES_SHOWN, all_clear_text, date_text, more_rows_text,
    more_sources_text, named_sources, skipped_text, summary_text,
};
use crate::config::LinksConfig;
use crate::config::TAIL_RISK_WINDOW;
use crate::record::{Scores, Verdict};

mod cards;
mod charts;

use cards::*;
use charts::*;

/// HTML markup for the shared texts.
struct Html;

impl Markup for Html {
    fn text<'a>(&self, s: &'a str) -> Cow<'a, str> {
        escape(s)
    }
    fn strong(&self, s: &str) -> String {
        format!("<strong>{}</strong>", escape(s))
    }
    fn code(&self, s: &str) -> String {
        format!("<code>{}</code>", escape(s))
    }
}

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
    let mut page = String::with_capacity(64 * 1024);
    open_page(&mut page, opts);
    write_header(&mut page, report, opts);
    // A report of root causes alone has no pattern figures for the tiles.
    if !report.is_comparison() && !report.is_root_causes_only() {
        write_tiles(&mut page, report, opts);
        if report.patterns.is_empty() {
            if let Some(text) = all_clear_text(report) {
                let _ = write!(page, r#"<p class="panel">{}</p>"#, escape(&text));
            }
        } else {
            // The first screen (1400×900): summary, top patterns, per agent;
            // the rest opens in place.
            write_top_table(&mut page, report, opts);
            write_agents(&mut page, report);
            page.push_str("<div id=\"fold\"></div>\n");
            page.push_str(
                "<details class=\"more\"><summary>Charts: scores, recovery, failures over time</summary>",
            );
            write_charts(&mut page, report, opts);
            page.push_str("</details>\n");
            write_cards(&mut page, report, opts);
        }
    }
    write_verdicts(&mut page, report, &opts.links);
    write_changes(&mut page, report);
    let _ = write!(
        page,
        "<footer>triage-render {}</footer>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    );
    out.write_all(page.as_bytes())
}

fn open_page(page: &mut String, opts: &RenderOptions) {
    page.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    page.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    // No script may run, whatever a trace smuggles in; styles and images
    // are inline.
    page.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\n",
    );
    if let Some(secs) = opts.refresh {
        let _ = writeln!(page, "<meta http-equiv=\"refresh\" content=\"{secs}\">");
    }
    let _ = writeln!(
        page,
        "<title>Triage report {}</title>\n<style>{STYLE}</style>\n</head>\n<body>",
        date_text(opts.generated)
    );
}

fn write_header(page: &mut String, report: &Report, opts: &RenderOptions) {
    let title = if report.is_comparison() {
        "Triage comparison"
    } else {
        "Triage report"
    };
    let (named, rest) = named_sources(report);
    let sources: Vec<Cow<'_, str>> = named.into_iter().map(escape).collect();
    let _ = write!(
        page,
        "<header><h1>{title}</h1><p class=\"sub\">Generated {}",
        date_text(opts.generated)
    );
    if !sources.is_empty() {
        let _ = write!(
            page,
            " · sources: {}{}",
            sources.join(", "),
            more_sources_text(rest)
        );
    }
    page.push_str("</p>");
    if !report.is_comparison() {
        let _ = write!(
            page,
            "<p class=\"summary\">{}</p>",
            escape(&summary_text(report, opts.top))
        );
    }
    if let Some(text) = skipped_text(report.skipped()) {
        let _ = write!(page, "<p class=\"warn\">{text}</p>");
    }
    page.push_str("</header>\n");
}

fn write_tiles(page: &mut String, report: &Report, opts: &RenderOptions) {
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
            String::new(),
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
    page.push_str("<section class=\"tiles\">");
    for (n, label, sub) in tiles {
        let _ = write!(
            page,
            "<div class=\"tile\"><div class=\"n\">{n}</div><div class=\"l\">{label}</div><div class=\"s\">{sub}</div></div>"
        );
    }
    page.push_str("</section>\n");
}

/// Rows of the per-agent view on the first screen; the rest open in place.
const AGENT_ROWS_FIRST: usize = 6;

/// The top patterns, one row each, linking to their details below.
fn write_top_table(page: &mut String, report: &Report, opts: &RenderOptions) {
    page.push_str(
        "<section class=\"panel\" id=\"top\"><h2>Top patterns</h2><table><tr><th>#</th><th>Pattern</th>\
         <th>Category</th><th>Events</th><th>Runs</th><th>Trend</th><th>Recovered</th><th>Score</th></tr>",
    );
    for rp in report.patterns.iter().take(opts.top.clamp(1, MAX_CARDS)) {
        let Some(s) = rp.scores() else { continue };
        let p = &rp.pattern;
        let _ = write!(
            page,
            "<tr><td>{rank}</td><td><a href=\"#pattern-{rank}\">{}</a></td><td style=\"color:{}\">{}</td>\
             <td>{}</td><td>{}/{}</td><td>{}</td><td>{}</td><td style=\"color:{}\"><b>{:.2}</b></td></tr>",
            escape(&p.display_name),
            class_color(&p.failure_classification),
            escape(&words::classification_label(&p.failure_classification)),
            p.frequency,
            s.runs_seen,
            s.runs_total,
            escape(&s.trend),
            words::percent(s.recovery_rate),
            score_color(s.final_score),
            s.final_score,
            rank = s.rank,
        );
    }
    page.push_str("</table></section>\n");
}

/// The per-agent view: agent × classification, failures, unrecovered and
/// runs affected; the first rows on the first screen.
fn write_agents(page: &mut String, report: &Report) {
    let rows = report.agent_view();
    let head = "<table><tr><th>Agent</th><th>Classification</th><th>Failures</th>\
                <th>Unrecovered</th><th>Runs affected</th></tr>";
    let row = |page: &mut String, r: &super::model::AgentRow| {
        let _ = write!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}/{}</td></tr>",
            escape(&r.agent_id),
            escape(&words::classification_label(&r.classification)),
            r.failures,
            r.unrecovered,
            r.runs_affected,
            report.runs_total()
        );
    };
    let _ = write!(
        page,
        "<section class=\"panel\" id=\"agents\"><h2>Per agent</h2>{head}"
    );
    let first = &rows[..rows.len().min(AGENT_ROWS_FIRST)];
    for r in first {
        row(page, r);
    }
    page.push_str("</table>");
    let rest = &rows[first.len()..rows.len().min(ROWS_IN_HTML)];
    if !rest.is_empty() {
        let _ = write!(
            page,
            "<details><summary>{} more agent rows</summary>{head}",
            rest.len()
        );
        for r in rest {
            row(page, r);
        }
        page.push_str("</table></details>");
    }
    write_more_rows(page, rows.len().saturating_sub(ROWS_IN_HTML));
    page.push_str("</section>\n");
}

fn write_changes(page: &mut String, report: &Report) {
    let Some(c) = report.comparison() else {
        return;
    };
    if !c.sides.is_empty() {
        page.push_str("<section class=\"panel\"><dl class=\"metrics\">");
        for (name, side) in &c.sides {
            let _ = write!(page, "<div><dt>{name}</dt><dd>{}</dd></div>", escape(side));
        }
        page.push_str("</dl></section>\n");
    }
    for section in &c.sections {
        write_section(page, section);
    }
}

/// "and 7 more (all of them in --format json)" under a list that was cut.
fn write_more_rows(page: &mut String, more: usize) {
    if let Some(more) = more_rows_text(more) {
        let _ = write!(page, "<p class=\"empty\">{}</p>", escape(&more));
    }
}

fn write_section(page: &mut String, section: &Section) {
    let _ = write!(
        page,
        "<section class=\"panel\"><h2>{}</h2>",
        escape(&section.title)
    );
    match &section.block {
        Block::Table { columns, rows } => {
            page.push_str("<table><tr>");
            for c in columns {
                let _ = write!(page, "<th>{}</th>", escape(c));
            }
            page.push_str("</tr>");
            for row in rows {
                page.push_str("<tr>");
                for c in row {
                    let _ = write!(page, "<td>{}</td>", escape(c));
                }
                page.push_str("</tr>");
            }
            page.push_str("</table>");
        }
        Block::List(items) => {
            page.push_str("<ul>");
            for item in items {
                let _ = write!(page, "<li>{}</li>", escape(item));
            }
            page.push_str("</ul>");
        }
        Block::Line(line) => {
            let _ = write!(page, "<p class=\"empty\">{}</p>", escape(line));
        }
    }
    write_more_rows(page, section.more);
    page.push_str("</section>\n");
}

#[cfg(test)]
mod tests;
