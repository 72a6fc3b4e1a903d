complete -c triage-score -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage-score -s c -l config -d 'Configuration file: [scoring] recovery_window, no_recovery_multiplier, frequency_weight, severity_weight and [scoring.weights]' -r -F
complete -c triage-score -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage-score -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage-score -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage-score -s h -l help -d 'Print help'
complete -c triage-score -s V -l version -d 'Print version'
