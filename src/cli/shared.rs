//! The argument groups more than one command flattens, and what they do:
//! the two sides and gates of a comparison (triage-diff, `triage
//! compare`), how a report is written and how many patterns it shows
//! (triage-render, `triage report`, `triage compare`), and the LLM flags
//! (triage-explain, `triage report`).

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use crate::adapters::Format;
use crate::cli::{self, ConfigArg};
use crate::config::{LinksConfig, LlmConfig, ProviderKind, ScoringConfig};
use crate::diff::{FailOn, GateOptions, compare_sides, failing, side_is_empty};
use crate::llm::{Client, Settings};
use crate::pipeline::AnalyzeOptions;
use crate::plumbing::diag::{self, Diag, OnBadInput};
use crate::plumbing::outfile::AtomicFile;
use crate::record::{Change, ChangeScope};
use crate::render::{self, OutputFormat, RenderOptions, Report, TableStyle};

/// The two batches, the gates and the configuration: what triage-diff and
/// `triage compare` share.
#[derive(clap::Args, Debug)]
#[command(mut_arg("config", |a| a.help("Configuration file ([scoring] as triage-score reads it)")))]
pub struct SidesArgs {
    /// The earlier batch: a trace file, a directory of them, or any stage's records; `-` is stdin.
    #[arg(value_name = "BEFORE")]
    pub before: PathBuf,
    /// The later batch, likewise.
    #[arg(value_name = "AFTER")]
    pub after: PathBuf,
    /// Exit 1 when this holds: `new` (a new pattern), `regression` (more failure or unrecovered
    /// events per run in any classification, beyond noise at --alpha), `score>=X` (a pattern after
    /// scores at least X; scores are scaled to each batch, so `regression` does not compare them),
    /// `pass-rate` (the pass rate fell, beyond noise at --alpha) or `pass-rate<X` (the pass rate
    /// after is below X, as 0.8 or 80%). Repeatable.
    #[arg(long, value_name = "COND")]
    pub fail_on: Vec<FailOn>,
    /// Percent a rate per run may grow before `regression` holds.
    #[arg(long, value_name = "PCT", default_value_t = 0.0)]
    pub tolerance: f64,
    /// The significance a rise (`regression`) or a drop (`pass-rate`) must reach: the chance of a
    /// change at least as large if nothing had changed.
    #[arg(long, value_name = "P", default_value_t = 0.05, value_parser = alpha)]
    pub alpha: f64,
    /// A classification or pattern with fewer events than N on both sides cannot trip a gate
    /// (the comparison marks those below 5 "tentative"; `--min-events 5` leaves them out).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub min_events: u64,
    #[command(flatten)]
    pub config: ConfigArg,
}

impl SidesArgs {
    /// Compares the sides, trace files read as `format`; returns the changes
    /// and the exit status the gates give.
    pub fn run(
        &self,
        format: Format,
        on_bad: OnBadInput,
        diag: &mut Diag,
    ) -> anyhow::Result<(Vec<Change>, AnalyzeOptions)> {
        let mut opts = AnalyzeOptions::new(self.config.load()?);
        opts.format = format;
        opts.on_bad = on_bad;
        let changes = compare_sides(&self.before, &self.after, &opts, diag)?;
        Ok((changes, opts))
    }

    pub fn gate(&self, changes: &[Change], diag: &mut Diag) -> u8 {
        let opts = GateOptions {
            tolerance_pct: self.tolerance,
            min_events: self.min_events,
            alpha: self.alpha,
        };
        gate(&self.fail_on, opts, changes, diag)
    }
}

fn alpha(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(a) if a > 0.0 && a < 1.0 => Ok(a),
        _ => Err(format!(
            "{s:?}: a significance level between 0 and 1, such as 0.05"
        )),
    }
}

/// The exit status the `--fail-on` conditions give: each reason on its
/// own line, then one last line with the verdict, `gate failed: 2
/// regressions (…)` or `gate passed`. A side with no runs cannot pass a
/// gate: a candidate that wrote no traces would pass every condition, and
/// against an empty baseline everything is new.
pub fn gate(conditions: &[FailOn], opts: GateOptions, changes: &[Change], diag: &mut Diag) -> u8 {
    let judged = !conditions.is_empty();
    for (after, side) in [(false, "BEFORE"), (true, "AFTER")] {
        if judged && side_is_empty(changes, after) {
            diag.warn(
                "fail-on",
                format_args!(
                    "--fail-on cannot judge a comparison whose {side} batch has no runs (exit 2)"
                ),
            );
            return cli::EXIT_ERROR;
        }
    }
    if !judged {
        return cli::EXIT_OK;
    }
    if conditions
        .iter()
        .any(|c| matches!(c, FailOn::PassRate | FailOn::PassRateBelow(_)))
        && let Some(p) = changes.iter().find_map(|c| match &c.change {
            ChangeScope::PassRate(p) => Some(p),
            _ => None,
        })
    {
        for (side, t) in [("BEFORE", &p.before), ("AFTER", &p.after)] {
            if t.pass_rate.is_none() {
                diag.warn(
                    "fail-on",
                    format_args!(
                        "--fail-on pass-rate cannot judge a comparison whose {side} batch has no run of known outcome (exit 2)"
                    ),
                );
                return cli::EXIT_ERROR;
            }
            if t.unknown > 0 {
                diag.warn(
                    "unknown-outcome",
                    format_args!(
                        "{} of the {} runs {side} have no known outcome and are left out of its pass rate",
                        t.unknown, t.runs
                    ),
                );
            }
        }
    }
    let tool = diag.tool();
    let mut held = Vec::new();
    let mut subjects = Vec::new();
    let mut below = 0;
    for cond in conditions {
        let (reasons, small) = failing(cond, changes, opts);
        below += small;
        let in_verdict = matches!(cond, FailOn::PassRate | FailOn::PassRateBelow(_));
        for r in reasons.iter().filter(|_| !in_verdict) {
            diag::to_stderr(format_args!("{tool}: fail-on {cond}: {}\n", r.text));
        }
        match cond {
            // The verdict itself says both rates and the p-value.
            FailOn::PassRate | FailOn::PassRateBelow(_) => {
                held.extend(reasons.into_iter().map(|r| r.text));
            }
            _ if !reasons.is_empty() => {
                held.push(cond.count_text(reasons.len()));
                subjects.extend(reasons.into_iter().map(|r| r.subject));
            }
            _ => {}
        }
    }
    let unjudged =
        (below > 0).then(|| format!("{below} below --min-events {} not judged", opts.min_events));
    if held.is_empty() {
        let note = unjudged.map(|n| format!(" ({n})")).unwrap_or_default();
        diag::to_stderr(format_args!("{tool}: gate passed{note}\n"));
        return cli::EXIT_OK;
    }
    subjects.dedup();
    let (named, more) = render::first_named(&subjects);
    let mut why = format!("{}{}", named.join(", "), render::more_sources_text(more));
    if let Some(n) = unjudged {
        if !why.is_empty() {
            why.push_str("; ");
        }
        why.push_str(&n);
    }
    let why = if why.is_empty() {
        String::new()
    } else {
        format!(" ({why})")
    };
    diag::to_stderr(format_args!(
        "{tool}: gate failed: {}{why}\n",
        held.join("; ")
    ));
    cli::EXIT_NEGATIVE
}

/// How many patterns a report shows; `triage report` and `triage compare`
/// flatten it too.
#[derive(clap::Args, Debug, Clone)]
pub struct TopArg {
    /// Patterns the report shows, in every format: markdown, table and HTML
    /// show 3 unless told; JSON and CSV all of them unless told (a
    /// comparison: the rows of each pattern list, 20 unless told).
    #[arg(long, short = 'n', value_name = "N",
          value_parser = crate::cli::positive::<u64>)]
    top: Option<u64>,
}

/// Patterns markdown, the table and HTML show without `--top`.
pub const DEFAULT_TOP: usize = 3;

impl TopArg {
    /// The patterns to detail: `--top`, else [`DEFAULT_TOP`].
    pub fn get(&self) -> usize {
        self.explicit().unwrap_or(DEFAULT_TOP)
    }

    /// `--top` when it was given.
    pub fn explicit(&self) -> Option<usize> {
        self.top.map(|n| usize::try_from(n).unwrap_or(usize::MAX))
    }
}

/// The flags that say how and where a report is written; `triage report`
/// and `triage compare` flatten them into their own arguments.
#[derive(clap::Args, Debug, Clone)]
pub struct OutputArgs {
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value = "md")]
    pub format: OutputFormat,
    /// HTML only: reload the page every SECONDS (for a page cron regenerates).
    #[arg(long, value_name = "SECONDS", value_parser = crate::cli::positive::<u64>)]
    pub refresh: Option<u64>,
    /// The time series' buckets (the HTML charts, `failures per …`): hours or days; without it,
    /// days when the events span two or more, else runs.
    #[arg(long, value_enum, value_name = "UNIT")]
    pub bucket: Option<render::Bucket>,
    /// Write the report to FILE, atomically (temporary file, then rename; a device or FIFO is written in place).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
}

impl OutputArgs {
    /// Refuses flags the chosen format would silently ignore; called before
    /// any input is read.
    pub fn check(&self) -> anyhow::Result<()> {
        if self.refresh.is_some() && self.format != OutputFormat::Html {
            anyhow::bail!("--refresh reloads an HTML page: use it with --format html");
        }
        Ok(())
    }

    /// Renders `report` to `-o FILE` (atomically) or stdout, dated by
    /// SOURCE_DATE_EPOCH or now, with the table fitted to the terminal. A
    /// CSV warns of the records its one table leaves out.
    pub fn emit(
        &self,
        report: &Report,
        scoring: ScoringConfig,
        links: &LinksConfig,
        top: &TopArg,
        diag: &mut Diag,
    ) -> anyhow::Result<()> {
        let limited;
        let report = match top.explicit() {
            Some(n) => {
                limited = report.limited_to(n, self.format);
                &limited
            }
            None => report,
        };
        if self.format == OutputFormat::Csv
            && let Some(left_out) = render::csv::left_out(report)
        {
            diag.warn("csv", format_args!("{left_out}"));
        }
        let to_terminal = self.output.is_none() && io::stdout().is_terminal();
        let opts = RenderOptions {
            format: self.format,
            top: top.get(),
            scoring,
            generated: render::report_time()?,
            refresh: self.refresh,
            links: links.clone(),
            bucket: self.bucket,
            table: terminal_style(to_terminal),
        };
        match &self.output {
            Some(path) => {
                let mut file = AtomicFile::create(path)?;
                render::render(report, &opts, &mut file)?;
                file.commit()
            }
            None => {
                let mut out = crate::plumbing::outfile::stdout(256 * 1024);
                render::render(report, &opts, &mut out)?;
                Ok(out.flush()?)
            }
        }
    }
}

/// The table fits the terminal (its size, else $COLUMNS, else 80 columns) and is coloured
/// there, unless NO_COLOR is set (to anything) or the terminal is dumb.
fn terminal_style(to_terminal: bool) -> TableStyle {
    if !to_terminal {
        return TableStyle::default();
    }
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
        || std::env::var("TERM").is_ok_and(|t| t == "dumb");
    TableStyle {
        // A terminal that reports no size (a serial console, `stty rows 0`)
        // is taken to be the 80 columns every terminal has.
        width: terminal_size::terminal_size()
            .map(|(w, _)| w.0)
            .or_else(|| std::env::var("COLUMNS").ok()?.trim().parse().ok())
            .filter(|w| *w > 0)
            .or(Some(80)),
        color: !no_color,
    }
}

/// The flags that choose and pace the LLM provider; `triage report`
/// flattens them too. Unset, they come from the `[llm]` section.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct LlmArgs {
    /// LLM provider: anthropic (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL) or
    /// openai, any OpenAI-compatible chat-completions server such as a local
    /// one (OPENAI_BASE_URL, OPENAI_API_KEY). Default: [llm] provider, else
    /// anthropic, or openai when only OPENAI_* variables are set.
    #[arg(long, value_enum)]
    pub provider: Option<ProviderKind>,
    /// LLM model. Default: [llm] model, else claude-haiku-4-5 (anthropic)
    /// or gpt-4o-mini (openai).
    #[arg(long, value_name = "NAME")]
    pub model: Option<String>,
    /// LLM requests in flight at once. Default: [llm] concurrency, 4.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=64))]
    pub concurrency: Option<u64>,
    /// Seconds one LLM request may take. Default: [llm] timeout_seconds, 60.
    #[arg(long, value_name = "SECONDS", value_parser = crate::cli::positive::<u64>)]
    pub timeout: Option<u64>,
}

impl LlmArgs {
    /// The first of these flags given, to refuse it where no LLM is used.
    fn first_given(&self) -> Option<&'static str> {
        [
            (self.provider.is_some(), "--provider"),
            (self.model.is_some(), "--model"),
            (self.concurrency.is_some(), "--concurrency"),
            (self.timeout.is_some(), "--timeout"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }

    /// Refuses LLM flags when nothing uses the LLM, rather than ignoring them.
    pub fn refuse_unused(&self, used: bool, enabling: &str) -> anyhow::Result<()> {
        match self.first_given() {
            Some(flag) if !used => {
                anyhow::bail!("{flag} chooses how the LLM is called: use it with {enabling}")
            }
            _ => Ok(()),
        }
    }
    /// The client these flags, the `[llm]` section and the environment
    /// describe; `purpose` (the flag that needs it) is named when a key is
    /// missing.
    pub fn client(&self, config: &LlmConfig, purpose: &str) -> anyhow::Result<Client> {
        let mut s = Settings::from_config(config);
        if self.provider.is_some() {
            s.provider = self.provider;
        }
        if let Some(m) = &self.model {
            s.model = Some(m.clone());
        }
        if let Some(n) = self.concurrency {
            s.concurrency = n as usize;
        }
        if let Some(t) = self.timeout {
            s.timeout = Duration::from_secs(t);
        }
        Client::new(&s, |k| std::env::var(k).ok(), purpose)
    }
}

/// Prints what the LLM requests cost, unless there were none.
pub fn report_usage(client: &Client, diag: &Diag) {
    if client.usage().requests > 0 {
        diag.note(format_args!("llm usage: {}", client.usage_text()));
    }
}
