# Gatehouse — the two commands a newcomer needs are `make run` and `make test`.
GO        ?= go
BIN       := bin
PLUGINS   := $(BIN)/plugins
GATEHOUSE := $(BIN)/gatehouse

.PHONY: all build plugins run test deps vet check-generated unit integration bench generate clean

all: build plugins

build:
	$(GO) build -o $(GATEHOUSE) ./cmd/gatehouse

# Plugins are built by the same toolchain with the same flags as the server, which is
# what lets plugin.Open accept them.
plugins:
	@mkdir -p $(PLUGINS)
	$(GO) build -buildmode=plugin -o $(PLUGINS)/required_header.so ./plugins/required_header

# The dev gateway on 127.0.0.1:8080 with extauth on 127.0.0.1:8083 and an echo upstream,
# serving the embedded examples (examples/default).
run: build plugins
	$(GATEHOUSE) dev --plugin-dir $(PLUGINS)

# Everything, installing what it needs first (Redis and Chromium from Debian, the
# OpenID provider from npm).
test: deps vet check-generated unit integration

deps:
	bash integration/install-deps.sh

vet:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Packages that never load a plugin in-process run with -race; a race-enabled binary
# cannot open plugins built without -race, so the plugin-loading tests run the real
# gatehouse binary as a separate process instead.
unit:
	$(GO) test -race -count=1 $$($(GO) list ./... | grep -v -e /integration -e /loader -e /plugins/)
	$(GO) test -count=1 ./loader/...

integration:
	$(GO) test -count=1 -timeout 30m ./integration/...

bench: deps
	$(GO) run ./integration/bench

PROTOC_GEN_GO := google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12

generate:
	$(GO) install $(PROTOC_GEN_GO)
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" protoc -I api -I /usr/include --go_out=. --go_opt=module=gatehouse.dev/gatehouse api/extauth/v1/extauth.proto

# The checked-in generated code must be what `make generate` writes.
check-generated: generate
	@git diff --exit-code -- api/extauth/v1/ || { echo "api/extauth/v1 is stale: run make generate and commit"; exit 1; }

clean:
	rm -rf $(BIN)
