package server

import (
	"sync"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// LivenessService is the gRPC health service name that reports liveness: SERVING for
// as long as the process should be left running, NOT_SERVING once it should be
// replaced (SetNotServing). The server ("") and envoy.service.auth.v3.Authorization
// report readiness.
const LivenessService = "liveness"

// readiness is where an extauth server stands in its life, as gRPC health checking
// and the admin's /ready and /healthz report it:
//
//	starting ── Configured ──► ready ── Leave ──► leaving
//	    └──────────────────── Leave ─────────────────┘
//
// Ready (SERVING, /ready 200) holds only between Configured and Leave, and until
// SetNotServing; live (LivenessService SERVING, /healthz 200) holds until SetNotServing.
// No state is ever left backwards. A Check that arrives before the first complete config
// and names a config_id not serving yet waits for that config (Registry.AwaitConfig),
// until its deadline, rather than being denied for a config on its way; after it, such
// a Check waits a short while (see AwaitConfig).
type readiness struct {
	mu         sync.Mutex
	health     *health.Server // nil until NewGRPCServer
	configured bool
	leaving    bool
	replace    bool // SetNotServing: the orchestrator should replace the process
	peers      healthPeers
}

// Configured records that the first complete config was built (every AuthConfig of the
// first full state either serves or is Rejected with its reason): the server becomes
// ready unless it is leaving. Later calls do nothing.
func (a *Authorizer) Configured() {
	r := &a.ready
	r.mu.Lock()
	first := !r.configured
	r.configured = true
	r.update()
	leaving := r.leaving
	r.mu.Unlock()
	if first && !leaving {
		a.log.Info().Msg("ready: the first complete config is built; health checks report SERVING")
	}
}

// SetNotServing makes every health check report NOT_SERVING, liveness included, and
// /healthz 503, while Checks are still answered: the way to have an orchestrator take
// the process out of rotation and replace it (see the plugin version limit).
func (a *Authorizer) SetNotServing() {
	r := &a.ready
	r.mu.Lock()
	defer r.mu.Unlock()
	r.replace = true
	r.update()
}

// Leave takes the server out of the ready set for good, as SIGTERM does: health checks
// report NOT_SERVING from now on while Checks are still answered. It returns once every
// health checker told SERVING during the last wait has been told NOT_SERVING, or once
// wait has passed since it was last told SERVING (a checker that does not come back
// within wait is not one that keeps a client's view of the server), whichever is first.
func (a *Authorizer) Leave(wait time.Duration) {
	r := &a.ready
	r.mu.Lock()
	r.leaving = true
	r.update()
	r.mu.Unlock()
	if n := r.peers.pending(time.Now(), wait); n > 0 {
		a.log.Info().Int("health_checkers", n).Dur("at_most", wait).
			Msg("stopping: not ready; answering Checks until the health checkers have seen it")
	}
	for {
		now := time.Now()
		if r.peers.pending(now, wait) == 0 {
			return
		}
		time.Sleep(leavePoll)
	}
}

// leavePoll is how often Leave looks whether the health checkers have seen it.
const leavePoll = 10 * time.Millisecond

// Ready reports whether the server should be sent Checks: its first complete config is
// built, it is not leaving and SetNotServing was not called.
func (a *Authorizer) Ready() bool {
	r := &a.ready
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ready()
}

// Live reports whether the process should be left running (SetNotServing not called).
func (a *Authorizer) Live() bool {
	r := &a.ready
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.replace
}

// NotReadyReason says why the server is not ready ("" when it is).
func (a *Authorizer) NotReadyReason() string {
	r := &a.ready
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.replace:
		return "past the plugin version limit: this process is to be replaced"
	case r.leaving:
		return "stopping"
	case !r.configured:
		return "starting: the first complete config is not built yet"
	}
	return ""
}

func (r *readiness) ready() bool { return r.configured && !r.leaving && !r.replace }

// update sets the health statuses from the state. Caller holds r.mu.
func (r *readiness) update() {
	if r.health == nil {
		return
	}
	ready, live := healthpb.HealthCheckResponse_NOT_SERVING, healthpb.HealthCheckResponse_NOT_SERVING
	if r.ready() {
		ready = healthpb.HealthCheckResponse_SERVING
	}
	if !r.replace {
		live = healthpb.HealthCheckResponse_SERVING
	}
	r.health.SetServingStatus("", ready)
	r.health.SetServingStatus(authv3.Authorization_ServiceDesc.ServiceName, ready)
	r.health.SetServingStatus(LivenessService, live)
}

// attach makes hs report the state, from now on.
func (r *readiness) attach(hs *health.Server) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.health = hs
	r.update()
}
