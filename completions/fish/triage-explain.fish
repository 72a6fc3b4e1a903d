complete -c triage-explain -s n -l top -d 'With --narrate: the patterns narrated, the top N by rank' -r
complete -c triage-explain -l min-confidence -d 'Hide verdicts whose confidence (a calibrated probability of naming the right agent and step) is below P, from 0 to 1; their findings are still written, and stderr says how many were hidden' -r
complete -c triage-explain -l provider -d 'LLM provider: anthropic (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL) or openai, any OpenAI-compatible chat-completions server such as a local one (OPENAI_BASE_URL, OPENAI_API_KEY). Default: [llm] provider, else anthropic, or openai when only OPENAI_* variables are set' -r -f -a "anthropic\t'The Anthropic Messages API (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL)'
openai\t'Any OpenAI-compatible chat-completions server, local ones included (OPENAI_BASE_URL, OPENAI_API_KEY)'"
complete -c triage-explain -l model -d 'LLM model. Default: [llm] model, else claude-haiku-4-5 (anthropic) or gpt-4o-mini (openai)' -r
complete -c triage-explain -l concurrency -d 'LLM requests in flight at once. Default: [llm] concurrency, 4' -r
complete -c triage-explain -l timeout -d 'Seconds one LLM request may take. Default: [llm] timeout_seconds, 60' -r
complete -c triage-explain -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage-explain -s c -l config -d 'Configuration file (its [llm] section)' -r -F
complete -c triage-explain -l verdicts-only -d 'Write only the verdicts, not the findings behind them (headers and passed-through records still come first)'
complete -c triage-explain -l narrate -d 'Add an LLM\'s root-cause narrative and one concrete fix to each of the top N scored pattern records (fields narrative, fix, narrative_model)'
complete -c triage-explain -l judge -d 'Let an LLM re-rank the top 3 candidates of each failed run\'s verdict; the verdict follows its pick and notes its reason (field judge)'
complete -c triage-explain -l judge-run -d 'Like --judge, but show the LLM the whole run (cut to about 12,000 tokens) with the detectors\' findings as hints, and let it name any step; a step the run lacks, or an agent that did not act there, is refused with a warning and the rules\' verdict stands'
complete -c triage-explain -l unknown-outcome -d 'Also give a verdict to each run whose outcome no record states but that has a failing step (a span dump, events without a run record); those verdicts carry `"outcome":"unknown"` and reports list them apart from the failed runs\'. Without it such runs get findings only'
complete -c triage-explain -l list-detectors -d 'Print every detector, its name and what it looks for, one a line (tab-separated), and exit'
complete -c triage-explain -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage-explain -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage-explain -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage-explain -s h -l help -d 'Print help (see more with \'--help\')'
complete -c triage-explain -s V -l version -d 'Print version'
