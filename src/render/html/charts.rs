//! The dashboard's charts: patterns by severity, the class legend,
//! recovery, and the trends over time.

use super::{MAX_BARS, SERIES_COLORS, class_color};
use crate::record::Scores;
use crate::render::RenderOptions;
use crate::render::chart::{self, Bar, Series};
use crate::render::markup::{Markup, Page, html};
use crate::render::model::{Report, ReportPattern};
use crate::render::words;

pub(super) fn write_charts(page: &mut Page, report: &Report, opts: &RenderOptions) {
    page.lit("<div class=\"grid\">");
    write_severity_chart(page, report, opts);
    write_recovery_panel(page, report, opts);
    write_trend_charts(page, report, opts);
    page.lit("</div>\n");
}

/// A pattern's bar: "#1 planner · dispatch_subtask", its full name as the
/// tooltip, coloured by classification.
pub(super) fn pattern_bar<'a>(
    rp: &'a ReportPattern,
    s: &Scores,
    value: f64,
    value_text: String,
) -> Bar<'a> {
    let p = &rp.pattern;
    Bar {
        label: format!("#{} {} · {}", s.rank, p.agent_id, p.tool_name),
        title: &p.display_name,
        value,
        value_text,
        color: class_color(&p.failure_classification),
    }
}

pub(super) fn write_severity_chart(page: &mut Page, report: &Report, opts: &RenderOptions) {
    let bars: Vec<Bar<'_>> = report
        .patterns
        .iter()
        .take(MAX_BARS)
        .filter_map(|rp| {
            let s = rp.scores()?;
            Some(pattern_bar(
                rp,
                s,
                s.final_score,
                format!("{:.2}", s.final_score),
            ))
        })
        .collect();
    let max = words::max_final_score(&opts.scoring);
    page.lit("<section class=\"panel\"><h2>Patterns by final score</h2>");
    page.markup(&chart::bar_chart(
        &bars,
        max,
        "Final score of each pattern, highest first",
    ));
    write_more_patterns(page, report);
    write_class_legend(page, report);
    page.lit("</section>");
}

pub(super) fn write_more_patterns(page: &mut Page, report: &Report) {
    if report.patterns.len() > MAX_BARS {
        html!(
            page,
            "<p class=\"empty\">and {} more patterns below</p>",
            report.patterns.len() - MAX_BARS
        );
    }
}

pub(super) fn write_class_legend(page: &mut Page, report: &Report) {
    let mut classes: Vec<&str> = Vec::new();
    for p in &report.patterns {
        let c = p.pattern.failure_classification.as_str();
        if !classes.contains(&c) {
            classes.push(c);
        }
    }
    page.lit("<div class=\"legend\">");
    for c in classes {
        html!(
            page,
            "<span><i style=\"background:{}\"></i>{}</span>",
            class_color(c),
            words::classification_label(c)
        );
    }
    page.lit("</div>");
}

pub(super) fn write_recovery_panel(page: &mut Page, report: &Report, opts: &RenderOptions) {
    let window = words::count(opts.scoring.recovery_window, "turn", "turns");
    let bars: Vec<Bar<'_>> = report
        .patterns
        .iter()
        .take(MAX_BARS)
        .filter_map(|rp| {
            let s = rp.scores()?;
            let pct = s.recovery_rate.clamp(0.0, 1.0) * 100.0;
            Some(pattern_bar(rp, s, pct, words::percent(s.recovery_rate)))
        })
        .collect();
    let title = format!("Recovered within {window}");
    html!(
        page,
        "<section class=\"panel\"><h2>{}</h2>{}",
        title,
        chart::bar_chart(
            &bars,
            100.0,
            &format!("Share of failures {}", title.to_lowercase())
        )
    );
    write_more_patterns(page, report);
    page.lit("</section>");
}

/// A recovery bar: as wide as the share of failures that recovered.
pub(super) fn recovery_bar(s: &Scores, window: &str) -> Markup {
    let mut bar = Page::default();
    html!(
        bar,
        "<div class=\"track\"><div class=\"fill\" style=\"width:{pct}\"></div></div><span>{pct} recovered within {window}</span>",
        pct = words::percent(s.recovery_rate),
        window = window,
    );
    bar.into_markup()
}

pub(super) fn write_trend_charts(page: &mut Page, report: &Report, opts: &RenderOptions) {
    let axis = report.trend_axis_by(opts.bucket);
    let unit = if axis.by_hour {
        "hour"
    } else if axis.by_day {
        "day"
    } else {
        "run"
    };
    let top: Vec<Series<'_>> = report
        .patterns
        .iter()
        .take(opts.top.clamp(1, SERIES_COLORS.len()))
        .zip(SERIES_COLORS)
        .map(|(rp, color)| Series {
            name: &rp.pattern.display_name,
            color,
            values: axis.counts(&rp.pattern),
        })
        .collect();
    let mut classes: Vec<Series<'_>> = Vec::new();
    for rp in &report.patterns {
        let class = rp.pattern.failure_classification.as_str();
        let counts = axis.counts(&rp.pattern);
        match classes.iter_mut().find(|s| s.name == class) {
            Some(s) => s.values.iter_mut().zip(counts).for_each(|(a, b)| *a += b),
            None => classes.push(Series {
                name: class,
                color: class_color(class),
                values: counts,
            }),
        }
    }
    for (title, series, legend) in [
        (format!("Failures per {unit}: top patterns"), &top, false),
        (
            format!("Failures per {unit}: by classification"),
            &classes,
            true,
        ),
    ] {
        html!(
            page,
            "<section class=\"panel\"><h2>{}</h2>{}<div class=\"legend\">",
            title,
            chart::line_chart(&axis.labels, series, &title)
        );
        for s in series.iter() {
            let name = if legend {
                words::classification_label(s.name).into_owned()
            } else {
                chart::cut(s.name, 60)
            };
            html!(
                page,
                "<span><i style=\"background:{}\"></i>{}</span>",
                s.color,
                name
            );
        }
        page.lit("</div></section>");
    }
}
