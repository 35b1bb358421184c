package server

import (
	"context"
	"errors"
	"maps"
	"sync"
	"time"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/server/chain"
)

// MaxParallelBuilds bounds the configs built at once: enough that a few builds waiting
// on a provider hold up no other, few enough that ten thousand configs at start do not
// all ask their identity provider at the same moment.
const MaxParallelBuilds = 16

// ErrStopping is the build error of a config not built because the registry was
// stopped (Stop) before or while it was built.
var ErrStopping = errors.New("not built: extauth is stopping")

// Stop makes the builds under way give up and every later build fail at once with
// ErrStopping, so an Apply of thousands of configs returns as soon as the server is
// told to stop. What serves keeps serving until Close.
func (r *Registry) Stop() { r.stop() }

// Stopped reports whether Stop was called.
func (r *Registry) Stopped() bool { return r.stopping.Err() != nil }

// MaxConfigWait bounds how long, once the first config is built, a Check that names a
// config_id not serving waits for it (AwaitConfig).
const MaxConfigWait = time.Second

// maxConfigWaiters bounds the Checks waiting in AwaitConfig at once after the first
// Apply; beyond it, a Check for an unknown config_id is denied at once.
const maxConfigWaiters = 1024

// AwaitConfig is Lookup for a Check that finds no chain for id, and returns the chain
// serving id when it stops waiting:
//   - before the first Apply has run to its end, it waits until id serves, that Apply
//     ends, ctx ends or Stop is called;
//   - after it, it waits until id serves, for at most MaxConfigWait and half of what is
//     left of ctx's deadline (so a denial still reaches the caller in time). The
//     control plane sends a route to the proxies once the replicas have its config;
//     a replica that does not have it yet (it finished its first config just now, or
//     lagged past the control plane's bound) has it on the way.
func (r *Registry) AwaitConfig(ctx context.Context, id string) (*chain.Chain, bool) {
	var limit <-chan time.Time
	select {
	case <-r.applied:
		if r.waiters.Add(1) > maxConfigWaiters {
			r.waiters.Add(-1)
			return r.Lookup(id)
		}
		defer r.waiters.Add(-1)
		wait := MaxConfigWait
		if d, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(d)/2)
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		limit = t.C
	default:
	}
	for {
		published := *r.published.Load()
		if c, ok := r.Lookup(id); ok {
			return c, true
		}
		applied := r.applied
		if limit != nil {
			applied = nil // already closed: wait for the config itself
		}
		select {
		case <-applied:
			return r.Lookup(id)
		case <-published: // a chain was served: look again
		case <-limit:
			return r.Lookup(id)
		case <-ctx.Done():
			return nil, false
		case <-r.stopping.Done():
			return nil, false
		}
	}
}

// announce wakes the Checks waiting in AwaitConfig. Caller holds publishMu.
func (r *Registry) announce() {
	next := make(chan struct{})
	close(*r.published.Swap(&next))
}

// built is the outcome of building one config.
type built struct {
	cfg   *extauthv1.ExtAuthConfig
	entry *entry
	err   error
}

// buildAll builds cfgs at once, each in its own goroutine, and serves each chain as
// soon as it is built (on top of base, what serves meanwhile), so that a slow build
// (a provider that does not answer) delays no other config's. It returns when all are
// done, in the order of cfgs. A lone build is left for the caller to serve.
func (r *Registry) buildAll(cfgs []*extauthv1.ExtAuthConfig, base map[string]*entry) []built {
	if len(cfgs) == 0 {
		return nil
	}
	if !sameEntries(base, *r.serving.Load()) {
		r.publish(maps.Clone(base)) // the caller goes on filling base
	}
	if len(cfgs) == 1 {
		return r.buildEach(cfgs, nil) // the caller publishes it as soon as it is built
	}
	// Each chain serves from fresh as soon as it is built, until the caller publishes
	// them all: copying the serving map for each would cost the square of their number.
	fresh := &sync.Map{}
	r.fresh.Store(fresh)
	return r.buildEach(cfgs, func(id string, e *entry) { r.serveOne(fresh, id, e) })
}

// sameEntries says whether a and b hold the very same entries.
func sameEntries(a, b map[string]*entry) bool {
	if len(a) != len(b) {
		return false
	}
	for id, e := range a {
		if b[id] != e {
			return false
		}
	}
	return true
}

// buildEach builds cfgs, at most MaxParallelBuilds at once, calling done (when not
// nil) with each chain built as soon as it is, and returns the outcomes in order.
// Configs whose first plugin step names the same file are built one after the other,
// in order: the first of them trial-loads the file and the others find it loaded, as
// when everything was built in turn, so what each reports does not depend on timing.
// Once Stop is called it returns without waiting for the builds under way (a plugin
// load cannot be interrupted), each of them and those not started failing with
// ErrStopping.
func (r *Registry) buildEach(cfgs []*extauthv1.ExtAuthConfig, done func(id string, e *entry)) []built {
	out := make([]built, len(cfgs))
	var groups [][]int
	byFile := map[string]int{}
	for i, cfg := range cfgs {
		out[i] = built{cfg: cfg, err: ErrStopping}
		file := firstPluginFile(cfg)
		if g, ok := byFile[file]; ok && file != "" {
			groups[g] = append(groups[g], i)
			continue
		}
		byFile[file] = len(groups)
		groups = append(groups, []int{i})
	}
	type result struct {
		i int
		built
	}
	results := make(chan result, len(cfgs))
	slots := make(chan struct{}, MaxParallelBuilds)
	started := 0
	for _, g := range groups {
		select {
		case slots <- struct{}{}:
		case <-r.stopping.Done():
		}
		if r.Stopped() {
			break
		}
		started += len(g)
		go func() {
			defer func() { <-slots }()
			for _, i := range g {
				cfg := cfgs[i]
				e, err := r.buildEntry(cfg)
				if err == nil && done != nil && !r.Stopped() {
					done(cfg.GetConfigId(), e)
				}
				results <- result{i, built{cfg: cfg, entry: e, err: err}}
			}
		}()
	}
	for range started {
		select {
		case res := <-results:
			out[res.i] = res.built
		case <-r.stopping.Done():
			// The builds left cancel their own chains (buildEntry).
			return out
		}
	}
	return out
}

// firstPluginFile is the plugin file of cfg's first plugin step ("" when it has none).
func firstPluginFile(cfg *extauthv1.ExtAuthConfig) string {
	for _, st := range cfg.GetSteps() {
		if p := st.GetPluginAuth(); p != nil {
			return p.GetPluginFileName()
		}
	}
	return ""
}

// buildEntry builds cfg into a chain whose services live until the entry's cancel. A
// Stop during the build cancels them, and the build fails with ErrStopping.
func (r *Registry) buildEntry(cfg *extauthv1.ExtAuthConfig) (*entry, error) {
	if r.Stopped() {
		return nil, ErrStopping
	}
	ctx, cancel := context.WithCancel(context.Background())
	detach := context.AfterFunc(r.stopping, cancel)
	c, err := r.build(ctx, cfg)
	if !detach() {
		cancel()
		return nil, ErrStopping
	}
	if err != nil {
		cancel()
		return nil, err
	}
	c.Log = r.log
	return &entry{cfg: cfg, chain: c, cancel: cancel}, nil
}
