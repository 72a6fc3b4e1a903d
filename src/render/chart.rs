//! Inline SVG charts for the HTML dashboard, drawn here so the page needs no
//! script and no network: a ranked horizontal bar chart and a line chart.
//! They are written through [`html!`], so every label is escaped; callers
//! pass raw text.

use super::markup::{Markup, Page, html};

/// One bar: its short label and its tooltip (raw text), its value as drawn
/// and as written, and its fill colour (a CSS colour we chose).
pub(crate) struct Bar<'a> {
    pub label: String,
    pub title: &'a str,
    pub value: f64,
    pub value_text: String,
    pub color: &'static str,
}

/// One line: its name, colour and a value per x position.
pub(crate) struct Series<'a> {
    pub name: &'a str,
    pub color: &'static str,
    pub values: Vec<f64>,
}

const WIDTH: f64 = 640.0;
const LABEL_WIDTH: f64 = 260.0;
const ROW: f64 = 26.0;
/// Characters of a label shown before it is cut (the full text is the tooltip).
const LABEL_CHARS: usize = 30;

/// Horizontal bars, one row each, scaled to `max`.
pub(crate) fn bar_chart(bars: &[Bar<'_>], max: f64, title: &str) -> Markup {
    let height = ROW * bars.len() as f64 + 8.0;
    let plot = WIDTH - LABEL_WIDTH - 56.0;
    let max = if max > 0.0 { max } else { 1.0 };
    let mut svg = open_svg(height, title);
    for (i, b) in bars.iter().enumerate() {
        let y = 4.0 + ROW * i as f64;
        let w = (b.value.max(0.0) / max * plot).clamp(0.0, plot);
        html!(
            svg,
            r##"<g><title>{full}: {value}</title><text x="{lx}" y="{ty}" class="lbl" text-anchor="end">{label}</text><rect x="{bx}" y="{by}" width="{plot}" height="16" rx="4" class="track"/><rect x="{bx}" y="{by}" width="{w:.1}" height="16" rx="4" fill="{color}"/><text x="{vx:.1}" y="{ty}" class="val">{value}</text></g>"##,
            full = b.title,
            label = cut(&b.label, LABEL_CHARS),
            lx = LABEL_WIDTH - 8.0,
            ty = y + 13.0,
            bx = LABEL_WIDTH,
            by = y + 1.0,
            plot = plot,
            w = w,
            color = b.color,
            vx = LABEL_WIDTH + w + 6.0,
            value = b.value_text,
        );
    }
    svg.lit("</svg>");
    svg.into_markup()
}

const LINE_HEIGHT: f64 = 220.0;
const LEFT: f64 = 40.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 28.0;
/// X labels shown at most; the others are skipped evenly.
const MAX_X_LABELS: usize = 8;

/// Whether the `i`th of `n` x labels is drawn: every so many from the
/// first, and the last, but not one so close before the last that the two
/// overlap.
fn x_label_shown(i: usize, n: usize) -> bool {
    let step = n.div_ceil(MAX_X_LABELS).max(1);
    i + 1 == n || (i.is_multiple_of(step) && n - 1 - i >= step)
}

/// Lines over shared x positions, with a zero-based y axis.
pub(crate) fn line_chart(x_labels: &[String], series: &[Series<'_>], title: &str) -> Markup {
    let mut svg = open_svg(LINE_HEIGHT, title);
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = LINE_HEIGHT - TOP - BOTTOM;
    let top_value = series
        .iter()
        .flat_map(|s| s.values.iter().copied())
        .fold(0.0, f64::max);
    let y_max = nice_ceiling(top_value);
    let n = x_labels.len();
    let x_at = |i: usize| {
        if n <= 1 {
            LEFT + plot_w / 2.0
        } else {
            LEFT + plot_w * i as f64 / (n - 1) as f64
        }
    };
    let y_at = |v: f64| TOP + plot_h - v / y_max * plot_h;
    for k in 0..=2 {
        let v = y_max * k as f64 / 2.0;
        let y = y_at(v);
        html!(
            svg,
            r##"<line x1="{x1}" y1="{y:.1}" x2="{x2}" y2="{y:.1}" class="grid"/><text x="{tx}" y="{ty:.1}" class="tick" text-anchor="end">{v}</text>"##,
            x1 = LEFT,
            y = y,
            x2 = WIDTH - RIGHT,
            tx = LEFT - 6.0,
            ty = y + 4.0,
            v = v,
        );
    }
    for (i, label) in x_labels.iter().enumerate() {
        if x_label_shown(i, n) {
            // The outermost labels hang inwards so the edges do not cut them.
            let anchor = match i {
                _ if n == 1 => "middle",
                0 => "start",
                _ if i + 1 == n => "end",
                _ => "middle",
            };
            html!(
                svg,
                r##"<text x="{x:.1}" y="{y}" class="tick" text-anchor="{anchor}">{label}</text>"##,
                x = x_at(i),
                y = LINE_HEIGHT - 8.0,
                anchor = anchor,
                label = cut(label, 12),
            );
        }
    }
    for s in series {
        let points: Vec<(f64, f64)> = s
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| (x_at(i), y_at(*v)))
            .collect();
        html!(svg, r##"<g><title>{}</title><polyline points=""##, s.name);
        for (k, (x, y)) in points.iter().enumerate() {
            if k > 0 {
                svg.lit(" ");
            }
            html!(svg, "{:.1},{:.1}", x, y);
        }
        html!(
            svg,
            r##"" fill="none" stroke="{}" stroke-width="2"/>"##,
            s.color
        );
        for (x, y) in &points {
            html!(
                svg,
                r##"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{}"/>"##,
                x,
                y,
                s.color
            );
        }
        svg.lit("</g>");
    }
    svg.lit("</svg>");
    svg.into_markup()
}

fn open_svg(height: f64, title: &str) -> Page {
    let mut svg = Page::default();
    html!(
        svg,
        r##"<svg class="chart" viewBox="0 0 {w} {h}" width="100%" role="img" aria-label="{t}" xmlns="http://www.w3.org/2000/svg"><title>{t}</title>"##,
        w = WIDTH,
        h = height,
        t = title,
    );
    svg
}

/// The smallest of 2, 4, 10 × 10^k at or above `v` (at least 2), so the
/// three axis ticks (0, half, top) are whole numbers.
fn nice_ceiling(v: f64) -> f64 {
    if v <= 2.0 {
        return 2.0;
    }
    let mag = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 4.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|c| *c >= v)
        .unwrap_or(10.0 * mag)
}

/// The first `n` characters of `s`, with "…" when cut.
pub(crate) fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut out: String = s.chars().take(n.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_tops_are_round() {
        assert_eq!(nice_ceiling(0.0), 2.0);
        assert_eq!(nice_ceiling(3.0), 4.0);
        assert_eq!(nice_ceiling(5.0), 10.0);
        assert_eq!(nice_ceiling(11.0), 20.0);
        assert_eq!(nice_ceiling(40.0), 40.0);
    }

    #[test]
    fn x_labels_are_spread_and_never_crowd_the_last() {
        for n in 1..300 {
            let shown: Vec<usize> = (0..n).filter(|&i| x_label_shown(i, n)).collect();
            assert_eq!(shown.first(), Some(&0), "n {n}");
            assert_eq!(shown.last(), Some(&(n - 1)), "n {n}");
            assert!(shown.len() <= MAX_X_LABELS, "n {n}: {shown:?}");
            let step = n.div_ceil(MAX_X_LABELS).max(1);
            assert!(
                shown.windows(2).all(|w| w[1] - w[0] >= step),
                "n {n}: {shown:?}"
            );
        }
    }

    #[test]
    fn labels_are_escaped_and_cut() {
        let name = "<script>alert(1)</script>";
        let bars = [Bar {
            label: name.to_string(),
            title: name,
            value: 3.0,
            value_text: "3".to_string(),
            color: "#fff",
        }];
        let svg = bar_chart(&bars, 10.0, "t");
        let svg = svg.as_str();
        assert!(!svg.contains("<script>"));
        assert!(svg.contains("&lt;script&gt;"));
        assert_eq!(cut("abcdef", 4), "abc…");
    }
}
