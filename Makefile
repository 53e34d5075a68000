# kpipe. `make run` serves on the embedded default; `make test` runs every test.
GO      ?= go
BIN     := bin/apiserver
CONFIG  ?= apiserver.yaml
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
PKG     := github.com/kpipe/kpipe/internal/version
LDFLAGS := -X $(PKG).gitVersion=v1.37.2-kpipe+$(VERSION) \
           -X $(PKG).gitCommit=$(shell git rev-parse HEAD 2>/dev/null) \
           -X $(PKG).buildDate=$(shell date -u +%Y-%m-%dT%H:%M:%SZ)

.PHONY: build build-bench run test test-faults bench bench-profile bench-memory bench-micro lint fuzz fuzz-list clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/apiserver

build-bench:
	$(GO) build -o bin/apiserver-bench ./cmd/apiserver-bench

run: build
	./$(BIN) --config $(CONFIG)

# Every test. Packages share one embedded etcd each; -p 2 matches the cores.
test:
	$(GO) test -race -count=1 -timeout 14m -p 2 ./...

# Slow fault-injection suites (build tag "faults").
test-faults:
	$(GO) test -race -count=1 -timeout 60m -p 1 -tags faults -run 'Fault' ./...

# The server on a fresh embedded etcd (apiserver.yaml, temp stateDir,
# loopback port) against bin/apiserver-bench, the floor (--floor: a no-op
# HTTP/2 server doing the same etcd transaction) and the bare-etcd
# baseline: prints the table, writes var/bench.json. BENCH_FLAGS adds
# bench flags.
bench: build build-bench
	./cmd/apiserver-bench/scripts/bench.sh

# CPU and allocation profiles of the server under the create workload,
# through /debug/pprof: var/create.{cpu,allocs}.pprof and their tops.
bench-profile: build build-bench
	./cmd/apiserver-bench/scripts/profile.sh

# Memory and startup: RSS after 10,000 1 KiB ConfigMaps on an external
# etcd, and the time to /readyz on the existing state: var/bench-memory.json.
# MEMORY_HEAP_PROFILE=1 also saves and prints the heap (var/memory.heap.pprof).
bench-memory: build build-bench
	./cmd/apiserver-bench/scripts/memory.sh

# The pipeline's Go micro-benchmarks.
bench-micro:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/pipeline/

# staticcheck's default checks, with the fault suites' files, less two
# that kube's API rules out: SA1019 (kpipe serves deprecated APIs such as
# v1 Endpoints and DeleteOptions.orphanDependents on purpose) and ST1005
# (error strings are kube's messages, capitals and all).
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
STATICCHECK_CHECKS := all,-ST1000,-ST1003,-ST1016,-ST1020,-ST1021,-ST1022,-ST1023,-SA1019,-ST1005
lint:
	@out=$$(gofmt -l cmd internal plugins config); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags faults ./internal/faults/
	$(STATICCHECK) -tags faults -checks '$(STATICCHECK_CHECKS)' ./...

# Every fuzz target, each for FUZZTIME. The targets are found in the code
# (every `func FuzzX(f *testing.F)` in a test file), so a new one runs
# without an edit here; `make fuzz-list` prints them as "name ./pkg/".
# The seed corpora run in `make test`.
FUZZTIME ?= 30s
fuzz-list:
	@grep -rE --include='*_test.go' -l '^func Fuzz[A-Za-z0-9_]*\([A-Za-z_]+ \*testing\.F\)' cmd internal plugins config | sort | \
	while read -r file; do \
		sed -nE "s|^func (Fuzz[A-Za-z0-9_]*)\([A-Za-z_]+ \*testing\.F\).*|\1 ./$$(dirname $$file)/|p" "$$file"; \
	done

fuzz:
	@set -e; list=$$($(MAKE) -s fuzz-list); [ -n "$$list" ] || { echo "no fuzz targets found"; exit 1; }; \
	echo "$$list" | while read -r name pkg; do \
		echo "== $$name $$pkg"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) "$$pkg" || exit 1; \
	done

clean:
	rm -rf bin var
