complete -c triage-alert -l webhook -d 'Webhook URL (a secret: messages show only its scheme and host). Else TRIAGE_WEBHOOK_URL, else [alerting] webhook_url' -r
complete -c triage-alert -l threshold -d 'Fire for patterns whose final_score is at least this. Default: [alerting] threshold, else 10' -r
complete -c triage-alert -l cooldown -d 'A pattern that fired stays quiet this many seconds. Default: [alerting] cooldown_seconds, else 3600' -r
complete -c triage-alert -l failed-runs -d 'Also page when at least this share of the batch\'s runs of known outcome failed (0.3 or 30%), under the id `runs/failed` with its own cooldown; exit 2 when no run states its outcome' -r
complete -c triage-alert -l payload -d 'The receiver\'s payload shape' -r -f -a "slack\t'`text` in Slack mrkdwn, plus the pattern\'s fields; links not unfurled'
discord\t'`content` in Discord markdown, mentions and embeds disabled'
json\t'The pattern\'s fields and a plain `text`, for any other receiver'"
complete -c triage-alert -l state -d 'Cooldown state file, shared (under a lock) by every run that uses it. Default: $XDG_STATE_HOME/triage/alert-state.json (~/.local/state/triage/…)' -r -F
complete -c triage-alert -l timeout -d 'Seconds one attempt may take, connecting included' -r
complete -c triage-alert -l retries -d 'Further attempts after a send that failed for a reason worth retrying (no answer, 408, 429, 5xx)' -r
complete -c triage-alert -l backoff -d 'Seconds before the first retry; each later wait doubles (Retry-After is honoured, up to 60)' -r
complete -c triage-alert -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage-alert -s c -l config -d 'Configuration file ([alerting] webhook_url, threshold, cooldown_seconds)' -r -F
complete -c triage-alert -l dry-run -d 'Decide and write the records (each would_fire alert with the `payload` it would send), but send nothing and leave the state alone'
complete -c triage-alert -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage-alert -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage-alert -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage-alert -s h -l help -d 'Print help (see more with \'--help\')'
complete -c triage-alert -s V -l version -d 'Print version'
