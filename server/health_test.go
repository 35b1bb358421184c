package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// probes is what every health surface says at one moment.
type probes struct {
	Server, Authz, Liveness healthpb.HealthCheckResponse_ServingStatus
	Ready, Healthz          int
}

const (
	serving    = healthpb.HealthCheckResponse_SERVING
	notServing = healthpb.HealthCheckResponse_NOT_SERVING
)

// TestReadinessStateMachine: a fresh replica said SERVING before it had any config and
// then denied every Check for 0.8-3.9 s (issue 26). Readiness (gRPC health of the
// server and of the ext_authz service, /ready) now waits for the first complete config
// and ends for good at Leave; liveness (the liveness service, /healthz) ends only at
// SetNotServing. Checks are answered in every state.
func TestReadinessStateMachine(t *testing.T) {
	ready := probes{Server: serving, Authz: serving, Liveness: serving, Ready: 200, Healthz: 200}
	notReady := probes{Server: notServing, Authz: notServing, Liveness: serving, Ready: 503, Healthz: 200}
	replaced := probes{Server: notServing, Authz: notServing, Liveness: notServing, Ready: 503, Healthz: 503}
	tests := []struct {
		name  string
		steps []string // Configured, Leave, SetNotServing
		want  probes
	}{
		{name: "starting", want: notReady},
		{name: "configured", steps: []string{"Configured"}, want: ready},
		{name: "configured twice", steps: []string{"Configured", "Configured"}, want: ready},
		{name: "leaving", steps: []string{"Configured", "Leave"}, want: notReady},
		{name: "leaving before the first config", steps: []string{"Leave"}, want: notReady},
		{name: "a config after leaving", steps: []string{"Leave", "Configured"}, want: notReady},
		{name: "past the plugin limit", steps: []string{"Configured", "SetNotServing"}, want: replaced},
		{name: "past the plugin limit while starting", steps: []string{"SetNotServing", "Configured"}, want: replaced},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := registryOf(t, time.Minute, map[string][]chain.Step{"ns.a": {requiredHeader("x", "1")}})
			a := server.NewAuthorizer(reg, testLogger(t), nil)
			client, health := grpcClient(t, a)
			admin := httptest.NewServer(server.AdminHandler(reg, prometheus.NewRegistry(), a))
			t.Cleanup(admin.Close)
			for _, s := range tt.steps {
				switch s {
				case "Configured":
					a.Configured()
				case "Leave":
					a.Leave(time.Minute) // no health checker was told SERVING: returns at once
				case "SetNotServing":
					a.SetNotServing()
				}
			}
			got := probes{
				Server:   healthOf(t, health, ""),
				Authz:    healthOf(t, health, authv3.Authorization_ServiceDesc.ServiceName),
				Liveness: healthOf(t, health, server.LivenessService),
				Ready:    statusOf(t, admin.URL+"/ready"),
				Healthz:  statusOf(t, admin.URL+"/healthz"),
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("probes (-want +got):\n%s", diff)
			}
			if a.Ready() != (tt.want.Ready == 200) || a.Live() != (tt.want.Healthz == 200) {
				t.Errorf("Ready() = %v, Live() = %v; want %v, %v", a.Ready(), a.Live(), tt.want.Ready == 200, tt.want.Healthz == 200)
			}
			if (a.NotReadyReason() == "") != a.Ready() {
				t.Errorf("NotReadyReason() = %q with Ready() = %v", a.NotReadyReason(), a.Ready())
			}
			if resp, err := client.Check(context.Background(), checkRequest("ns.a", map[string]string{"x": "1"})); err != nil || resp.GetStatus().GetCode() != 0 {
				t.Errorf("Check = %v, %v; want answered (allowed) in every state", resp, err)
			}
		})
	}
}

// TestLeaveWaitsForHealthCheckers: after SIGTERM the server keeps answering Checks
// until each client that health-checks it has been told NOT_SERVING, so a client that
// balances on health checks (Envoy's grpc_health_check, the dev gateway) stops sending
// before the server stops accepting. Nothing here is timed: Leave returns only once the
// checker has seen NOT_SERVING (the wait given is an hour).
func TestLeaveWaitsForHealthCheckers(t *testing.T) {
	reg := registryOf(t, time.Minute, map[string][]chain.Step{"ns.a": {requiredHeader("x", "1")}})
	a := server.NewAuthorizer(reg, testLogger(t), nil)
	_, health := grpcClient(t, a)
	a.Configured()
	if got := healthOf(t, health, ""); got != serving {
		t.Fatalf("health = %v, want SERVING", got)
	}
	// Liveness checks say nothing about readiness: they are not waited for.
	healthOf(t, health, server.LivenessService)
	if got := server.PendingHealthCheckers(a, time.Hour); got != 1 {
		t.Fatalf("health checkers told SERVING = %d, want 1", got)
	}
	left := make(chan struct{})
	go func() { a.Leave(time.Hour); close(left) }()
	for a.Ready() { // Leave turns readiness off before it waits
		time.Sleep(time.Millisecond)
	}
	// Leave cannot return before the checker is told NOT_SERVING: it has one pending.
	if got := server.PendingHealthCheckers(a, time.Hour); got != 1 {
		t.Fatalf("health checkers pending while leaving = %d, want 1", got)
	}
	if got := healthOf(t, health, ""); got != notServing {
		t.Fatalf("health while leaving = %v, want NOT_SERVING", got)
	}
	select {
	case <-left:
	case <-time.After(30 * time.Second):
		t.Fatal("Leave did not return once the health checker was told NOT_SERVING")
	}
}

// TestLeaveBoundedByWait: a client told SERVING that never checks again holds Leave
// for at most the wait given.
func TestLeaveBoundedByWait(t *testing.T) {
	reg := registryOf(t, time.Minute, map[string][]chain.Step{"ns.a": {requiredHeader("x", "1")}})
	a := server.NewAuthorizer(reg, testLogger(t), nil)
	_, health := grpcClient(t, a)
	a.Configured()
	healthOf(t, health, "")
	left := make(chan struct{})
	go func() { a.Leave(50 * time.Millisecond); close(left) }()
	select {
	case <-left:
	case <-time.After(30 * time.Second):
		t.Fatal("Leave waited past its wait for a checker that never came back")
	}
}

func healthOf(t *testing.T, c healthpb.HealthClient, service string) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	r, err := c.Check(context.Background(), &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		t.Fatalf("health Check(%q): %v", service, err)
	}
	return r.GetStatus()
}

func statusOf(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
