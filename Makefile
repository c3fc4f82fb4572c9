# Makefile for github.com/gopowertools/lambda.
#
#   make test     install the pinned tools, check formatting, run
#                 staticcheck, lint the template, run the docs' sam
#                 commands, then vet and test everything against real
#                 servers
#   make tools    install the pinned tools under .tools/ (fast when installed)
#   make help     list the targets
#
# Sections below: settings, tools, checks, tests, benchmarks and soak,
# examples, cleaning. To add a step that needs the test servers, make it a
# prerequisite of test-with-servers; one that does not, a prerequisite of
# test.

# ---------------------------------------------------------------- settings

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help
# Steps print in order, one at a time: readable output beats a few seconds.
.NOTPARALLEL:
MAKEFLAGS += --no-print-directory

TOOLS := .tools
GO ?= go
GO_TEST_FLAGS ?= -race -count=1
# Every Go file of the repository, bench/ included, .tools/ excluded.
GO_FILES = $(shell find . -path ./$(TOOLS) -prune -o -name '*.go' -print)

step = @printf '\n==> %s\n' "$(1)"

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-20s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# ------------------------------------------------------------------- tools

.PHONY: tools tools-versions
tools: ## install moto, cfn-lint, dynalite, aws-lambda-rie, valkey-server, the SAM CLI, staticcheck and Powertools Python and TypeScript, pinned, under .tools/
	@scripts/tools.sh
	@bench/powertools/install.sh

tools-versions: ## print the pinned and the installed tool versions
	@scripts/tools.sh versions

# ------------------------------------------------------------------ checks

.PHONY: fmt-check vet staticcheck lint-template sam-check
fmt-check: ## fail when a Go file is not gofmt-ed
	$(call step,gofmt -l)
	@out=$$(gofmt -l $(GO_FILES)); \
	if [[ -n $$out ]]; then printf 'not gofmt-ed (run gofmt -w):\n%s\n' "$$out"; exit 1; fi

vet: ## go vet the main module
	$(call step,go vet ./...)
	@$(GO) vet ./...

# bench/ is a module of its own (its go.mod), so it is checked on its own.
staticcheck: ## staticcheck the main module and the bench/ module
	@scripts/tools.sh staticcheck
	$(call step,staticcheck ./...)
	@$(TOOLS)/bin/staticcheck ./...
	@if [[ -f bench/go.mod ]]; then \
		printf '\n==> cd bench && staticcheck ./...\n'; \
		cd bench && ../$(TOOLS)/bin/staticcheck ./...; \
	fi

lint-template: ## cfn-lint template.yaml and the examples' templates
	@if [[ -f template.yaml ]]; then \
		scripts/tools.sh python; \
		printf '\n==> cfn-lint template.yaml examples/*/template.yaml\n'; \
		$(TOOLS)/venv/bin/cfn-lint template.yaml examples/*/template.yaml; \
	else \
		printf '\n==> cfn-lint: no template.yaml, skipped\n'; \
	fi

# TestSAMCommands (internal/testing/docstest) reads the sam commands from the docs
# and runs them, up to sam deploy, on scratch copies: the tree stays clean.
# __SAM_CLI_APP_DIR keeps SAM's own state (its weekly version check) under
# .tools/ instead of ~/.aws-sam.
sam-check: ## run the sam validate --lint and sam build of docs/deploying.md and docs/getting-started.md (no AWS account needed)
	@scripts/tools.sh sam
	$(call step,sam validate --lint and sam build as the docs show them)
	@DOCS_SAM_CLI=$(abspath $(TOOLS)/sam/bin/sam) __SAM_CLI_APP_DIR=$(abspath $(TOOLS)/sam/state) \
		$(GO) test -count=1 -v -run '^TestSAMCommands$$' ./internal/testing/docstest/

# ------------------------------------------------------------------- tests

# The oldest Go that go.mod allows (the dependencies' own go directives set
# it: aws-lambda-go needs 1.26): test-go-min runs the tests on it, fetched
# through the module proxy.
GO_MIN := $(shell sed -n 's/^go //p' go.mod)

# The library's exported API is recorded under api/ (internal/testing/apirecord's
# test compares it with the code). After a deliberate change, regenerate it
# and say what changed in CHANGELOG.md, in the same commit.
.PHONY: api
api: ## rewrite the recorded API under api/ from the code (after a deliberate change; see CHANGELOG.md)
	$(call step,go test ./internal/testing/apirecord -update)
	@$(GO) test -count=1 ./internal/testing/apirecord -update

# The records each store writes are kept under testdata/golden
# (docs/record-format.md); the tests fail when the code writes or reads
# them otherwise. After a deliberate change of the record format,
# regenerate them and say what changed in CHANGELOG.md. The records
# Powertools writes (internal/testing/interop) are rewritten apart, when its
# version changes: they carry the clock of the run.
.PHONY: golden
golden: ## rewrite the golden records under testdata/golden from the code, on the test servers (after a deliberate change of the record format)
	$(call step,go test ./dynamo ./redis ./powertools/idempotency/responsestore -run Golden -update)
	@scripts/with-servers.sh $(GO) test -count=1 ./dynamo ./redis ./powertools/idempotency/responsestore -run Golden -update

.PHONY: test test-with-servers go-test bench-test test-go-min
test: tools fmt-check staticcheck lint-template sam-check build ## everything CI runs, against real servers
	$(call step,starting the test servers)
	@scripts/with-servers.sh $(MAKE) test-with-servers

# Run inside scripts/with-servers.sh, which exports TEST_MOTO_ENDPOINT,
# TEST_DYNALITE_ENDPOINT and the TEST_VALKEY_*, TEST_REDIS_ADDR addresses.
# Run alone, tests that need a server skip.
test-with-servers: vet go-test bench-test

test-go-min: tools ## the tests again, on the oldest Go that go.mod allows (its go directive)
	$(call step,tests on go$(GO_MIN))
	@scripts/with-servers.sh $(MAKE) test-with-servers GO="GOTOOLCHAIN=go$(GO_MIN) $(GO)"

go-test: ## go test the main module (servers: use make test)
	$(call step,go test $(GO_TEST_FLAGS) ./...)
	@$(GO) test $(GO_TEST_FLAGS) ./...

bench-test: ## go test the bench/ module (its own go.mod: Powertools comparisons)
	@if [[ -f bench/go.mod ]]; then \
		printf '\n==> cd bench && go test ./...\n'; \
		cd bench && $(GO) test ./...; \
	fi

# -------------------------------------------------------- benchmarks, soak
# docs/benchmarks.md and docs/reliability.md quote these runs.

SOAK_INVOCATIONS ?= 10000

.PHONY: bench-compare
bench-compare: tools ## Go vs Powertools Python and TypeScript, on moto, in memory and on Valkey; writes docs/benchmarks.md
	@bench/powertools/install.sh
	$(call step,bench-compare: go run ./powertools/compare (in bench/))
	@scripts/with-servers.sh bash -c 'cd bench && $(GO) run ./powertools/compare -root ..'

.PHONY: soak
soak: tools ## the full soak: 10,000 invocations (SOAK_INVOCATIONS) under random faults on moto; make test runs 500
	$(call step,soak: SOAK_INVOCATIONS=$(SOAK_INVOCATIONS) go test -run TestSoak ./dynamo/)
	@SOAK_INVOCATIONS=$(SOAK_INVOCATIONS) scripts/with-servers.sh \
		$(GO) test -race -count=1 -v -timeout 60m -run '^TestSoak$$' ./dynamo/

# ---------------------------------------------------------------- examples

# Every example with a main package: examples/<name>/main.go.
EXAMPLES = $(patsubst examples/%/main.go,%,$(wildcard examples/*/main.go))
# A Go function as Lambda's provided.al2023 runtime runs it: Linux, static,
# without the RPC mode that only the retired go1.x runtime used.
LAMBDA_BUILD = CGO_ENABLED=0 GOOS=linux $(GO) build -tags lambda.norpc

.PHONY: build demo
build: ## build every example into build/<example>/bootstrap (Linux, this machine's architecture), and the idempotency command into build/idempotency
	$(call step,build: $(EXAMPLES) and cmd/idempotency)
	@for ex in $(EXAMPLES); do \
		$(LAMBDA_BUILD) -o build/$$ex/bootstrap ./examples/$$ex; \
	done
	@$(GO) build -o build/idempotency ./cmd/idempotency

# sam build runs build-<Name>Function for each function of template.yaml
# (BuildMethod: makefile), with ARTIFACTS_DIR set: PaymentsFunction builds
# examples/payments, and so on. The functions run on arm64.
build-%Function:
	$(if $(ARTIFACTS_DIR),,$(error ARTIFACTS_DIR is not set; sam build sets it))
	GOARCH=arm64 $(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./examples/$(shell echo '$*' | tr A-Z a-z)

demo: ## run the payments example here: moto, a local provider, the function under the Lambda emulator
	@scripts/demo.sh

# ---------------------------------------------------------------- cleaning

.PHONY: clean
clean: ## remove build output and the installed tools (.tools/)
	rm -rf build .aws-sam $(TOOLS)
