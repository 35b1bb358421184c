package server

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc"

	"gatehouse.dev/gatehouse/server/chain"
)

// DefaultDrainTimeout bounds how long a stopping server waits for in-flight Checks.
// A Check ends by its own deadline (the request timeout) even when a step is stuck,
// but a long request timeout should not hold a rollout.
const DefaultDrainTimeout = 5 * time.Second

// inflight counts the Checks running, by config_id.
type inflight struct{ m sync.Map } // config_id → *atomic.Int64

func (f *inflight) add(id string) *atomic.Int64 {
	v, ok := f.m.Load(id)
	if !ok {
		v, _ = f.m.LoadOrStore(id, new(atomic.Int64))
	}
	n := v.(*atomic.Int64)
	n.Add(1)
	return n
}

// InFlight returns the Checks running now, by config_id (only those with some).
func (a *Authorizer) InFlight() map[string]int64 {
	out := map[string]int64{}
	a.inflight.m.Range(func(k, v any) bool {
		if n := v.(*atomic.Int64).Load(); n > 0 {
			out[k.(string)] = n
		}
		return true
	})
	return out
}

// Shutdown stops s as a SIGTERM should: it takes no new Checks and lets the running
// ones finish, for at most timeout, then cuts them (Envoy then applies its failure
// mode). It logs what it waits for and, past the timeout, what it cut.
func Shutdown(s *grpc.Server, a *Authorizer, timeout time.Duration, log zerolog.Logger) {
	waiting := a.InFlight()
	if len(waiting) > 0 {
		log.Info().Interface("checks_in_flight", waiting).Strs("stuck_steps", stuckSteps()).Dur("at_most", timeout).
			Msg("stopping: waiting for the Checks in flight")
	}
	done := make(chan struct{})
	go func() { s.GracefulStop(); close(done) }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	log.Warn().Interface("checks_in_flight", a.InFlight()).Strs("stuck_steps", stuckSteps()).Dur("waited", timeout).
		Msg("stopping: Checks still in flight after the drain timeout are cut")
	s.Stop()
	<-done
}

// stuckSteps names the steps with calls past their deadline, as config_id/step.
func stuckSteps() []string {
	var out []string
	for _, s := range chain.Stuck() {
		out = append(out, s.ConfigID+"/"+s.Step)
	}
	sort.Strings(out)
	return out
}
