# Gatehouse — the two commands a newcomer needs are `make run` and `make test`.
GO        ?= go
BIN       := bin
PLUGINS   := $(BIN)/plugins
GATEHOUSE := $(BIN)/gatehouse

.PHONY: all build plugins run test deps kube-assets vet check-generated unit integration bench generate clean

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
test: deps kube-assets vet check-generated unit integration

deps:
	bash integration/install-deps.sh

# kube-apiserver and etcd for the Kubernetes tests, built from the Go module proxy once and
# cached in ~/.cache/gatehouse/kube (cold: ~8 minutes on 2 cores; warm: instant).
kube-assets:
	bash integration/kube/build-apiserver.sh

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

# BENCH_FLAGS go to integration/bench: -write updates BENCHMARKS.md, -only SECTION,...
# runs some sections (see BENCHMARKS.md, "Running it"); KUBEBENCH_FLAGS=-write stores
# kubebench's goals, which `go run ./integration/bench -table -write` then lists.
bench: deps kube-assets
	$(GO) run ./integration/bench $(BENCH_FLAGS)
	$(GO) run ./integration/kube/kubebench $(KUBEBENCH_FLAGS)

PROTOC_GEN_GO := google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
CONTROLLER_GEN := sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0
CRD_DIR := deploy/helm/gatehouse/crds
# The gateway proxies' bootstrap in the chart, with placeholders the chart fills in; its
# mutual-TLS variant, and the SDS files that variant (and Settings spec.extauth.tls) name:
# the proxy's certificate Secret is mounted at /etc/gatehouse/tls, the SDS files beside
# the bootstrap in /etc/envoy.
CHART_FILES := deploy/helm/gatehouse/files
ENVOY_BOOTSTRAP := $(CHART_FILES)/envoy-bootstrap.yaml $(CHART_FILES)/envoy-bootstrap-mtls.yaml \
	$(CHART_FILES)/sds-certificate.yaml $(CHART_FILES)/sds-validation.yaml
BOOTSTRAP_ARGS := --xds controlplane.gh-release-namespace.svc.cluster.local:9977 \
	--role gh-release-namespace~gh-proxy-name --node-id gateway-proxy

generate:
	$(GO) install $(PROTOC_GEN_GO)
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" protoc -I api -I /usr/include --go_out=. --go_opt=module=gatehouse.dev/gatehouse api/extauth/v1/extauth.proto
	rm -f $(CRD_DIR)/*.yaml
	$(GO) run $(CONTROLLER_GEN) crd:crdVersions=v1,allowDangerousTypes=true paths=./api/kube/... output:crd:dir=$(CRD_DIR)
	$(GO) run ./cmd/gatehouse envoy bootstrap $(BOOTSTRAP_ARGS) > $(CHART_FILES)/envoy-bootstrap.yaml
	$(GO) run ./cmd/gatehouse envoy bootstrap $(BOOTSTRAP_ARGS) --xds-tls-dir /etc/gatehouse/tls --sds-dir /etc/envoy \
		> $(CHART_FILES)/envoy-bootstrap-mtls.yaml
	$(GO) run ./cmd/gatehouse envoy sds --tls-dir /etc/gatehouse/tls --out $(CHART_FILES) > /dev/null

# The checked-in generated code must be what `make generate` writes.
check-generated: generate
	@git diff --exit-code -- api/extauth/v1/ || { echo "api/extauth/v1 is stale: run make generate and commit"; exit 1; }
	@git diff --exit-code -- $(CRD_DIR) $(ENVOY_BOOTSTRAP) && test -z "$$(git ls-files --others --exclude-standard $(CRD_DIR) $(ENVOY_BOOTSTRAP))" || { echo "$(CRD_DIR) or $(CHART_FILES) is stale: run make generate and commit"; exit 1; }

clean:
	rm -rf $(BIN)
