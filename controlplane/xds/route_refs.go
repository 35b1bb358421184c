package xds

import (
	"slices"
	"strings"
)

// A route configuration with a virtual host per VirtualService references every
// cluster; keeping its references as one list meant walking, deduplicating, checking
// and re-indexing all of them when one virtual host changed. Instead each
// served route configuration keeps how many of its parts (its virtual hosts, and the
// rest of it under the nil key of its vhostMemo) reference each resource, and an edit
// is looked at as the references it gains and loses.

// refCounts is, for one route configuration, how many of its parts reference each
// resource.
type refCounts map[key]int

func (rc refCounts) keys() []key {
	out := make([]key, 0, len(rc))
	for k := range rc {
		out = append(out, k)
	}
	return out
}

func (rc refCounts) apply(delta map[key]int) {
	for k, n := range delta {
		if v := rc[k] + n; v == 0 {
			delete(rc, k)
		} else {
			rc[k] = v
		}
	}
}

// routeDelta is how a route configuration's references change in one Publish.
type routeDelta struct {
	old   refCounts // as served; nil for a new route configuration; read only
	delta map[key]int
	// gained are referenced now and were not; lost were and are not.
	gained, lost []key
}

// newRouteDelta is how the references of a route configuration whose parts as
// served are memo change with edit: the parts it adds count, those it drops no longer
// do; parts it keeps (the same virtual host pointer) reference the same resources.
func newRouteDelta(counts refCounts, memo vhostMemo, edit partEdit) *routeDelta {
	d := &routeDelta{old: counts, delta: map[key]int{}}
	for _, info := range edit.add {
		for _, ref := range info.refs {
			d.delta[ref]++
		}
	}
	for _, vh := range edit.drop {
		for _, ref := range memo[vh].refs {
			d.delta[ref]--
		}
	}
	for ref, n := range d.delta {
		was := counts[ref]
		switch {
		case was == 0 && n > 0:
			d.gained = append(d.gained, ref)
		case was > 0 && was+n == 0:
			d.lost = append(d.lost, ref)
		}
	}
	// Sorted so that errors come in the same order every time.
	slices.SortFunc(d.gained, compareKeys)
	slices.SortFunc(d.lost, compareKeys)
	return d
}

// refers reports whether the route configuration references k after the change.
func (d *routeDelta) refers(k key) bool { return d.old[k]+d.delta[k] > 0 }

func compareKeys(a, b key) int {
	if c := strings.Compare(a.typ, b.typ); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}

// refsOf are the references of k as served.
func (r *role) refsOf(k key) []key {
	if k.typ == RouteType {
		return r.routeRefs[k.name].keys()
	}
	return r.served[k.typ][k.name].refs
}

// newRefs are the references an upserted resource did not have before: for a route
// configuration, the ones it gains; for anything else, all of them.
func (c *change) newRefs(k key, s served) []key {
	if d := c.routes[k.name]; k.typ == RouteType && d != nil {
		return d.gained
	}
	return s.refs
}

// lostRefs are the references a changed or removed resource gives up: for a changed
// route configuration, the ones it loses; otherwise all it had.
func (r *role) lostRefs(c *change, k key) []key {
	if d := c.routes[k.name]; k.typ == RouteType && d != nil {
		if _, changed := c.upsert[k]; changed {
			return d.lost
		}
	}
	return r.refsOf(k)
}

// keepsRef reports whether from, changed by c, still references k because a part of
// it that did not change does (only route configurations are checked in parts).
func (c *change) keepsRef(from, k key) bool {
	if d := c.routes[from.name]; from.typ == RouteType && d != nil {
		return d.refers(k)
	}
	return false
}
