//! triage.toml: the scoring model's knobs, failure classification rules,
//! alerting and LLM provider settings. Unknown keys and wrong types are errors naming the
//! file, line and key.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

/// Severity weights of the reference, by classification.
pub(crate) const DEFAULT_WEIGHTS: &[(&str, f64)] = &[
    ("coordination_failure", 1.0),
    ("agent_error", 0.7),
    ("information_lag", 0.5),
    ("environment_constraint", 0.2),
    ("unclassified", 0.3),
];

/// Weight of a classification the table does not name.
pub(crate) const FALLBACK_WEIGHT: f64 = 0.3;

/// A failure with no success within this many turns is "stuck for good".
pub(crate) const TAIL_RISK_WINDOW: u64 = 10;

/// The whole configuration file.
#[derive(Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub scoring: ScoringConfig,
    /// classification → phrases that mark an unlabeled failure as it.
    #[serde(default)]
    pub classify: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub alerting: AlertConfig,
    #[serde(default)]
    pub llm: LlmConfig,
    #[serde(default)]
    pub links: LinksConfig,
    /// The reference's storage section: accepted so its files load; unused.
    #[serde(default)]
    pub storage: Option<toml::Table>,
}

/// `[scoring]`: the model of DESIGN.md §3.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct ScoringConfig {
    pub recovery_window: u64,
    #[serde(deserialize_with = "non_negative")]
    pub no_recovery_multiplier: f64,
    #[serde(deserialize_with = "non_negative")]
    pub frequency_weight: f64,
    #[serde(deserialize_with = "non_negative")]
    pub severity_weight: f64,
    /// Merged over [`DEFAULT_WEIGHTS`]; new labels are allowed.
    #[serde(deserialize_with = "merge_weights")]
    pub weights: BTreeMap<String, f64>,
}

impl Default for ScoringConfig {
    fn default() -> Self {
        ScoringConfig {
            recovery_window: 3,
            no_recovery_multiplier: 1.5,
            frequency_weight: 0.4,
            severity_weight: 0.6,
            weights: default_weights(),
        }
    }
}

impl ScoringConfig {
    /// The severity weight of a classification.
    pub(crate) fn weight(&self, classification: &str) -> f64 {
        self.weights
            .get(classification)
            .copied()
            .unwrap_or(FALLBACK_WEIGHT)
    }

    /// The highest severity score this configuration can give.
    pub(crate) fn max_severity(&self) -> f64 {
        let w = self
            .weights
            .values()
            .copied()
            .fold(FALLBACK_WEIGHT, f64::max);
        w * 10.0 * self.no_recovery_multiplier.max(1.0)
    }
}

fn default_weights() -> BTreeMap<String, f64> {
    DEFAULT_WEIGHTS
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect()
}

fn merge_weights<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<BTreeMap<String, f64>, D::Error> {
    let user = BTreeMap::<String, NonNegative>::deserialize(d)?;
    let mut w = default_weights();
    w.extend(user.into_iter().map(|(k, v)| (k, v.0)));
    Ok(w)
}

/// A weight or multiplier: a negative one would turn severity and the
/// final score upside down. Checked while the value is read, so the error
/// names its line.
struct NonNegative(f64);

impl<'de> Deserialize<'de> for NonNegative {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        if !v.is_finite() || v < 0.0 {
            return Err(serde::de::Error::custom(format!(
                "must be a number of zero or more, not {v}"
            )));
        }
        Ok(NonNegative(v))
    }
}

/// A count from LO to HI, its error naming the line like any other.
fn count_in<'de, D: serde::Deserializer<'de>, const LO: u64, const HI: u64>(
    d: D,
) -> Result<u64, D::Error> {
    let v = u64::deserialize(d)?;
    if !(LO..=HI).contains(&v) {
        let range = if HI == u64::MAX {
            format!("{LO} or more")
        } else {
            format!("{LO} to {HI}")
        };
        return Err(serde::de::Error::custom(format!(
            "must be {range}, not {v}"
        )));
    }
    Ok(v)
}

fn concurrency<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    count_in::<D, 1, 64>(d).map(|v| v as usize)
}

fn non_negative<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    NonNegative::deserialize(d).map(|v| v.0)
}

/// `[links]`: where a run or span opens in the team's tracing tool
/// (Langfuse, Phoenix, LangSmith, Jaeger); reports and alerts link run ids
/// there. `{run_id}` and `{span_id}` are replaced, URL-encoded.
#[derive(Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields, default)]
pub struct LinksConfig {
    /// A run's page, with `{run_id}`.
    pub run_url: Option<String>,
    /// A span's page, with `{run_id}` and `{span_id}` (a sample's event id).
    pub span_url: Option<String>,
}

impl LinksConfig {
    /// The link to a run, when `run_url` is set.
    pub(crate) fn run(&self, run_id: &str) -> Option<String> {
        let t = self.run_url.as_deref()?;
        Some(t.replace("{run_id}", &url_encode(run_id)))
    }

    /// The link to a span of a run: `span_url`, else the run's.
    pub(crate) fn span(&self, run_id: &str, span_id: &str) -> Option<String> {
        match self.span_url.as_deref() {
            Some(t) => Some(
                t.replace("{run_id}", &url_encode(run_id))
                    .replace("{span_id}", &url_encode(span_id)),
            ),
            None => self.run(run_id),
        }
    }
}

/// Percent-encodes all but the characters a URL path segment keeps as
/// they are.
fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `[alerting]`: where and when triage-alert pages.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct AlertConfig {
    pub webhook_url: Option<String>,
    pub threshold: f64,
    pub cooldown_seconds: u64,
}

impl Default for AlertConfig {
    fn default() -> Self {
        AlertConfig {
            webhook_url: None,
            threshold: 10.0,
            cooldown_seconds: 3600,
        }
    }
}

/// Which API a provider speaks.
#[derive(clap::ValueEnum, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// The Anthropic Messages API (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL).
    Anthropic,
    /// Any OpenAI-compatible chat-completions server, local ones included
    /// (OPENAI_BASE_URL, OPENAI_API_KEY).
    Openai,
}

/// `[llm]`: the provider narratives and the judge ask. API keys are read
/// from the environment only, never from this file.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct LlmConfig {
    /// anthropic or openai; unset: anthropic, or openai when only OPENAI_*
    /// variables are set.
    pub provider: Option<ProviderKind>,
    /// Unset: the provider's default model.
    pub model: Option<String>,
    /// ANTHROPIC_BASE_URL or OPENAI_BASE_URL win over it; unset, the
    /// provider's own.
    pub base_url: Option<String>,
    /// Requests in flight at once.
    #[serde(deserialize_with = "concurrency")]
    pub concurrency: usize,
    /// Seconds one request may take, retries not counted.
    #[serde(deserialize_with = "count_in::<_, 1, { u64::MAX }>")]
    pub timeout_seconds: u64,
    /// Retries of a request the provider answered with 429 or 5xx, or that
    /// did not get through.
    pub retries: u32,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            provider: None,
            model: None,
            base_url: None,
            concurrency: 4,
            timeout_seconds: 60,
            retries: 3,
        }
    }
}

impl Config {
    /// Loads a file; errors name the file and the line of the bad key.
    pub(crate) fn load(path: &Path) -> anyhow::Result<Config> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            anyhow::anyhow!(
                "{}: {}",
                path.display(),
                crate::plumbing::diag::io_reason(&e)
            )
        })?;
        Config::parse(&text).map_err(|e| anyhow::anyhow!("{}:{e}", path.display()))
    }

    /// Loads the file when one is named, else the defaults.
    pub(crate) fn load_or_default(path: Option<&Path>) -> anyhow::Result<Config> {
        path.map_or_else(|| Ok(Config::default()), Config::load)
    }

    /// Parses configuration text; the error names the line.
    pub(crate) fn parse(text: &str) -> Result<Config, ConfigError> {
        toml::from_str(text).map_err(|e| {
            let at = e.span().map(|s| s.start.min(text.len()));
            let line = text[..at.unwrap_or(0)].matches('\n').count() + 1;
            let msg = e.message().replace("unknown field", "unknown key");
            let msg = msg.trim();
            // A bad value's message does not say whose it is.
            let message = match at.and_then(|at| value_key(text, at)) {
                Some(key) if !msg.contains("key") => format!("{key} {msg}"),
                _ => msg.to_string(),
            };
            ConfigError { line, message }
        })
    }
}

/// What is wrong in a configuration file, and on which line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}: {message}")]
pub struct ConfigError {
    pub line: usize,
    pub message: String,
}

/// The dotted name (`llm.concurrency`) of the `key = value` line holding
/// byte `at` of `text`, its table from the last `[header]` above it.
fn value_key(text: &str, at: usize) -> Option<String> {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next()?;
    let key = line.split_once('=')?.0.trim();
    let table = text[..start]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.trim_matches(['[', ']']).trim());
    Some(match table {
        Some(t) => format!("{t}.{key}"),
        None => key.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_reference_model() {
        let c = Config::parse("").unwrap();
        assert_eq!(c.scoring, ScoringConfig::default());
        assert_eq!(c.scoring.weight("coordination_failure"), 1.0);
        assert_eq!(c.scoring.weight("something_new"), 0.3);
        assert_eq!(c.scoring.max_severity(), 15.0);
    }

    #[test]
    fn weights_merge_over_defaults() {
        let c = Config::parse("[scoring.weights]\nagent_error = 0.9\nhallucination = 2\n").unwrap();
        assert_eq!(c.scoring.weight("agent_error"), 0.9);
        assert_eq!(c.scoring.weight("hallucination"), 2.0);
        assert_eq!(c.scoring.weight("information_lag"), 0.5);
        assert_eq!(c.scoring.max_severity(), 30.0);
    }

    #[test]
    fn unknown_key_names_line_and_key() {
        let e = Config::parse("[scoring]\nrecovery_window = 3\nrecovery_windw = 4\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("3: "), "{e}");
        assert!(e.contains("recovery_windw"), "{e}");
        let e = Config::parse("[scoring]\nrecovery_window = \"three\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("2: "), "{e}");
        let e = Config::parse("[scorng]\n").unwrap_err().to_string();
        assert!(e.contains("scorng"), "{e}");
    }

    #[test]
    fn llm_section_loads_and_refuses_unknown_keys_and_providers() {
        let c = Config::parse("[llm]\nprovider = \"openai\"\nmodel = \"qwen\"\nconcurrency = 2\n")
            .unwrap();
        assert_eq!(c.llm.provider, Some(ProviderKind::Openai));
        assert_eq!(c.llm.model.as_deref(), Some("qwen"));
        assert_eq!(c.llm.concurrency, 2);
        let e = Config::parse("[llm]\napi_key = \"sk-1\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("2: ") && e.contains("api_key"), "{e}");
        let e = Config::parse("[llm]\nprovider = \"gemini\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("2: "), "{e}");
        let e = Config::parse("[llm]\nconcurrency = 0\n")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "2: llm.concurrency must be 1 to 64, not 0");
        let e = Config::parse("[llm]\nmodel = \"m\"\ntimeout_seconds = 0\n")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "3: llm.timeout_seconds must be 1 or more, not 0");
    }

    #[test]
    fn a_negative_weight_or_multiplier_is_refused_on_its_line() {
        let e = Config::parse("[scoring.weights]\nagent_error = -1\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "2: scoring.weights.agent_error must be a number of zero or more, not -1"
        );
        let e = Config::parse("[scoring]\n\nno_recovery_multiplier = -2\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "3: scoring.no_recovery_multiplier must be a number of zero or more, not -2"
        );
    }

    #[test]
    fn links_fill_in_encoded_ids() {
        let c = Config::parse(
            "[links]\nrun_url = \"https://lf.example/trace/{run_id}\"\n\
             span_url = \"https://lf.example/trace/{run_id}?span={span_id}\"\n",
        )
        .unwrap();
        assert_eq!(
            c.links.run("a b/1").as_deref(),
            Some("https://lf.example/trace/a%20b%2F1")
        );
        assert_eq!(
            c.links.span("r", "s1").as_deref(),
            Some("https://lf.example/trace/r?span=s1")
        );
        let e = Config::parse("[links]\nrun = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("2: "), "{e}");
        assert_eq!(Config::default().links.run("r"), None);
    }

    #[test]
    fn classify_rules_load() {
        let c =
            Config::parse("[classify]\nenvironment_constraint = [\"quota exceeded\"]\n").unwrap();
        assert_eq!(c.classify["environment_constraint"], vec!["quota exceeded"]);
    }
}

#[cfg(test)]
mod example_file {
    use super::*;

    #[test]
    fn the_example_file_loads_and_documents_the_defaults() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("triage.example.toml");
        let c = Config::load(&path).unwrap();
        assert_eq!(c.scoring, ScoringConfig::default());
        assert_eq!(c.alerting, AlertConfig::default());
        assert_eq!(c.llm, LlmConfig::default());
        assert_eq!(c.links, LinksConfig::default());
        assert!(c.classify.contains_key("environment_constraint"));
    }
}
