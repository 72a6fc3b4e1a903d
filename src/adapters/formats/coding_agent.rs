//! The `coding-agent` format: trajectories of agents whose action is a shell
//! command. mini-SWE-agent transcripts (`messages`: the command in a fenced
//! bash block of the assistant's text or, since mini-SWE-agent 2, in a
//! `bash` tool call; the environment's reply, with its `<returncode>`, as
//! the next user or tool message) and SWE-agent `.traj` files
//! (`trajectory` of thought, action and observation). One run per
//! trajectory; a command that exits non-zero, prints a Python traceback, or
//! is refused or killed by the harness fails its step.

use std::collections::HashSet;
use std::io::Read;

use serde_json::Value;

use crate::adapters::formats::Format;
use crate::adapters::read::shape::Shape;
use crate::adapters::read::value::{describe, nanos_of, set_texts, str_of, text_of};
use crate::adapters::sink::Sink;
use crate::adapters::unreadable::Unreadable;
use crate::classify::mark_inferred;
use crate::record::{ErrorInfo, EventOut, FailureSource, OutcomeReason, RunRec, Src};

/// The speaker of a transcript's actions, as τ-bench and chat readers name it.
const AGENT: &str = "assistant";

/// The tool of a command run in a shell.
const SHELL: &str = "bash";

/// Reads coding-agent trajectories from `r` into `sink`.
pub(crate) fn read(r: impl Read + Send, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let mut k = 0usize;
    crate::adapters::read::lines::values(r, sink, |line, value, sink| {
        let values = match value {
            // A bare list of chat messages (mini-SWE-agent's own dumps) is
            // one transcript; any other list holds trajectories.
            Ok(Value::Array(items))
                if !items.is_empty() && items.iter().all(|m| m.get("role").is_some()) =>
            {
                let mut one = serde_json::Map::new();
                one.insert("messages".to_string(), Value::Array(items));
                vec![Value::Object(one)]
            }
            Ok(Value::Array(items)) => items,
            Ok(v) => vec![v],
            Err(reason) => {
                sink.skip(Some(line), &reason)?;
                return Ok(());
            }
        };
        for v in values {
            match Trajectory::of(&v) {
                Ok(t) => {
                    emit(&v, t, line, k, sink)?;
                    k += 1;
                }
                Err(reason) => sink.skip(Some(line), &reason)?,
            }
        }
        Ok(())
    })?;
    Ok(())
}

/// The two shapes a coding agent's run is kept in.
enum Trajectory<'v> {
    /// mini-SWE-agent: chat messages.
    Messages(&'v [Value]),
    /// SWE-agent: thought, action and observation per step.
    Steps(&'v [Value]),
}

impl<'v> Trajectory<'v> {
    fn of(v: &'v Value) -> Result<Self, Unreadable> {
        let list = |key: &'static str| match v.get(key) {
            Some(Value::Array(items)) => Ok(Some(items.as_slice())),
            Some(other) => Err(Unreadable::mistyped(key, "a list", describe(other))),
            None => Ok(None),
        };
        if let Some(steps) = list("trajectory")? {
            return Ok(Trajectory::Steps(steps));
        }
        if let Some(messages) = list("messages")? {
            return Ok(Trajectory::Messages(messages));
        }
        Err(Unreadable::shape(format!(
            "not a coding-agent trajectory: {} without \"messages\" or \"trajectory\"",
            describe(v)
        )))
    }
}

/// One action and what came back.
#[derive(Default)]
pub(super) struct Step {
    /// The command, or none when the agent's text held no single one.
    pub(super) command: Option<String>,
    /// The agent's text around it.
    pub(super) thought: Option<String>,
    /// The environment's reply.
    pub(super) reply: Option<String>,
    pub(super) timestamp: Option<i128>,
    /// The id of the tool call the command came in, which its reply names.
    pub(super) call_id: Option<String>,
    /// The exception that ended the run, for the harness's closing message
    /// (mini-SWE-agent's `exit` role): its class and message.
    pub(super) crash: Option<(String, String)>,
    /// The tool, where the trajectory names it apart from the command.
    pub(super) tool: Option<String>,
    /// The exit code, where the trajectory keeps it apart from the reply.
    pub(super) exit_code: Option<i64>,
    /// The harness's error in place of a result, where it marks one.
    pub(super) error: Option<String>,
    /// The error is the harness refusing the action (its format, say)
    /// rather than failing to run it.
    pub(super) refused: bool,
    /// A message of the person the agent works for, after the task.
    pub(super) by_user: bool,
}

/// A coding agent's run, read: what [`emit_run`] writes as records.
pub(super) struct CodingRun {
    pub(super) id: String,
    pub(super) task: Option<String>,
    pub(super) steps: Vec<Step>,
    /// True when replies state their return codes in their text, so that
    /// a reply without one was cut short.
    pub(super) codes_in_replies: bool,
    /// The outcome the trajectory states, if it does.
    pub(super) stated: Option<RunRec>,
}

fn emit(
    v: &Value,
    t: Trajectory<'_>,
    line: u64,
    k: usize,
    sink: &mut Sink<'_>,
) -> anyhow::Result<()> {
    let id = run_id(v, k, sink);
    // Only mini-SWE-agent's replies state return codes.
    let codes_in_replies = matches!(t, Trajectory::Messages(_));
    let (task, steps, ending) = match t {
        Trajectory::Messages(messages) => {
            let (task, mut steps, exit, unread) = from_messages(messages);
            for role in unread {
                sink.not_read(&format!("a message of role \"{role}\""));
            }
            let ending = Ending { v, exit };
            steps.extend(ending.crash());
            (task, steps, ending)
        }
        Trajectory::Steps(steps) => (history_task(v), from_steps(steps), Ending { v, exit: None }),
    };
    let task = str_of(v.get("task"))
        .or(task)
        .or_else(|| str_of(v.get("problem_statement")));
    let stated = verdict(&ending, &id);
    emit_run(
        CodingRun {
            id,
            task,
            steps,
            codes_in_replies,
            stated,
        },
        line,
        sink,
    )
}

/// A run's id: the trajectory's own (`instance_id`, a SWE-agent 1.x
/// problem id), else the file's name without its trajectory extensions
/// (`django-1.traj.json`: `django-1`), numbered past the file's first run.
pub(super) fn run_id(v: &Value, k: usize, sink: &mut Sink<'_>) -> String {
    ["oid", "instance_id", "id"]
        .iter()
        .find_map(|key| str_of(v.get(*key)))
        .or_else(|| str_of(v.pointer("/info/instance_id")))
        .or_else(|| replay_problem_id(v))
        .unwrap_or_else(|| {
            let file = sink.file_name();
            let mut stem = std::path::Path::new(&file)
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or(&file);
            while let Some(s) = [".json", ".jsonl", ".traj"]
                .iter()
                .find_map(|e| stem.strip_suffix(e).filter(|s| !s.is_empty()))
            {
                stem = s;
            }
            let stem = sink.claim_stem(stem.to_string());
            match k {
                0 => stem,
                k => format!("{stem}#{k}"),
            }
        })
}

/// Writes a coding agent's run: the task as the user's first message, a
/// step per action, then the run record (the stated outcome, else failed
/// when the last step failed, else unknown).
pub(super) fn emit_run(r: CodingRun, line: u64, sink: &mut Sink<'_>) -> anyhow::Result<()> {
    let CodingRun {
        id: run,
        task,
        steps,
        codes_in_replies,
        stated,
    } = r;
    let src = Src {
        path: sink.path().to_string().into(),
        line,
    };
    let mut events = Vec::with_capacity(steps.len() + 1);
    let mut used = HashSet::new();
    if let Some(task) = &task {
        let mut ev = EventOut::new(format!("{run}#0"), run.clone(), 0, "user", "message", true);
        ev.span_kind = Some("message");
        set_texts(&mut ev, None, Some(task), &sink.settings);
        ev.set_time_nanos(steps.first().and_then(|s| s.timestamp));
        ev.src = Some(src.clone());
        events.push(ev);
    }
    let last = steps.len().saturating_sub(1);
    // Turn 0 is the task's; without one, the first action's, so that a
    // step's turn is its place in the run.
    let first_turn = i64::from(task.is_some());
    for (i, step) in steps.iter().enumerate() {
        let turn = i as i64 + first_turn;
        let id = crate::adapters::read::tree::unique_id(&format!("{run}#{turn}"), i, &mut used);
        if let Some((class, message)) = &step.crash {
            // The run ended on an exception of the harness's own (a model
            // API error, a sandbox fault): the agent's next model call
            // failed.
            let mut ev = EventOut::new(id, run.clone(), turn, AGENT, "model", false);
            ev.span_kind = Some("llm");
            ev.failure_source = Some(FailureSource::Status);
            ev.error = Some(ErrorInfo {
                kind: Some(class.clone()),
                message: Some(message.chars().take(500).collect()),
            });
            ev.set_time_nanos(step.timestamp);
            ev.src = Some(src.clone());
            // Classified like any failure: a rate limit, the provider's.
            sink.settings.infer_failure(&mut ev);
            events.push(ev);
            continue;
        }
        let tool = match (&step.tool, &step.command) {
            (Some(tool), _) => tool.clone(),
            (None, Some(cmd)) if !codes_in_replies => command_name(cmd),
            (None, Some(_)) => SHELL.to_string(),
            (None, None) => "message".to_string(),
        };
        let agent = if step.by_user { "user" } else { AGENT };
        let mut ev = EventOut::new(id, run.clone(), turn, agent, tool, true);
        ev.span_kind = Some(if step.command.is_some() {
            "tool"
        } else {
            "message"
        });
        let input = step.command.as_deref().or(step.thought.as_deref());
        set_texts(&mut ev, input, step.reply.as_deref(), &sink.settings);
        ev.set_time_nanos(step.timestamp);
        ev.src = Some(src.clone());
        judge(&mut ev, step, codes_in_replies && i != last);
        sink.settings.infer_failure(&mut ev);
        // Error text in a reply that exited 0: name the line that says so,
        // not the return code the reply opens with.
        if ev.failure_source == Some(FailureSource::Output)
            && let (Some(reply), Some(err)) = (step.reply.as_deref(), ev.error.as_mut())
            && (return_code(reply).is_some() || step.exit_code.is_some())
        {
            err.message = Some(crate::classify::failure_line(reply));
        }
        events.push(ev);
    }
    let stopped = events.last().is_some_and(|e| !e.action_succeeded);
    let stated = stated
        .unwrap_or_else(|| RunRec::ended(run.as_str(), stopped.then_some(OutcomeReason::Error)));
    for ev in &events {
        sink.emit_event(ev)?;
    }
    sink.emit_run(&RunRec {
        task_id: Some(run.clone()),
        task,
        ..stated
    })?;
    Ok(())
}

/// Whether a step failed: the harness's error in place of a result, else
/// its exit code (kept beside the reply, or stated in it), else a reply to
/// no action (the harness refusing the agent's text). Where
/// replies state return codes (`codes_expected`), one without (a command
/// the harness killed) fails too, but for the run's last action: its reply
/// is the submission that ends the run.
fn judge(ev: &mut EventOut<'_>, step: &Step, codes_expected: bool) {
    let (said, by_harness) = match (&step.error, &step.reply) {
        (Some(error), _) => (error.as_str(), true),
        (None, Some(reply)) => (reply.as_str(), false),
        (None, None) => return,
    };
    let failed = |ev: &mut EventOut<'_>, kind: Option<&str>, message: String| {
        ev.action_succeeded = false;
        ev.failure_source = Some(FailureSource::Status);
        ev.error = Some(ErrorInfo {
            kind: kind.map(str::to_string),
            message: Some(message),
        });
    };
    if let Some(line) = refusal(said).or(step.refused.then_some(said)) {
        let line = line.chars().take(200).collect();
        return failed(ev, Some(crate::classify::HARNESS_REFUSAL), line);
    }
    if by_harness {
        return failed(ev, None, crate::classify::failure_line(said));
    }
    match step.exit_code.or_else(|| return_code(said)) {
        Some(0) => {}
        Some(1) if step.command.as_deref().is_some_and(answers_with_one) => {}
        Some(code) => failed(
            ev,
            None,
            format!("exit code {code}{}", first_output_line(said)),
        ),
        None if step.command.is_none() || codes_expected => {
            mark_inferred(ev, FailureSource::Output, first_line(said));
        }
        None => {}
    }
}

/// Programs whose exit code 1 is an answer, not a failure: no line
/// matched (`grep`, `rg`), the files differ (`diff`, `cmp`), the test was
/// false (`test`, `[`).
const ANSWER_WITH_ONE: &[&str] = &["grep", "egrep", "fgrep", "rg", "diff", "cmp", "test", "["];

/// True when the program whose exit code a command returns (its last
/// line's last command, after `&&`, `||`, `;` or a pipe) answers with 1.
fn answers_with_one(command: &str) -> bool {
    let Some(line) = command.lines().map(str::trim).rfind(|l| !l.is_empty()) else {
        return false;
    };
    let last = line
        .replace("&&", ";")
        .replace("||", ";")
        .rsplit([';', '|'])
        .next()
        .unwrap_or("")
        .to_string();
    let program = last.split_whitespace().next().unwrap_or("");
    ANSWER_WITH_ONE.contains(&program.rsplit('/').next().unwrap_or(program))
}

/// What a coding agent's harness answers when it refuses an action instead
/// of running it (its linter, its syntax and format checks, a blocked
/// command, an edit whose text to replace is not in the file), as
/// SWE-agent, mini-SWE-agent and OpenHands word it: the step failed,
/// though no command ran to exit non-zero.
const REFUSALS: &[&str] = &[
    "has introduced new syntax error",
    "edit was not applied",
    "and was not executed",
    "was not formatted correctly",
    "is not supported by this environment",
    "provide exactly one action",
    // An editor tool's text to replace was not in the file (OpenHands'
    // and SWE-agent's editors).
    "no exact match found",
    "no replacement was performed",
];

/// The line of a reply in which the harness refuses the action, if it does
/// (within its first lines, where the harness says it).
fn refusal(reply: &str) -> Option<&str> {
    reply.lines().take(5).map(str::trim).find(|l| {
        let l = l.to_ascii_lowercase();
        REFUSALS.iter().any(|r| l.contains(r))
    })
}

/// The return code a reply states: the `<returncode>N</returncode>` a
/// mini-SWE-agent observation opens with, or a process result's own field
/// (`'returncode': N`, `"returncode": N`, `returncode=N`) that early
/// versions printed whole as the reply's first line (not a command's
/// output that happens to print one).
fn return_code(reply: &str) -> Option<i64> {
    if let Some(at) = reply.find("<returncode>") {
        let start = at + "<returncode>".len();
        let end = start + reply[start..].find("</returncode>")?;
        return reply[start..end].trim().parse().ok();
    }
    let head = first_line(reply);
    let at = head.find("returncode")? + "returncode".len();
    let value = head[at..]
        .trim_start_matches(['\'', '"'])
        .trim_start()
        .strip_prefix([':', '='])?
        .trim_start();
    let end = value
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(value.len(), |(i, _)| i);
    value[..end].parse().ok()
}

/// The task of a SWE-agent trajectory: the last user message of its
/// `history` before the agent's first reply (after any demonstration),
/// which states the issue.
fn history_task(v: &Value) -> Option<String> {
    let history = v.get("history")?.as_array()?;
    history
        .iter()
        .filter(|m| m.get("is_demo").and_then(Value::as_bool) != Some(true))
        .take_while(|m| str_of(m.get("role")).as_deref() != Some("assistant"))
        .filter(|m| str_of(m.get("role")).as_deref() == Some("user"))
        .filter_map(|m| m.get("content").and_then(text_of))
        .last()
}

/// The id of the problem a SWE-agent 1.x run was given, from its
/// `replay_config` (kept as a JSON string).
fn replay_problem_id(v: &Value) -> Option<String> {
    let config = match v.get("replay_config")? {
        Value::String(text) => serde_json::from_str(text).ok()?,
        other => other.clone(),
    };
    str_of(config.pointer("/problem_statement/id"))
}

/// ": " and the line of a reply's output that says what failed (a
/// traceback's exception, an error line), else its first line, for an
/// error message.
fn first_output_line(reply: &str) -> String {
    let reply = crate::classify::without_ansi(reply);
    // The exception the harness met running the command says more than
    // the output it left.
    let exception = reply
        .split_once("<exception>")
        .and_then(|(_, rest)| rest.split_once("</exception>"))
        .map(|(inner, _)| inner.trim())
        .filter(|e| !e.is_empty());
    let body = exception.unwrap_or_else(|| {
        reply
            .find("<output>")
            .map_or(&*reply, |at| &reply[at + "<output>".len()..])
    });
    let line = crate::classify::stated_failure(body).unwrap_or_else(|| {
        body.lines()
            .map(str::trim)
            .find(|l| !l.is_empty() && !l.starts_with('<'))
            .unwrap_or("")
    });
    if line.is_empty() {
        String::new()
    } else {
        format!(": {}", line.chars().take(200).collect::<String>())
    }
}

fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// The task and the steps of a mini-SWE-agent transcript: each assistant
/// message is a step (or one per tool call, since mini-SWE-agent 2 calls
/// a `bash` tool), answered by the user or tool message after it (a tool's
/// reply by the call's id); the first user message is the task. The
/// closing `exit` message is a step only when an exception ended the run.
fn from_messages(messages: &[Value]) -> (Option<String>, Vec<Step>, Option<&Value>, Vec<String>) {
    let mut task = None;
    let mut steps: Vec<Step> = Vec::new();
    let mut exit = None;
    let mut unread = Vec::new();
    for m in messages {
        let role = response_role(m);
        let text = m.get("content").and_then(text_of);
        let timestamp =
            nanos_of(m.get("timestamp")).or_else(|| nanos_of(m.pointer("/extra/timestamp")));
        match role {
            "assistant" => {
                let text = text
                    .or_else(|| response_text(m))
                    .filter(|t| !t.trim().is_empty())
                    .or_else(|| str_of(m.get("reasoning_content")))
                    .unwrap_or_default();
                let calls = tool_calls(m);
                if calls.is_empty() {
                    let blocks = command_blocks(&text);
                    steps.push(Step {
                        command: (blocks.len() == 1).then(|| blocks[0].clone()),
                        thought: Some(text.clone()),
                        timestamp,
                        ..Step::default()
                    });
                }
                for (command, call_id) in calls {
                    steps.push(Step {
                        command: Some(command),
                        thought: Some(text.clone()),
                        timestamp,
                        call_id,
                        ..Step::default()
                    });
                }
            }
            "user" | "tool" => {
                let called = str_of(m.get("tool_call_id")).or_else(|| str_of(m.get("call_id")));
                let by_id = called.as_ref().and_then(|id| {
                    steps
                        .iter()
                        .position(|s| s.reply.is_none() && s.call_id.as_ref() == Some(id))
                });
                let last = steps
                    .len()
                    .checked_sub(1)
                    .filter(|&k| steps[k].reply.is_none());
                let reply = Reply::of(m, text);
                match by_id.or(last) {
                    Some(k) => {
                        let step = &mut steps[k];
                        step.reply = reply.text.or(Some(String::new()));
                        step.exit_code = step.exit_code.or(reply.exit_code);
                        if let Some(refused) = reply.refused {
                            step.error = Some(refused);
                            step.refused = true;
                        }
                    }
                    None if steps.is_empty() => task = task.or(reply.text),
                    // The harness refused a turn it did not keep (a reply
                    // with no action in it): that turn is a failed step.
                    None if reply.refused.is_some() => steps.push(Step {
                        reply: reply.text,
                        error: reply.refused,
                        refused: true,
                        timestamp,
                        ..Step::default()
                    }),
                    None => {}
                }
            }
            // The run's end: its exit status, read by `crash`.
            "exit" => exit = Some(m),
            // The agent's instructions, no step.
            "system" => {}
            other => unread.push(other.to_string()),
        }
    }
    (task, steps, exit, unread)
}

/// How a trajectory says its run ended: the closing `exit` message's
/// `extra`, else the trajectory's `info` (older versions, SWE-agent, or a
/// run that died before its first turn).
struct Ending<'v> {
    v: &'v Value,
    exit: Option<&'v Value>,
}

impl Ending<'_> {
    fn stated(&self, key: &str) -> Option<String> {
        self.exit
            .and_then(|m| str_of(m.pointer(&format!("/extra/{key}"))))
            .or_else(|| str_of(self.v.pointer(&format!("/info/{key}"))))
            .filter(|t| !t.trim().is_empty())
    }

    /// True when an exception ended the run with `status`: the status
    /// names one (`RateLimitError`), or a traceback was kept beside it
    /// whatever its class is called (litellm's `Timeout` is the model
    /// API's, not a limit's).
    fn by_exception(&self, status: &str) -> bool {
        crashed(status) || self.stated("traceback").is_some()
    }

    /// The step of the exception that ended the run; none for a run that
    /// submitted or reached a limit.
    fn crash(&self) -> Option<Step> {
        let status = self.stated("exit_status")?;
        if !self.by_exception(&status) {
            return None;
        }
        let message = self
            .stated("exception_str")
            .or_else(|| self.stated("error"))
            .or_else(|| self.exit.and_then(|m| m.get("content").and_then(text_of)))
            .unwrap_or_else(|| status.clone());
        Some(Step {
            timestamp: self
                .exit
                .and_then(|m| nanos_of(m.pointer("/extra/timestamp"))),
            crash: Some((status, message)),
            ..Step::default()
        })
    }
}

/// The commands of an assistant message's tool calls (the `command`
/// argument, else the arguments as given), each with the call's id.
/// The role of a transcript's message. A Responses API model's turn is
/// kept whole (`{"object": "response", "output": [items]}`) and is the
/// assistant's; a `function_call_output` item answers a call.
fn response_role(m: &Value) -> &str {
    if let Some(role) = m.get("role").and_then(Value::as_str) {
        return role;
    }
    let is = |key: &str, value: &str| m.get(key).and_then(Value::as_str) == Some(value);
    if is("object", "response") {
        "assistant"
    } else if is("type", "function_call_output") {
        "tool"
    } else {
        ""
    }
}

/// The text of a Responses API turn: its message items' output text.
fn response_text(m: &Value) -> Option<String> {
    let items = m.get("output")?.as_array()?;
    let text: Vec<String> = items
        .iter()
        .filter(|i| i.get("type").and_then(Value::as_str) == Some("message"))
        .filter_map(|i| i.get("content").and_then(text_of))
        .collect();
    (!text.is_empty()).then(|| text.join("\n"))
}

/// What a reply to an action says, read as the harness wrote it: its text,
/// and its exit code where the harness kept it apart (`extra.returncode`)
/// or wrote the reply as a process result's JSON (`{"returncode": N,
/// "output": …}`, mini-SWE-agent 2's default template; the text is then
/// the command's output and the exception the harness met running it).
/// An error the harness interrupted the agent with instead of running
/// anything (`extra.interrupt_type`, such as a format error) is a refusal.
struct Reply {
    text: Option<String>,
    exit_code: Option<i64>,
    refused: Option<String>,
}

impl Reply {
    fn of(m: &Value, text: Option<String>) -> Reply {
        let text = text.or_else(|| m.get("output").and_then(text_of));
        let result = text
            .as_deref()
            .filter(|t| t.trim_start().starts_with('{'))
            .and_then(|t| serde_json::from_str::<Value>(t).ok())
            .filter(|r| r.get("returncode").is_some_and(Value::is_i64));
        let exit_code = (result.as_ref())
            .and_then(|r| r.get("returncode"))
            .or_else(|| m.pointer("/extra/returncode"))
            .and_then(Value::as_i64);
        let text = match &result {
            Some(r) => {
                let said = |key| str_of(r.get(key)).filter(|t| !t.trim().is_empty());
                let parts: Vec<String> = [said("output"), said("exception_info")]
                    .into_iter()
                    .flatten()
                    .collect();
                Some(parts.join("\n"))
            }
            None => text,
        };
        let refused = str_of(m.pointer("/extra/interrupt_type"))
            .filter(|kind| kind.ends_with("Error"))
            .map(|kind| {
                let said = text.as_deref().unwrap_or_default();
                let inner = said
                    .split_once("<error>")
                    .and_then(|(_, rest)| rest.split_once("</error>"))
                    .map_or(said, |(inner, _)| inner);
                format!("{kind}: {}", first_line(inner))
            });
        Reply {
            text,
            exit_code,
            refused,
        }
    }
}

fn tool_calls(m: &Value) -> Vec<(String, Option<String>)> {
    if let Some(Value::Array(items)) = m.get("output")
        && m.get("object").and_then(Value::as_str) == Some("response")
    {
        return items
            .iter()
            .filter(|i| i.get("type").and_then(Value::as_str) == Some("function_call"))
            .filter_map(|i| Some((call_command(i.get("arguments")?)?, str_of(i.get("call_id")))))
            .collect();
    }
    let Some(Value::Array(calls)) = m.get("tool_calls") else {
        return Vec::new();
    };
    calls
        .iter()
        .filter_map(|c| {
            Some((
                call_command(c.pointer("/function/arguments")?)?,
                str_of(c.get("id")),
            ))
        })
        .collect()
}

/// The command a tool call's arguments give (`{"command": …}`, possibly
/// JSON-encoded), else the arguments whole.
fn call_command(args: &Value) -> Option<String> {
    let parsed = match args {
        Value::String(s) => serde_json::from_str::<Value>(s).unwrap_or(args.clone()),
        other => other.clone(),
    };
    str_of(parsed.get("command")).or_else(|| match &parsed {
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    })
}

/// True for an exit status that names an exception (`RateLimitError`,
/// `InternalServerError`, `TimeoutExpired`): the harness crashed rather
/// than the agent submitting or running out of its limits.
fn crashed(status: &str) -> bool {
    let s = status.to_ascii_lowercase();
    ["error", "exception", "expired"]
        .iter()
        .any(|w| s.ends_with(w))
}

/// The steps of a SWE-agent trajectory.
fn from_steps(steps: &[Value]) -> Vec<Step> {
    steps
        .iter()
        .map(|s| Step {
            command: str_of(s.get("action"))
                .map(|a| a.trim().to_string())
                .filter(|a| !a.is_empty()),
            thought: str_of(s.get("thought")).or_else(|| str_of(s.get("response"))),
            reply: s.get("observation").and_then(text_of),
            timestamp: nanos_of(s.get("timestamp")),
            ..Step::default()
        })
        .collect()
}

/// The commands of fenced shell blocks (```bash, ```sh, ```shell, and
/// mini-SWE-agent's ```mswea_bash_command since its 1.x, or any other
/// fence naming bash) in text.
fn command_blocks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("```") {
        let after = &rest[at + 3..];
        let Some(eol) = after.find('\n') else { break };
        let lang = after[..eol].trim();
        let body = &after[eol + 1..];
        let Some(close) = body.find("```") else { break };
        // A harness may name its own fence (`mswea_bash_command`, a fork's
        // `leana_bash_command`): any language naming bash is a command.
        if matches!(lang, "sh" | "shell" | "zsh") || lang.contains("bash") {
            out.push(body[..close].trim_end().to_string());
        }
        rest = &body[close + 3..];
    }
    out
}

/// An SWE-agent action's command: its first word (`open`, `edit`,
/// `python`, `submit`).
fn command_name(action: &str) -> String {
    action
        .split_whitespace()
        .next()
        .unwrap_or(SHELL)
        .chars()
        .take(64)
        .collect()
}

/// The run's verdict where the file records one: a score or reward (1
/// solved, less not), a boolean `resolved`, `success` or `is_correct`, or
/// SWE-agent's and mini-SWE-agent's `info.exit_status` when the run ended
/// without submitting (cost or step limit, format errors, a crash).
fn verdict(ending: &Ending<'_>, run: &str) -> Option<RunRec> {
    let v = ending.v;
    for key in ["gold_score", "score", "reward"] {
        if let Some(r) = v.get(key).and_then(Value::as_f64) {
            return Some(RunRec::scored(run, r));
        }
    }
    for key in ["resolved", "success", "is_correct"] {
        if let Some(b) = v.get(key).and_then(Value::as_bool) {
            return Some(RunRec::judged(run, b));
        }
    }
    // SWE-agent's exit status: `submitted` (perhaps with what forced it)
    // ends a run with an answer; anything else (`exit_cost`,
    // `exit_context`, `exit_format`, `early_exit`, an error) without one.
    let status = str_of(v.pointer("/info/exit_status"))?;
    let lower = status.to_ascii_lowercase();
    if lower.contains("submit") {
        return None;
    }
    // An exception first: a `RateLimitError` or the model API's
    // `Timeout` is an error, not a limit the run reached.
    let reason = if ending.by_exception(&status) {
        OutcomeReason::Error
    } else if ["cost", "context", "time", "limit", "step"]
        .iter()
        .any(|w| lower.contains(w))
    {
        OutcomeReason::Timeout
    } else if lower.contains("error") {
        OutcomeReason::Error
    } else {
        OutcomeReason::NotSubmitted
    };
    Some(RunRec::failed(run, reason).saying(&status))
}

/// The `coding-agent` row of the format table.
pub(crate) const FORMAT: Format = Format {
    name: "coding-agent",
    help: "Coding-agent trajectories: mini-SWE-agent transcripts (shell commands in the assistant's text or `bash` tool calls; `<returncode>` or JSON process-result replies) and SWE-agent `.traj` files.",
    claims: Some(claims),
    read: |r, _, sink| read(r, sink),
};

/// A coding agent's trajectory: a transcript (`messages`, or a bare list
/// of them) whose actions are shell commands in the text (a fenced block,
/// and no structured tool calls) or whose replies carry mini-SWE-agent's
/// `<returncode>`; or a SWE-agent `.traj` object (`trajectory` beside
/// `history` or `info`, or too long to see past).
fn claims(shape: &Shape<'_>) -> bool {
    let return_codes = shape.mentions("<returncode>") && shape.mentions("</returncode>");
    let shell_blocks = [
        "```bash\\n",
        "```sh\\n",
        "```shell\\n",
        "```mswea_bash_command\\n",
    ]
    .iter()
    .any(|b| shape.mentions(b));
    let tool_calls = ["\"tool_calls\"", "\"tool_use\"", "\"function_call\""]
        .iter()
        .any(|k| calls_in(shape.head, k));
    let messages = shape.has("messages") || (shape.top_is_list && shape.has("role"));
    let transcript = messages && (return_codes || (shell_blocks && !tool_calls));
    let traj = !shape.top_is_list
        && shape.has("trajectory")
        && (shape.has("history") || shape.has("info") || shape.cut);
    // A mini-SWE-agent trajectory names itself (its `info.mini_version`,
    // its `trajectory_format`), whatever template its replies follow: the
    // default's are JSON process results, not `<returncode>` tags.
    let named = !shape.top_is_list
        && shape.has("messages")
        && (shape.has("trajectory_format") || shape.mentions("\"mini_version\""));
    transcript || traj || named
}

/// Whether `key` appears in `head` with a value that holds calls: not
/// `null` or `[]` (an API response's empty `"tool_calls": null`), and not
/// as a string value (`"type": "tool_use"` holds one).
fn calls_in(head: &[u8], key: &str) -> bool {
    memchr::memmem::find_iter(head, key.as_bytes()).any(|at| {
        let after = head[at + key.len()..].trim_ascii_start();
        let Some(value) = after.strip_prefix(b":") else {
            // `"type": "tool_use"`: the key is a value, a call's block.
            return head[..at].trim_ascii_end().ends_with(b":");
        };
        let value = value.trim_ascii_start();
        let empty_list = value
            .strip_prefix(b"[")
            .is_some_and(|v| v.trim_ascii_start().starts_with(b"]"));
        !(empty_list || value.starts_with(b"null") || value.starts_with(b"false"))
    })
}

#[cfg(test)]
mod tests {

    use crate::adapters::split_records;
    use serde_json::{Value, json};

    fn records(input: &str) -> (Vec<Value>, Vec<Value>, Value) {
        split_records(
            crate::adapters::formats::coding_agent::FORMAT,
            "t.json",
            input,
        )
    }

    fn said(text: &str) -> Value {
        json!({"role": "assistant", "content": text})
    }

    /// mini-SWE-agent 2's default template: tool calls answered by JSON
    /// process results, a format error the harness interrupted with, and
    /// a Responses API turn; detected by the version it names.
    #[test]
    fn json_process_results_refusals_and_responses_turns() {
        let call = |id: &str, command: &str| {
            json!({"role": "assistant", "content": "Let me check.", "tool_calls": [
                {"id": id, "type": "function",
                 "function": {"name": "bash", "arguments": json!({"command": command}).to_string()}}]})
        };
        let result = |id: &str, code: i64, output: &str, exception: &str| {
            let mut r = json!({"returncode": code, "output": output});
            if !exception.is_empty() {
                r["exception_info"] = json!(exception);
            }
            json!({"role": "tool", "tool_call_id": id,
                   "content": serde_json::to_string_pretty(&r).unwrap(),
                   "extra": {"returncode": code}})
        };
        let turn = json!({"object": "response", "output": [
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "Again."}]},
            {"type": "function_call", "call_id": "c3", "name": "bash",
             "arguments": "{\"command\": \"make\"}"}]});
        let traj = json!({
            "info": {"mini_version": "2.4.6", "exit_status": "LimitsExceeded"},
            "messages": [
                {"role": "system", "content": "You can run commands."},
                {"role": "user", "content": "Fix the import"},
                call("c1", "ls /nope"),
                result("c1", 2, "ls: cannot access '/nope'\n", ""),
                {"role": "user", "content": "Format error:\n\n<error>\nExpected exactly 1 action, found 0.\n</error>\n",
                 "extra": {"interrupt_type": "FormatError"}},
                call("c2", "sleep 99"),
                result("c2", -1, "", "An error occurred while executing the command: timed out"),
                turn,
                {"type": "function_call_output", "call_id": "c3",
                 "output": "{\"returncode\": 0, \"output\": \"built\"}"},
                {"role": "user", "content": "Typed by the person watching",
                 "extra": {"interrupt_type": "UserInterruption"}},
            ],
            "trajectory_format": "mini-swe-agent-1.1"
        })
        .to_string();
        assert_eq!(
            crate::adapters::detect::detect(None, traj.as_bytes()).name,
            "coding-agent"
        );
        let (evs, runs, _) = records(&traj);
        let steps: Vec<(&str, bool, &str)> = evs
            .iter()
            .map(|e| {
                (
                    e["action_taken"]["tool_name"].as_str().unwrap(),
                    e["action_succeeded"].as_bool().unwrap(),
                    e["error"]["message"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            steps,
            [
                ("message", true, ""),
                ("bash", false, "exit code 2: ls: cannot access '/nope'"),
                (
                    "message",
                    false,
                    "FormatError: Expected exactly 1 action, found 0."
                ),
                (
                    "bash",
                    false,
                    "exit code -1: An error occurred while executing the command: timed out"
                ),
                ("bash", true, ""),
            ]
        );
        assert_eq!(evs[2]["error"]["type"], crate::classify::HARNESS_REFUSAL);
        assert_eq!(evs[4]["output"], "built");
        assert_eq!(runs[0]["outcome"], "failed");
        assert_eq!(runs[0]["reason"], "timeout");
    }

    fn reply(text: &str) -> Value {
        json!({"role": "user", "content": text})
    }

    #[test]
    fn tool_calls_are_paired_with_their_replies_by_id_and_an_exception_ends_the_run() {
        let call = |id: &str, cmd: &str| {
            json!({"index": 0, "id": id, "type": "function",
                   "function": {"name": "bash", "arguments": json!({"command": cmd}).to_string()}})
        };
        let tool =
            |id: &str, text: &str| json!({"role": "tool", "tool_call_id": id, "content": text});
        let t = json!({"info": {"exit_status": "RateLimitError"}, "messages": [
            {"role": "system", "content": "You can run bash."},
            reply("Fix parse()."),
            {"role": "assistant", "content": "", "reasoning_content": "Look first.",
             "tool_calls": [call("a", "ls"), call("b", "cat x.py")]},
            // Answered out of order: each reply is still its own call's.
            tool("b", "<returncode>1</returncode>\n<output>\ncat: x.py: No such file\n</output>"),
            tool("a", "<returncode>0</returncode>\n<output>\ny.py\n</output>"),
            {"role": "exit", "content": "quota", "extra": {"exit_status": "RateLimitError",
             "exception_str": "litellm.RateLimitError: You exceeded your current quota"}}
        ]});
        let (evs, runs, _) = records(&t.to_string());
        let steps: Vec<(&str, &str, bool)> = evs[1..]
            .iter()
            .map(|e| {
                (
                    e["action_taken"]["tool_name"].as_str().unwrap(),
                    e["input"].as_str().unwrap_or(""),
                    e["action_succeeded"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            steps,
            vec![
                ("bash", "ls", true),
                ("bash", "cat x.py", false),
                ("model", "", false)
            ]
        );
        assert!(evs[1]["output"].as_str().unwrap().contains("y.py"));
        assert_eq!(evs[3]["error"]["type"], "RateLimitError");
        assert_eq!(evs[3]["failure_classification"], "environment_constraint");
        assert_eq!(evs[3]["failure_cause"], "rate_limit");
        // An exception's name is an error, though it says "limit".
        assert_eq!(runs[0]["reason"], "error");
        // Without an `exit` message, `info` names the exception.
        let mut bare = t.clone();
        bare["messages"].as_array_mut().unwrap().pop();
        let (evs, _, _) = records(&bare.to_string());
        assert_eq!(evs.last().unwrap()["error"]["type"], "RateLimitError");
        assert_eq!(evs.len(), 4);
        // A submitted run's closing message is no step (the integration
        // test on a real file checks that it warns of nothing).
        let submitted = json!({"info": {"exit_status": "Submitted"}, "messages": [
            reply("Fix parse()."), said("```bash\necho done\n```"),
            reply("<returncode>0</returncode>\n<output>\n</output>"),
            {"role": "exit", "content": "diff", "extra": {"exit_status": "Submitted"}}
        ]});
        let (evs, _, _) = records(&submitted.to_string());
        assert_eq!(evs.len(), 2);
        // The model API's `Timeout` left a traceback: an exception ended
        // the run, no time limit did.
        let timed_out = json!({"info": {"exit_status": "Timeout",
            "traceback": "Traceback (most recent call last):\n  ...\nlitellm.Timeout: Connection timed out",
            "exception_str": "litellm.Timeout: Connection timed out after 600.0 seconds."},
            "messages": [reply("Fix parse()."),
            {"role": "exit", "content": "litellm.Timeout: Connection timed out after 600.0 seconds.",
             "extra": {"exit_status": "Timeout", "traceback": "Traceback (most recent call last):"}}]});
        let (evs, runs, _) = records(&timed_out.to_string());
        assert_eq!(evs.last().unwrap()["error"]["type"], "Timeout");
        assert_eq!(evs.last().unwrap()["action_succeeded"], false);
        assert_eq!(runs[0]["reason"], "error");
        // Where only the closing message keeps the traceback, the same.
        let mut closing_only = timed_out.clone();
        closing_only["info"]
            .as_object_mut()
            .unwrap()
            .remove("traceback");
        let (_, runs, _) = records(&closing_only.to_string());
        assert_eq!(runs[0]["reason"], "error");
        // The runner's own exception before any model call: its message
        // is the one `info.error` keeps.
        let runner = json!({"info": {"exit_status": "TypeError",
            "error": "render() got multiple values for keyword argument 'image'",
            "traceback": "Traceback (most recent call last):"}, "messages": []});
        let (evs, _, _) = records(&runner.to_string());
        assert_eq!(
            evs[0]["error"]["message"],
            "render() got multiple values for keyword argument 'image'"
        );
        let limited = json!({"info": {"exit_status": "LimitsExceeded"}, "messages": [reply("q")]});
        let (evs, runs, _) = records(&limited.to_string());
        assert_eq!(evs.len(), 1);
        assert_eq!(runs[0]["reason"], "timeout");
        // Which limit, in the harness's word.
        assert_eq!(runs[0]["message"], "LimitsExceeded");
    }

    #[test]
    fn a_refused_edit_or_command_is_a_failed_step() {
        let traj = json!({"trajectory": [
            {"action": "edit 3:3\n  return x\nend_of_edit", "thought": "fix it",
             "observation": "Your proposed edit has introduced new syntax error(s). Please read this error message carefully and then retry editing the file.\n\nERRORS:\n- E999 IndentationError: unexpected indent"},
            {"action": "for i in", "thought": "loop",
             "observation": "Your bash command contained syntax errors and was NOT executed. Please fix the syntax errors and try again."},
            {"action": "cat a.py", "thought": "look", "observation": "def f():\n    return 1"}
        ], "info": {"exit_status": "submitted"}});
        let (evs, _, _) = split_records(super::FORMAT, "fix.traj", &traj.to_string());
        let steps: Vec<(bool, &str)> = evs[evs.len() - 3..]
            .iter()
            .map(|e| {
                (
                    e["action_succeeded"].as_bool().unwrap(),
                    e["error"]["message"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert!(
            !steps[0].0 && steps[0].1.starts_with("Your proposed edit has introduced"),
            "{steps:?}"
        );
        assert!(
            !steps[1].0 && steps[1].1.contains("was NOT executed"),
            "{steps:?}"
        );
        assert!(steps[2].0, "{steps:?}");
    }

    #[test]
    fn mini_swe_agent_commands_fail_on_a_non_zero_return_code_or_a_traceback() {
        let t = json!({"oid": "repo-1", "task": "fix the bug", "gold_score": 0, "messages": [
            {"role": "system", "content": "You are a helpful assistant"},
            reply("<pr_description>fix the bug</pr_description>"),
            said("THOUGHT: look around\n\n```bash\nls -la\n```"),
            reply("<returncode>0</returncode>\n<output>\nsetup.py\n</output>"),
            said("THOUGHT: run it\n\n```bash\npython repro.py\n```"),
            reply("<returncode>0</returncode>\n<output>\nTraceback (most recent call last):\n  File \"repro.py\"\nKeyError: 'x'\n</output>"),
            said("THOUGHT: read\n\n```bash\ncat nothing\n```"),
            reply("<returncode>1</returncode>\n<output>\n</output>"),
            said("Two at once\n```bash\nls\n```\n```bash\npwd\n```"),
            reply("Please always provide EXACTLY ONE action in triple backticks, found 2 actions."),
            said("THOUGHT: done\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff\n```"),
            reply("diff --git a/x.py b/x.py\n")
        ]});
        let (evs, runs, source) = records(&t.to_string());
        let got: Vec<_> = evs
            .iter()
            .map(|e| {
                (
                    e["action_taken"]["tool_name"].as_str().unwrap(),
                    e["action_succeeded"].as_bool().unwrap(),
                    e["failure_source"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("message", true, ""),
                ("bash", true, ""),
                ("bash", false, "output"),
                ("bash", false, "status"),
                ("message", false, "status"),
                ("bash", true, ""),
            ]
        );
        assert_eq!(evs[0]["agent_id"], "user");
        assert_eq!(evs[1]["agent_id"], "assistant");
        assert_eq!(evs[1]["input"], "ls -la");
        // A traceback is named by the exception it ends with.
        assert_eq!(evs[2]["error"]["message"], "KeyError: 'x'");
        assert_eq!(evs[3]["error"]["message"], "exit code 1");
        assert_eq!(evs[3]["failure_inferred"], json!(null));
        assert_eq!(runs[0]["run_id"], "repo-1");
        assert_eq!(runs[0]["outcome"], "failed");
        assert_eq!(runs[0]["task"], "fix the bug");
        assert_eq!(source["skipped"], 0);
    }

    #[test]
    fn a_command_the_harness_killed_fails_and_the_verdict_decides_the_outcome() {
        let t = json!({"info": {"exit_status": "Submitted"}, "messages": [
            reply("do it"),
            said("```bash\nsleep 999\n```"),
            reply("The last command <command>sleep 999</command> timed out and has been killed."),
            said("```bash\necho done\n```"),
            reply("<returncode>0</returncode>\n<output>\ndone\n</output>"),
            said("all done")
        ]});
        let (evs, runs, _) = records(&t.to_string());
        assert_eq!(evs[1]["action_succeeded"], false);
        assert_eq!(
            evs[1]["error"]["message"],
            "The last command <command>sleep 999</command> timed out and has been killed."
        );
        assert_eq!(evs[3]["action_taken"]["tool_name"], "message");
        assert_eq!(evs[3]["action_succeeded"], true);
        // Submitted is no verdict on the fix: the run recovered.
        assert_eq!(runs[0]["outcome"], "unknown");
        assert_eq!(runs[0]["run_id"], "t");
        let limits = json!({"info": {"exit_status": "LimitsExceeded"}, "messages": [reply("q"), said("hm")]});
        let (_, runs, _) = records(&limits.to_string());
        assert_eq!(runs[0]["outcome"], "failed");
    }

    #[test]
    fn swe_agent_traj_steps_are_commands() {
        let t = json!({"trajectory": [
            {"action": "open src/app.py", "observation": "[File: src/app.py (10 lines total)]", "thought": "look"},
            {"action": "python reproduce.py\n", "observation": "Traceback (most recent call last):\n  File \"reproduce.py\", line 1\nNameError: name 'x' is not defined", "thought": "run"},
            {"action": "submit", "observation": "diff --git a/src/app.py b/src/app.py", "thought": "done"}
        ], "history": [], "info": {"exit_status": "submitted", "instance_id": "app-7"}});
        let (evs, runs, _) = records(&t.to_string());
        let tools = crate::adapters::tool_names(&evs);
        assert_eq!(tools, ["open", "python", "submit"]);
        assert_eq!(evs[1]["action_succeeded"], false);
        assert_eq!(evs[1]["failure_source"], "output");
        assert_eq!(evs[2]["action_succeeded"], true);
        assert_eq!(runs[0]["run_id"], "app-7");
        assert_eq!(runs[0]["outcome"], "unknown");
    }

    #[test]
    fn swe_agent_traj_task_is_the_issue_after_the_demonstration() {
        let t = json!({"trajectory": [
            {"action": "python reproduce.py", "observation": "ValueError: bad", "thought": "run"}
        ], "history": [
            {"role": "system", "content": "SETTING: you are a programmer"},
            {"role": "user", "content": "Here is a demonstration: ...", "is_demo": true},
            {"role": "user", "content": [{"type": "text", "text": "ISSUE: parse raises ValueError: bad"}]},
            {"role": "assistant", "content": "Let me reproduce it."},
            {"role": "user", "content": "ValueError: bad"}
        ], "info": {"exit_status": "submitted"},
           "replay_config": "{\"problem_statement\": {\"id\": \"repo-i1\", \"type\": \"github\"}}"});
        let (evs, runs, _) = records(&t.to_string());
        assert_eq!(runs[0]["task"], "ISSUE: parse raises ValueError: bad");
        assert_eq!(runs[0]["run_id"], "repo-i1");
        assert_eq!(evs[0]["agent_id"], "user");
        // Without the demonstration's flag, the last user message before
        // the agent's first reply is still the issue.
        let mut plain = t.clone();
        plain["history"][1]
            .as_object_mut()
            .unwrap()
            .remove("is_demo");
        let (_, runs, _) = records(&plain.to_string());
        assert_eq!(runs[0]["task"], "ISSUE: parse raises ValueError: bad");
    }

    #[test]
    fn a_process_result_printed_whole_states_its_return_code() {
        let reply = "Observation: {'args': ['bash', '-c', 'ls'], 'returncode': 0, 'stdout': 'a'}";
        assert_eq!(super::return_code(reply), Some(0));
        assert_eq!(
            super::return_code("CompletedProcess(args='x', returncode=2)"),
            Some(2)
        );
        assert_eq!(super::return_code("{\"returncode\": -9}"), Some(-9));
        // Only where the reply opens with it, not in a command's output.
        assert_eq!(super::return_code("ok\nprinted returncode=1 later"), None);
        let t = json!([
            {"role": "user", "content": "Your task: fix it"},
            {"role": "assistant", "content": "```bash\necho hi\n```"},
            {"role": "user", "content": reply},
            {"role": "assistant", "content": "```bash\nexit 1\n```"},
            {"role": "user", "content": "Observation: {'returncode': 1, 'stdout': ''}"},
            {"role": "assistant", "content": "```bash\necho done\n```"},
            {"role": "user", "content": "EMPTY_OUTPUT"}
        ]);
        let (evs, _, _) = records(&t.to_string());
        let ok: Vec<_> = evs.iter().map(|e| e["action_succeeded"].clone()).collect();
        assert_eq!(ok, [json!(true), json!(true), json!(false), json!(true)]);
    }

    #[test]
    fn fenced_shell_blocks_only() {
        let blocks = super::command_blocks(
            "text\n```python\nx = 1\n```\n```bash\ncd /repo && make\n```\n```sh\nls\n```",
        );
        assert_eq!(blocks, ["cd /repo && make", "ls"]);
        // A harness's own fence that names bash.
        let own = super::command_blocks("```leana_bash_command\ngit diff\n```\n```text\nx\n```");
        assert_eq!(own, ["git diff"]);
        assert!(super::command_blocks("```bash\nunclosed").is_empty());
        assert_eq!(super::return_code("<returncode>-1</returncode>"), Some(-1));
        // grep finding nothing, diff finding a difference: answers.
        assert!(super::answers_with_one("cd /testbed && grep -n foo x.py"));
        assert!(super::answers_with_one("diff a.txt b.txt 2>&1"));
        assert!(!super::answers_with_one("grep -n foo x.py | wc -l"));
        assert!(!super::answers_with_one("python -m pytest tests/"));
        let t = json!([
            {"role": "user", "content": "fix it"},
            {"role": "assistant", "content": "```bash\ngrep -rn parse_x .\n```"},
            {"role": "user", "content": "<returncode>1</returncode>\n<output>\n</output>"},
            {"role": "assistant", "content": "```bash\necho done\n```"},
            {"role": "user", "content": "<returncode>0</returncode>"}
        ]);
        let (evs, _, _) = records(&t.to_string());
        assert_eq!(evs[1]["action_succeeded"], true, "{}", evs[1]);
        assert_eq!(super::return_code("no code"), None);
    }
}
