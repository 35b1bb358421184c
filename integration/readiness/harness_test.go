package readiness_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/genproto/googleapis/rpc/code"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// settle bounds how long a change may take to show: a polling deadline, not a figure.
const settle = 30 * time.Second

// header and value are what the slowstart plugin allows.
const header, value = "x-allow", "yes"

// slowstart is the test plugin every extauth here runs.
const slowstart = "./integration/testdata/plugins/slowstart"

// authConfig is an AuthConfig gatehouse-system.<name> of one slowstart step whose
// Start waits for the file gate (none when "") and then sleeps delay.
func authConfig(name, gate, delay string) string {
	return fmt.Sprintf(`apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: %s, namespace: gatehouse-system}
spec:
  configs:
    - pluginAuth:
        name: slowstart
        exportedSymbolName: Plugin
        config: {Gate: %q, Delay: %q, Header: %s, Value: %s}
`, name, gate, delay, header, value)
}

// extauth is a running `gatehouse extauth` with gRPC clients of its Check and health
// services and its admin address.
type extauth struct {
	proc          *testbin.Process
	listen, admin string
	authz         authv3.AuthorizationClient
	health        healthpb.HealthClient
}

// startExtauth runs `gatehouse extauth` on listen with source (["--xds", addr] or
// ["--config", dir]) and the slowstart plugin, and waits until it accepts connections.
func startExtauth(t *testing.T, listen string, source ...string) *extauth {
	t.Helper()
	e := &extauth{listen: listen, admin: testbin.FreeAddr(t)}
	args := append([]string{"extauth", "--plugin-dir", testbin.PluginDir(t, slowstart), "--listen", listen, "--admin-listen", e.admin}, source...)
	e.proc = testbin.Start(t, []string{"LOG_LEVEL=debug"}, testbin.Gatehouse(t), args...)
	testbin.WaitTCP(t, e.proc, listen, settle)
	testbin.WaitTCP(t, e.proc, e.admin, settle)
	conn := testbin.Dial(t, listen)
	e.authz, e.health = authv3.NewAuthorizationClient(conn), healthpb.NewHealthClient(conn)
	return e
}

// probe is what every health surface of an extauth says at one moment.
type probe struct {
	Server, Authz, Liveness healthpb.HealthCheckResponse_ServingStatus
	Ready, Healthz          int
}

var (
	notReady = probe{Server: healthpb.HealthCheckResponse_NOT_SERVING, Authz: healthpb.HealthCheckResponse_NOT_SERVING,
		Liveness: healthpb.HealthCheckResponse_SERVING, Ready: http.StatusServiceUnavailable, Healthz: http.StatusOK}
	ready = probe{Server: healthpb.HealthCheckResponse_SERVING, Authz: healthpb.HealthCheckResponse_SERVING,
		Liveness: healthpb.HealthCheckResponse_SERVING, Ready: http.StatusOK, Healthz: http.StatusOK}
)

func (e *extauth) probe(t *testing.T) probe {
	t.Helper()
	return probe{
		Server: e.healthOf(t, ""), Authz: e.healthOf(t, authv3.Authorization_ServiceDesc.ServiceName),
		Liveness: e.healthOf(t, "liveness"),
		Ready:    httpStatus(t, "http://"+e.admin+"/ready"), Healthz: httpStatus(t, "http://"+e.admin+"/healthz"),
	}
}

func (e *extauth) healthOf(t *testing.T, service string) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := e.health.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		t.Fatalf("health Check(%q): %v", service, err)
	}
	return r.GetStatus()
}

// check sends a Check of configID, with the allowed header when allowed, and returns
// the verdict's code.
func (e *extauth) check(t *testing.T, configID string, allowed bool) code.Code {
	t.Helper()
	h := map[string]string{":method": "GET", ":path": "/", ":authority": "example.test"}
	if allowed {
		h[header] = value
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := e.authz.Check(ctx, &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Method: "GET", Path: "/", Host: "example.test", Scheme: "http", Headers: h,
		}},
		ContextExtensions: map[string]string{"config_id": configID},
	}})
	if err != nil {
		t.Fatalf("Check %s: %v", configID, err)
	}
	return code.Code(resp.GetStatus().GetCode())
}

// checksAllowed is the replica's count of Checks of configID it allowed (its metrics).
func (e *extauth) checksAllowed(t *testing.T, configID string) int {
	t.Helper()
	n, err := testbin.Metric(e.admin, fmt.Sprintf(`gatehouse_extauth_checks_total{config_id=%q,outcome="allowed"}`, configID))
	if err != nil {
		t.Fatal(err)
	}
	return int(n)
}

func httpStatus(t *testing.T, url string) int {
	t.Helper()
	status, _, err := testbin.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return status
}

// startControlPlane runs `gatehouse controlplane` on dir and returns its xDS address.
func startControlPlane(t *testing.T, dir, xdsAddr string) *testbin.Process {
	t.Helper()
	p := testbin.Start(t, nil, testbin.Gatehouse(t), "controlplane", "--resources", dir,
		"--xds-listen", xdsAddr, "--admin-listen", testbin.FreeAddr(t))
	testbin.WaitTCP(t, p, xdsAddr, settle)
	return p
}
