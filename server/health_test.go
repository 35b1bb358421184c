package server_test

import (
	"context"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// SetNotServing is how the plugin version limit takes the process out of rotation:
// health checks say NOT_SERVING while Checks are still answered.
func TestSetNotServing(t *testing.T) {
	a := server.NewAuthorizer(registryOf(t, time.Minute, map[string][]chain.Step{"ns.a": {requiredHeader("x", "1")}}), testLogger(t), nil)
	client, health := grpcClient(t, a)
	ctx := context.Background()
	status := func(service string) healthpb.HealthCheckResponse_ServingStatus {
		r, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetStatus()
	}
	if got := status(""); got != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health at start = %v", got)
	}
	a.SetNotServing()
	for _, svc := range []string{"", "envoy.service.auth.v3.Authorization"} {
		if got := status(svc); got != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Errorf("health of %q after SetNotServing = %v, want NOT_SERVING", svc, got)
		}
	}
	if resp, err := client.Check(ctx, checkRequest("ns.a", map[string]string{"x": "1"})); err != nil || resp.GetStatus().GetCode() != 0 {
		t.Errorf("Check while NOT_SERVING = %v, %v; want still answered", resp, err)
	}
}
