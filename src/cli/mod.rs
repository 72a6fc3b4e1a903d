//! What every binary's command line shares: common flags and flag value
//! parsers, the `Tool` trait and its `main`, exit status, and man/completion
//! output.

mod shared;

pub use shared::{LlmArgs, OutputArgs, SidesArgs, TopArg, report_usage};

use std::io;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, ValueEnum};

use crate::plumbing::diag::{Diag, to_stderr};

/// Success, also when the reader downstream closed the pipe.
pub(crate) const EXIT_OK: u8 = 0;
/// A negative answer scripts branch on (a regression under `--fail-on`).
pub(crate) const EXIT_NEGATIVE: u8 = 1;
/// Any error, including skipped input under `--strict`.
pub(crate) const EXIT_ERROR: u8 = 2;

/// The trace format flag of the tools that read trace files.
#[derive(clap::Args, Debug, Clone)]
pub struct TraceFormatArg {
    /// Trace format of input files; `auto` decides per file from its first JSON value, never its name.
    // Also `--input-format`, as `triage report` and `triage compare` spell
    // it, where `--format` is the report's.
    #[arg(
        long,
        short = 'f',
        visible_alias = "input-format",
        value_enum,
        default_value = "auto"
    )]
    pub format: crate::adapters::Format,
}

/// The configuration file flag, declared once for every tool that reads
/// one; each tool says which sections it reads (`mut_arg` on its `Args`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ConfigArg {
    /// Configuration file (TOML).
    #[arg(
        id = "config",
        long = "config",
        short = 'c',
        value_name = "FILE",
        env = "TRIAGE_CONFIG"
    )]
    pub path: Option<PathBuf>,
}

impl ConfigArg {
    /// The configuration the flag names, or the defaults without one.
    pub fn load(&self) -> anyhow::Result<crate::config::Config> {
        crate::config::Config::load_or_default(self.path.as_deref())
    }
}

/// Flags every triage tool accepts.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct CommonArgs {
    /// Stop at the first input that cannot be read, with exit status 2,
    /// instead of skipping it with a warning.
    #[arg(long)]
    pub strict: bool,
    /// Print no warnings (errors are still printed).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Flush every record as soon as it is written (for `tail -f` pipelines).
    #[arg(long)]
    pub line_buffered: bool,
    /// Print this tool's man page or shell completions and exit.
    #[arg(long, hide = true, value_enum, value_name = "WHAT")]
    pub generate: Option<Generate>,
}

impl CommonArgs {
    /// What `--strict` makes of input that cannot be read.
    pub(crate) fn on_bad_input(&self) -> crate::plumbing::diag::OnBadInput {
        crate::plumbing::diag::OnBadInput::strict(self.strict)
    }
}

/// What `--generate` prints.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generate {
    Man,
    Bash,
    Zsh,
    Fish,
}

/// A triage binary: its clap arguments and what it does with them.
pub trait Tool: Parser {
    /// The binary's name, as used in messages (`triage-parse`).
    const NAME: &'static str;
    /// Extra man page sections (EXAMPLES and the like) as (title, text).
    const MAN_SECTIONS: &'static [(&'static str, &'static str)] = &[];
    /// True for a tool that reads trace files: its page lists the formats.
    const READS_TRACES: bool = false;
    /// The command line completions are made from (`triage` adds the tools
    /// it runs, which its parser leaves to them).
    fn completion_command() -> clap::Command {
        Self::command()
    }
    fn common(&self) -> &CommonArgs;
    /// Runs the tool; returns the exit status for a successful run.
    fn run(self, diag: &mut Diag) -> anyhow::Result<u8>;
}

/// Entry point of every binary: parse flags, run, map errors to exit status.
/// `binaries` names every binary of the toolkit, for SEE ALSO.
pub(crate) fn main<T: Tool>(binaries: &[String]) -> ExitCode {
    // Checked before parsing, so tools with required arguments can print
    // their man page too.
    // Read lossily: a file name need not be UTF-8 (std::env::args panics).
    let args = std::env::args_os().skip(1);
    if let Some(what) = generate_request(args.map(|a| a.to_string_lossy().into_owned())) {
        // Made whole first: clap_complete panics on a failed write, and a
        // reader that leaves early (`| head -1`) is no error.
        let mut page = Vec::new();
        let written = generate::<T>(what, binaries, &mut page).and_then(|()| {
            let mut out = io::stdout().lock();
            io::Write::write_all(&mut out, &page)?;
            io::Write::flush(&mut out)
        });
        return match written {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) if is_broken_pipe_io(&e) => ExitCode::SUCCESS,
            Err(e) => report_error(T::NAME, &e.into()),
        };
    }
    let args = match T::try_parse() {
        Ok(args) => args,
        // Named like every other error, so a pipeline's stderr says which
        // of its tools refused its flags.
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            to_stderr(format_args!(
                "{}: error: no command given\n\n{}",
                T::NAME,
                e.render()
            ));
            return ExitCode::from(EXIT_ERROR);
        }
        Err(e) if e.use_stderr() => {
            to_stderr(format_args!("{}: {}", T::NAME, e.render()));
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(EXIT_ERROR));
        }
        Err(e) => e.exit(),
    };
    let mut diag = Diag::new(T::NAME, args.common().quiet);
    let result = args.run(&mut diag);
    diag.finish();
    match result {
        Ok(_) if !diag.unread().is_empty() => {
            let unread = diag.unread();
            let mut names = unread
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if unread.len() > 5 {
                names.push_str(&format!(" and {} more", unread.len() - 5));
            }
            let inputs = if unread.len() == 1 { "input" } else { "inputs" };
            report_error(
                T::NAME,
                &anyhow::anyhow!(
                    "nothing could be read from {} {inputs}: {names}",
                    unread.len()
                ),
            )
        }
        Ok(code) => ExitCode::from(code),
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => report_error(T::NAME, &e),
    }
}

fn generate_request(mut args: impl Iterator<Item = String>) -> Option<Generate> {
    while let Some(a) = args.next() {
        let value = match a.strip_prefix("--generate") {
            Some("") => args.next()?,
            Some(v) => v.strip_prefix('=')?.to_string(),
            None => continue,
        };
        return Generate::from_str(&value, false).ok();
    }
    None
}

fn report_error(tool: &str, e: &anyhow::Error) -> ExitCode {
    let msg = e
        .chain()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(": ");
    to_stderr(format_args!("{tool}: error: {msg}\n"));
    ExitCode::from(EXIT_ERROR)
}

/// True when the error comes from writing to a pipe whose reader went away.
pub(crate) fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>().is_some_and(is_broken_pipe_io)
            || c.downcast_ref::<serde_json::Error>()
                .is_some_and(is_broken_pipe_json)
    })
}

fn is_broken_pipe_io(e: &io::Error) -> bool {
    // An io error that wraps serde_json's (`io::Error::other`) hides the
    // kind, and serde_json hides its io error from the source chain.
    e.kind() == io::ErrorKind::BrokenPipe
        || e.get_ref()
            .and_then(|inner| inner.downcast_ref::<serde_json::Error>())
            .is_some_and(is_broken_pipe_json)
}

fn is_broken_pipe_json(e: &serde_json::Error) -> bool {
    e.io_error_kind() == Some(io::ErrorKind::BrokenPipe)
}

/// Writes the man page or a completion script for tool `T`.
pub(crate) fn generate<T: Tool>(
    what: Generate,
    binaries: &[String],
    out: &mut dyn io::Write,
) -> io::Result<()> {
    let man_page = || ManPage {
        binaries,
        cmd: T::command().name(T::NAME).bin_name(T::NAME),
        extra: T::MAN_SECTIONS,
        formats: T::READS_TRACES,
    };
    let mut cmd = T::completion_command().name(T::NAME).bin_name(T::NAME);
    match what {
        Generate::Man => man_page().render(out),
        Generate::Bash => {
            clap_complete::generate(clap_complete::Shell::Bash, &mut cmd, T::NAME, out);
            Ok(())
        }
        Generate::Zsh => {
            clap_complete::generate(clap_complete::Shell::Zsh, &mut cmd, T::NAME, out);
            Ok(())
        }
        Generate::Fish => {
            clap_complete::generate(clap_complete::Shell::Fish, &mut cmd, T::NAME, out);
            Ok(())
        }
    }
}

const EXIT_STATUS_TEXT: &str = "0  success, also when the reader downstream closed the pipe.\n\n\
1  a negative answer scripts branch on (triage-diff found a regression under --fail-on).\n\n\
2  an error: bad flags, unreadable files, a schema newer than this tool, skipped input under --strict, \
or a webhook send that failed after its retries (triage-alert).";

const RECORDS_TEXT: &str = "Every tool reads and writes NDJSON: one flat JSON object per line with a \"kind\" field \
(header, event, run, source, batch, pattern, finding, verdict, change, alert). Each tool writes one header record \
first ({\"kind\":\"header\",\"schema\":1,\"producer\":\"triage-parse 0.1.0\"}), passes earlier headers and every \
kind it does not consume through unchanged and in order, and refuses a schema newer than its own. \
The fields of each kind are documented in docs/records.md (see SEE ALSO).";

/// The reference pages, as SEE ALSO names them: `make install` copies them
/// and README.md to share/doc/triage, laid out as in the source.
pub(crate) const REFERENCE_PAGES: &[&str] = &[
    "docs/formats.md",
    "docs/records.md",
    "docs/runs.md",
    "docs/scoring.md",
    "docs/explain.md",
    "docs/alerts-and-receiver.md",
    "docs/scale.md",
    "docs/performance.md",
];

/// A section per subcommand (TRIAGE REPORT, TRIAGE COMPARE) with its
/// synopsis and options: clap_mangen names subcommands but lists only the
/// top command's options.
fn render_subcommands_man(cmd: &clap::Command, out: &mut dyn io::Write) -> io::Result<()> {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let full = format!("{} {}", cmd.get_name(), sub.get_name());
        let man = clap_mangen::Man::new(sub.clone().bin_name(full.clone()));
        writeln!(out, ".SH \"{}\"", full.to_uppercase())?;
        let mut roff = Vec::new();
        man.render_synopsis_section(&mut roff)?;
        if let Some(about) = sub.get_long_about().or(sub.get_about()) {
            roff.extend_from_slice(format!(".PP\n{about}\n").as_bytes());
        }
        man.render_options_section(&mut roff)?;
        // The subcommand's own section headings become subsections.
        for line in String::from_utf8_lossy(&roff).lines() {
            match line.strip_prefix(".SH ") {
                Some("SYNOPSIS") => {}
                Some(title) => writeln!(out, ".SS {title}")?,
                None => writeln!(out, "{line}")?,
            }
        }
    }
    Ok(())
}

/// What a tool's man page is made of.
struct ManPage<'a> {
    /// Every binary of the toolkit, for SEE ALSO.
    binaries: &'a [String],
    cmd: clap::Command,
    extra: &'static [(&'static str, &'static str)],
    /// Whether a FORMATS section lists the trace formats.
    formats: bool,
}

impl ManPage<'_> {
    fn render(&self, out: &mut dyn io::Write) -> io::Result<()> {
        let cmd = &self.cmd;
        let man = clap_mangen::Man::new(cmd.clone()).date("2026-12-01");
        man.render_title(out)?;
        man.render_name_section(out)?;
        man.render_synopsis_section(out)?;
        man.render_description_section(out)?;
        man.render_options_section(out)?;
        render_subcommands_man(cmd, out)?;
        let formats = crate::adapters::formats::man_text();
        let mut sections: Vec<(&str, &str)> = Vec::new();
        if self.formats {
            sections.push(("FORMATS", &formats));
        }
        sections.extend_from_slice(self.extra);
        sections.push(("RECORDS", RECORDS_TEXT));
        sections.push(("EXIT STATUS", EXIT_STATUS_TEXT));
        for (title, text) in sections {
            render_text_section(title, text, out)?;
        }
        render_see_also(cmd.get_name(), self.binaries, out)?;
        man.render_version_section(out)?;
        Ok(())
    }
}

/// A section of plain paragraphs (split at blank lines).
fn render_text_section(title: &str, text: &str, out: &mut dyn io::Write) -> io::Result<()> {
    writeln!(out, ".SH \"{title}\"")?;
    for para in text.split("\n\n") {
        writeln!(out, ".PP")?;
        for line in para.lines() {
            // roff treats a leading dot or quote as a request.
            let line = line.replace('\\', "\\e");
            if line.starts_with('.') || line.starts_with('\'') {
                writeln!(out, "\\&{line}")?;
            } else {
                writeln!(out, "{line}")?;
            }
        }
    }
    Ok(())
}

/// SEE ALSO: the other tools' pages, and where the README and the
/// reference pages are once installed.
fn render_see_also(this: &str, binaries: &[String], out: &mut dyn io::Write) -> io::Result<()> {
    let pages: Vec<String> = binaries
        .iter()
        .filter(|name| *name != this)
        .map(|name| format!("\\fB{}\\fR(1)", name.replace('-', "\\-")))
        .collect();
    writeln!(out, ".SH \"SEE ALSO\"")?;
    writeln!(out, "{}", pages.join(", "))?;
    writeln!(out, ".PP")?;
    writeln!(
        out,
        "README.md and the reference pages {}: \\fBmake install\\fR copies them, laid out as in \
the source, to share/doc/triage under its prefix (/usr/local/share/doc/triage by default).",
        REFERENCE_PAGES.join(", ")
    )?;
    Ok(())
}

/// A flag's number, refused when it is not finite (`nan`, `inf`): it
/// would compare false with every score, silently.
pub(crate) fn finite_number(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        Ok(_) => Err(format!("{s:?} is not a finite number")),
        Err(_) => Err(format!("{s:?} is not a number")),
    }
}

/// A share from 0 to 1, written as one (0.3) or as a percentage (30%).
pub(crate) fn share(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 100.0),
        None => (t, 1.0),
    };
    match finite_number(num)? / scale {
        x if (0.0..=1.0).contains(&x) => Ok(x),
        _ if scale > 1.0 => Err(format!("{s} is not between 0% and 100%")),
        _ => Err(format!("{s} is not between 0 and 1")),
    }
}

/// A flag's count that must be at least 1 (clap's own range check
/// prints the type's maximum as the bound).
pub(crate) fn positive<T: std::str::FromStr + From<u8> + PartialOrd>(s: &str) -> Result<T, String> {
    match s.trim().parse::<T>() {
        Ok(n) if n >= T::from(1) => Ok(n),
        Ok(_) => Err(format!("{s} is not at least 1")),
        Err(_) => Err(format!("{s:?} is not a whole number")),
    }
}

/// A flag's size in bytes: "256M" is 256 MiB (K, M and G suffixes), a
/// plain number is bytes.
pub(crate) fn size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 10),
        Some((i, 'm' | 'M')) => (&t[..i], 20),
        Some((i, 'g' | 'G')) => (&t[..i], 30),
        _ => (t, 0),
    };
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("{s:?}: expected bytes, like 1048576 or 256M"))?;
    n.checked_mul(1 << shift)
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("{s:?}: out of range"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_with_suffixes() {
        assert_eq!(size("256M"), Ok(256 << 20));
        assert_eq!(size("1g"), Ok(1 << 30));
        assert_eq!(size("4096"), Ok(4096));
        assert!(size("0").is_err());
        assert!(size("lots").unwrap_err().contains("expected bytes"));
    }

    #[test]
    fn generate_is_found_anywhere() {
        let args = |v: &[&str]| {
            v.iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .into_iter()
        };
        assert_eq!(
            generate_request(args(&["--generate", "man"])),
            Some(Generate::Man)
        );
        assert_eq!(
            generate_request(args(&["x", "--generate=zsh"])),
            Some(Generate::Zsh)
        );
        assert_eq!(generate_request(args(&["--strict"])), None);
    }

    #[test]
    fn broken_pipe_inside_serde_json_is_recognised() {
        struct ClosedPipe;
        impl io::Write for ClosedPipe {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                Err(io::ErrorKind::BrokenPipe.into())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let json = || serde_json::to_writer(ClosedPipe, &[1, 2, 3]).unwrap_err();
        assert!(is_broken_pipe(
            &anyhow::Error::new(json()).context("render")
        ));
        assert!(is_broken_pipe(&io::Error::other(json()).into()));
        let other = serde_json::from_str::<u8>("x").unwrap_err();
        assert!(!is_broken_pipe(&other.into()));
    }
}
