package chain_test

import (
	"context"
	"slices"
	"syscall"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server/chain"
)

// headerStep does what plugins/required_header does. A real .so cannot be loaded
// reliably inside a test binary (the plugin must be built by the same toolchain with
// the same flags, and -race or -cover break that), so the step is Go code with the
// same logic: one header lookup, then allow with one header or a 403.
type headerStep struct {
	header  string
	allowed []string
}

func (headerStep) Name() string { return "step/required_header" }

func (s headerStep) Authorize(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	v, ok := req.Header(s.header)
	if !ok || !slices.Contains(s.allowed, v) {
		return pluginapi.Forbidden(), nil
	}
	return pluginapi.Allow().WithRequestHeader("matched-allowed-headers", "true"), nil
}

// benchHeaders is a typical browser request as Envoy sends it, lower-case.
func benchHeaders(required string) map[string]string {
	return map[string]string{
		":authority":      "app.example.com",
		":method":         "GET",
		":path":           "/api/v1/items?page=2",
		":scheme":         "https",
		"accept":          "application/json",
		"accept-encoding": "gzip, deflate, br",
		"user-agent":      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36",
		"x-forwarded-for": "203.0.113.7",
		"x-request-id":    "5f1c3a52-7d1e-4b8e-9a43-0c2f2d1b6e11",
		"x-required":      required,
	}
}

// envoyDeadline is a context whose deadline is always Envoy's default ext_authz
// timeout away, as a Check's is (Envoy sends it as grpc-timeout), so Run adds no timer
// of its own, as in production; it is never done, so a slow iteration on a busy
// machine cannot fail the benchmark.
type envoyDeadline struct{ context.Context }

func (envoyDeadline) Deadline() (time.Time, bool) {
	return time.Now().Add(200 * time.Millisecond), true
}

// BenchmarkChain runs a one-step chain the way the server does for each Check: a new
// AuthorizationRequest per call (the server builds one per Check), over a headers map
// that the allow case adds its header to.
func BenchmarkChain(b *testing.B) {
	c := &chain.Chain{
		ID:      "gatehouse-system.plugin-auth",
		Steps:   []chain.Step{headerStep{header: "x-required", allowed: []string{"alpha", "beta"}}},
		Timeout: 200 * time.Millisecond, // translate.DefaultRequestTimeout
	}
	step := headerStep{header: "x-required", allowed: []string{"alpha", "beta"}}
	chain3 := &chain.Chain{ID: "gatehouse-system.plugin-chain", Steps: []chain.Step{step, step, step}, Timeout: c.Timeout}
	for _, tc := range []struct {
		name, value string
		allowed     bool
		chain       *chain.Chain
	}{
		{name: "allow", value: "alpha", allowed: true, chain: c},
		{name: "deny", value: "nope", allowed: false, chain: c},
		// every step runs: what a step after the first costs is (chain3 - allow) / 2
		{name: "chain3", value: "alpha", allowed: true, chain: chain3},
	} {
		c := tc.chain
		b.Run(tc.name, func(b *testing.B) {
			headers := benchHeaders(tc.value)
			ctx := envoyDeadline{context.Background()}
			b.ReportAllocs()
			cpu := processCPU(b)
			for b.Loop() {
				out := c.Run(ctx, &pluginapi.AuthorizationRequest{Headers: headers})
				if out.Response.Allowed != tc.allowed || out.Err != nil {
					b.Fatalf("allowed = %v, err = %v; want allowed = %v", out.Response.Allowed, out.Err, tc.allowed)
				}
				out.Release() // as the server does once it has its answer
			}
			b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the CPU time this process used so far, in nanoseconds, garbage
// collection included. Per op it is what a Check costs the machine, and unlike ns/op
// it does not grow when other processes take the CPUs from the benchmark.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkChainStep is what each step after the first costs, in CPU time: the chains of
// BenchmarkChain's allow and chain3 run in alternating batches, and each pair of batches
// gives (chain3 − allow) ÷ 2 per Check; step-cpu-ns is the median over the pairs. The
// machine's speed drifts between runs of BenchmarkChain by more than a step costs, but
// hardly within a pair. (ns/op is the time of one pair.)
func BenchmarkChainStep(b *testing.B) {
	step := headerStep{header: "x-required", allowed: []string{"alpha", "beta"}}
	one := &chain.Chain{ID: "gatehouse-system.plugin-auth", Steps: []chain.Step{step}, Timeout: 200 * time.Millisecond}
	three := &chain.Chain{ID: "gatehouse-system.plugin-chain", Steps: []chain.Step{step, step, step}, Timeout: one.Timeout}
	headers := benchHeaders("alpha")
	ctx := envoyDeadline{context.Background()}
	const batch = 2000
	cpu := func(c *chain.Chain) int64 {
		start := processCPU(b)
		for range batch {
			out := c.Run(ctx, &pluginapi.AuthorizationRequest{Headers: headers})
			if !out.Response.Allowed || out.Err != nil {
				b.Fatalf("allowed = %v, err = %v; want allowed", out.Response.Allowed, out.Err)
			}
			out.Release()
		}
		return processCPU(b) - start
	}
	var perStep []float64
	for b.Loop() {
		var a, t int64
		if len(perStep)%2 == 0 { // alternate which goes first
			a, t = cpu(one), cpu(three)
		} else {
			t, a = cpu(three), cpu(one)
		}
		perStep = append(perStep, float64(t-a)/batch/2)
	}
	slices.Sort(perStep)
	b.ReportMetric(perStep[len(perStep)/2], "step-cpu-ns")
}
