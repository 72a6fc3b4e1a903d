complete -c triage-gen -s n -l events -d 'Number of events' -r
complete -c triage-gen -s r -l runs -d 'Number of runs' -r
complete -c triage-gen -s a -l agents -d 'Number of agents (at most 8)' -r
complete -c triage-gen -l seed -d 'Seed: the same seed gives the same file' -r
complete -c triage-gen -l failure-rate -d 'Share of agent turns that start a failure streak, from 0 to 1' -r
complete -c triage-gen -l format -d 'What to write: agent-triage NDJSON, or OTLP/JSON trace requests' -r -f -a "ndjson\t''
otlp\t''"
complete -c triage-gen -l spans-per-request -d 'Spans per OTLP request line (with --format otlp)' -r
complete -c triage-gen -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage-gen -l messy -d 'Lax values, unknown labels, unreadable lines, shuffled and interleaved runs'
complete -c triage-gen -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage-gen -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage-gen -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage-gen -s h -l help -d 'Print help'
complete -c triage-gen -s V -l version -d 'Print version'
