complete -c triage-render -s f -l format -d 'Output format' -r -f -a "md\t'The morning report as markdown'
table\t'A table for the terminal'
html\t'A self-contained HTML dashboard'
json\t'One JSON document with every record and field'
csv\t'One CSV row per pattern with every field'"
complete -c triage-render -l refresh -d 'HTML only: reload the page every SECONDS (for a page cron regenerates)' -r
complete -c triage-render -l bucket -d 'The time series\' buckets (the HTML charts, `failures per …`): hours or days; without it, days when the events span two or more, else runs' -r -f -a "hour\t''
day\t''"
complete -c triage-render -s o -l output -d 'Write the report to FILE, atomically (temporary file, then rename; a device or FIFO is written in place)' -r -F
complete -c triage-render -s n -l top -d 'Patterns the report shows, in every format: markdown, table and HTML show 3 unless told; JSON and CSV all of them unless told (a comparison: the rows of each pattern list, 20 unless told)' -r
complete -c triage-render -l min-confidence -d 'Hide verdicts (triage-explain) whose confidence is below P, from 0 to 1; stderr says how many were hidden' -r
complete -c triage-render -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage-render -s c -l config -d 'Configuration the patterns were scored with (its recovery window, multiplier and weights appear in the report)' -r -F
complete -c triage-render -l strict -d 'Stop at the first input that cannot be read, with exit status 2, instead of skipping it with a warning'
complete -c triage-render -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage-render -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage-render -s h -l help -d 'Print help (see more with \'--help\')'
complete -c triage-render -s V -l version -d 'Print version'
