package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

func TestCheckMetrics(t *testing.T) {
	steps := map[string][]chain.Step{
		"ns.gate": {requiredHeader("x-required", "alpha")},
		"ns.err": {funcStep{name: "step/err", fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
			return nil, errors.New("down")
		}}},
		"ns.panic": {funcStep{name: "step/panic", fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
			panic("boom")
		}}},
		"ns.slow": {funcStep{name: "step/slow", fn: func(ctx context.Context, _ *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}}},
	}
	promReg := prometheus.NewPedanticRegistry()
	m := server.NewMetrics(promReg)
	a := server.NewAuthorizer(registryOf(t, 20*time.Millisecond, steps), testLogger(t), m)
	requests := []struct {
		id     string
		header string
	}{
		{"ns.gate", "alpha"}, {"ns.gate", "alpha"}, {"ns.gate", "beta"},
		{"ns.err", ""}, {"ns.panic", ""}, {"ns.slow", ""}, {"ns.missing", ""}, {"ns.missing", ""},
	}
	for _, r := range requests {
		if _, err := a.Check(context.Background(), checkRequest(r.id, map[string]string{"x-required": r.header})); err != nil {
			t.Fatal(err)
		}
	}
	want := `
# HELP gatehouse_extauth_checks_total Checks answered, by config_id and outcome (allowed, denied, unknown_config, no_config_id, error, panic, deadline).
# TYPE gatehouse_extauth_checks_total counter
gatehouse_extauth_checks_total{config_id="ns.err",outcome="error"} 1
gatehouse_extauth_checks_total{config_id="ns.gate",outcome="allowed"} 2
gatehouse_extauth_checks_total{config_id="ns.gate",outcome="denied"} 1
gatehouse_extauth_checks_total{config_id="ns.missing",outcome="unknown_config"} 2
gatehouse_extauth_checks_total{config_id="ns.panic",outcome="panic"} 1
gatehouse_extauth_checks_total{config_id="ns.slow",outcome="deadline"} 1
`
	if err := testutil.GatherAndCompare(promReg, strings.NewReader(want), "gatehouse_extauth_checks_total"); err != nil {
		t.Error(err)
	}
}

func TestStatusAndAbandonedMetrics(t *testing.T) {
	promReg := prometheus.NewPedanticRegistry()
	m := server.NewMetrics(promReg)
	m.SetStatus([]server.Status{
		{ID: "ns.a", State: server.StateAccepted},
		{ID: "ns.b", State: server.StateRejected, Reason: "x", ServingPrevious: true},
	})
	// A second call replaces the first: ns.a is gone, ns.b changed.
	m.SetStatus([]server.Status{
		{ID: "ns.b", State: server.StateRejected, Reason: "x"},
		{ID: "ns.c", State: server.StateAccepted},
	})
	want := `
# HELP gatehouse_extauth_auth_config_status 1 for the current state of each AuthConfig (Accepted or Rejected); serving_previous tells whether a last good version still serves.
# TYPE gatehouse_extauth_auth_config_status gauge
gatehouse_extauth_auth_config_status{config_id="ns.b",serving_previous="false",state="Rejected"} 1
gatehouse_extauth_auth_config_status{config_id="ns.c",serving_previous="false",state="Accepted"} 1
# HELP gatehouse_extauth_abandoned_step_calls Step calls, over every step, that passed their deadline and have not returned yet.
# TYPE gatehouse_extauth_abandoned_step_calls gauge
gatehouse_extauth_abandoned_step_calls 0
`
	if err := testutil.GatherAndCompare(promReg, strings.NewReader(want),
		"gatehouse_extauth_auth_config_status", "gatehouse_extauth_abandoned_step_calls"); err != nil {
		t.Error(err)
	}
}

func TestNilMetricsAreFine(t *testing.T) {
	var m *server.Metrics
	m.SetStatus([]server.Status{{ID: "ns.a", State: server.StateAccepted}})
	a := server.NewAuthorizer(registryOf(t, time.Minute, map[string][]chain.Step{"ns.a": {requiredHeader("x", "1")}}), testLogger(t), nil)
	resp, err := a.Check(context.Background(), checkRequest("ns.a", map[string]string{"x": "1"}))
	if err != nil || resp.GetStatus().GetCode() != 0 {
		t.Errorf("Check without metrics = %v, %v; want OK", resp, err)
	}
}
