# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_triage_global_optspecs
    string join \n h/help V/version
end

function __fish_triage_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_triage_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_triage_using_subcommand
    set -l cmd (__fish_triage_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c triage -n "__fish_triage_needs_command" -s h -l help -d 'Print help'
complete -c triage -n "__fish_triage_needs_command" -s V -l version -d 'Print version'
complete -c triage -n "__fish_triage_needs_command" -f -a "report" -d 'Parse, group, score and render trace files (or any stage\'s records) in one process'
complete -c triage -n "__fish_triage_needs_command" -f -a "compare" -d 'Compare two batches and render the comparison report'
complete -c triage -n "__fish_triage_needs_command" -f -a "parse" -d 'Read trace files of any supported format and write one `event` record per action'
complete -c triage -n "__fish_triage_needs_command" -f -a "group" -d 'Cluster failure events into incident patterns'
complete -c triage -n "__fish_triage_needs_command" -f -a "score" -d 'Score each pattern'
complete -c triage -n "__fish_triage_needs_command" -f -a "render" -d 'Render scored triage records'
complete -c triage -n "__fish_triage_needs_command" -f -a "diff" -d 'Compare two batches'
complete -c triage -n "__fish_triage_needs_command" -f -a "explain" -d 'Trace each failed run back to the agent and step that caused it'
complete -c triage -n "__fish_triage_needs_command" -f -a "alert" -d 'Page someone when a failure pattern crosses the line'
complete -c triage -n "__fish_triage_needs_command" -f -a "recv" -d 'Take spans straight from running agents'
complete -c triage -n "__fish_triage_needs_command" -f -a "gen" -d 'Write deterministic agent traces'
complete -c triage -n "__fish_triage_needs_command" -f -a "help" -d 'Show the help of triage or of one of its commands'
complete -c triage -n "__fish_triage_using_subcommand report" -l input-format -d 'Trace format of the input files' -r -f -a "auto\t'Decide per input from its first JSON value (never the extension).'
managed-agent\t'Claude Managed Agents session event streams (JSONL).'
coding-agent\t'Coding-agent trajectories: mini-SWE-agent transcripts (shell commands in the assistant\'s text or `bash` tool calls; `<returncode>` or JSON process-result replies) and SWE-agent `.traj` files.'
browser-use\t'browser-use agent histories (AgentHistoryList JSON, {"history": [...]}): one run per history.'
autogen\t'AutoGen AgentChat runs: a TaskResult, run_stream\'s messages one per line, or a team\'s saved state.'
openhands\t'OpenHands (OpenDevin) trajectories: an exported event list, a session\'s events piped one after another (SDK events too), or evaluation rows (`output.jsonl`) with their `history`.'
codex\t'OpenAI Codex CLI session rollouts (~/.codex/sessions/**/rollout-*.jsonl): one run per session.'
openai-agents\t'OpenAI Agents SDK RunState snapshots (RunState.to_json()): one run per snapshot.'
otlp\t'OTLP/HTTP JSON trace requests, one per file or one per line; each trace is emitted once complete (root ended, --trace-window passed).'
langfuse\t'Langfuse traces with observations, observation lists, blob-export JSONL.'
langsmith\t'LangSmith runs: create/update payloads, lists or JSONL of runs.'
atif\t'Agent Trajectory Interchange Format (Harbor) trajectories.'
inspect-ai\t'Inspect AI eval logs, `.eval` (its default, a zip) or its JSON log format: one run per sample.'
ndjson\t'agent-triage TraceEvent lines (.ndjson, .jsonl).'
taubench\t'τ-bench trajectory files: a list of runs with `traj` and `reward`.'
whowhen\t'Who&When benchmark runs: one JSON object with a `history` per file.'
otel\t'Spans as JSON: OpenTelemetry SDK dumps (Python, JS, Vercel AI SDK), Phoenix/OpenInference spans, Jaeger, Zipkin and MLflow traces, attribute maps, agent-triage\'s span list.'
anthropic-messages\t'Anthropic Messages transcripts: `tool_use`/`tool_result` blocks.'
openai-chat\t'OpenAI chat transcripts: `{"messages": [...]}` or a list of messages (Chat Completions or Responses items), per file or per line.'"
complete -c triage -n "__fish_triage_using_subcommand report" -l max-document -d 'Refuse a trace file larger than this in a format read as one document (K, M, G suffixes)' -r
complete -c triage -n "__fish_triage_using_subcommand report" -l provider -d 'LLM provider: anthropic (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL) or openai, any OpenAI-compatible chat-completions server such as a local one (OPENAI_BASE_URL, OPENAI_API_KEY). Default: [llm] provider, else anthropic, or openai when only OPENAI_* variables are set' -r -f -a "anthropic\t'The Anthropic Messages API (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL)'
openai\t'Any OpenAI-compatible chat-completions server, local ones included (OPENAI_BASE_URL, OPENAI_API_KEY)'"
complete -c triage -n "__fish_triage_using_subcommand report" -l model -d 'LLM model. Default: [llm] model, else claude-haiku-4-5 (anthropic) or gpt-4o-mini (openai)' -r
complete -c triage -n "__fish_triage_using_subcommand report" -l concurrency -d 'LLM requests in flight at once. Default: [llm] concurrency, 4' -r
complete -c triage -n "__fish_triage_using_subcommand report" -l timeout -d 'Seconds one LLM request may take. Default: [llm] timeout_seconds, 60' -r
complete -c triage -n "__fish_triage_using_subcommand report" -s f -l format -d 'Output format' -r -f -a "md\t'The morning report as markdown'
table\t'A table for the terminal'
html\t'A self-contained HTML dashboard'
json\t'One JSON document with every record and field'
csv\t'One CSV row per pattern with every field'"
complete -c triage -n "__fish_triage_using_subcommand report" -l refresh -d 'HTML only: reload the page every SECONDS (for a page cron regenerates)' -r
complete -c triage -n "__fish_triage_using_subcommand report" -l bucket -d 'The time series\' buckets (the HTML charts, `failures per …`): hours or days; without it, days when the events span two or more, else runs' -r -f -a "hour\t''
day\t''"
complete -c triage -n "__fish_triage_using_subcommand report" -s o -l output -d 'Write the report to FILE, atomically (temporary file, then rename; a device or FIFO is written in place)' -r -F
complete -c triage -n "__fish_triage_using_subcommand report" -s n -l top -d 'Patterns the report shows, in every format: markdown, table and HTML show 3 unless told; JSON and CSV all of them unless told (a comparison: the rows of each pattern list, 20 unless told)' -r
complete -c triage -n "__fish_triage_using_subcommand report" -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage -n "__fish_triage_using_subcommand report" -s c -l config -d 'Configuration file ([scoring], [classify])' -r -F
complete -c triage -n "__fish_triage_using_subcommand report" -l ai-analysis -d 'Add an LLM\'s root-cause narrative and one fix to each of the top patterns, as triage-explain --narrate does'
complete -c triage -n "__fish_triage_using_subcommand report" -l explain -d 'Trace each failed run to the agent and step that caused it, as triage-explain does, and list under each top pattern the failed runs it occurred in with their root cause'
complete -c triage -n "__fish_triage_using_subcommand report" -l unknown-outcome -d 'With --explain: also trace each run whose outcome no record states but that has a failing step, listed apart from the failed runs'
complete -c triage -n "__fish_triage_using_subcommand report" -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage -n "__fish_triage_using_subcommand report" -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage -n "__fish_triage_using_subcommand report" -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage -n "__fish_triage_using_subcommand report" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c triage -n "__fish_triage_using_subcommand report" -s V -l version -d 'Print version'
complete -c triage -n "__fish_triage_using_subcommand compare" -l fail-on -d 'Exit 1 when this holds: `new` (a new pattern), `regression` (more failure or unrecovered events per run in any classification, beyond noise at --alpha), `score>=X` (a pattern after scores at least X; scores are scaled to each batch, so `regression` does not compare them), `pass-rate` (the pass rate fell, beyond noise at --alpha) or `pass-rate<X` (the pass rate after is below X, as 0.8 or 80%). Repeatable' -r
complete -c triage -n "__fish_triage_using_subcommand compare" -l tolerance -d 'Percent a rate per run may grow before `regression` holds' -r
complete -c triage -n "__fish_triage_using_subcommand compare" -l alpha -d 'The significance a rise (`regression`) or a drop (`pass-rate`) must reach: the chance of a change at least as large if nothing had changed' -r
complete -c triage -n "__fish_triage_using_subcommand compare" -l min-events -d 'A classification or pattern with fewer events than N on both sides cannot trip a gate (the comparison marks those below 5 "tentative"; `--min-events 5` leaves them out)' -r
complete -c triage -n "__fish_triage_using_subcommand compare" -s c -l config -d 'Configuration file ([scoring] as triage-score reads it)' -r -F
complete -c triage -n "__fish_triage_using_subcommand compare" -l input-format -d 'Trace format of raw input files' -r -f -a "auto\t'Decide per input from its first JSON value (never the extension).'
managed-agent\t'Claude Managed Agents session event streams (JSONL).'
coding-agent\t'Coding-agent trajectories: mini-SWE-agent transcripts (shell commands in the assistant\'s text or `bash` tool calls; `<returncode>` or JSON process-result replies) and SWE-agent `.traj` files.'
browser-use\t'browser-use agent histories (AgentHistoryList JSON, {"history": [...]}): one run per history.'
autogen\t'AutoGen AgentChat runs: a TaskResult, run_stream\'s messages one per line, or a team\'s saved state.'
openhands\t'OpenHands (OpenDevin) trajectories: an exported event list, a session\'s events piped one after another (SDK events too), or evaluation rows (`output.jsonl`) with their `history`.'
codex\t'OpenAI Codex CLI session rollouts (~/.codex/sessions/**/rollout-*.jsonl): one run per session.'
openai-agents\t'OpenAI Agents SDK RunState snapshots (RunState.to_json()): one run per snapshot.'
otlp\t'OTLP/HTTP JSON trace requests, one per file or one per line; each trace is emitted once complete (root ended, --trace-window passed).'
langfuse\t'Langfuse traces with observations, observation lists, blob-export JSONL.'
langsmith\t'LangSmith runs: create/update payloads, lists or JSONL of runs.'
atif\t'Agent Trajectory Interchange Format (Harbor) trajectories.'
inspect-ai\t'Inspect AI eval logs, `.eval` (its default, a zip) or its JSON log format: one run per sample.'
ndjson\t'agent-triage TraceEvent lines (.ndjson, .jsonl).'
taubench\t'τ-bench trajectory files: a list of runs with `traj` and `reward`.'
whowhen\t'Who&When benchmark runs: one JSON object with a `history` per file.'
otel\t'Spans as JSON: OpenTelemetry SDK dumps (Python, JS, Vercel AI SDK), Phoenix/OpenInference spans, Jaeger, Zipkin and MLflow traces, attribute maps, agent-triage\'s span list.'
anthropic-messages\t'Anthropic Messages transcripts: `tool_use`/`tool_result` blocks.'
openai-chat\t'OpenAI chat transcripts: `{"messages": [...]}` or a list of messages (Chat Completions or Responses items), per file or per line.'"
complete -c triage -n "__fish_triage_using_subcommand compare" -s f -l format -d 'Output format' -r -f -a "md\t'The morning report as markdown'
table\t'A table for the terminal'
html\t'A self-contained HTML dashboard'
json\t'One JSON document with every record and field'
csv\t'One CSV row per pattern with every field'"
complete -c triage -n "__fish_triage_using_subcommand compare" -l refresh -d 'HTML only: reload the page every SECONDS (for a page cron regenerates)' -r
complete -c triage -n "__fish_triage_using_subcommand compare" -l bucket -d 'The time series\' buckets (the HTML charts, `failures per …`): hours or days; without it, days when the events span two or more, else runs' -r -f -a "hour\t''
day\t''"
complete -c triage -n "__fish_triage_using_subcommand compare" -s o -l output -d 'Write the report to FILE, atomically (temporary file, then rename; a device or FIFO is written in place)' -r -F
complete -c triage -n "__fish_triage_using_subcommand compare" -s n -l top -d 'Patterns the report shows, in every format: markdown, table and HTML show 3 unless told; JSON and CSV all of them unless told (a comparison: the rows of each pattern list, 20 unless told)' -r
complete -c triage -n "__fish_triage_using_subcommand compare" -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage -n "__fish_triage_using_subcommand compare" -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage -n "__fish_triage_using_subcommand compare" -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage -n "__fish_triage_using_subcommand compare" -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage -n "__fish_triage_using_subcommand compare" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c triage -n "__fish_triage_using_subcommand compare" -s V -l version -d 'Print version'
complete -c triage -n "__fish_triage_using_subcommand parse" -s f -l format -l input-format -d 'Trace format of input files; `auto` decides per file from its first JSON value, never its name' -r -f -a "auto\t'Decide per input from its first JSON value (never the extension).'
managed-agent\t'Claude Managed Agents session event streams (JSONL).'
coding-agent\t'Coding-agent trajectories: mini-SWE-agent transcripts (shell commands in the assistant\'s text or `bash` tool calls; `<returncode>` or JSON process-result replies) and SWE-agent `.traj` files.'
browser-use\t'browser-use agent histories (AgentHistoryList JSON, {"history": [...]}): one run per history.'
autogen\t'AutoGen AgentChat runs: a TaskResult, run_stream\'s messages one per line, or a team\'s saved state.'
openhands\t'OpenHands (OpenDevin) trajectories: an exported event list, a session\'s events piped one after another (SDK events too), or evaluation rows (`output.jsonl`) with their `history`.'
codex\t'OpenAI Codex CLI session rollouts (~/.codex/sessions/**/rollout-*.jsonl): one run per session.'
openai-agents\t'OpenAI Agents SDK RunState snapshots (RunState.to_json()): one run per snapshot.'
otlp\t'OTLP/HTTP JSON trace requests, one per file or one per line; each trace is emitted once complete (root ended, --trace-window passed).'
langfuse\t'Langfuse traces with observations, observation lists, blob-export JSONL.'
langsmith\t'LangSmith runs: create/update payloads, lists or JSONL of runs.'
atif\t'Agent Trajectory Interchange Format (Harbor) trajectories.'
inspect-ai\t'Inspect AI eval logs, `.eval` (its default, a zip) or its JSON log format: one run per sample.'
ndjson\t'agent-triage TraceEvent lines (.ndjson, .jsonl).'
taubench\t'τ-bench trajectory files: a list of runs with `traj` and `reward`.'
whowhen\t'Who&When benchmark runs: one JSON object with a `history` per file.'
otel\t'Spans as JSON: OpenTelemetry SDK dumps (Python, JS, Vercel AI SDK), Phoenix/OpenInference spans, Jaeger, Zipkin and MLflow traces, attribute maps, agent-triage\'s span list.'
anthropic-messages\t'Anthropic Messages transcripts: `tool_use`/`tool_result` blocks.'
openai-chat\t'OpenAI chat transcripts: `{"messages": [...]}` or a list of messages (Chat Completions or Responses items), per file or per line.'"
complete -c triage -n "__fish_triage_using_subcommand parse" -l since -d 'Keep only events at or after this time (RFC 3339 or YYYY-MM-DD)' -r
complete -c triage -n "__fish_triage_using_subcommand parse" -l until -d 'Keep only events before this time (RFC 3339 or YYYY-MM-DD)' -r
complete -c triage -n "__fish_triage_using_subcommand parse" -l max-text -d 'Cut input and output texts, error messages and tool inputs to this many bytes (their digest covers the whole); 0 keeps only the digest and the "…" that marks a text cut short' -r
complete -c triage -n "__fish_triage_using_subcommand parse" -l trace-window -d 'How long a trace of a stream of spans or observations (otlp, otel, langfuse and langsmith lines) waits, after its root ended, for more of it, in span time ("300s", "5m", "1h"); "end" holds every trace to the end of the input. A span, observation or run payload that comes later is emitted as a continuation of its run' -r
complete -c triage -n "__fish_triage_using_subcommand parse" -l max-document -d 'Refuse a file larger than this in a format read as one document (all but ndjson; a line of otlp, otel, langfuse or langsmith lines is held to it instead), K, M, G suffixes allowed: the whole document is held in memory, many times over once decoded' -r
complete -c triage -n "__fish_triage_using_subcommand parse" -s j -l threads -d 'Threads to decode on, the one writing the records included [default: one per core]' -r
complete -c triage -n "__fish_triage_using_subcommand parse" -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage -n "__fish_triage_using_subcommand parse" -s c -l config -d 'Configuration file; its [classify] section adds failure classification rules' -r -F
complete -c triage -n "__fish_triage_using_subcommand parse" -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage -n "__fish_triage_using_subcommand parse" -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage -n "__fish_triage_using_subcommand parse" -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage -n "__fish_triage_using_subcommand parse" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c triage -n "__fish_triage_using_subcommand parse" -s V -l version -d 'Print version'
complete -c triage -n "__fish_triage_using_subcommand group" -l buffer-events -d 'Events held for exact recovery in any order before assuming each run\'s events come in turn order' -r
complete -c triage -n "__fish_triage_using_subcommand group" -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage -n "__fish_triage_using_subcommand group" -s c -l config -d 'Configuration file ([scoring] recovery_window sets what `recovered` counts)' -r -F
complete -c triage -n "__fish_triage_using_subcommand group" -l merge -d 'Combine partial `batch` and `pattern` records of shards into the result one pass would give'
complete -c triage -n "__fish_triage_using_subcommand group" -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage -n "__fish_triage_using_subcommand group" -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage -n "__fish_triage_using_subcommand group" -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage -n "__fish_triage_using_subcommand group" -s h -l help -d 'Print help'
complete -c triage -n "__fish_triage_using_subcommand group" -s V -l version -d 'Print version'
complete -c triage -n "__fish_triage_using_subcommand score" -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage -n "__fish_triage_using_subcommand score" -s c -l config -d 'Configuration file: [scoring] recovery_window, no_recovery_multiplier, frequency_weight, severity_weight and [scoring.weights]' -r -F
complete -c triage -n "__fish_triage_using_subcommand score" -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage -n "__fish_triage_using_subcommand score" -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage -n "__fish_triage_using_subcommand score" -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage -n "__fish_triage_using_subcommand score" -s h -l help -d 'Print help'
complete -c triage -n "__fish_triage_using_subcommand score" -s V -l version -d 'Print version'
complete -c triage -n "__fish_triage_using_subcommand render" -s f -l format -d 'Output format' -r -f -a "md\t'The morning report as markdown'
table\t'A table for the terminal'
html\t'A self-contained HTML dashboard'
json\t'One JSON document with every record and field'
csv\t'One CSV row per pattern with every field'"
complete -c triage -n "__fish_triage_using_subcommand render" -l refresh -d 'HTML only: reload the page every SECONDS (for a page cron regenerates)' -r
complete -c triage -n "__fish_triage_using_subcommand render" -l bucket -d 'The time series\' buckets (the HTML charts, `failures per …`): hours or days; without it, days when the events span two or more, else runs' -r -f -a "hour\t''
day\t''"
complete -c triage -n "__fish_triage_using_subcommand render" -s o -l output -d 'Write the report to FILE, atomically (temporary file, then rename; a device or FIFO is written in place)' -r -F
complete -c triage -n "__fish_triage_using_subcommand render" -s n -l top -d 'Patterns the report shows, in every format: markdown, table and HTML show 3 unless told; JSON and CSV all of them unless told (a comparison: the rows of each pattern list, 20 unless told)' -r
complete -c triage -n "__fish_triage_using_subcommand render" -l min-confidence -d 'Hide verdicts (triage-explain) whose confidence is below P, from 0 to 1; stderr says how many were hidden' -r
complete -c triage -n "__fish_triage_using_subcommand render" -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage -n "__fish_triage_using_subcommand render" -s c -l config -d 'Configuration the patterns were scored with (its recovery window, multiplier and weights appear in the report)' -r -F
complete -c triage -n "__fish_triage_using_subcommand render" -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage -n "__fish_triage_using_subcommand render" -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage -n "__fish_triage_using_subcommand render" -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage -n "__fish_triage_using_subcommand render" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c triage -n "__fish_triage_using_subcommand render" -s V -l version -d 'Print version'
complete -c triage -n "__fish_triage_using_subcommand diff" -l fail-on -d 'Exit 1 when this holds: `new` (a new pattern), `regression` (more failure or unrecovered events per run in any classification, beyond noise at --alpha), `score>=X` (a pattern after scores at least X; scores are scaled to each batch, so `regression` does not compare them), `pass-rate` (the pass rate fell, beyond noise at --alpha) or `pass-rate<X` (the pass rate after is below X, as 0.8 or 80%). Repeatable' -r
complete -c triage -n "__fish_triage_using_subcommand diff" -l tolerance -d 'Percent a rate per run may grow before `regression` holds' -r
complete -c triage -n "__fish_triage_using_subcommand diff" -l alpha -d 'The significance a rise (`regression`) or a drop (`pass-rate`) must reach: the chance of a change at least as large if nothing had changed' -r
complete -c triage -n "__fish_triage_using_subcommand diff" -l min-events -d 'A classification or pattern with fewer events than N on both sides cannot trip a gate (the comparison marks those below 5 "tentative"; `--min-events 5` leaves them out)' -r
complete -c triage -n "__fish_triage_using_subcommand diff" -s c -l config -d 'Configuration file ([scoring] as triage-score reads it)' -r -F
complete -c triage -n "__fish_triage_using_subcommand diff" -s f -l format -l input-format -d 'Trace format of input files; `auto` decides per file from its first JSON value, never its name' -r -f -a "auto\t'Decide per input from its first JSON value (never the extension).'
managed-agent\t'Claude Managed Agents session event streams (JSONL).'
coding-agent\t'Coding-agent trajectories: mini-SWE-agent transcripts (shell commands in the assistant\'s text or `bash` tool calls; `<returncode>` or JSON process-result replies) and SWE-agent `.traj` files.'
browser-use\t'browser-use agent histories (AgentHistoryList JSON, {"history": [...]}): one run per history.'
autogen\t'AutoGen AgentChat runs: a TaskResult, run_stream\'s messages one per line, or a team\'s saved state.'
openhands\t'OpenHands (OpenDevin) trajectories: an exported event list, a session\'s events piped one after another (SDK events too), or evaluation rows (`output.jsonl`) with their `history`.'
codex\t'OpenAI Codex CLI session rollouts (~/.codex/sessions/**/rollout-*.jsonl): one run per session.'
openai-agents\t'OpenAI Agents SDK RunState snapshots (RunState.to_json()): one run per snapshot.'
otlp\t'OTLP/HTTP JSON trace requests, one per file or one per line; each trace is emitted once complete (root ended, --trace-window passed).'
langfuse\t'Langfuse traces with observations, observation lists, blob-export JSONL.'
langsmith\t'LangSmith runs: create/update payloads, lists or JSONL of runs.'
atif\t'Agent Trajectory Interchange Format (Harbor) trajectories.'
inspect-ai\t'Inspect AI eval logs, `.eval` (its default, a zip) or its JSON log format: one run per sample.'
ndjson\t'agent-triage TraceEvent lines (.ndjson, .jsonl).'
taubench\t'τ-bench trajectory files: a list of runs with `traj` and `reward`.'
whowhen\t'Who&When benchmark runs: one JSON object with a `history` per file.'
otel\t'Spans as JSON: OpenTelemetry SDK dumps (Python, JS, Vercel AI SDK), Phoenix/OpenInference spans, Jaeger, Zipkin and MLflow traces, attribute maps, agent-triage\'s span list.'
anthropic-messages\t'Anthropic Messages transcripts: `tool_use`/`tool_result` blocks.'
openai-chat\t'OpenAI chat transcripts: `{"messages": [...]}` or a list of messages (Chat Completions or Responses items), per file or per line.'"
complete -c triage -n "__fish_triage_using_subcommand diff" -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage -n "__fish_triage_using_subcommand diff" -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage -n "__fish_triage_using_subcommand diff" -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage -n "__fish_triage_using_subcommand diff" -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage -n "__fish_triage_using_subcommand diff" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c triage -n "__fish_triage_using_subcommand diff" -s V -l version -d 'Print version'
complete -c triage -n "__fish_triage_using_subcommand explain" -s n -l top -d 'With --narrate: the patterns narrated, the top N by rank' -r
complete -c triage -n "__fish_triage_using_subcommand explain" -l min-confidence -d 'Hide verdicts whose confidence (a calibrated probability of naming the right agent and step) is below P, from 0 to 1; their findings are still written, and stderr says how many were hidden' -r
complete -c triage -n "__fish_triage_using_subcommand explain" -l provider -d 'LLM provider: anthropic (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL) or openai, any OpenAI-compatible chat-completions server such as a local one (OPENAI_BASE_URL, OPENAI_API_KEY). Default: [llm] provider, else anthropic, or openai when only OPENAI_* variables are set' -r -f -a "anthropic\t'The Anthropic Messages API (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL)'
openai\t'Any OpenAI-compatible chat-completions server, local ones included (OPENAI_BASE_URL, OPENAI_API_KEY)'"
complete -c triage -n "__fish_triage_using_subcommand explain" -l model -d 'LLM model. Default: [llm] model, else claude-haiku-4-5 (anthropic) or gpt-4o-mini (openai)' -r
complete -c triage -n "__fish_triage_using_subcommand explain" -l concurrency -d 'LLM requests in flight at once. Default: [llm] concurrency, 4' -r
complete -c triage -n "__fish_triage_using_subcommand explain" -l timeout -d 'Seconds one LLM request may take. Default: [llm] timeout_seconds, 60' -r
complete -c triage -n "__fish_triage_using_subcommand explain" -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage -n "__fish_triage_using_subcommand explain" -s c -l config -d 'Configuration file (its [llm] section)' -r -F
complete -c triage -n "__fish_triage_using_subcommand explain" -l verdicts-only -d 'Write only the verdicts, not the findings behind them (headers and passed-through records still come first)'
complete -c triage -n "__fish_triage_using_subcommand explain" -l narrate -d 'Add an LLM\'s root-cause narrative and one concrete fix to each of the top N scored pattern records (fields narrative, fix, narrative_model)'
complete -c triage -n "__fish_triage_using_subcommand explain" -l judge -d 'Let an LLM re-rank the top 3 candidates of each failed run\'s verdict; the verdict follows its pick and notes its reason (field judge)'
complete -c triage -n "__fish_triage_using_subcommand explain" -l judge-run -d 'Like --judge, but show the LLM the whole run (cut to about 12,000 tokens) with the detectors\' findings as hints, and let it name any step; a step the run lacks, or an agent that did not act there, is refused with a warning and the rules\' verdict stands'
complete -c triage -n "__fish_triage_using_subcommand explain" -l unknown-outcome -d 'Also give a verdict to each run whose outcome no record states but that has a failing step (a span dump, events without a run record); those verdicts carry `"outcome":"unknown"` and reports list them apart from the failed runs\'. Without it such runs get findings only'
complete -c triage -n "__fish_triage_using_subcommand explain" -l list-detectors -d 'Print every detector, its name and what it looks for, one a line (tab-separated), and exit'
complete -c triage -n "__fish_triage_using_subcommand explain" -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage -n "__fish_triage_using_subcommand explain" -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage -n "__fish_triage_using_subcommand explain" -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage -n "__fish_triage_using_subcommand explain" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c triage -n "__fish_triage_using_subcommand explain" -s V -l version -d 'Print version'
complete -c triage -n "__fish_triage_using_subcommand alert" -l webhook -d 'Webhook URL (a secret: messages show only its scheme and host). Else TRIAGE_WEBHOOK_URL, else [alerting] webhook_url' -r
complete -c triage -n "__fish_triage_using_subcommand alert" -l threshold -d 'Fire for patterns whose final_score is at least this. Default: [alerting] threshold, else 10' -r
complete -c triage -n "__fish_triage_using_subcommand alert" -l cooldown -d 'A pattern that fired stays quiet this many seconds. Default: [alerting] cooldown_seconds, else 3600' -r
complete -c triage -n "__fish_triage_using_subcommand alert" -l failed-runs -d 'Also page when at least this share of the batch\'s runs of known outcome failed (0.3 or 30%), under the id `runs/failed` with its own cooldown; exit 2 when no run states its outcome' -r
complete -c triage -n "__fish_triage_using_subcommand alert" -l payload -d 'The receiver\'s payload shape' -r -f -a "slack\t'`text` in Slack mrkdwn, plus the pattern\'s fields; links not unfurled'
discord\t'`content` in Discord markdown, mentions and embeds disabled'
json\t'The pattern\'s fields and a plain `text`, for any other receiver'"
complete -c triage -n "__fish_triage_using_subcommand alert" -l state -d 'Cooldown state file, shared (under a lock) by every run that uses it. Default: $XDG_STATE_HOME/triage/alert-state.json (~/.local/state/triage/…)' -r -F
complete -c triage -n "__fish_triage_using_subcommand alert" -l timeout -d 'Seconds one attempt may take, connecting included' -r
complete -c triage -n "__fish_triage_using_subcommand alert" -l retries -d 'Further attempts after a send that failed for a reason worth retrying (no answer, 408, 429, 5xx)' -r
complete -c triage -n "__fish_triage_using_subcommand alert" -l backoff -d 'Seconds before the first retry; each later wait doubles (Retry-After is honoured, up to 60)' -r
complete -c triage -n "__fish_triage_using_subcommand alert" -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage -n "__fish_triage_using_subcommand alert" -s c -l config -d 'Configuration file ([alerting] webhook_url, threshold, cooldown_seconds)' -r -F
complete -c triage -n "__fish_triage_using_subcommand alert" -l dry-run -d 'Decide and write the records (each would_fire alert with the `payload` it would send), but send nothing and leave the state alone'
complete -c triage -n "__fish_triage_using_subcommand alert" -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage -n "__fish_triage_using_subcommand alert" -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage -n "__fish_triage_using_subcommand alert" -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage -n "__fish_triage_using_subcommand alert" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c triage -n "__fish_triage_using_subcommand alert" -s V -l version -d 'Print version'
complete -c triage -n "__fish_triage_using_subcommand recv" -l listen -d 'Address to listen on: HOST:PORT (localhost resolves), or :PORT for every interface as the Collector reads it. Anything but loopback exposes the receiver to the network: set --token then' -r
complete -c triage -n "__fish_triage_using_subcommand recv" -s o -l output -d 'Append the lines to FILE instead of writing them to stdout' -r -F
complete -c triage -n "__fish_triage_using_subcommand recv" -l token -d 'Require `Authorization: Bearer TOKEN`. Prefer TRIAGE_RECV_TOKEN, which sets it too: flags show in ps' -r
complete -c triage -n "__fish_triage_using_subcommand recv" -l max-body -d 'Largest request body taken, in bytes, before and after gunzip (K, M, G suffixes allowed); larger ones get 413' -r
complete -c triage -n "__fish_triage_using_subcommand recv" -l workers -d 'Requests decoded and written at once' -r
complete -c triage -n "__fish_triage_using_subcommand recv" -l queue -d 'Complete requests that may wait for a worker; past that, more get 503 and retry' -r
complete -c triage -n "__fish_triage_using_subcommand recv" -l max-connections -d 'Connections open at once, each read by a light thread until its request is complete (a slow client holds no worker); past that, new ones get 503' -r
complete -c triage -n "__fish_triage_using_subcommand recv" -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage -n "__fish_triage_using_subcommand recv" -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage -n "__fish_triage_using_subcommand recv" -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage -n "__fish_triage_using_subcommand recv" -l strict -d 'Accepted for symmetry, no effect: a request that cannot be read is answered 400 and the receiver goes on'
complete -c triage -n "__fish_triage_using_subcommand recv" -s h -l help -d 'Print help'
complete -c triage -n "__fish_triage_using_subcommand recv" -s V -l version -d 'Print version'
complete -c triage -n "__fish_triage_using_subcommand gen" -s n -l events -d 'Number of events' -r
complete -c triage -n "__fish_triage_using_subcommand gen" -s r -l runs -d 'Number of runs' -r
complete -c triage -n "__fish_triage_using_subcommand gen" -s a -l agents -d 'Number of agents (at most 8)' -r
complete -c triage -n "__fish_triage_using_subcommand gen" -l seed -d 'Seed: the same seed gives the same file' -r
complete -c triage -n "__fish_triage_using_subcommand gen" -l failure-rate -d 'Share of agent turns that start a failure streak, from 0 to 1' -r
complete -c triage -n "__fish_triage_using_subcommand gen" -l format -d 'What to write: agent-triage NDJSON, or OTLP/JSON trace requests' -r -f -a "ndjson\t''
otlp\t''"
complete -c triage -n "__fish_triage_using_subcommand gen" -l spans-per-request -d 'Spans per OTLP request line (with --format otlp)' -r
complete -c triage -n "__fish_triage_using_subcommand gen" -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage -n "__fish_triage_using_subcommand gen" -l messy -d 'Lax values, unknown labels, unreadable lines, shuffled and interleaved runs'
complete -c triage -n "__fish_triage_using_subcommand gen" -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage -n "__fish_triage_using_subcommand gen" -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage -n "__fish_triage_using_subcommand gen" -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage -n "__fish_triage_using_subcommand gen" -s h -l help -d 'Print help'
complete -c triage -n "__fish_triage_using_subcommand gen" -s V -l version -d 'Print version'
complete -c triage -n "__fish_triage_using_subcommand help" -s h -l help -d 'Print help'
complete -c triage -n "__fish_triage_using_subcommand help" -s V -l version -d 'Print version'
