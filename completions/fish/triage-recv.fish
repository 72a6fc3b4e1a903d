complete -c triage-recv -l listen -d 'Address to listen on: HOST:PORT (localhost resolves), or :PORT for every interface as the Collector reads it. Anything but loopback exposes the receiver to the network: set --token then' -r
complete -c triage-recv -s o -l output -d 'Append the lines to FILE instead of writing them to stdout' -r -F
complete -c triage-recv -l token -d 'Require `Authorization: Bearer TOKEN`. Prefer TRIAGE_RECV_TOKEN, which sets it too: flags show in ps' -r
complete -c triage-recv -l max-body -d 'Largest request body taken, in bytes, before and after gunzip (K, M, G suffixes allowed); larger ones get 413' -r
complete -c triage-recv -l workers -d 'Requests decoded and written at once' -r
complete -c triage-recv -l queue -d 'Complete requests that may wait for a worker; past that, more get 503 and retry' -r
complete -c triage-recv -l max-connections -d 'Connections open at once, each read by a light thread until its request is complete (a slow client holds no worker); past that, new ones get 503' -r
complete -c triage-recv -l generate -d 'Print this tool\'s man page or shell completions and exit' -r -f -a "man\t''
bash\t''
zsh\t''
fish\t''"
complete -c triage-recv -s q -l quiet -d 'Print no warnings (errors are still printed)'
complete -c triage-recv -l line-buffered -d 'Flush every record as soon as it is written (for `tail -f` pipelines)'
complete -c triage-recv -l strict -d 'Accepted for symmetry, no effect: a request that cannot be read is answered 400 and the receiver goes on'
complete -c triage-recv -s h -l help -d 'Print help (see more with \'--help\')'
complete -c triage-recv -s V -l version -d 'Print version'
