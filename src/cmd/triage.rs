//! triage: `report` (parse, group, score and render in one process),
//! `compare` (diff and render), and `triage X ARGS` running `triage-X ARGS`.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::adapters::Format;
use crate::cli::{
    self, CommonArgs, ConfigArg, LlmArgs, OutputArgs, SidesArgs, Tool, TopArg, report_usage,
};
use crate::config::Config;
use crate::pipeline::{AnalyzeOptions, analyze};
use crate::plumbing::diag::Diag;
use crate::plumbing::{diag, input};
use crate::render::Report;
use crate::render::model::ReportLine;

/// Rank the failure patterns of multi-agent LLM systems from their traces.
/// `triage report` is the morning report in one command; `triage compare`
/// says whether a change made things better or worse; `triage X ARGS` runs
/// the tool triage-X.
#[derive(Parser, Debug)]
#[command(
    name = "triage",
    version,
    propagate_version = true,
    about,
    long_about = None,
    // `help` is ours: clap's knows only report and compare, not the tools.
    disable_help_subcommand = true,
    after_help = "Tools: triage X ARGS runs triage-X ARGS, for X in parse, group, score, \
render, diff, explain, alert, recv and gen. triage help X shows the help of X."
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Parse, group, score and render trace files (or any stage's records) in one process.
    Report(ReportArgs),
    /// Compare two batches and render the comparison report.
    Compare(CompareArgs),
    /// Run triage-X with the remaining arguments (parse, group, score, render, diff, …);
    /// `help X` shows the help of X.
    #[command(external_subcommand)]
    External(Vec<OsString>),
}

#[derive(clap::Args, Debug)]
#[command(mut_arg("config", |a| a.help("Configuration file ([scoring], [classify])")))]
pub struct ReportArgs {
    /// Trace files or triage records; none or `-` reads stdin.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub config: ConfigArg,
    /// Trace format of the input files.
    #[arg(long, value_enum, default_value = "auto")]
    pub input_format: Format,
    /// Refuse a trace file larger than this in a format read as one document (K, M, G suffixes).
    #[arg(long, value_name = "BYTES", default_value = "256M", value_parser = cli::size)]
    pub max_document: u64,
    /// Add an LLM's root-cause narrative and one fix to each of the top
    /// patterns, as triage-explain --narrate does.
    #[arg(long)]
    pub ai_analysis: bool,
    /// Trace each failed run to the agent and step that caused it, as
    /// triage-explain does, and list under each top pattern the failed runs
    /// it occurred in with their root cause.
    #[arg(long)]
    pub explain: bool,
    /// With --explain: also trace each run whose outcome no record states
    /// but that has a failing step, listed apart from the failed runs.
    #[arg(long, requires = "explain")]
    pub unknown_outcome: bool,
    #[command(flatten)]
    pub llm: LlmArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub top: TopArg,
    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    #[command(flatten)]
    pub sides: SidesArgs,
    /// Trace format of raw input files.
    #[arg(long, value_enum, default_value = "auto")]
    pub input_format: Format,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub top: TopArg,
    #[command(flatten)]
    pub common: CommonArgs,
}

static NO_COMMON: std::sync::LazyLock<CommonArgs> = std::sync::LazyLock::new(CommonArgs::default);

impl Tool for Args {
    const NAME: &'static str = "triage";
    const MAN_SECTIONS: &'static [(&'static str, &'static str)] = &[(
        "EXAMPLES",
        "triage report runs/*.ndjson --top 5\n\n\
triage report --format html -o /var/www/triage.html --refresh 300 /var/log/agents/*.jsonl\n\n\
ANTHROPIC_API_KEY=... triage report --ai-analysis runs/*.ndjson\n\n\
triage compare --fail-on regression baseline/ candidate/\n\n\
triage parse traces.jsonl | triage group | triage score | triage render --format table",
    )];
    const READS_TRACES: bool = true;

    /// report and compare, each tool as `triage X` (so `triage parse --<TAB>`
    /// offers triage-parse's flags), and `help X`.
    fn completion_command() -> clap::Command {
        use clap::CommandFactory;
        let mut cmd = Self::command();
        let mut names = vec!["report", "compare"];
        for (x, tool) in crate::cmd::tools() {
            let about = tool
                .get_about()
                .map(|a| first_clause(&a.to_string()))
                .unwrap_or_default();
            names.push(x);
            cmd = cmd.subcommand(tool.name(x).about(about).long_about(None));
        }
        cmd.subcommand(
            clap::Command::new("help")
                .about("Show the help of triage or of one of its commands")
                .arg(clap::Arg::new("command").value_parser(names)),
        )
    }

    fn common(&self) -> &CommonArgs {
        match &self.command {
            Command::Report(a) => &a.common,
            Command::Compare(a) => &a.common,
            Command::External(_) => &NO_COMMON,
        }
    }

    fn run(self, diag: &mut Diag) -> anyhow::Result<u8> {
        match self.command {
            Command::Report(a) => report(a, diag),
            Command::Compare(a) => compare(a, diag),
            Command::External(args) => external(args),
        }
    }
}

/// A tool's description up to its first colon, parenthesis or full stop:
/// what a completion menu has room for.
fn first_clause(about: &str) -> String {
    let end = [": ", " (", ". "]
        .iter()
        .filter_map(|sep| about.find(sep))
        .min()
        .unwrap_or(about.len());
    about[..end].trim_end_matches('.').to_string()
}

fn options(
    config: Option<&std::path::Path>,
    format: Format,
    common: &CommonArgs,
) -> anyhow::Result<AnalyzeOptions> {
    let mut opts = AnalyzeOptions::new(Config::load_or_default(config)?);
    opts.format = format;
    opts.on_bad = common.on_bad_input();
    Ok(opts)
}

fn report(a: ReportArgs, diag: &mut Diag) -> anyhow::Result<u8> {
    a.output.check()?;
    a.llm.refuse_unused(a.ai_analysis, "--ai-analysis")?;
    let mut opts = options(a.config.path.as_deref(), a.input_format, &a.common)?;
    opts.document_limit = a.max_document;
    let client = a
        .ai_analysis
        .then(|| a.llm.client(&opts.config.llm, "--ai-analysis"))
        .transpose()?;
    let inputs = input::inputs(&a.files, diag)?;
    let analysis = analyze(&inputs, &opts, diag)?;
    input::refuse_empty_stdin(&inputs)?;
    let mut report = Report::from_scored(analysis.batch, analysis.runs, analysis.patterns);
    for line in &analysis.other {
        report.add_line(line).map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    if a.explain {
        if inputs.contains(&input::Input::Stdin) {
            anyhow::bail!(
                "--explain reads the traces a second time: name the FILEs rather than stdin"
            );
        }
        let scope = if a.unknown_outcome {
            crate::explain::VerdictScope::AlsoUnknownOutcome
        } else {
            crate::explain::VerdictScope::Failed
        };
        for verdict in crate::pipeline::verdicts(&inputs, &opts, scope, diag)? {
            report.add(ReportLine::Verdict(verdict))?;
        }
    }
    report.finish();
    if let Some(client) = &client {
        crate::narrate::narrate_report(client, &mut report, a.top.get(), diag)?;
    }
    a.output.emit(
        &report,
        opts.config.scoring.clone(),
        &opts.config.links,
        &a.top,
        diag,
    )?;
    if let Some(client) = &client {
        report_usage(client, diag);
    }
    Ok(cli::EXIT_OK)
}

fn compare(a: CompareArgs, diag: &mut Diag) -> anyhow::Result<u8> {
    a.output.check()?;
    let (changes, opts) = a.sides.run(a.input_format, a.common.on_bad_input(), diag)?;
    let mut report = Report::default();
    for change in &changes {
        report.add(ReportLine::change(change))?;
    }
    report.finish();
    a.output.emit(
        &report,
        opts.config.scoring.clone(),
        &opts.config.links,
        &a.top,
        diag,
    )?;
    Ok(a.sides.gate(&changes, diag))
}

/// `triage help [X]`: triage's own help, that of report or compare, or
/// that of the tool triage-X.
fn help(topic: Option<&OsString>) -> anyhow::Result<u8> {
    use clap::CommandFactory;
    let mut triage = Args::command();
    let Some(topic) = topic.filter(|t| *t != "help") else {
        triage.print_help()?;
        return Ok(cli::EXIT_OK);
    };
    if let Some(sub) = triage.find_subcommand_mut(topic) {
        let mut sub = sub
            .clone()
            .bin_name(format!("triage {}", topic.to_string_lossy()));
        sub.print_help()?;
        return Ok(cli::EXIT_OK);
    }
    external(vec![topic.clone(), OsString::from("--help")])
}

/// Runs triage-X from beside this binary (or from PATH) with the rest of
/// the arguments, and exits as it does.
fn external(args: Vec<OsString>) -> anyhow::Result<u8> {
    let (name, rest) = args
        .split_first()
        .ok_or_else(|| anyhow::anyhow!("no command given"))?;
    if name == "help" {
        return help(rest.first());
    }
    let tool = format!("triage-{}", name.to_string_lossy());
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join(&tool)))
        .filter(|p| p.is_file());
    let program = beside.unwrap_or_else(|| PathBuf::from(&tool));
    let status = std::process::Command::new(&program).args(rest).status().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            anyhow::anyhow!("{:?} is not a triage command (no {tool} beside triage or on PATH; see triage --help)", name)
        } else {
            anyhow::anyhow!("{tool}: {}", diag::io_reason(&e))
        }
    })?;
    Ok(status
        .code()
        .map_or(cli::EXIT_ERROR, |c| c.clamp(0, 255) as u8))
}
