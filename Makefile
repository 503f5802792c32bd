# heapproxy: `make run` starts the embedded default, `make test` runs every test.
GO       ?= go
BIN      := bin
LISTEN   ?= 127.0.0.1:9030
# More server flags for make run, e.g. make run ARGS="--http 127.0.0.1:9040 --config heapproxy.yaml".
ARGS     ?=

.PHONY: all build run test vet bench bench-proxy bench-heapprof bench-e2e bench-snapshot jenode clean

all: build

# -buildvcs=auto: `heapproxy version` names the revision even where GOFLAGS
# turns VCS stamping off. CGO_ENABLED=0: a static binary. The only cgo in the
# build is the net package's libc resolver, which Go's own replaces (it reads
# /etc/hosts, /etc/resolv.conf and nsswitch.conf); without it no ld.so and
# libc start with every process, so `heapproxy dot` starts 0.6 ms sooner and
# keeps 2 MB less resident (bench/heapprof/README.md), and the file runs on
# any Linux of its architecture. The benchmarks build the same way.
# heapproxy-jeprof: the jeprof-like commands without the server, which
# `heapproxy dot ...` hands itself to (cmd/heapproxy/internal/helper), if its
# build ID is the one recorded here; install both files together.
HELPER_ID := github.com/heapproxy/heapproxy/cmd/heapproxy/internal/helper.BuildID
build:
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -o $(BIN)/heapproxy-jeprof ./cmd/heapproxy/jeprof
	CGO_ENABLED=0 $(GO) build -buildvcs=auto -ldflags "-X $(HELPER_ID)=$$($(GO) tool buildid $(BIN)/heapproxy-jeprof)" \
		-o $(BIN)/heapproxy ./cmd/heapproxy

run: build
	./$(BIN)/heapproxy --listen $(LISTEN) $(ARGS)

# The jemalloc test node the backend tests start (they build it themselves too).
jenode:
	mkdir -p $(BIN) && cc -O1 -g -rdynamic -o $(BIN)/jenode testdata/jenode/jenode.c -ljemalloc

STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

# heapprof/sqlview/goregex is its own module (go.mod replaces go-icu-regex with it).
REGEX_MOD := heapprof/sqlview/goregex

vet:
	$(GO) vet ./...
	# The non-Linux fallbacks (no event loops, no raw socket I/O) must build too.
	GOOS=darwin $(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	cd $(REGEX_MOD) && $(GO) vet ./... && $(GO) run $(STATICCHECK) ./...
	# The shell scripts: CI's and the benchmarks'.
	shellcheck .ci/run $$(git ls-files '*.sh' 2>/dev/null || find . -name '*.sh' -not -path './testdata/clients/node/*')
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi

# The suite runs twice: as built, then under the race detector (the whole
# CI run, both included, takes about 7 minutes on 2 cores). The symbolizer
# decodes DWARF units in parallel, heapprof names functions on two
# goroutines, the store writes snapshots behind the answer, and a race
# there can change an answer without an error (session 10 found one in
# debug/dwarf's use: elfsym primeUnits).
test: vet
	$(GO) test -count=1 -timeout 45m ./...
	cd $(REGEX_MOD) && $(GO) test -count=1 ./...
	$(GO) test -race -count=1 -timeout 45m ./...

bench: bench-proxy bench-heapprof bench-e2e bench-snapshot

bench-proxy: build
	bash bench/proxy/run.sh

bench-heapprof: build
	bash bench/heapprof/run.sh

# After bench-heapprof, which builds the o2 shape's program and dump.
bench-e2e: build
	bash bench/snapshot/e2e.sh

# After bench-heapprof too: a snapshot's bytes and CPU, and ON ALL BACKENDS
# over 100 nodes.
bench-snapshot: build
	bash bench/snapshot/run.sh

clean:
	rm -rf $(BIN)
