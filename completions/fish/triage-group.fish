complete -c triage-group -l buffer-events -d 'Events held for exact recovery in any order before assuming each run\'s events come in turn order' -r
complete -c triage-group -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage-group -s c -l config -d 'Configuration file ([scoring] recovery_window sets what `recovered` counts)' -r -F
complete -c triage-group -l merge -d 'Combine partial `batch` and `pattern` records of shards into the result one pass would give'
complete -c triage-group -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage-group -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage-group -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage-group -s h -l help -d 'Print help'
complete -c triage-group -s V -l version -d 'Print version'
