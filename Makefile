# lifeloop — a thin façade over the go tool.
GO        ?= go
BIN       := bin/lifeloop
PKGS      := ./...
FUZZTIME  ?= 5s

.PHONY: build test unit e2e lint fmt bench fuzz demo harnesses broker clean

build: ## build bin/lifeloop
	$(GO) build -o $(BIN) ./cmd/lifeloop

test: ## every test, with the race detector (end-to-end tests included when harnesses are installed)
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

unit: ## fast tests only (no real harnesses)
	$(GO) test -short -count=1 $(PKGS)

lint: ## golangci-lint (pinned in go.mod's tool block)
	$(GO) tool golangci-lint run ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

bench: ## benchmarks
	$(GO) test -run='^$$' -bench=. -benchmem $(PKGS)

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

# The fleet tests (e2e/fleet, internal/amqpsink) start a private RabbitMQ
# from Debian's package on loopback; they fail without it.
broker: ## install RabbitMQ (Debian's rabbitmq-server) for the fleet tests and `lifeloop consume` demos
	@if [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ]; then echo "rabbitmq-server already installed"; else \
	  SUDO=; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq rabbitmq-server; fi

e2e: ## end-to-end tests against the real harnesses (needs `make harnesses`)
	$(GO) test -race -count=1 ./e2e/...

demo: harnesses/node_modules/.bin/claude ## build lifeloop, run a real `claude -p` turn under `lifeloop run` against the bundled mock model, print the receipts
	./scripts/demo.sh

harnesses/node_modules/.bin/claude harnesses/node_modules/.bin/codex: harnesses/package-lock.json
	$(NPM_INSTALL)
