package xdsclient_test

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"google.golang.org/protobuf/types/known/anypb"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
	"gatehouse.dev/gatehouse/server/xdsclient"
)

// BenchmarkExtauthUpdate is one xDS update of extauth that brings one changed config
// among n: the handler, the registry, the status metrics and the applied versions, as
// `gatehouse extauth --xds` wires them.
func BenchmarkExtauthUpdate(b *testing.B) {
	for _, n := range []int{2500, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			reg := server.NewRegistry(func(_ context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
				return &chain.Chain{ID: cfg.GetConfigId()}, nil
			}, zerolog.Nop())
			promReg := prometheus.NewRegistry()
			metrics := server.NewMetrics(promReg)
			versions := xdsclient.NewAppliedVersions(promReg)
			handle := xdsclient.ExtAuthHandler(reg, func(st []server.Status) {
				metrics.SetStatus(st)
				versions.Statuses(st)
			})
			res := map[string]*anypb.Any{}
			vers := map[string]string{}
			mk := func(id string, v int) *anypb.Any {
				a, err := anypb.New(&extauthv1.ExtAuthConfig{ConfigId: id, Steps: []*extauthv1.Step{{Kind: &extauthv1.Step_PluginAuth{PluginAuth: &extauthv1.PluginAuth{Name: fmt.Sprint(v)}}}}})
				if err != nil {
					b.Fatal(err)
				}
				return a
			}
			for i := range n {
				id := fmt.Sprintf("ns.a-%05d", i)
				res[id], vers[id] = mk(id, 0), "v0"
			}
			if err := handle("type.googleapis.com/gatehouse.extauth.v1.ExtAuthConfig", maps.Clone(res)); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for k := range b.N {
				id := fmt.Sprintf("ns.a-%05d", k%n)
				res[id], vers[id] = mk(id, k+1), fmt.Sprint(k+1)
				if err := handle("type.googleapis.com/gatehouse.extauth.v1.ExtAuthConfig", maps.Clone(res)); err != nil {
					b.Fatal(err)
				}
				versions.Applied("", maps.Clone(vers), nil)
			}
		})
	}
}

// BenchmarkExtauthFirstState is a replica's first xDS update: every config new, each
// served as soon as it is built.
func BenchmarkExtauthFirstState(b *testing.B) {
	for _, n := range []int{2500, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			res := map[string]*anypb.Any{}
			for i := range n {
				id := fmt.Sprintf("ns.a-%05d", i)
				a, err := anypb.New(&extauthv1.ExtAuthConfig{ConfigId: id, Steps: []*extauthv1.Step{{Kind: &extauthv1.Step_PluginAuth{PluginAuth: &extauthv1.PluginAuth{Name: "p"}}}}})
				if err != nil {
					b.Fatal(err)
				}
				res[id] = a
			}
			b.ReportAllocs()
			for b.Loop() {
				reg := server.NewRegistry(func(_ context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
					return &chain.Chain{ID: cfg.GetConfigId()}, nil
				}, zerolog.Nop())
				handle := xdsclient.ExtAuthHandler(reg, nil)
				if err := handle("type.googleapis.com/gatehouse.extauth.v1.ExtAuthConfig", maps.Clone(res)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
