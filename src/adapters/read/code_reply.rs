//! A code executor's reply in a chat (AutoGen 0.2 and AG2's executors, as
//! Who&When records them too): the code block of the message it answers,
//! and the exit status its reply opens with (`exitcode: 1 (execution
//! failed)`).

use crate::record::{ErrorInfo, EventOut, FailureSource};

/// The tool a step that runs a code block is named for, whichever reader
/// found it (an executor's reply, a code agent's generated code).
pub(crate) const CODE_TOOL: &str = "code_execution";

/// How an executor's reply opens.
const EXIT_PREFIX: &str = "exitcode:";

/// Whether `text` is an executor's reply: it opens with its exit status.
pub(crate) fn is_reply(text: &str) -> bool {
    text.trim_start().starts_with(EXIT_PREFIX)
}

/// Marks an executor's reply that states a non-zero exit code as failed,
/// its last line the message.
pub(crate) fn mark_exit_status(ev: &mut EventOut<'_>, text: &str) {
    let Some(rest) = text.trim_start().strip_prefix(EXIT_PREFIX) else {
        return;
    };
    let code: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .collect();
    if code.is_empty() || code.chars().all(|c| c == '0') {
        return;
    }
    ev.action_succeeded = false;
    ev.failure_source = Some(FailureSource::Status);
    let message = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    ev.error = Some(ErrorInfo {
        kind: Some(format!("exit code {code}")),
        message: Some(message.trim().chars().take(200).collect()),
    });
}

/// The last fenced code block of a message, the code an executor ran.
pub(crate) fn last_code_block(text: &str) -> Option<&str> {
    let end = text.rfind("```")?;
    let start = text[..end].rfind("```")?;
    let block = &text[start + 3..end];
    // Drop the language tag on the fence line.
    let body = block.split_once('\n').map_or(block, |(_, b)| b);
    (!body.trim().is_empty()).then_some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_zero_exit_fails_the_reply_and_zero_does_not() {
        let mut ev = EventOut::new("e", "r", 1, "executor", "code_execution", true);
        mark_exit_status(&mut ev, "exitcode: 0 (execution succeeded)\nCode output: 2");
        assert!(ev.action_succeeded);
        mark_exit_status(
            &mut ev,
            "exitcode: 1 (execution failed)\nCode output: \nFileNotFoundError: x.csv\n",
        );
        assert!(!ev.action_succeeded);
        assert_eq!(
            ev.error.unwrap().message.unwrap(),
            "FileNotFoundError: x.csv"
        );
    }

    #[test]
    fn the_code_is_the_last_block_without_its_language_tag() {
        let text = "First:\n```sh\nls\n```\nthen\n```python\nprint(1)\n```";
        assert_eq!(last_code_block(text), Some("print(1)\n"));
        assert_eq!(last_code_block("no code here"), None);
    }
}
