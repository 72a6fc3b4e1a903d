//! One card per top pattern (its metrics, narrative, samples and the
//! root-cause verdicts of its runs), and the verdicts of runs no pattern shows.

use super::*;

/// Patterns shown as full cards; the rest are rows of one table, so a batch
/// of thousands of patterns still makes a page a browser opens.
pub(super) const MAX_CARDS: usize = 50;

pub(super) fn write_cards(page: &mut String, report: &Report, opts: &RenderOptions) {
    page.push_str("<h2>Pattern details</h2><section class=\"cards\">\n");
    // The summary says "top N": those N are cards, the rest rows.
    let cards = opts.top.clamp(1, MAX_CARDS);
    for rp in report.patterns.iter().take(cards) {
        write_card(page, report, rp, opts);
    }
    page.push_str("</section>\n");
    let rest = report.patterns.get(cards..).unwrap_or_default();
    if rest.is_empty() {
        return;
    }
    let _ = write!(
        page,
        "<section class=\"panel\"><h2>{} more patterns</h2><table><tr><th>#</th><th>Pattern</th>\
         <th>Category</th><th>Events</th><th>Recovered</th><th>Score</th></tr>",
        rest.len()
    );
    for rp in rest {
        let Some(s) = rp.scores() else { continue };
        let p = &rp.pattern;
        let _ = write!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td></tr>",
            s.rank,
            escape(&p.display_name),
            escape(&words::classification_label(&p.failure_classification)),
            p.frequency,
            words::percent(s.recovery_rate),
            s.final_score
        );
    }
    page.push_str("</table></section>\n");
}

pub(super) fn write_card(
    page: &mut String,
    report: &Report,
    rp: &ReportPattern,
    opts: &RenderOptions,
) {
    let p = &rp.pattern;
    let Some(s) = rp.scores() else { return };
    let color = class_color(&p.failure_classification);
    let _ = write!(
        page,
        "<details class=\"card\" id=\"pattern-{rank}\"><summary><div class=\"head\"><span class=\"rank\">#{rank}</span>\
         <span class=\"badge\" style=\"color:{color}\">{label}</span><span class=\"who\">{agent} · {tool}</span>\
         <span class=\"score\" style=\"color:{sc}\">{score:.2}</span></div><h3>{name}</h3></summary>",
        rank = s.rank,
        label = escape(&words::classification_label(&p.failure_classification)),
        agent = escape(&p.agent_id),
        tool = escape(&p.tool_name),
        sc = score_color(s.final_score),
        score = s.final_score,
        name = escape(&p.display_name),
    );
    write_metrics(page, rp, s, opts);
    let window = words::count(opts.scoring.recovery_window, "turn", "turns");
    let _ = write!(
        page,
        "<div class=\"rec\">{}</div><p class=\"why\">{}</p>",
        recovery_bar(s, &window),
        words::why_this_matters(p, s, &opts.scoring, &Html)
    );
    write_narrative(page, rp);
    let (verdicts, total) = report.verdicts_for(p);
    if !verdicts.is_empty() {
        page.push_str("<h2>Root causes of its runs</h2>");
        verdict_table(page, &verdicts, &opts.links);
        write_more_rows(page, total - verdicts.len());
    }
    write_samples(page, rp, &opts.links);
    let _ = writeln!(
        page,
        "<p class=\"action\"><strong>Suggested next action:</strong> {}</p></details>",
        escape(words::next_action(&p.failure_classification))
    );
}

/// The LLM's narrative and fix, when they were added.
pub(super) fn write_narrative(page: &mut String, rp: &ReportPattern) {
    let (narrative, fix) = (rp.narrative(), rp.fix());
    if narrative.is_none() && fix.is_none() {
        return;
    }
    page.push_str("<div class=\"ai\"><b>AI root-cause analysis</b>");
    if let Some(n) = narrative {
        page.push_str(&escape(n));
    }
    if let Some(f) = fix {
        let _ = write!(
            page,
            "<p class=\"fix\"><strong>Suggested fix:</strong> {}</p>",
            escape(f)
        );
    }
    page.push_str("</div>");
}

pub(super) fn write_metrics(
    page: &mut String,
    rp: &ReportPattern,
    s: &Scores,
    opts: &RenderOptions,
) {
    let p = &rp.pattern;
    let metrics = [
        (
            "Severity",
            format!(
                "{:.2} / {:.2}",
                s.severity_score,
                opts.scoring.max_severity()
            ),
        ),
        ("Events", words::count(p.frequency, "event", "events")),
        (
            "Appeared in",
            format!("{}/{} runs", s.runs_seen, s.runs_total),
        ),
        ("Trend", s.trend.clone()),
        (
            "Recovery latency",
            words::latency_text(s.median_recovery_latency),
        ),
        ("Tail risk", words::tail_risk_text(p.tail_unrecovered)),
        ("Confidence", words::confidence_text(s, p.frequency)),
        ("Final score", format!("{:.2}", s.final_score)),
    ];
    page.push_str("<dl class=\"metrics\">");
    for (name, value) in metrics {
        let _ = write!(
            page,
            "<div><dt>{name}</dt><dd>{}</dd></div>",
            escape(&value)
        );
    }
    page.push_str("</dl>");
}

/// A run id, linked to the tracing tool when `[links]` says where.
pub(super) fn run_cell(run_id: &str, url: Option<String>) -> String {
    match url {
        Some(url) => format!("<a href=\"{}\">{}</a>", escape(&url), escape(run_id)),
        None => escape(run_id).into_owned(),
    }
}

pub(super) fn write_samples(page: &mut String, rp: &ReportPattern, links: &LinksConfig) {
    let samples = &rp.pattern.samples[..rp.pattern.samples.len().min(SAMPLES_SHOWN)];
    if samples.is_empty() {
        return;
    }
    // The text column only when some sample says what happened.
    let with_text = samples.iter().any(|s| s.text.is_some());
    page.push_str(
        "<h2>Samples</h2><table><tr><th>Run</th><th>Turn</th><th>Step</th><th>Event</th>",
    );
    if with_text {
        page.push_str("<th>What happened</th>");
    }
    page.push_str("</tr>");
    for s in samples {
        let _ = write!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td>",
            run_cell(&s.run_id, links.span(&s.run_id, &s.event_id)),
            s.turn,
            s.step,
            escape(&s.event_id),
        );
        if with_text {
            let _ = write!(page, "<td>{}</td>", escape(s.text.as_deref().unwrap_or("")));
        }
        page.push_str("</tr>");
    }
    page.push_str("</table>");
}

pub(super) fn verdict_table(page: &mut String, verdicts: &[&Verdict], links: &LinksConfig) {
    page.push_str(
        "<table><tr><th>Run</th><th>Agent</th><th>Step</th><th>Category</th><th>Blame</th><th>Confidence</th><th>Evidence</th></tr>",
    );
    for v in verdicts {
        let _ = write!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td></tr>",
            run_cell(&v.run_id, links.run(&v.run_id)),
            escape(&v.agent_id),
            v.step,
            escape(&v.category),
            escape(&v.blame),
            v.confidence,
            escape(&words::verdict_evidence(v))
        );
    }
    page.push_str("</table>");
}

pub(super) fn write_verdicts(page: &mut String, report: &Report, links: &LinksConfig) {
    if report.verdicts.is_empty() && report.findings.is_empty() {
        return;
    }
    // Beside patterns, the run-by-run list is a detail; alone, it is the report.
    let collapsed = !report.patterns.is_empty();
    if collapsed {
        page.push_str(
            "<details class=\"more\"><summary>Root causes and findings of every failed run</summary>",
        );
    }
    page.push_str("<section class=\"panel\">");
    if !report.verdicts.is_empty() {
        page.push_str("<h2>Root causes per failed run</h2>");
        let shown: Vec<&Verdict> = report.verdicts.iter().take(ROWS_IN_HTML).collect();
        verdict_table(page, &shown, links);
        write_more_rows(page, report.verdicts.len() - shown.len());
    }
    if !report.findings.is_empty() {
        page.push_str(
            "<h2>Findings</h2><table><tr><th>Run</th><th>Step</th><th>Agent</th><th>Category</th><th>Finding</th><th>Kind</th><th>Detector</th><th>Evidence</th></tr>",
        );
        for f in report.findings.iter().take(ROWS_IN_HTML) {
            let _ = write!(
                page,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(&f.run_id),
                f.step,
                escape(&f.agent_id),
                escape(&f.category),
                escape(&f.title),
                if f.symptom { "symptom" } else { "suspect" },
                escape(&f.detector),
                escape(&words::evidence_text(&f.evidence))
            );
        }
        page.push_str("</table>");
        write_more_rows(page, report.findings.len().saturating_sub(ROWS_IN_HTML));
    }
    page.push_str("</section>\n");
    if collapsed {
        page.push_str("</details>\n");
    }
}
