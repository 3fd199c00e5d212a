# Cairn. `make help` lists the targets.
GO      ?= go
BIN     ?= bin/cairn
PKGS    ?= ./...

.DEFAULT_GOAL := help

.PHONY: help build test test-deps unit check demo bench fuzz clean cluster-test chart-test compose-test images images-deps compose-secrets compose-smoke chaos chaos-short

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-8s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build the cairn binary into bin/
	$(GO) build -o $(BIN) ./cmd/cairn

test: test-deps unit cluster-test chart-test compose-test compose-smoke chaos-short ## every test: the module's, the cluster test, the chart and compose checks, the compose smoke run, a short chaos run (CI runs this)

test-deps: ## install what the tests need beyond Go: Debian's chromium for the console tests
	@command -v chromium >/dev/null || (apt-get update && apt-get install -y --no-install-recommends chromium)

unit: ## run the unit tests (every package) with the race detector
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

check: ## gofmt, go vet and staticcheck (also the cluster, live and compose tags), errcheck, errorlint, go mod tidy, import boundaries, commit subjects
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
		if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) vet -tags cluster,live,compose $(PKGS)
	$(GO) tool staticcheck $(PKGS)
	@tagged=$$(grep -rlE --include='*.go' '^//go:build .*(cluster|live|compose)' . | xargs -r -n1 dirname | sort -u); \
		if [ -n "$$tagged" ]; then echo "staticcheck -tags cluster,live,compose $$tagged"; $(GO) tool staticcheck -tags cluster,live,compose $$tagged; fi
	$(GO) tool errcheck -exclude .ci/errcheck-excludes $(PKGS)
	$(GO) tool go-errorlint $(PKGS)
	@cp go.mod /tmp/cairn-go.mod.bak; cp go.sum /tmp/cairn-go.sum.bak; \
		$(GO) mod tidy; \
		if ! cmp -s go.mod /tmp/cairn-go.mod.bak || ! cmp -s go.sum /tmp/cairn-go.sum.bak; then \
			cp /tmp/cairn-go.mod.bak go.mod; cp /tmp/cairn-go.sum.bak go.sum; \
			echo "go mod tidy changes go.mod or go.sum; run it and commit"; exit 1; fi
	$(GO) test -count=1 ./internal/lint/
	.ci/commit-subjects

demo: build ## run the demonstration on the embedded default
	$(BIN) demo

bench: ## run the benchmarks
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

FUZZTIME ?= 30s
fuzz: ## run every fuzz target for FUZZTIME each
	@for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
			echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; done

clean: ## remove build output
	rm -rf bin

CLUSTER_TIMEOUT ?= 10m
cluster-test: ## 3-node NATS cluster, every service as processes; kills a NATS node (kept down) and an orchestrator mid-run
	$(GO) test -tags cluster -race -count=1 -v -timeout $(CLUSTER_TIMEOUT) -run '^TestCluster$$' ./internal/clustertest/

chart-test: ## render charts/cairn with the Helm SDK and strictly decode every manifest (own module)
	cd charts/cairn/test && $(GO) test -count=1 ./...

compose-test: ## validate deploy/compose.yaml with the compose-spec library (own module)
	cd deploy/test && $(GO) test -count=1 ./...

images-deps: ## install what make images needs from Debian's packages (debootstrap; as root)
	@command -v debootstrap >/dev/null || { apt-get update -q && apt-get install -y -q debootstrap; }

images: images-deps ## build the images offline, FROM scratch: cairn, cairn-nats, cairn-toolrunner (TAG=dev)
	deploy/images/build.sh

compose-secrets: build ## the admin key of deploy/compose.yaml, in deploy/.secrets (gitignored; kept if it exists)
	@mkdir -p deploy/.secrets && chmod 700 deploy/.secrets
	@[ -s deploy/.secrets/admin.key ] || { umask 077; $(BIN) keys generate > deploy/.secrets/admin.key; }
	@chown 65532:65532 deploy/.secrets/admin.key 2>/dev/null || true # the gateway's uid reads the secret

compose-smoke: images compose-secrets ## run deploy/compose.yaml for real: sessions through the gateway, invariants checked, torn down
	$(GO) test -tags compose -count=1 -v -timeout 12m -run '^TestComposeSmoke$$' ./internal/composetest/

CHAOS_SESSIONS ?= 1000
CHAOS_FAULTS_FOR ?= 10m
chaos: images compose-secrets ## the compose cluster under kills, pauses, partitions: CHAOS_SESSIONS sessions, invariants, one FIGURES line (not in CI)
	CAIRN_CHAOS_SESSIONS=$(CHAOS_SESSIONS) CAIRN_CHAOS_FAULTS_FOR=$(CHAOS_FAULTS_FOR) \
		$(GO) test -tags compose -count=1 -v -timeout 60m -run '^TestComposeChaos$$' ./internal/composetest/

CHAOS_SHORT_SESSIONS ?= 40
CHAOS_SHORT_FAULTS_FOR ?= 60s
chaos-short: images compose-secrets ## make chaos, short (in make test): CHAOS_SHORT_SESSIONS sessions, faults for CHAOS_SHORT_FAULTS_FOR, one FIGURES line
	CAIRN_CHAOS_SESSIONS=$(CHAOS_SHORT_SESSIONS) CAIRN_CHAOS_FAULTS_FOR=$(CHAOS_SHORT_FAULTS_FOR) \
		$(GO) test -tags compose -count=1 -v -timeout 15m -run '^TestComposeChaos$$' ./internal/composetest/
