//! Tools that end an episode (`finish`, `submit`, `attempt_completion`, …):
//! the agent's way of saying it is done, so no result is owed to them.

/// Names agent frameworks give the tool an agent calls to end its episode
/// (SWE-agent `submit`, Terminus `mark_task_complete`, Cline and Roo
/// `attempt_completion`, OpenHands `finish`, AutoGen `terminate`).
const NAMES: &[&str] = &[
    "finish",
    "final_answer",
    "submit",
    "submit_answer",
    "submit_solution",
    "task_complete",
    "mark_task_complete",
    "complete_task",
    "attempt_completion",
    "done",
    "terminate",
    "end_task",
    "stop",
];

/// Whether `name` is a tool that ends an episode by its name: one of the
/// common names, compared without case, `-` or a namespace prefix
/// (`functions.submit`, `tools__finish`).
pub(crate) fn is_terminal_name(name: &str) -> bool {
    let base = name
        .rsplit(['.', '/', ':'])
        .next()
        .unwrap_or(name)
        .rsplit("__")
        .next()
        .unwrap_or(name);
    let base = base.trim().to_ascii_lowercase().replace('-', "_");
    NAMES.contains(&base.as_str())
}

#[cfg(test)]
mod tests {
    use super::is_terminal_name;

    #[test]
    fn episode_ending_tools_by_name() {
        for name in [
            "finish",
            "mark_task_complete",
            "Submit",
            "attempt-completion",
            "functions.task_complete",
            "mcp__agent__finish",
        ] {
            assert!(is_terminal_name(name), "{name}");
        }
        for name in ["finish_line_check", "bash", "submit_form_field", "search"] {
            assert!(!is_terminal_name(name), "{name}");
        }
    }
}
