package telemetry_test

import (
	"context"
	"net"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
	"gatehouse.dev/gatehouse/server/telemetry"
)

// TestDecisionShareOfAConfig: a config's decision_log_sample_ratio overrides the
// global share for its Checks; SampleByConfig overrides both; a config applied again
// without a share of its own, or removed, is back to the global share.
func TestDecisionShareOfAConfig(t *testing.T) {
	share := func(r float64) *float64 { return &r }
	reg := prometheus.NewRegistry()
	out := &lines{}
	log := telemetry.NewDecisionLog(telemetry.DecisionOptions{Out: out, Sample: 1,
		SampleByConfig: map[string]float64{"team.flagged": 1}, Registerer: reg})
	obs := telemetry.New(telemetry.Options{Tracer: noop.NewTracerProvider().Tracer("test"), Registerer: reg, Decisions: log})
	registry := server.NewRegistry(obs.Build(func(_ context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
		return &chain.Chain{ID: cfg.GetConfigId(), Steps: []chain.Step{requireHeader{}}, Timeout: time.Second}, nil
	}), zerolog.Nop())
	authz := server.NewAuthorizer(registry, zerolog.Nop(), nil)
	authz.Observe(obs)
	srv := server.NewGRPCServer(authz, obs.Interceptor())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	c := authv3.NewAuthorizationClient(conn)

	ids := []string{"team.quiet", "team.loud", "team.flagged"}
	for _, tc := range []struct {
		name    string
		configs []*extauthv1.ExtAuthConfig
		want    map[string]int // records of 10 Checks of each id
	}{
		{name: "own shares", configs: []*extauthv1.ExtAuthConfig{
			{ConfigId: "team.quiet", DecisionLogSampleRatio: share(0)},
			{ConfigId: "team.loud"},
			{ConfigId: "team.flagged", DecisionLogSampleRatio: share(0)},
		}, want: map[string]int{"team.loud": 10, "team.flagged": 10}},
		{name: "share removed", configs: []*extauthv1.ExtAuthConfig{
			{ConfigId: "team.quiet"},
			{ConfigId: "team.loud", DecisionLogSampleRatio: share(0)},
			{ConfigId: "team.flagged"},
		}, want: map[string]int{"team.quiet": 10, "team.flagged": 10}},
		{name: "config removed", configs: []*extauthv1.ExtAuthConfig{
			{ConfigId: "team.quiet"},
		}, want: map[string]int{"team.quiet": 10, "team.loud": 10, "team.flagged": 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			registry.Apply(tc.configs, nil)
			before := len(out.entries(t))
			for _, id := range ids {
				for range 10 {
					check(t, c, checkRequest(id, "/", map[string]string{"x-required": "alpha"}))
				}
			}
			got := map[string]int{}
			for _, e := range out.entries(t)[before:] {
				got[e.ConfigID]++
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("records by config_id (-want +got):\n%s", diff)
			}
		})
	}
}
