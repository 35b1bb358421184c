package devgateway

import (
	"context"
	"fmt"
	"sync"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// healthCheck is a cluster's active health checking, the part of Envoy's the gateway
// honours: a gRPC health check of one service every interval. It checks every interval
// whether the cluster has traffic or not, which no_traffic_interval (only ever longer)
// allows.
type healthCheck struct {
	interval, timeout  time.Duration
	unhealthy, healthy int // consecutive failed connections to go out, passes to come back
	service            string
}

// key tells two health checks apart, for the checkers kept across config changes.
func (h *healthCheck) key() string {
	return fmt.Sprintf("%s|%s|%d|%d|%s", h.interval, h.timeout, h.unhealthy, h.healthy, h.service)
}

// parseHealthChecks reads a cluster's health_checks and common_lb_config: at most one
// grpc_health_check, and panic mode off (healthy_panic_threshold 0): the gateway never
// sends a request to a host that failed its checks.
func parseHealthChecks(c *clusterv3.Cluster, pr *problems) *healthCheck {
	if lb := c.GetCommonLbConfig(); lb != nil {
		pr.only(lb, "common_lb_config", "healthy_panic_threshold")
		if p := lb.GetHealthyPanicThreshold(); p == nil || p.GetValue() != 0 {
			pr.addf("common_lb_config.healthy_panic_threshold", "only 0 (no panic mode) is supported")
		}
	}
	hcs := c.GetHealthChecks()
	if len(hcs) == 0 {
		return nil
	}
	if len(hcs) > 1 {
		pr.addf("health_checks", "only one health check is supported")
	}
	hc := hcs[0]
	path := "health_checks[0]"
	pr.only(hc, path, "timeout", "interval", "no_traffic_interval", "unhealthy_threshold", "healthy_threshold", "grpc_health_check")
	g := hc.GetGrpcHealthCheck()
	if g == nil {
		pr.addf(path, "only grpc_health_check is supported")
		return nil
	}
	pr.only(g, join(path, "grpc_health_check"), "service_name")
	out := &healthCheck{
		interval: hc.GetInterval().AsDuration(), timeout: hc.GetTimeout().AsDuration(),
		unhealthy: int(hc.GetUnhealthyThreshold().GetValue()), healthy: int(hc.GetHealthyThreshold().GetValue()),
		service: g.GetServiceName(),
	}
	if out.interval <= 0 || out.timeout <= 0 {
		pr.addf(path, "interval and timeout must be positive")
	}
	if nt := hc.GetNoTrafficInterval(); nt != nil && nt.AsDuration() < out.interval {
		pr.addf(join(path, "no_traffic_interval"), "shorter than interval is not supported")
	}
	out.unhealthy, out.healthy = max(out.unhealthy, 1), max(out.healthy, 1)
	return out
}

// endpointHealth health-checks one endpoint until stopped. Like Envoy's, a new
// endpoint is unhealthy until a check passes; the first pass, or healthy passes in a
// row, make it healthy; a NOT_SERVING answer (or any answer but SERVING) makes it
// unhealthy at once, as does a Check that could not reach it (failed); unhealthy
// failed connections in a row do.
type endpointHealth struct {
	key  string // Proxy.checkers
	spec healthCheck
	conn func() (*grpc.ClientConn, error)
	// firstDone is called once, when the first check has finished, passed or not.
	firstDone func()
	stop      chan struct{}
	stopOnce  sync.Once

	mu                  sync.Mutex
	healthy, checked    bool
	passes, connFailing int
}

func newEndpointHealth(spec healthCheck, conn func() (*grpc.ClientConn, error), firstDone func()) *endpointHealth {
	h := &endpointHealth{spec: spec, conn: conn, firstDone: firstDone, stop: make(chan struct{})}
	go h.run()
	return h
}

func (h *endpointHealth) run() {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-h.stop:
			return
		case <-t.C:
		}
		h.check()
		t.Reset(h.spec.interval)
	}
}

func (h *endpointHealth) check() {
	conn, err := h.conn()
	var resp *healthpb.HealthCheckResponse
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), h.spec.timeout)
		resp, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: h.spec.service})
		cancel()
	}
	h.mu.Lock()
	first := !h.checked
	switch c := status.Code(err); {
	case err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING:
		h.connFailing = 0
		if h.passes++; first || h.passes >= h.spec.healthy {
			h.healthy = true
		}
	case err != nil && (c == codes.Unavailable || c == codes.DeadlineExceeded):
		h.passes = 0
		if h.connFailing++; h.connFailing >= h.spec.unhealthy {
			h.healthy = false
		}
	default:
		h.passes, h.healthy = 0, false
	}
	h.checked = true
	h.mu.Unlock()
	if first && h.firstDone != nil {
		h.firstDone()
	}
}

// isHealthy reports whether requests may go to the endpoint.
func (h *endpointHealth) isHealthy() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.healthy
}

// firstCheckDone reports whether the first check has finished.
func (h *endpointHealth) firstCheckDone() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.checked
}

// failed takes the endpoint out until a check passes: a request could not reach it.
func (h *endpointHealth) failed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.healthy, h.passes = false, 0
}

func (h *endpointHealth) close() { h.stopOnce.Do(func() { close(h.stop) }) }
