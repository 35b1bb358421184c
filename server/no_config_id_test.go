package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/internal/syncbuf"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// Regression: a request without the config_id context extension (a route that forgot
// it) was logged as a request for an unknown config_id, "", sending people to look
// for a missing AuthConfig instead of at the route.
func TestRequestWithoutConfigID(t *testing.T) {
	logs := &syncbuf.Buffer{}
	promReg := prometheus.NewPedanticRegistry()
	reg := registryOf(t, time.Minute, map[string][]chain.Step{"ns.a": {requiredHeader("x", "1")}})
	a := server.NewAuthorizer(reg, zerolog.New(logs), server.NewMetrics(promReg))
	req := checkRequest("", nil)
	req.Attributes.ContextExtensions = map[string]string{"other": "x"}
	for _, r := range []*authv3.CheckRequest{req, {}} {
		resp, err := a.Check(context.Background(), r)
		if err != nil || resp.GetDeniedResponse().GetStatus().GetCode() != 403 {
			t.Fatalf("Check = %v, %v; want 403", resp, err)
		}
	}
	got := logs.String()
	if strings.Contains(got, "no auth config with this config_id") || strings.Count(got, "the request has no config_id context extension") != 2 {
		t.Errorf("log does not say the config_id is missing:\n%s", got)
	}
	want := `
# HELP gatehouse_extauth_checks_total Checks answered, by config_id and outcome (allowed, denied, unknown_config, no_config_id, error, panic, deadline).
# TYPE gatehouse_extauth_checks_total counter
gatehouse_extauth_checks_total{config_id="",outcome="no_config_id"} 2
`
	if err := testutil.GatherAndCompare(promReg, strings.NewReader(want), "gatehouse_extauth_checks_total"); err != nil {
		t.Error(err)
	}
}
