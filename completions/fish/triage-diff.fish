complete -c triage-diff -l fail-on -d 'Exit 1 when this holds: `new` (a new pattern), `regression` (more failure or unrecovered events per run in any classification, beyond noise at --alpha), `score>=X` (a pattern after scores at least X; scores are scaled to each batch, so `regression` does not compare them), `pass-rate` (the pass rate fell, beyond noise at --alpha) or `pass-rate<X` (the pass rate after is below X, as 0.8 or 80%). Repeatable' -r
complete -c triage-diff -l tolerance -d 'Percent a rate per run may grow before `regression` holds' -r
complete -c triage-diff -l alpha -d 'The significance a rise (`regression`) or a drop (`pass-rate`) must reach: the chance of a change at least as large if nothing had changed' -r
complete -c triage-diff -l min-events -d 'A classification or pattern with fewer events than N on both sides cannot trip a gate (the comparison marks those below 5 "tentative"; `--min-events 5` leaves them out)' -r
complete -c triage-diff -s c -l config -d 'Configuration file ([scoring] as triage-score reads it)' -r -F
complete -c triage-diff -s f -l format -l input-format -d 'Trace format of input files; `auto` decides per file from its first JSON value, never its name' -r -f -a "auto\t'Decide per input from its first JSON value (never the extension).'
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
complete -c triage-diff -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage-diff -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage-diff -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage-diff -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage-diff -s h -l help -d 'Print help (see more with \'--help\')'
complete -c triage-diff -s V -l version -d 'Print version'
