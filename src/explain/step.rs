//! One event of a run as the detectors read it: who acted, with which tool,
//! what went in and came out, and whether it failed.

use serde::Deserialize;

use crate::record::{EventOut, EventView};

/// The event fields detectors read beyond those of `EventView`.
#[derive(Deserialize, Debug, Clone, Default)]
pub(crate) struct EventExtras {
    #[serde(default)]
    pub input: Option<String>,
    #[serde(default)]
    pub span_id: Option<String>,
    #[serde(default)]
    pub parent_span_id: Option<String>,
    #[serde(default)]
    pub span_kind: Option<String>,
    #[serde(default)]
    pub input_digest: Option<String>,
    #[serde(default)]
    pub output_digest: Option<String>,
    #[serde(default)]
    pub failure_source: Option<String>,
}

/// One event of a run, as detectors see it.
#[derive(Debug, Clone, Default)]
pub struct Step {
    pub step: u64,
    pub agent: String,
    pub tool: String,
    pub span_kind: Option<String>,
    pub succeeded: bool,
    pub classification: Option<String>,
    /// True when the trace itself labelled the failure with its class
    /// (`failure_source` "label"), rather than triage-parse deriving one.
    pub labelled: bool,
    /// The error's type and message joined, empty when there is none.
    pub error: String,
    pub input: String,
    pub output: String,
    /// False when the trace does not record the output at all (then an
    /// empty `output` says nothing about what the step returned).
    pub output_recorded: bool,
    /// True when triage-parse cut the input or output short (--max-text):
    /// what the step saw or said goes on past the text here.
    pub text_cut: bool,
    pub span_id: Option<String>,
    pub parent_span_id: Option<String>,
}

impl Step {
    /// Takes over the fields detectors read from an event a reader made,
    /// at `step` of its run.
    pub(crate) fn from_out(ev: &EventOut<'_>, step: u64) -> Self {
        let extras = EventExtras {
            input: ev.input.clone(),
            span_id: ev.span_id.as_deref().map(str::to_string),
            parent_span_id: ev.parent_span_id.as_deref().map(str::to_string),
            span_kind: ev.span_kind.map(str::to_string),
            input_digest: ev.input_digest.clone(),
            output_digest: ev.output_digest.clone(),
            failure_source: ev.failure_source.map(|f| f.as_str().to_string()),
        };
        Step::from_event(&ev.view(step), extras)
    }

    /// Takes over the fields detectors read from a parsed event.
    pub(crate) fn from_event(ev: &EventView<'_>, extras: EventExtras) -> Self {
        let error = ev
            .error
            .as_ref()
            .map(|e| match (e.kind.as_deref(), e.message.as_deref()) {
                // An SDK's status message often opens with the type already.
                (Some(kind), Some(message)) if message.starts_with(kind) => message.to_string(),
                (kind, message) => [kind, message]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(": "),
            })
            .unwrap_or_default();
        let output = ev.output.as_deref().unwrap_or("");
        let input = extras.input.unwrap_or_default();
        let text_cut = crate::record::is_cut(output, extras.output_digest.as_deref())
            || crate::record::is_cut(&input, extras.input_digest.as_deref());
        Step {
            step: ev.step,
            agent: ev.agent_id.to_string(),
            tool: ev.action_taken.tool_name.to_string(),
            span_kind: extras.span_kind,
            succeeded: !ev.is_failure(),
            classification: ev.classification().map(str::to_string),
            labelled: extras.failure_source.as_deref() == Some("label"),
            error,
            input,
            output: output.to_string(),
            output_recorded: ev.output.is_some(),
            text_cut,
            span_id: extras.span_id,
            parent_span_id: extras.parent_span_id,
        }
    }

    /// True for an action on the outside world (a tool call, a page view)
    /// rather than a message between agents.
    pub(crate) fn is_tool(&self) -> bool {
        match self.span_kind.as_deref() {
            Some(kind) => matches!(kind, "tool" | "retrieval" | "memory"),
            None => self.tool != "message",
        }
    }

    /// True when the step runs a shell command: a shell tool, or a tool
    /// named by its input's first word, the shape of a command line
    /// (SWE-agent's `open`, `edit` and `python` steps).
    pub(crate) fn runs_shell(&self) -> bool {
        let tool = self.tool.to_ascii_lowercase();
        [
            "bash",
            "shell",
            "sh",
            "terminal",
            "execute_bash",
            "run_command",
            "exec",
        ]
        .contains(&tool.as_str())
            || (self.is_tool()
                && !self.tool.is_empty()
                && self.input.split_whitespace().next() == Some(self.tool.as_str()))
    }

    /// True when the step edits a file: a tool whose name edits or writes
    /// (Claude Code's `Edit` and `Write`, an editor's `str_replace`,
    /// `apply_patch`) called with the file it works on.
    pub(crate) fn edits_file(&self) -> bool {
        const FILE_ARGS: &[&str] = &[
            "\"file_path\"",
            "\"path\"",
            "\"filename\"",
            "\"notebook_path\"",
            "*** Begin Patch",
        ];
        self.is_tool() && FILE_ARGS.iter().any(|a| self.input.contains(a)) && self.named_as_edit()
    }

    /// True when a word of the tool's name says it edits (`Edit`,
    /// `str_replace_editor`, `apply_patch`, `create_file`).
    pub(crate) fn named_as_edit(&self) -> bool {
        const EDITS: &[&str] = &["edit", "write", "create", "replace", "patch", "modify"];
        crate::explain::text::tool_words(&self.tool)
            .iter()
            .any(|w| EDITS.contains(&w.as_str()))
    }

    /// True when the step is the user's own (the person the system serves).
    pub(crate) fn is_user(&self) -> bool {
        let agent = self.agent.to_ascii_lowercase();
        agent == "user" || agent == "human"
    }

    /// Everything the step said or received, for text searches.
    pub(crate) fn text(&self) -> String {
        let mut t =
            String::with_capacity(self.input.len() + self.output.len() + self.error.len() + 2);
        for part in [&self.input, &self.output, &self.error] {
            if !part.is_empty() {
                t.push_str(part);
                t.push('\n');
            }
        }
        t
    }
}

impl Step {
    /// The step's input, else its output: what it was given or said.
    pub(crate) fn input_or_output(&self) -> &str {
        if self.input.is_empty() {
            &self.output
        } else {
            &self.input
        }
    }
}
