package server

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/proto"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/server/chain"
)

// States of an AuthConfig in the extauth server.
const (
	StateAccepted = "Accepted"
	StateRejected = "Rejected"
)

// Status is what the extauth server made of one AuthConfig.
type Status struct {
	ID    string `json:"id"`
	State string `json:"state"`
	// Reason says why the config was rejected.
	Reason string `json:"reason,omitempty"`
	// ServingPrevious is true when a rejected config's last good version still serves.
	ServingPrevious bool `json:"servingPrevious,omitempty"`
	// Stuck lists the serving steps with calls that passed their deadline and still
	// run; a step with chain.MaxCallsPerStep of them denies at once until they return.
	Stuck []chain.StuckStep `json:"stuck,omitempty"`
}

// BuildFunc assembles the chain for one config. ctx is cancelled when the chain is
// replaced or removed, which is how plugin services learn to stop. It is called for
// several configs at once (at most MaxParallelBuilds).
type BuildFunc func(ctx context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error)

// Registry holds the chains being served, by config_id. Lookups are lock-free; Apply
// builds new chains off to the side and swaps the whole map at once, so in-flight
// requests finish on the chain they started with.
type Registry struct {
	build BuildFunc
	log   zerolog.Logger

	mu      sync.Mutex // serialises Apply
	entries map[string]*entry
	// status is the sorted status of the last Apply; it is read without mu, so the
	// status endpoint answers while a build (a trial load of up to its timeout) runs.
	// statusByID is the same by id, for the next Apply (under mu; never modified).
	status     atomic.Pointer[[]Status]
	statusByID map[string]Status
	// wanted is the last config given for each id, built or not, and translated is
	// the translation errors given, so Rebuild can retry exactly the latest input.
	wanted     []*extauthv1.ExtAuthConfig
	translated map[string]error
	// serving is what Lookup reads: a map of entries never modified once stored.
	// fresh, while an Apply builds several configs, holds those built so far, which
	// serve before the Apply ends (buildAll); Lookup looks there first. nil otherwise.
	serving atomic.Pointer[map[string]*entry]
	fresh   atomic.Pointer[sync.Map]
	source  atomic.Pointer[sourceProblem]
	// failed is, by id, the config whose last build failed. Apply does not build it
	// again while it is given unchanged (a provider that never answers would hold up
	// every unrelated change); RetryRejected does, off the lock.
	failed map[string]*extauthv1.ExtAuthConfig
	// publishMu serialises swaps of serving by the builds of one apply.
	publishMu sync.Mutex
	// stopping ends with Stop (registry_build.go).
	stopping context.Context
	stop     context.CancelFunc
	// applied is closed once the first Apply has run to its end; published is closed
	// and replaced on every publish, and waiters counts the Checks waiting for a
	// config after it (registry_build.go).
	waiters     atomic.Int32
	applied     chan struct{}
	appliedOnce sync.Once
	published   atomic.Pointer[chan struct{}]
}

type entry struct {
	cfg    *extauthv1.ExtAuthConfig
	chain  *chain.Chain
	cancel context.CancelFunc
	// stale is set when building cfg again failed (a Rebuild after its plugin file
	// changed): the chain still serves, but cfg is built again on every Apply rather
	// than reported Accepted.
	stale bool
}

// NewRegistry returns an empty Registry that builds chains with build.
func NewRegistry(build BuildFunc, log zerolog.Logger) *Registry {
	r := &Registry{build: build, log: log, entries: map[string]*entry{}, failed: map[string]*extauthv1.ExtAuthConfig{}}
	r.stopping, r.stop = context.WithCancel(context.Background())
	r.applied = make(chan struct{})
	published := make(chan struct{})
	r.published.Store(&published)
	r.serving.Store(&map[string]*entry{})
	r.status.Store(&[]Status{})
	return r
}

// Lookup returns the chain serving config_id id.
func (r *Registry) Lookup(id string) (*chain.Chain, bool) {
	if f := r.fresh.Load(); f != nil {
		if e, ok := f.Load(id); ok {
			return e.(*entry).chain, true
		}
	}
	e, ok := (*r.serving.Load())[id]
	if !ok {
		return nil, false
	}
	return e.chain, true
}

// Apply makes cfgs the full set of configs. Configs already serving unchanged are kept
// as they are. A config that fails to build, or is listed in rejected (translation
// errors by config_id), is Rejected; its last good version, if any, keeps serving.
// Configs in neither list are removed. It returns the status of every config.
func (r *Registry) Apply(cfgs []*extauthv1.ExtAuthConfig, rejected map[string]error) []Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.apply(cfgs, rejected, nil, false)
	if !r.Stopped() {
		r.appliedOnce.Do(func() { close(r.applied) })
	}
	return st
}

// apply does Apply. With only set (a Rebuild), just the configs only picks are built,
// even when unchanged; every other config keeps its chain and its status as they are,
// so a slow or failing build elsewhere neither delays nor repeats. retry says the
// builds are retries of unchanged input, whose unchanged failures are not logged again.
func (r *Registry) apply(cfgs []*extauthv1.ExtAuthConfig, rejected map[string]error, only func(*extauthv1.ExtAuthConfig) bool, retry bool) []Status {
	next := make(map[string]*entry, len(cfgs))
	// tried holds the configs built for a reason (new or changed, or picked by a
	// Rebuild that is not a retry): a failure of theirs is logged even if it is the
	// same as before.
	tried, built := map[string]bool{}, map[string]bool{}
	before := make(map[string]*extauthv1.ExtAuthConfig, len(r.wanted))
	for _, cfg := range r.wanted {
		before[cfg.GetConfigId()] = cfg
	}
	status := make(map[string]Status, len(cfgs)+len(rejected))
	previous := r.statusByID
	for id, err := range rejected {
		if old, ok := r.entries[id]; ok {
			next[id] = old
		}
		if st, ok := previous[id]; ok && only != nil {
			status[id] = st
			continue
		}
		status[id] = r.reject(id, err, r.entries[id] != nil)
	}
	var jobs []*extauthv1.ExtAuthConfig
	times := make(map[string]int, len(cfgs))
	for _, cfg := range cfgs {
		times[cfg.GetConfigId()]++
	}
	for _, cfg := range cfgs {
		id := cfg.GetConfigId()
		if rejected[id] != nil {
			continue
		}
		old := r.entries[id]
		if n := times[id]; n > 1 {
			// Whichever came first would replace the serving version: none does.
			if _, done := status[id]; !done {
				if old != nil {
					next[id] = old
				}
				status[id] = r.reject(id, fmt.Errorf("config_id appears %d times; none of them is applied", n), old != nil)
			}
			continue
		}
		if st, ok := previous[id]; ok && only != nil && !only(cfg) {
			if old != nil {
				next[id] = old
			}
			status[id] = st
			continue
		}
		if old != nil && proto.Equal(old.cfg, cfg) && only == nil && !old.stale {
			next[id] = old
			status[id] = Status{ID: id, State: StateAccepted}
			continue
		}
		if f := r.failed[id]; f != nil && only == nil && proto.Equal(f, cfg) && previous[id].State == StateRejected {
			if old != nil {
				next[id] = old
			}
			status[id] = previous[id] // RetryRejected builds it again
			continue
		}
		tried[id] = only != nil && !retry || before[id] == nil || !proto.Equal(before[id], cfg)
		if old != nil {
			next[id] = old // until its new version is built
		}
		jobs = append(jobs, cfg)
	}
	notBuilt := 0
	for _, res := range r.buildAll(jobs, next) {
		cfg, id := res.cfg, res.cfg.GetConfigId()
		old := r.entries[id]
		if res.err == ErrStopping {
			notBuilt++
			status[id] = r.reject(id, res.err, old != nil)
			built[id] = true // not logged one by one
			continue
		}
		if res.err != nil {
			if old != nil {
				old.stale = old.stale || proto.Equal(old.cfg, cfg)
			}
			r.failed[id] = cfg
			status[id] = r.reject(id, res.err, old != nil)
			continue
		}
		delete(r.failed, id)
		next[id] = res.entry
		status[id] = Status{ID: id, State: StateAccepted}
		ev := r.log.Info().Str("config_id", id).Int("steps", len(cfg.GetSteps()))
		if previous[id].State == StateRejected {
			ev = ev.Bool("recovered", true)
		}
		ev.Msg("auth config accepted")
		built[id] = true
	}
	for id, st := range status {
		if !built[id] {
			r.logChange(previous[id], st, tried[id])
		}
	}
	if notBuilt > 0 {
		r.log.Info().Int("configs", notBuilt).Msg("stopping: configs left unbuilt")
	}

	r.publish(next)
	for id, old := range r.entries {
		if next[id] != old {
			old.cancel()
		}
	}
	for id := range r.failed {
		if _, ok := next[id]; !ok && status[id].State != StateRejected {
			delete(r.failed, id) // removed
		}
	}
	r.entries = next
	r.setStatus(status)
	r.wanted, r.translated = cfgs, rejected
	return slices.Clone(*r.status.Load())
}

// setStatus makes status the registry's (it is kept, never modified). Caller holds mu.
func (r *Registry) setStatus(status map[string]Status) {
	sorted := sortedStatus(*r.status.Load(), r.statusByID, status)
	r.status.Store(&sorted)
	r.statusByID = status
}

// Rebuild builds again the configs that selects picks (for instance because a plugin
// file they use changed, or because they were rejected and are retried), whether they
// serve or were rejected; the others are left exactly as they are. A failure keeps the
// old chain serving and is reported.
func (r *Registry) Rebuild(selects func(*extauthv1.ExtAuthConfig) bool) []Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.apply(r.wanted, r.translated, selects, false)
}

// RetryRejected builds again every config whose build failed (not those rejected by
// translation, which only a config change can mend). The builds run off the lock, so a
// retry that waits on a provider holds up no Apply; a config given anew meanwhile is
// left to that Apply.
func (r *Registry) RetryRejected() []Status {
	r.mu.Lock()
	retry := make([]*extauthv1.ExtAuthConfig, 0, len(r.failed))
	for _, cfg := range r.failed {
		retry = append(retry, cfg)
	}
	r.mu.Unlock()
	results := r.buildEach(retry, nil)

	r.mu.Lock()
	defer r.mu.Unlock()
	status := maps.Clone(r.statusByID)
	if status == nil {
		status = map[string]Status{}
	}
	next := maps.Clone(r.entries)
	for _, res := range results {
		id := res.cfg.GetConfigId()
		if f := r.failed[id]; f == nil || !proto.Equal(f, res.cfg) {
			if res.entry != nil {
				res.entry.cancel() // given anew, or removed, meanwhile
			}
			continue
		}
		prev := status[id]
		if res.err == ErrStopping {
			continue
		}
		if res.err != nil {
			status[id] = r.reject(id, res.err, r.entries[id] != nil)
			r.logChange(prev, status[id], false)
			continue
		}
		if old := r.entries[id]; old != nil {
			old.cancel()
		}
		next[id] = res.entry
		delete(r.failed, id)
		status[id] = Status{ID: id, State: StateAccepted}
		r.log.Info().Str("config_id", id).Int("steps", len(res.cfg.GetSteps())).Bool("recovered", true).Msg("auth config accepted")
	}
	r.entries = next
	r.publish(next)
	r.setStatus(status)
	return slices.Clone(*r.status.Load())
}

// publish serves the chains of entries, and nothing else. entries is kept: the caller
// does not modify it afterwards.
func (r *Registry) publish(entries map[string]*entry) {
	r.publishMu.Lock()
	r.serving.Store(&entries)
	r.fresh.Store(nil) // after the store: a chain built is never out of sight
	r.announce()
	r.publishMu.Unlock()
}

// serveOne serves e as config_id id beside what serves, in fresh (see buildAll).
func (r *Registry) serveOne(fresh *sync.Map, id string, e *entry) {
	fresh.Store(id, e)
	r.publishMu.Lock()
	r.announce()
	r.publishMu.Unlock()
}

func (r *Registry) reject(id string, err error, servingPrevious bool) Status {
	return Status{ID: id, State: StateRejected, Reason: err.Error(), ServingPrevious: servingPrevious}
}

// logChange logs a config's status once per change, not on every Apply: a rejection
// when it is new or different (or tried says its build was attempted for a reason),
// and a return to Accepted that needed no build (the serving version listed again).
func (r *Registry) logChange(prev, st Status, tried bool) {
	switch {
	case st.State == StateRejected && (tried || prev.State != st.State || prev.Reason != st.Reason || prev.ServingPrevious != st.ServingPrevious):
		ev := r.log.Error().Str("config_id", st.ID).Str("error", st.Reason)
		if st.ServingPrevious {
			ev = ev.Bool("serving_previous", true)
		}
		ev.Msg("auth config rejected")
	case st.State == StateAccepted && prev.State == StateRejected:
		r.log.Info().Str("config_id", st.ID).Bool("recovered", true).Msg("auth config accepted")
	}
}

// Statuses returns the status of every known config, sorted by id, as of the last
// Apply or Rebuild that finished, with the stuck steps of its serving chain as of now.
// A problem of the config source (see SetSource) comes first.
func (r *Registry) Statuses() []Status {
	out := slices.Clone(*r.status.Load())
	if st, ok := r.sourceStatus(); ok {
		out = append([]Status{st}, out...)
	}
	for i := range out {
		if c, ok := r.Lookup(out[i].ID); ok {
			out[i].Stuck = c.Stuck()
		}
	}
	return out
}

// sortedStatus is the statuses of status sorted by id, given prev, the last result, and
// prevByID, the map it was made from.
func sortedStatus(prev []Status, prevByID, status map[string]Status) []Status {
	// The ids rarely change from one Apply to the next: prev's order is kept, and only
	// the new ids are sorted and merged in.
	var added []string
	for id := range status {
		if _, ok := prevByID[id]; !ok {
			added = append(added, id)
		}
	}
	slices.Sort(added)
	out := make([]Status, 0, len(status))
	for _, p := range prev {
		for len(added) > 0 && added[0] < p.ID {
			out = append(out, status[added[0]])
			added = added[1:]
		}
		if st, ok := status[p.ID]; ok {
			out = append(out, st)
		}
	}
	for _, id := range added {
		out = append(out, status[id])
	}
	return out
}

// Close stops every chain's services, and the builds under way (Stop).
func (r *Registry) Close() {
	r.stop()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.entries {
		e.cancel()
	}
	r.entries = map[string]*entry{}
	r.serving.Store(&map[string]*entry{})
}
