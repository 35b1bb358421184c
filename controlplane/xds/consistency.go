package xds

import (
	"fmt"

	"github.com/envoyproxy/go-control-plane/pkg/cache/types"

	"gatehouse.dev/gatehouse/internal/smallset"
)

// key names one resource of a role.
type key struct{ typ, name string }

func (k key) String() string { return fmt.Sprintf("%s %q", kindOf(k.typ), k.name) }

// index is who references whom among a role's served resources, kept up to date by
// Publish so that checking an edit costs what the edit touches, not the whole role.
type index struct {
	// back is, for each referenced resource, the served resources that reference it.
	back map[key]*smallset.Set[key]
}

func newIndex() index { return index{back: map[key]*smallset.Set[key]{}} }

// mustBeReferenced are the types go-control-plane's Snapshot.Consistent requires to be
// exactly the set referenced (no orphan endpoints or route configurations).
var mustBeReferenced = map[string]bool{EndpointType: true, RouteType: true}

// change is what one Publish does to a role.
type change struct {
	upsert map[key]served // new or changed resources, with their references
	remove map[key]served // removed resources, as they were served
	// repoint are unchanged resources given as new pointers, remembered so that the
	// next Publish finds them by pointer.
	repoint map[key]types.Resource
	// parts are how the checked virtual hosts of the route configurations in upsert
	// change, and routes how their references do.
	parts   map[string]partEdit
	routes  map[string]*routeDelta
	desired Resources
}

func (c *change) present(k key) bool {
	_, ok := c.desired[k.typ][k.name]
	return ok
}

// consistent checks a proxy role as it would be after c: everything a resource
// references is served (routes' clusters, EDS clusters' endpoints, connection managers'
// route configurations, SDS secrets), and every endpoint set and route configuration is
// referenced (go-control-plane's Snapshot.Consistent). Only what c touches is looked at.
func (r *role) consistent(c *change) []error {
	var errs []error
	// Every reference of a new or changed resource must be served afterwards.
	added := make(map[key][]key, len(c.upsert))
	for k, s := range c.upsert {
		for _, ref := range c.newRefs(k, s) {
			added[ref] = append(added[ref], k)
			if !c.present(ref) {
				errs = append(errs, fmt.Errorf("%s references %s, which is not served", k, ref))
			}
		}
	}
	// Whatever still references a removed resource breaks: what is unchanged, and
	// the unchanged parts of a changed route configuration (the loop above covers
	// the rest of what changed).
	for k := range c.remove {
		for from := range r.index.back[k].All() {
			if _, changed := c.upsert[from]; (changed && !c.keepsRef(from, k)) || !c.present(from) {
				continue
			}
			errs = append(errs, fmt.Errorf("%s references %s, which is removed", from, k))
		}
	}
	// Endpoints and route configurations that are new, or lost a referrer, must still
	// be referenced by something.
	candidates := map[key]bool{}
	for k := range c.upsert {
		if mustBeReferenced[k.typ] {
			candidates[k] = true
		}
	}
	for _, touched := range []map[key]served{c.upsert, c.remove} {
		for k := range touched {
			for _, ref := range r.lostRefs(c, k) {
				if mustBeReferenced[ref.typ] {
					candidates[ref] = true
				}
			}
		}
	}
	for k := range candidates {
		if !c.present(k) || len(added[k]) > 0 {
			continue
		}
		if !r.stillReferenced(k, c) {
			errs = append(errs, fmt.Errorf("%s is not referenced by any %s", k, referrerKind(k.typ)))
		}
	}
	return errs
}

// stillReferenced reports whether something unchanged (a resource, or an unchanged
// part of a changed route configuration) still references k after c.
func (r *role) stillReferenced(k key, c *change) bool {
	for from := range r.index.back[k].All() {
		_, changed := c.upsert[from]
		if c.present(from) && (!changed || c.keepsRef(from, k)) {
			return true
		}
	}
	return false
}

// apply records c in the index.
func (r *role) reindex(c *change) {
	for _, touched := range []map[key]served{c.upsert, c.remove} {
		for k := range touched {
			for _, ref := range r.lostRefs(c, k) {
				if from := r.index.back[ref]; from != nil && from.Remove(k) {
					delete(r.index.back, ref)
				}
			}
		}
	}
	for k, s := range c.upsert {
		for _, ref := range c.newRefs(k, s) {
			if r.index.back[ref] == nil {
				r.index.back[ref] = &smallset.Set[key]{}
			}
			r.index.back[ref].Add(k)
		}
	}
}

func referrerKind(typ string) string {
	if typ == EndpointType {
		return "EDS cluster"
	}
	return "listener"
}

func kindOf(typeURL string) string {
	switch typeURL {
	case ListenerType:
		return "listener"
	case RouteType:
		return "route configuration"
	case ClusterType:
		return "cluster"
	case EndpointType:
		return "cluster load assignment"
	case SecretType:
		return "secret"
	case VirtualHostType:
		return "virtual host"
	case ExtAuthConfigType:
		return "ExtAuthConfig"
	}
	return typeURL
}
