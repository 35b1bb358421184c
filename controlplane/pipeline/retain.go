package pipeline

import (
	"maps"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"

	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/chunked"
)

// retainer makes removals break after the make: an AuthConfig removed in the same
// run as the routes that named it stays served to extauth until every connected proxy
// has acknowledged route configurations without those routes, and then for drain
// more, for the Checks of requests a proxy routed before (or until the bound passes):
// no proxy sends a Check for a config_id extauth no longer has.
type retainer struct {
	bound, drain time.Duration
	// caughtUp says whether every connected proxy acknowledged the route configurations
	// published last (nil: nothing is retained).
	caughtUp func() bool
	// kept are the retained configs, by config id, with when they were removed.
	kept map[string]kept
}

type kept struct {
	res   types.Resource
	since time.Time
	// published says the route configurations without its routes were published (the
	// run that retained it is over): the proxies catching up since is about them.
	published bool
	caught    time.Time // when the proxies were first seen caught up since; zero before
}

// drainRetained is how long a retained AuthConfig stays after the proxies caught up:
// a request routed just before may still be waiting for a filter ahead of ext_authz
// (a JWT key set being fetched) before its Check is sent.
const drainRetained = time.Second

// update retains, of the config ids removed from ext in this run, those the virtual
// hosts published before named and the ones published now do not; prev is the last
// edge (the removed configs' source). It releases what may go, and returns ext with
// what is retained added (a copy when anything is), and the names to report changed.
func (r *retainer) update(ext map[string]types.Resource, changed []string, before, now chunked.List[*translate.VirtualHost],
	prev *validate.Edge, t time.Time) (map[string]types.Resource, []string) {
	if r.caughtUp == nil {
		return ext, changed
	}
	var removed []string
	for _, id := range changed {
		if _, ok := ext[id]; !ok {
			removed = append(removed, id)
		} else {
			delete(r.kept, id) // served again
		}
	}
	if len(removed) > 0 && prev != nil {
		named, still := configIDs(before), configIDs(now)
		for _, id := range removed {
			if !named[id] || still[id] {
				continue
			}
			for cfg := range prev.ExtAuthConfigs.Values() {
				if cfg.GetConfigId() == id {
					if r.kept == nil {
						r.kept = map[string]kept{}
					}
					r.kept[id] = kept{res: cfg, since: t} // published: false, until this run is
				}
			}
		}
	}
	return r.withKept(ext, changed, t)
}

// published marks what is retained as out of the run that retained it.
func (r *retainer) published() {
	for id, k := range r.kept {
		k.published = true
		r.kept[id] = k
	}
}

// due is when a retained config may next be released, or zero.
func (r *retainer) due() time.Time {
	var at time.Time
	for _, k := range r.kept {
		t := k.since.Add(r.bound)
		if !k.caught.IsZero() {
			t = k.caught.Add(r.drain)
		}
		if at.IsZero() || t.Before(at) {
			at = t
		}
	}
	return at
}

// withKept releases what may be and adds the rest to ext; changed loses the names of
// what is retained (the client still has them as they were) and gains those released.
func (r *retainer) withKept(ext map[string]types.Resource, changed []string, t time.Time) (map[string]types.Resource, []string) {
	if len(r.kept) == 0 {
		return ext, changed
	}
	up := r.caughtUp()
	var out []string
	for _, id := range changed {
		if _, ok := r.kept[id]; !ok {
			out = append(out, id)
		}
	}
	for id, k := range r.kept {
		switch {
		case !k.published || !up:
			k.caught = time.Time{} // the proxies were sent something they have not acknowledged
		case k.caught.IsZero():
			k.caught = t
		}
		r.kept[id] = k
		if !k.caught.IsZero() && t.Sub(k.caught) >= r.drain || t.Sub(k.since) >= r.bound {
			delete(r.kept, id)
			out = append(out, id)
		}
	}
	if len(r.kept) == 0 {
		return ext, out
	}
	ext = maps.Clone(ext)
	for id, k := range r.kept {
		ext[id] = k.res
	}
	return ext, out
}

// configIDs are the config ids the routes of vhs name.
func configIDs(vhs chunked.List[*translate.VirtualHost]) map[string]bool {
	out := map[string]bool{}
	for vh := range vhs.Values() {
		for _, rt := range vh.Routes {
			if rt.AuthConfig != "" {
				out[rt.AuthConfig] = true
			}
		}
	}
	return out
}

// releaseRetained publishes extauth's configs again without what is retained, once
// the proxies caught up (or the bound passed).
func (p *Pipeline) releaseRetained() {
	p.run.Lock()
	defer p.run.Unlock()
	if len(p.retain.kept) == 0 {
		return
	}
	ext, changed := p.cache.ExtAuthConfigs(p.rawEdgeLocked().ExtAuthConfigs)
	ext, changed = p.retain.withKept(ext, changed, time.Now())
	p.retained.Store(int32(len(p.retain.kept)))
	if at := p.retain.due(); !at.IsZero() {
		p.arm(at)
	}
	if len(changed) == 0 {
		return
	}
	if err := p.o.PublishChanged(xds.RoleExtauth, xds.Resources{xds.ExtAuthConfigType: ext}, xds.Changed{xds.ExtAuthConfigType: changed}); err != nil {
		p.o.Log.Error().Str("role", xds.RoleExtauth).Err(err).Msg("xds: not published; the previous resources keep serving")
		return
	}
	p.mu.Lock()
	p.xds[xds.RoleExtauth] = xds.Resources{xds.ExtAuthConfigType: ext}
	p.stages.XDS = nil
	p.mu.Unlock()
}

func (p *Pipeline) rawEdgeLocked() *validate.Edge {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rawEdge
}
