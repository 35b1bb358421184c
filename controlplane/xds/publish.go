package xds

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
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
	return s.PublishChanged(roleName, r, nil)
}

// Changed names, by type URL, the resources of a role that may differ from what the
// previous Publish of that role was handed: new, edited or gone.
type Changed map[string][]string

// PublishChanged is Publish told what changed: for a type in changed, only the names
// listed are looked at, so an edit costs what it touches however many resources the
// role has; every other resource of that type must be the one handed in the previous
// call for the role (the same pointer, or gone from both). So a type's map may be the
// one handed before, edited in place since, when every name edited is listed (the
// translation does so, to spare copying whole maps per edit): the
// server reads r only during the call. Resources themselves are never modified. A
// type not in changed is compared in full, unless its map is the one last published.
// The first Publish of a role, and the one after a refused Publish, compare in full
// whatever changed says, and whatever maps they are handed.
func (s *Server) PublishChanged(roleName string, r Resources, changed Changed) error {
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
	if first || rl.refused {
		changed = nil // relative to a call that was not published
	}
	c, errs := rl.diff(r, changed)
	if len(errs) == 0 && isProxyRole(roleName) {
		errs = rl.consistent(c)
	}
	rl.refused = len(errs) > 0
	if len(errs) > 0 {
		// The next call compares in full: no map is taken as the one published, since
		// one edited in place since is the same map.
		rl.given = nil
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

// diff compares r with what is served, inspecting what is new or changed: for a type
// in changed, the names it lists; for any other type, every name.
func (rl *role) diff(r Resources, changed Changed) (*change, []error) {
	c := &change{upsert: make(map[key]served, rl.upsertHint(r)), remove: map[key]served{}, repoint: map[key]types.Resource{}, parts: map[string]partEdit{}, routes: map[string]*routeDelta{}, desired: r}
	var errs []error
	for _, typ := range roleTypes(rl.name) {
		names, told := changed[typ]
		if !told && rl.same(typ, r[typ]) {
			continue // handed again as published: nothing in it changed or went
		}
		old := rl.served[typ]
		if told {
			seen := make(map[string]bool, len(names))
			for _, name := range names {
				if seen[name] {
					continue
				}
				seen[name] = true
				res, present := r[typ][name]
				o, known := old[name]
				switch {
				case present:
					errs = rl.diffOne(c, key{typ, name}, res, o, known, errs)
				case known:
					c.remove[key{typ, name}] = o
				}
			}
			continue
		}
		var kept int // names of old that r still has
		if errs, kept = rl.diffAll(c, typ, r[typ], old, errs); kept == len(old) {
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

// diffOne notes in c how resource k, res now, differs from o as served (when known),
// and appends to errs what is wrong with it.
func (rl *role) diffOne(c *change, k key, res types.Resource, o served, known bool, errs []error) []error {
	if known && o.res == res {
		return errs
	}
	if k.typ == RouteType {
		if err := rl.diffRoutes(c, k.name, res, o, known); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k, err))
		}
		return errs
	}
	return compare(k, res, o, known).note(c, k, res, errs)
}

// comparison is how a resource (not a route configuration) differs from what is
// served: the same content (repoint to the new pointer), new content to serve, or a
// problem.
type comparison struct {
	same bool
	s    served
	err  error
}

// compare compares res, resource k, with o as served (when known), checking it when
// its content is new. It reads nothing of the role, so resources can be compared on
// several cores.
func compare(k key, res types.Resource, o served, known bool) comparison {
	s, err := newServed(k.typ, k.name, res)
	if err != nil {
		return comparison{err: err}
	}
	if known && o.version() == s.version() {
		return comparison{same: true}
	}
	if s.refs, err = inspect(k.typ, k.name, res); err != nil {
		return comparison{err: err}
	}
	return comparison{s: s}
}

// note records cmp in c, or its problem in errs.
func (cmp comparison) note(c *change, k key, res types.Resource, errs []error) []error {
	switch {
	case cmp.err != nil:
		return append(errs, fmt.Errorf("%s: %w", k, cmp.err))
	case cmp.same:
		c.repoint[k] = res
	default:
		c.upsert[k] = cmp.s
	}
	return errs
}

// parallelCompareMin is how many resources of a type to compare before it is worth
// comparing them on every core (hashing, validating and walking each): a role's first
// Publish compares every resource it has.
const parallelCompareMin = 512

// diffAll is diff's full comparison of one type: every resource of m with old, as
// served. It returns errs with m's problems added, and how many names of old m has.
func (rl *role) diffAll(c *change, typ string, m map[string]types.Resource, old map[string]served, errs []error) ([]error, int) {
	kept := 0
	workers := runtime.GOMAXPROCS(0)
	if typ == RouteType || len(m) < parallelCompareMin || workers == 1 {
		for name, res := range m {
			o, known := old[name]
			if known {
				kept++
			}
			errs = rl.diffOne(c, key{typ, name}, res, o, known, errs)
		}
		return errs, kept
	}
	type item struct {
		name  string
		res   types.Resource
		old   served
		known bool
		cmp   comparison
	}
	var items []item
	for name, res := range m {
		o, known := old[name]
		if known {
			kept++
			if o.res == res {
				continue // the same pointer: unchanged
			}
		}
		items = append(items, item{name: name, res: res, old: o, known: known})
	}
	const chunk = 64
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				end := int(next.Add(chunk))
				if end-chunk >= len(items) {
					return
				}
				for i := end - chunk; i < min(end, len(items)); i++ {
					it := &items[i]
					it.cmp = compare(key{typ, it.name}, it.res, it.old, it.known)
				}
			}
		})
	}
	wg.Wait()
	for i := range items {
		errs = items[i].cmp.note(c, key{typ, items[i].name}, items[i].res, errs)
	}
	return errs, kept
}

// newServed hashes res; the hash is its version (ContentVersion). The serialization
// hashed is kept for the responses, so a resource is serialized once, not again for its
// first response.
func newServed(typ, name string, res types.Resource) (served, error) {
	if res == nil {
		return served{}, errors.New("nil resource")
	}
	b, err := cachev3.MarshalResource(res)
	if err != nil {
		return served{}, fmt.Errorf("marshaling: %w", err)
	}
	v := ContentVersion(b)
	return served{res: res, version: func() string { return v }, raw: b}, nil
}

// ContentVersion is the version of a resource whose deterministic serialization is b:
// equal content, equal version, so a client that has a resource's content is not sent
// it again, also across the control plane's restarts. It is a 64-bit xxHash rather than
// go-control-plane's SHA-256: a route configuration holding every virtual host of a
// listener is megabytes, hashed on every edit's way to the proxies, and xxHash is some
// ten times faster; a version only tells contents apart, it guards against no one.
func ContentVersion(b []byte) string {
	return strconv.FormatUint(xxhash.Sum64(b), 16)
}

// upsertHint is how many resources of r may be new: all of a type nothing of which is
// served yet, as on a role's first Publish, so the maps are sized once rather than
// grown a doubling at a time.
func (rl *role) upsertHint(r Resources) int {
	n := 0
	for typ, m := range r {
		if len(rl.served[typ]) == 0 {
			n += len(m)
		}
	}
	return n
}

// record makes c what is served, in the role's own books.
func (rl *role) record(c *change) {
	for typ, m := range c.desired {
		if len(rl.served[typ]) == 0 && len(m) > 0 {
			rl.served[typ] = make(map[string]served, len(m)) // sized once, as upsertHint
		}
	}
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
	wires := map[string]map[string]wireResource{}
	counts := map[string]int{}
	for k := range c.upsert {
		counts[k.typ]++
	}
	for k, s := range c.upsert {
		if upsert[k.typ] == nil {
			upsert[k.typ] = make(map[string]types.Resource, counts[k.typ])
			wires[k.typ] = make(map[string]wireResource, counts[k.typ])
		}
		upsert[k.typ][k.name] = s.cached()
		wires[k.typ][k.name] = s.wireResource()
	}
	remove := map[string][]string{}
	for k := range c.remove {
		remove[k.typ] = append(remove[k.typ], k.name)
	}
	var errs []error
	for _, typ := range order {
		if len(upsert[typ]) > 0 {
			if rl.isFilled(typ) {
				errs = append(errs, rl.caches[typ].UpdateResources(upsert[typ], nil))
			}
			errs = append(errs, rl.sets[typ].update(wires[typ], nil))
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		if typ := order[i]; len(remove[typ]) > 0 {
			if rl.isFilled(typ) {
				errs = append(errs, rl.caches[typ].UpdateResources(nil, remove[typ]))
			}
			errs = append(errs, rl.sets[typ].update(nil, remove[typ]))
		}
	}
	return errors.Join(errs...)
}
