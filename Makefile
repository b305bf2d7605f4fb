# triage: the two commands a newcomer needs are `make run` and `make test`.
GO ?= go
BIN := bin/triage
OUT := out

.PHONY: all build run test test-short race lint bench eval eval-live check clean

all: lint test

# The commit is stamped explicitly so `triage --version` names it even when
# GOFLAGS has -buildvcs=false or the checkout is a git worktree.
COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo +dirty)

# lingua-go embeds the models of all its 75 languages and n-gram lengths
# (124 MB) in its package; triage reads only the trigram models (its
# low-accuracy mode, 9 MB) and the bigram and unigram models (1 MB) a
# trigram it does not know falls back to. The build links a copy of the
# module with those only, stored uncompressed in their zip files (16 MB;
# loading them then skips inflating, a third of the loading's CPU), through
# a go.mod of its own (-modfile, replace): the binary is about 71 MiB
# instead of 178 MiB and detects the same (internal/language/trim.go). A
# missing fallback model would be looked for again at every unknown
# trigram (a failed read of the embedded files each time). A plain
# `go build` or `go install` works too, with the larger binary.
LINGUA := $(OUT)/lingua-trim
build:
	@rm -rf $(LINGUA) && mkdir -p $(LINGUA) && $(GO) mod download github.com/pemistahl/lingua-go
	@cp -r "$$($(GO) list -m -f '{{.Dir}}' github.com/pemistahl/lingua-go)" $(LINGUA)/lingua-go && chmod -R u+w $(LINGUA)
	@$(GO) run internal/language/trim.go $(LINGUA)/lingua-go/language-models
	@cp go.mod $(LINGUA)/go.mod && cp go.sum $(LINGUA)/go.sum
	@$(GO) mod edit -modfile=$(LINGUA)/go.mod -replace github.com/pemistahl/lingua-go=$(CURDIR)/$(LINGUA)/lingua-go
	$(GO) build -modfile=$(LINGUA)/go.mod -ldflags "-X main.commit=$(COMMIT)" -o $(BIN) ./cmd/triage

## run: process the sample inbox on the bundled defaults (offline model, local CSV, SQLite tickets, outbox dir),
## then the follow-ups that answer it (examples/inbox/follow-ups: they join the tickets of the first pass)
RUN_FLAGS = --warranty-csv examples/warranty.csv --tickets-db $(OUT)/tickets.db --outbox $(OUT)/outbox --staff kierownik@example.com
run: build
	@mkdir -p $(OUT)
	./$(BIN) process $(RUN_FLAGS) examples/inbox/*.eml; status=$$?; \
	  ./$(BIN) process $(RUN_FLAGS) examples/inbox/follow-ups/*.eml || status=1; \
	  echo "replies written to $(OUT)/outbox/; tickets: ./$(BIN) tickets list --tickets-db $(OUT)/tickets.db"; exit $$status

## test: vet, formatting, the race-enabled test suite, and the offline eval suite
# Tests that need a real server not installed here (Dovecot, PostgreSQL, Chromium, the npm MCP server, systemd-analyze)
# skip locally and record why in $(OUT)/skipped.txt; this target prints them
# loudly (CI fails those tests instead of skipping).
test: lint
	@mkdir -p $(OUT) && rm -f $(OUT)/skipped.txt
	TRIAGE_SKIP_REPORT=$(CURDIR)/$(OUT)/skipped.txt TRIAGE_SCREENSHOT_DIR=$(CURDIR)/$(OUT)/screenshots $(GO) test -race -count=1 ./...
	@if [ -s $(OUT)/skipped.txt ]; then \
	  echo; echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"; \
	  echo "!!! SOME TESTS WERE SKIPPED: a real server they need is not installed"; \
	  sed 's/^/!!!   /' $(OUT)/skipped.txt; \
	  echo "!!! install it (as root: .ci/dovecot.sh, .ci/postgres.sh, .ci/chromium.sh, .ci/node.sh; apt-get install systemd) and rerun"; \
	  echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"; echo; fi
	$(MAKE) --no-print-directory eval

test-short:
	$(GO) test -short ./...

lint:
	@fmt=$$(gofmt -l cmd internal eval instructions e2e 2>/dev/null); if [ -n "$$fmt" ]; then echo "gofmt needed:"; echo "$$fmt"; exit 1; fi
	$(GO) vet ./...

## check: validate the scenario files
check: build
	./$(BIN) check

## bench: pipeline and component benchmarks
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## eval: the eval suite, offline, must pass at 100%
eval: build
	./$(BIN) eval --offline --min-pass-rate 100 eval/cases

## eval-live: the eval suite against Gemini (needs GEMINI_API_KEY)
eval-live: build
	@test -n "$$GEMINI_API_KEY$$GOOGLE_API_KEY" || { echo "eval-live needs GEMINI_API_KEY (or GOOGLE_API_KEY)"; exit 2; }
	./$(BIN) eval eval/cases

clean:
	rm -rf bin $(OUT)
