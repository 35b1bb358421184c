package xds

import (
	"errors"
	"fmt"
	"time"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
)

// Publish makes r the full desired state of role. Only what changed is looked at:
// a resource that is the same pointer as, or hashes the same as, what is served is
// neither validated again nor pushed again. What changed must pass ValidateAll (and so
// must every Any inside it) and, for a gateway proxy role, the consistency check;
// otherwise Publish returns every problem, naming the resource and field, and nothing
// of this call is published. Resources must not be modified once published: a type's
// map handed again (the same map) is taken as unchanged without a look at its
// resources, so to change a type hand a new map (maps.Clone, then edit the copy).
//
// Changes reach clients make-before-break: additions and changes in ProxyTypes order,
// then removals in the reverse order.
func (s *Server) Publish(roleName string, r Resources) error {
	start := time.Now()
	if err := checkRole(roleName); err != nil {
		return fmt.Errorf("xds: publish: %w", err)
	}
	for typ := range r {
		if err := checkType(roleName, typ); err != nil {
			return fmt.Errorf("xds: publish: %w", err)
		}
	}
	s.publishMu.Lock()
	defer s.publishMu.Unlock()
	s.mu.RLock()
	rl := s.roles[roleName]
	s.mu.RUnlock()
	first := rl == nil
	if first {
		rl = s.newRole(roleName)
	}
	c, errs := rl.diff(r)
	if len(errs) == 0 && isProxyRole(roleName) {
		errs = rl.consistent(c)
	}
	if len(errs) > 0 {
		s.metrics.publishFailed(roleName)
		return fmt.Errorf("xds: publish %s: nothing published: %w", roleName, errors.Join(errs...))
	}
	if !first && len(c.upsert) == 0 && len(c.remove) == 0 && len(c.repoint) == 0 {
		rl.remember(r)
		return nil
	}

	if !first {
		s.mu.Lock()
		rl.record(c)
		s.mu.Unlock()
	} else {
		// A new role is filled before anyone can watch it, so that no client sees
		// part of its first state.
		rl.record(c)
	}
	rl.remember(r)
	err := rl.push(c)
	var waiting []*pendingWatch
	if first {
		s.mu.Lock()
		s.roles[roleName] = rl
		waiting = s.pending[roleName]
		delete(s.pending, roleName)
		s.mu.Unlock()
		s.startPending(rl, waiting)
	}
	s.metrics.published(rl, time.Since(start))
	s.log.Debug().Str("role", roleName).Int("changed", len(c.upsert)).Int("removed", len(c.remove)).
		Dur("took", time.Since(start)).Msg("published")
	if err != nil {
		return fmt.Errorf("xds: publish %s: %w", roleName, err)
	}
	return nil
}

// diff compares r with what is served, inspecting what is new or changed.
func (rl *role) diff(r Resources) (*change, []error) {
	c := &change{upsert: map[key]served{}, remove: map[key]served{}, repoint: map[key]types.Resource{}, parts: map[string]partEdit{}, routes: map[string]*routeDelta{}, desired: r}
	var errs []error
	for _, typ := range roleTypes(rl.name) {
		if rl.same(typ, r[typ]) {
			continue // handed again as published: nothing in it changed or went
		}
		old := rl.served[typ]
		kept := 0 // names of old that r still has
		for name, res := range r[typ] {
			k := key{typ, name}
			o, known := old[name]
			if known {
				kept++
			}
			if known && o.res == res {
				continue
			}
			if typ == RouteType {
				if err := rl.diffRoutes(c, name, res, o, known); err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", k, err))
				}
				continue
			}
			s, err := newServed(typ, name, res)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", k, err))
				continue
			}
			if known && o.version() == s.version() {
				c.repoint[k] = res
				continue
			}
			refs, err := inspect(typ, name, res)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", k, err))
				continue
			}
			s.refs = refs
			c.upsert[k] = s
		}
		if kept == len(old) {
			continue // nothing removed: no second pass over thousands of names
		}
		for name, o := range old {
			if _, ok := r[typ][name]; !ok {
				c.remove[key{typ, name}] = o
			}
		}
	}
	return c, errs
}

// newServed hashes res; the hash is its version, as go-control-plane computes it for
// delta clients.
func newServed(typ, name string, res types.Resource) (served, error) {
	if res == nil {
		return served{}, errors.New("nil resource")
	}
	b, err := cachev3.MarshalResource(res)
	if err != nil {
		return served{}, fmt.Errorf("marshaling: %w", err)
	}
	v := cachev3.HashResource(b)
	return served{res: res, version: func() string { return v }}, nil
}

// record makes c what is served, in the role's own books.
func (rl *role) record(c *change) {
	rl.reindex(c)
	for k, s := range c.upsert {
		rl.served[k.typ][k.name] = s
	}
	for k := range c.remove {
		delete(rl.served[k.typ], k.name)
		if k.typ == RouteType {
			delete(rl.vhosts, k.name)
			delete(rl.routeRefs, k.name)
		}
	}
	for name, e := range c.parts {
		if rl.vhosts[name] == nil {
			rl.vhosts[name] = vhostMemo{}
		}
		e.apply(rl.vhosts[name])
	}
	for name, d := range c.routes {
		if rl.routeRefs[name] == nil {
			rl.routeRefs[name] = refCounts{}
		}
		rl.routeRefs[name].apply(d.delta)
	}
	for k, res := range c.repoint {
		s := rl.served[k.typ][k.name]
		s.res = res
		rl.served[k.typ][k.name] = s
	}
}

// push hands c to the caches, which tell the clients watching.
func (rl *role) push(c *change) error {
	order := roleTypes(rl.name)
	upsert := map[string]map[string]types.Resource{}
	for k, s := range c.upsert {
		if upsert[k.typ] == nil {
			upsert[k.typ] = map[string]types.Resource{}
		}
		upsert[k.typ][k.name] = s.cached()
	}
	remove := map[string][]string{}
	for k := range c.remove {
		remove[k.typ] = append(remove[k.typ], k.name)
	}
	var errs []error
	for _, typ := range order {
		if len(upsert[typ]) > 0 {
			errs = append(errs, rl.caches[typ].UpdateResources(upsert[typ], nil), rl.wildcard[typ].update(upsert[typ], nil))
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		if typ := order[i]; len(remove[typ]) > 0 {
			errs = append(errs, rl.caches[typ].UpdateResources(nil, remove[typ]), rl.wildcard[typ].update(nil, remove[typ]))
		}
	}
	return errors.Join(errs...)
}
