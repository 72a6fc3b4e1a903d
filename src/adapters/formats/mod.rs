//! The formats triage reads, one module each, and [`FORMATS`]: the table
//! that detection, dispatch, the values of `--format`, the man page and the
//! fuzz targets all read. A new format is a module here and a row there.

pub(crate) mod anthropic_messages;
pub(crate) mod atif;
pub(crate) mod autogen;
pub(crate) mod browser_use;
pub(crate) mod codex;
pub(crate) mod coding_agent;
pub(crate) mod inspect_ai;
pub(crate) mod langfuse;
pub(crate) mod langsmith;
pub(crate) mod managed_agent;
pub(crate) mod ndjson;
pub(crate) mod openai_agents;
pub(crate) mod openai_chat;
pub(crate) mod openhands;
pub(crate) mod otel;
pub mod otlp;
pub(crate) mod taubench;
pub(crate) mod transcript;
pub(crate) mod whowhen;

use std::fmt;
use std::io::Read;

use clap::builder::PossibleValue;

use crate::adapters::read::shape::Shape;
use crate::adapters::sink::Sink;
use crate::plumbing::waiting::Waiting;

/// Every format, in the order detection asks them: the first whose claim
/// holds for an input's first JSON value reads it, so a more specific shape
/// comes before a more general one. `auto` leads, as `--help` lists it.
pub static FORMATS: &[Format] = &[
    Format::AUTO,
    managed_agent::FORMAT,
    coding_agent::FORMAT,
    browser_use::FORMAT,
    autogen::FORMAT,
    openhands::FORMAT,
    codex::FORMAT,
    openai_agents::FORMAT,
    otlp::FORMAT,
    langfuse::FORMAT,
    langsmith::FORMAT,
    atif::FORMAT,
    inspect_ai::FORMAT,
    ndjson::FORMAT,
    taubench::FORMAT,
    whowhen::FORMAT,
    otel::FORMAT,
    anthropic_messages::FORMAT,
    openai_chat::FORMAT,
];

/// Reads one input into the sink: the input (its first bytes in front
/// again after detection), and for a live input how to wait for more.
pub(crate) type ReadFn =
    for<'r> fn(Box<dyn Read + Send + 'r>, Option<Waiting>, &mut Sink<'_>) -> anyhow::Result<()>;

/// Whether an input's first JSON value has a format's shape.
pub(crate) type ClaimFn = fn(&Shape<'_>) -> bool;

/// A trace format: a row of [`FORMATS`].
#[derive(Clone, Copy)]
pub struct Format {
    /// What `--format` takes and the `source` record says.
    pub name: &'static str,
    /// One sentence for `--help` and the man page.
    pub help: &'static str,
    /// Detection; None for `auto`, which is no format of its own.
    pub(crate) claims: Option<ClaimFn>,
    pub(crate) read: ReadFn,
}

impl Format {
    /// Each input's format decided from its first JSON value.
    pub const AUTO: Format = Format {
        name: "auto",
        help: "Decide per input from its first JSON value (never the extension).",
        claims: None,
        read: ndjson::FORMAT.read,
    };

    /// What content no format claims is read as: its lines are then
    /// reported as unreadable rather than silently ignored.
    pub const FALLBACK: Format = ndjson::FORMAT;

    /// The format called `name`.
    pub fn named(name: &str) -> Option<Format> {
        FORMATS.iter().copied().find(|f| f.name == name)
    }

    /// The first format that claims an input whose first bytes have `shape`.
    pub(crate) fn claiming(shape: &Shape<'_>) -> Option<Format> {
        FORMATS
            .iter()
            .copied()
            .find(|f| f.claims.is_some_and(|claims| claims(shape)))
    }

    pub(crate) fn is_auto(self) -> bool {
        self == Format::AUTO
    }
}

impl PartialEq for Format {
    fn eq(&self, other: &Format) -> bool {
        self.name == other.name
    }
}

impl Eq for Format {}

impl fmt::Debug for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

impl clap::ValueEnum for Format {
    fn value_variants<'a>() -> &'a [Format] {
        FORMATS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name).help(self.help))
    }
}

/// The FORMATS section of the man pages: each format's name and help, from
/// the table, so a format added there is documented here too.
pub(crate) fn man_text() -> String {
    let mut text = String::new();
    for format in FORMATS.iter().filter(|f| !f.is_auto()) {
        text.push_str(&format!(
            "{}: {}\n\n",
            format.name,
            format.help.trim_end_matches('.')
        ));
    }
    text.push_str(
        "With auto, each input's format is decided by the shape of its first JSON value, never its \
name; content no format claims is read as ndjson. Inspect's .eval zips are read; gzip and zstd \
files are decompressed as they are read; Collector protobuf files are recognised and refused with \
what to do.\n\n\
docs/formats.md (see SEE ALSO) says how to export each format from its source and what is read from it.",
    );
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_has_a_unique_name_and_help_and_all_but_auto_a_claim() {
        let mut names: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), FORMATS.len());
        for f in FORMATS {
            assert!(!f.help.is_empty(), "{}", f.name);
            assert_eq!(f.claims.is_none(), f.is_auto(), "{}", f.name);
            assert_eq!(Format::named(f.name), Some(*f));
        }
    }
}
