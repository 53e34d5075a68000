# kpipe. `make run` serves on the embedded default; `make test` runs every test.
GO      ?= go
BIN     := bin/apiserver
CONFIG  ?= apiserver.yaml
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
PKG     := github.com/kpipe/kpipe/internal/version
LDFLAGS := -X $(PKG).gitVersion=v1.37.2-kpipe+$(VERSION) \
           -X $(PKG).gitCommit=$(shell git rev-parse HEAD 2>/dev/null) \
           -X $(PKG).buildDate=$(shell date -u +%Y-%m-%dT%H:%M:%SZ)

.PHONY: build run test test-faults bench lint fuzz clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/apiserver

run: build
	./$(BIN) --config $(CONFIG)

# Every test. Packages share one embedded etcd each; -p 2 matches the cores.
test:
	$(GO) test -race -count=1 -timeout 14m -p 2 ./...

# Slow fault-injection suites (build tag "faults").
test-faults:
	$(GO) test -race -count=1 -timeout 60m -p 1 -tags faults -run 'Fault' ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./internal/pipeline/

lint:
	@out=$$(gofmt -l cmd internal plugins config); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzResolve -fuzztime $(FUZZTIME) ./internal/request/

clean:
	rm -rf bin var
