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
complete -c triage -n "__fish_triage_using_subcommand report" -s c -l config -d 'Configuration file ([scoring], [classify])' -r -F
complete -c triage -n "__fish_triage_using_subcommand report" -l input-format -d 'Trace format of the input files' -r -f -a "auto\t'Decide per input from its first JSON value (never the extension)'
ndjson\t'agent-triage TraceEvent lines (.ndjson, .jsonl)'
otel\t'Spans as JSON: OpenTelemetry SDK dumps (Python, JS, Vercel AI SDK), Phoenix/OpenInference spans, attribute maps, agent-triage\'s span list'
otlp\t'OTLP/HTTP JSON trace requests, one per file or one per line'
taubench\t'τ-bench trajectory files: a list of runs with `traj` and `reward`'
whowhen\t'Who&When benchmark runs: one JSON object with a `history` per file'
langfuse\t'Langfuse traces with observations, observation lists, blob-export JSONL'
langsmith\t'LangSmith runs: create/update payloads, lists or JSONL of runs'
managed-agent\t'Claude Managed Agents session event streams (JSONL)'
atif\t'Agent Trajectory Interchange Format (Harbor) trajectories'
coding-agent\t'Coding-agent trajectories: mini-SWE-agent transcripts (shell commands in the assistant\'s text, `<returncode>` replies) and SWE-agent `.traj` files'
inspect-ai\t'Inspect AI eval logs in its JSON log format: one run per sample'"
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
complete -c triage -n "__fish_triage_using_subcommand report" -s o -l output -d 'Write the report to FILE, atomically (temporary file, then rename; a device or FIFO is written in place)' -r -F
complete -c triage -n "__fish_triage_using_subcommand report" -s n -l top -d 'Patterns the markdown report details (and the HTML trend chart follows)' -r
complete -c triage -n "__fish_triage_using_subcommand report" -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage -n "__fish_triage_using_subcommand report" -l ai-analysis -d 'Add an LLM\'s root-cause narrative and one fix to each of the top patterns, as triage-explain --narrate does'
complete -c triage -n "__fish_triage_using_subcommand report" -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage -n "__fish_triage_using_subcommand report" -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage -n "__fish_triage_using_subcommand report" -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage -n "__fish_triage_using_subcommand report" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c triage -n "__fish_triage_using_subcommand report" -s V -l version -d 'Print version'
complete -c triage -n "__fish_triage_using_subcommand compare" -l fail-on -d 'Exit 1 when this holds: `new` (a new pattern), `regression` (more failure or unrecovered events in any classification), or `score>=X` (a pattern after scores at least X; scores are scaled to each batch, so `regression` does not compare them). Repeatable' -r
complete -c triage -n "__fish_triage_using_subcommand compare" -l tolerance -d 'Percent a count may grow before `regression` holds' -r
complete -c triage -n "__fish_triage_using_subcommand compare" -s c -l config -d 'Configuration file ([scoring] as triage-score reads it)' -r -F
complete -c triage -n "__fish_triage_using_subcommand compare" -l input-format -d 'Trace format of raw input files' -r -f -a "auto\t'Decide per input from its first JSON value (never the extension)'
ndjson\t'agent-triage TraceEvent lines (.ndjson, .jsonl)'
otel\t'Spans as JSON: OpenTelemetry SDK dumps (Python, JS, Vercel AI SDK), Phoenix/OpenInference spans, attribute maps, agent-triage\'s span list'
otlp\t'OTLP/HTTP JSON trace requests, one per file or one per line'
taubench\t'τ-bench trajectory files: a list of runs with `traj` and `reward`'
whowhen\t'Who&When benchmark runs: one JSON object with a `history` per file'
langfuse\t'Langfuse traces with observations, observation lists, blob-export JSONL'
langsmith\t'LangSmith runs: create/update payloads, lists or JSONL of runs'
managed-agent\t'Claude Managed Agents session event streams (JSONL)'
atif\t'Agent Trajectory Interchange Format (Harbor) trajectories'
coding-agent\t'Coding-agent trajectories: mini-SWE-agent transcripts (shell commands in the assistant\'s text, `<returncode>` replies) and SWE-agent `.traj` files'
inspect-ai\t'Inspect AI eval logs in its JSON log format: one run per sample'"
complete -c triage -n "__fish_triage_using_subcommand compare" -s f -l format -d 'Output format' -r -f -a "md\t'The morning report as markdown'
table\t'A table for the terminal'
html\t'A self-contained HTML dashboard'
json\t'One JSON document with every record and field'
csv\t'One CSV row per pattern with every field'"
complete -c triage -n "__fish_triage_using_subcommand compare" -l refresh -d 'HTML only: reload the page every SECONDS (for a page cron regenerates)' -r
complete -c triage -n "__fish_triage_using_subcommand compare" -s o -l output -d 'Write the report to FILE, atomically (temporary file, then rename; a device or FIFO is written in place)' -r -F
complete -c triage -n "__fish_triage_using_subcommand compare" -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage -n "__fish_triage_using_subcommand compare" -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage -n "__fish_triage_using_subcommand compare" -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage -n "__fish_triage_using_subcommand compare" -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage -n "__fish_triage_using_subcommand compare" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c triage -n "__fish_triage_using_subcommand compare" -s V -l version -d 'Print version'
