# lifeloop — a thin façade over the go tool.
GO        ?= go
BIN       := bin/lifeloop
PKGS      := ./...
FUZZTIME  ?= 5s

.PHONY: build test unit e2e lint fmt bench bench-tools fuzz demo harnesses clean

# urfave_cli_no_docs leaves out the CLI library's man/markdown generators
# (and their package init) that lifeloop never uses.
BUILDTAGS := urfave_cli_no_docs

build: ## build bin/lifeloop
	$(GO) build -tags $(BUILDTAGS) -o $(BIN) ./cmd/lifeloop

test: ## every test, with the race detector (end-to-end tests included when harnesses are installed)
	$(GO) test -race -count=1 $(PKGS)

unit: ## fast tests only (no real harnesses)
	$(GO) test -short -count=1 $(PKGS)

lint: ## golangci-lint (pinned in go.mod's tool block)
	$(GO) tool golangci-lint run ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

# The end-to-end benchmarks (e2e/) run separately: BenchmarkSummary is the
# one table make bench ends with (see docs/benchmarks.md).
BENCH_PKGS = $$($(GO) list $(PKGS) | grep -v /e2e)

bench: ## package benchmarks, then one table of ratios against baselines measured in the same run (not part of make test)
	$(GO) test -run='^$$' -bench=. -benchmem $(BENCH_PKGS)
	$(GO) test -run='^$$' -bench='^BenchmarkSummary$$' -benchtime=1x -timeout=60m ./e2e/

# ccusage and @ccusage/codex, the baselines of the catch-up rows, from the
# npm registry into .cache/bench-tools (git-ignored, outside the module).
# ccusage 17.2.1: later versions fetch a native binary at run time;
# @ccusage/codex 18.0.11: 19 only points to ccusage.
CCUSAGE_VERSION       := 17.2.1
CCUSAGE_CODEX_VERSION := 18.0.11

bench-tools: ## install the benchmark baselines (ccusage, @ccusage/codex) into .cache/bench-tools
	npm install --prefix .cache/bench-tools --no-audit --no-fund --no-save ccusage@$(CCUSAGE_VERSION) @ccusage/codex@$(CCUSAGE_CODEX_VERSION)

fuzz: ## run each fuzz target briefly
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz' || true); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg; \
	  done; \
	done

clean:
	rm -rf bin

# The pinned versions come from harnesses/package-lock.json. `npm install
# --no-save` rather than `npm ci`: the lock cannot list the other
# platforms' optional binaries that the registry here does not serve
# (e.g. opencode-darwin-arm64), and `npm ci` refuses such a lock.
NPM_INSTALL := npm install --prefix harnesses --no-audit --no-fund --no-save

harnesses: ## install the pinned real harnesses (claude, codex, gemini, opencode, pi) into harnesses/node_modules
	$(NPM_INSTALL)

e2e: ## end-to-end tests against the real harnesses (needs `make harnesses`)
	$(GO) test -race -count=1 ./e2e/...

demo: harnesses/node_modules/.bin/claude ## build lifeloop, run a real `claude -p` turn under `lifeloop run` against the bundled mock model, print the receipts
	./scripts/demo.sh

harnesses/node_modules/.bin/claude harnesses/node_modules/.bin/codex: harnesses/package-lock.json
	$(NPM_INSTALL)
