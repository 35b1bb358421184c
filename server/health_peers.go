package server

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	grpcpeer "google.golang.org/grpc/peer"
)

// healthService is grpc-go's health server that also notes, per client connection,
// when it last answered SERVING: a stopping server answers Checks until the clients
// that health-check it have seen NOT_SERVING (Authorizer.Leave).
type healthService struct {
	*health.Server
	peers *healthPeers
}

// Check implements healthpb.HealthServer.
func (h *healthService) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	resp, err := h.Server.Check(ctx, req)
	if p, ok := grpcpeer.FromContext(ctx); ok && err == nil && req.GetService() != LivenessService {
		h.peers.told(p.Addr.String(), resp.GetStatus() == healthpb.HealthCheckResponse_SERVING, time.Now())
	}
	return resp, err
}

// healthPeers is, by client address, when a readiness check was last answered SERVING.
// Watch streams need no note: they are sent NOT_SERVING as soon as it is set.
type healthPeers struct {
	mu      sync.Mutex
	serving map[string]time.Time
}

// maxHealthPeers bounds the notes: past it, those older than staleHealthPeer go. A
// kubelet probes from a new connection each time, so its notes pile up otherwise.
const (
	maxHealthPeers  = 1024
	staleHealthPeer = time.Minute
)

func (h *healthPeers) told(addr string, serving bool, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !serving {
		delete(h.serving, addr)
		return
	}
	if h.serving == nil {
		h.serving = map[string]time.Time{}
	}
	h.serving[addr] = now
	if len(h.serving) > maxHealthPeers {
		for a, at := range h.serving {
			if now.Sub(at) > staleHealthPeer {
				delete(h.serving, a)
			}
		}
	}
}

// pending counts the clients answered SERVING within window before now and not
// answered NOT_SERVING since.
func (h *healthPeers) pending(now time.Time, window time.Duration) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, at := range h.serving {
		if now.Sub(at) < window {
			n++
		}
	}
	return n
}
