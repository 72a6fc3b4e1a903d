# triage: build, demo, test, bench, docs and install.
CARGO    ?= cargo
PREFIX   ?= /usr/local
DESTDIR  ?=
RELEASE  := target/release
BINS     := $(patsubst src/bin/%.rs,%,$(wildcard src/bin/triage*.rs))

.PHONY: build demo test test-browser test-memcheck test-spark lint fuzz soak bench bench-explain man completions install install-docs check-peer clean otlp-types

build:
	$(CARGO) build --release --locked

## demo: the pipeline on the bundled examples (every format), then the one-command report and comparison.
demo: build
	@echo '$$ triage-parse examples/*.ndjson examples/*.jsonl examples/*.json | triage-group | triage-score | triage-render --format table --top 5'
	@$(RELEASE)/triage-parse -q examples/*.ndjson examples/*.jsonl examples/*.json | $(RELEASE)/triage-group \
	  | $(RELEASE)/triage-score | $(RELEASE)/triage-render --format table --top 5
	@echo
	@echo '$$ triage report examples/monday.ndjson --top 1'
	@$(RELEASE)/triage report examples/monday.ndjson --top 1
	@echo
	@echo '$$ triage compare examples/before.ndjson examples/monday.ndjson --format table'
	@$(RELEASE)/triage compare examples/before.ndjson examples/monday.ndjson --format table

## test: every test, formatting and lints (the browser test too when chromium is here),
## then one line: N passed, N failed.
test:
	@CARGO="$(CARGO)" bash .ci/test

lint:
	$(CARGO) fmt --check
	$(CARGO) clippy --locked --all-targets -- -D warnings

test-browser:
	@if [ -f tests/cli/browser.rs ]; then TRIAGE_BROWSER_TEST=1 $(CARGO) test --locked --test cli -- --include-ignored browser::; \
	  else echo "test-browser: no browser test yet"; fi

test-memcheck:
	PROPTEST_CASES=24 valgrind -q --error-exitcode=99 $$($(CARGO) test --locked --lib --no-run --message-format=json 2>/dev/null \
	  | sed -n 's/.*"kind":\["lib"\].*"executable":"\([^"]*\)".*/\1/p' | head -1) plumbing::json_scan plumbing::task_share

test-spark:
	$(CARGO) test --locked --test cli -- --include-ignored spark::

## fuzz: every reader (and the HTTP request parser) fed byte mutants of the sample files,
## TRIAGE_FUZZ_SECONDS (default 60) per target; a crash is kept in target/fuzz-crashes/.
fuzz:
	TRIAGE_FUZZ_SECONDS=$${TRIAGE_FUZZ_SECONDS:-60} $(CARGO) test --release --locked --test cli \
	  -- --ignored --test-threads 1 --nocapture fuzz_readers:: $$([ -f tests/cli/fuzz_http.rs ] && echo fuzz_http::)

# Regenerates the receiver's OTLP types from proto/ (no protoc needed).
otlp-types:
	cd tools/otlp-codegen && $(CARGO) run --release -- ../../proto ../../src/recv/otlp/generated.rs

## soak: triage-recv under 32 exporters (JSON, protobuf, gzip) for SOAK_SECONDS (default 120),
## stopped by SIGTERM, SIGINT and SIGKILL in turn and restarted; every acknowledged span must be
## read back exactly once. `make test` runs it for 10 s.
soak:
	TRIAGE_SOAK_SECONDS=$${SOAK_SECONDS:-120} $(CARGO) test --release --locked --test cli \
	  -- --nocapture recv::soak_32

## bench: side-by-side timings against the reference, DuckDB and jq.
bench: build
	bash bench/run.sh

## bench-explain: triage-explain measured on every labelled set; ARGS=--fit also prints the calibration rows.
bench-explain: build
	bash bench/explain-accuracy.sh $(ARGS)

## check-peer: our scores against agent-triage 0.1.0 on generated data, clean and messy.
check-peer: build
	bash bench/check-peer.sh

man: build
	@mkdir -p man
	@for b in $(BINS); do $(RELEASE)/$$b --generate man > man/$$b.1; done
	@echo "man pages written to man/"

completions: build
	@mkdir -p completions/bash completions/zsh completions/fish
	@for b in $(BINS); do \
	  $(RELEASE)/$$b --generate bash > completions/bash/$$b; \
	  $(RELEASE)/$$b --generate zsh > completions/zsh/_$$b; \
	  $(RELEASE)/$$b --generate fish > completions/fish/$$b.fish; \
	done
	@echo "completions written to completions/"

install: build install-docs
	@for b in $(BINS); do install -Dm755 $(RELEASE)/$$b $(DESTDIR)$(PREFIX)/bin/$$b; done
	@for m in man/*.1; do install -Dm644 $$m $(DESTDIR)$(PREFIX)/share/man/man1/$$(basename $$m); done
	@for b in $(BINS); do \
	  install -Dm644 completions/bash/$$b $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$b; \
	  install -Dm644 completions/zsh/_$$b $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_$$b; \
	  install -Dm644 completions/fish/$$b.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/$$b.fish; \
	done
	@echo "installed under $(DESTDIR)$(PREFIX)"

# The pages SEE ALSO of the man pages names, laid out as in the source.
install-docs:
	@for d in README.md triage.example.toml docs/*.md; do \
	  install -Dm644 $$d $(DESTDIR)$(PREFIX)/share/doc/triage/$$d; done

clean:
	$(CARGO) clean
