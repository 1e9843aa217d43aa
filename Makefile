# corridor: the two commands a new machine needs are `make run` and `make test`.
GO        ?= go
BIN       := bin/corridor
STATICCHECK_VERSION := v0.8.2
GOBIN     := $(shell $(GO) env GOPATH)/bin
# Tests and benchmarks run against real PostgreSQL and Redis: these local
# defaults, unless DATABASE_URL / REDIS_URL are set. Each test makes its own
# scratch database. `make run` does not take the defaults: it runs on what
# DATABASE_URL / REDIS_URL say, and in memory when they are unset.
TEST_DATABASE_URL := postgres://postgres@127.0.0.1:5432/test?sslmode=disable
TEST_REDIS_URL    := redis://127.0.0.1:6379/0
test bench fuzz: export DATABASE_URL ?= $(TEST_DATABASE_URL)
test bench fuzz: export REDIS_URL ?= $(TEST_REDIS_URL)

.PHONY: run build test fuzz simulate bench lint fmt staticcheck layering clean

## run: start the service in sandbox mode: in memory (no set-up), or on
## PostgreSQL / Redis when DATABASE_URL / REDIS_URL are set (the banner says which).
run:
	@$(GO) run ./app

## build: build the binary into bin/corridor.
build:
	$(GO) build -o $(BIN) ./app

## test: every suite, PostgreSQL and Redis included (they fail if unreachable).
test:
	$(GO) test -count=1 -timeout 15m ./...

## fuzz: the API fuzzers (POST/PUT/PATCH bodies, GET queries; memory, then PostgreSQL)
## and the wallet wire parsers (stamp, clientPublicKey, the OIDC JWT pre-check), FUZZTIME each.
FUZZTIME ?= 60s
fuzz:
	$(GO) test ./app -run '^$$' -fuzz '^FuzzAPIMemory$$' -fuzztime $(FUZZTIME)
	$(GO) test ./app -run '^$$' -fuzz '^FuzzAPIPostgres$$' -fuzztime $(FUZZTIME)
	$(GO) test ./core/walletauth -run '^$$' -fuzz '^FuzzParseStamp$$' -fuzztime $(FUZZTIME)
	$(GO) test ./core/walletauth -run '^$$' -fuzz '^FuzzParseClientKey$$' -fuzztime $(FUZZTIME)
	$(GO) test ./core/walletauth -run '^$$' -fuzz '^FuzzParseJWT$$' -fuzztime $(FUZZTIME)

## simulate: the seeded whole-system simulation, one seed for many steps
## (SEED, STEPS); make test runs three short seeds. It reports steps/second.
SEED  ?= 1
STEPS ?= 5000
simulate:
	CORRIDOR_SIM_SEED=$(SEED) CORRIDOR_SIM_STEPS=$(STEPS) $(GO) test -count=1 -timeout 60m -run '^TestSimulation$$' -v ./app | grep -v '^=== '

## bench: pgbench reference, ledger posting (memory, PostgreSQL; spread and hot), HTTP funding.
bench: build
	bash scripts/bench.sh

## lint: gofmt, go vet, staticcheck, and the import-direction rule.
lint: fmt layering
	$(GO) vet ./...
	@test -x $(GOBIN)/staticcheck || $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(GOBIN)/staticcheck ./...

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## layering: core, ledger and ports never import adapters or app; ledger never imports core.
layering:
	@bash scripts/check-layering.sh

clean:
	rm -rf bin
