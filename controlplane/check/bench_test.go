package check_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/check"
	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/snapshots"
	"gatehouse.dev/gatehouse/controlplane/source"
)

// resources generates n Upstreams, n AuthConfigs and n VirtualServices (two routes
// each, one secured), plus the extauth Upstream. Every brokenEvery-th VirtualService
// (none when 0) routes to an Upstream that does not exist.
func resources(n, brokenEvery int) map[string][]byte {
	files := map[string][]byte{"extauth.yaml": []byte("apiVersion: core.gatehouse.dev/v1\nkind: Upstream\nmetadata: {name: extauth, namespace: gatehouse-system}\nspec: {static: {hosts: [{addr: 127.0.0.1, port: 8083}]}}\n")}
	var b strings.Builder
	// A file per 500 services keeps each under the source's size limit.
	flush := func(i int) {
		if b.Len() > 0 {
			files[fmt.Sprintf("services-%05d.yaml", i)] = []byte(b.String())
			b.Reset()
		}
	}
	for i := range n {
		if i%500 == 0 {
			flush(i)
		}
		fmt.Fprintf(&b, `---
apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: svc-%d, namespace: apps}
spec: {static: {hosts: [{addr: 10.0.%d.%d, port: 8080}]}}
---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: auth-%d, namespace: apps}
spec: {configs: [{pluginAuth: {name: required_header, exportedSymbolName: Plugin, config: {RequiredHeader: x-team, AllowedValues: [t%d]}}}]}
---
apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: vs-%d, namespace: apps}
spec:
  virtualHost:
    domains: [svc-%d.example.com]
    routes:
      - matchers: [{prefix: /public}]
        routeAction: {single: {upstream: {name: svc-%d}}}
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: %s}}}
        options: {extauth: {configRef: {name: auth-%d}}}
`, i, i/250, i%250, i, i, i, i, i, target(i, brokenEvery), i)
	}
	flush(n)
	return files
}

func target(i, brokenEvery int) string {
	if brokenEvery > 0 && i%brokenEvery == 0 {
		return fmt.Sprintf("missing-%d", i)
	}
	return fmt.Sprintf("svc-%d", i)
}

// BenchmarkCheck10k is one `gatehouse check` against a control plane holding 10,000
// VirtualServices, Upstreams and AuthConfigs: the admin server renders and redacts the
// health view, the client fetches and decodes it, judges it and prints the report. The
// issue's budget is 2 s per check. Cases: all healthy, one VirtualService in ten
// Rejected, and every one Rejected (the largest health view).
func BenchmarkCheck10k(b *testing.B) {
	for _, c := range []struct {
		name        string
		brokenEvery int
		want        int
	}{{"healthy", 0, 0}, {"tenth_rejected", 10, 1000}, {"all_rejected", 1, 10_000}} {
		b.Run(c.name, func(b *testing.B) { benchCheck(b, c.brokenEvery, c.want) })
	}
}

func benchCheck(b *testing.B, brokenEvery, wantErrors int) {
	in, err := (&source.Static{Name: "bench", Files: resources(10_000, brokenEvery)}).Input()
	if err != nil {
		b.Fatal(err)
	}
	p := pipeline.New(pipeline.Options{Log: zerolog.Nop()})
	p.Apply(in)
	mux := http.NewServeMux()
	snapshots.Register(mux, snapshots.Options{Stages: p.Stages})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	b.ResetTimer()
	for b.Loop() {
		h := &check.Health{}
		st, err := snapshots.Fetch(context.Background(), addr, "/snapshots/health", &h.Data)
		if err != nil {
			b.Fatal(err)
		}
		h.Status = st
		r := check.Run(h, nil, check.Options{Exclude: []string{"deployments"}})
		if r.Errors != wantErrors || h.Status.Counts["VirtualService/Accepted"] != 10_000-wantErrors {
			b.Fatalf("%d errors, counts %v; want %d errors", r.Errors, h.Status.Counts, wantErrors)
		}
		if err := r.WriteText(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
