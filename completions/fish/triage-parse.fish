complete -c triage-parse -s f -l format -l input-format -d 'Trace format of input files; `auto` decides per file from its first JSON value, never its name' -r -f -a "auto\t'Decide per input from its first JSON value (never the extension).'
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
complete -c triage-parse -l since -d 'Keep only events at or after this time (RFC 3339 or YYYY-MM-DD)' -r
complete -c triage-parse -l until -d 'Keep only events before this time (RFC 3339 or YYYY-MM-DD)' -r
complete -c triage-parse -l max-text -d 'Cut input and output texts, error messages and tool inputs to this many bytes (their digest covers the whole); 0 keeps only the digest and the "…" that marks a text cut short' -r
complete -c triage-parse -l trace-window -d 'How long a trace of a stream of spans or observations (otlp, otel, langfuse and langsmith lines) waits, after its root ended, for more of it, in span time ("300s", "5m", "1h"); "end" holds every trace to the end of the input. A span, observation or run payload that comes later is emitted as a continuation of its run' -r
complete -c triage-parse -l max-document -d 'Refuse a file larger than this in a format read as one document (all but ndjson; a line of otlp, otel, langfuse or langsmith lines is held to it instead), K, M, G suffixes allowed: the whole document is held in memory, many times over once decoded' -r
complete -c triage-parse -s j -l threads -d 'Threads to decode on, the one writing the records included [default: one per core]' -r
complete -c triage-parse -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage-parse -s c -l config -d 'Configuration file; its [classify] section adds failure classification rules' -r -F
complete -c triage-parse -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage-parse -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage-parse -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage-parse -s h -l help -d 'Print help (see more with \'--help\')'
complete -c triage-parse -s V -l version -d 'Print version'
