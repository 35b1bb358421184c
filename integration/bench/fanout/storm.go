package fanout

import (
	"context"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds/xdsfleet"
	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/controlplane"
)

// stormResult is one SIGKILL and restart with the whole fleet reconnecting.
type stormResult struct {
	Clients  int
	Complete []time.Duration // restart → each client's complete state on a new stream
	Partial  int             // clients that lost a resource (a removal) or whose first state was not complete
	Load     string
}

// storm kills the control plane, restarts it at once and times every client back to
// its complete state; the clients reconnect with their own backoff and jitter.
func storm(ctx context.Context, p *plane) (stormResult, error) {
	all := p.all()
	r := stormResult{Clients: len(all)}
	before := make([]xdsfleet.Stats, len(all))
	for i, c := range all {
		before[i] = c.Stats()
	}
	if err := p.kill(); err != nil {
		return r, err
	}
	if err := p.start(); err != nil {
		return r, err
	}
	if p.stormProfile != "" {
		defer profileRestart(ctx, p.admin, p.stormProfile)()
	}
	// A client is back when its new stream answered it, and it then holds everything.
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	partial := make([]bool, len(all))
	at, err := controlplane.WaitAll(ctx, all, func(i int, c *xdsfleet.Client) bool {
		if c.Stats().Streams <= before[i].Streams || !c.Answered() {
			return false
		}
		partial[i] = !p.complete(c)
		return true
	})
	if err != nil {
		return r, err
	}
	for i, c := range all {
		r.Complete = append(r.Complete, at[i].Sub(p.started))
		if partial[i] || c.Stats().Removals > before[i].Removals {
			r.Partial++
		}
	}
	r.Load = benchkit.LoadAverage()
	return r, nil
}

// profileRestart writes a 10 s CPU profile of the restarted control plane to path,
// from when its admin server answers; the returned func waits until it is written.
func profileRestart(ctx context.Context, admin, path string) (wait func()) {
	ctx, done := context.WithoutCancel(ctx), make(chan struct{})
	go func() {
		defer close(done)
		deadline := time.Now().Add(time.Minute)
		for time.Now().Before(deadline) && benchkit.FetchProfile(ctx, "http://"+admin+"/debug/pprof/profile?seconds=10", path) != nil {
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return func() { <-done }
}
