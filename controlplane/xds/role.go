package xds

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
)

// role is what is served to one role: a linear cache per type and, per resource, what
// it is and what it references.
type role struct {
	name   string
	caches map[string]*cachev3.LinearCache
	// filled are the types whose linear cache holds what is served. A linear cache
	// keeps ~270 bytes per resource (go-control-plane's cachedResource and its lazy
	// serialization and hash), and answers only state-of-the-world clients (the
	// delta sets answer every delta client). A type's cache is filled when such a
	// client first asks for it; until then Publish does not update it, so the
	// resources of a deployment whose clients all speak delta sit in no cache nobody
	// asks. Guarded by fillMu.
	filled map[string]bool
	fillMu sync.Mutex
	// sets answer the delta watches of each type (delta_set.go); caches answer the
	// state-of-the-world ones.
	sets   map[string]*deltaSet
	served map[string]map[string]served
	index  index
	// vhosts are the virtual hosts of each served route configuration, already checked,
	// and routeRefs what each references (route_refs.go).
	vhosts    map[string]vhostMemo
	routeRefs map[string]refCounts
	// given is the map of each type of the last Resources published. The same map
	// handed again to Publish, or to PublishChanged for a type it is not told changed
	// (as the translation does for a type where nothing changed), is skipped without
	// looking at its names.
	// (The maps are kept, not their addresses, so an address is never reused.)
	given map[string]map[string]types.Resource
	// refused is set when the last Publish was refused: what the next one is told
	// changed is relative to that call, not to what is served.
	refused bool
}

type served struct {
	res types.Resource
	// wire, when set, is what the cache is given instead of res: the same content in a
	// form that is cheaper to serialize (see routes.go).
	wire types.Resource
	// version is the content hash, computed when first asked for.
	version func() string
	// raw is cached()'s serialization when it was made for the version (newServed), so
	// that responses take it instead of serializing the resource again; nil otherwise.
	raw  []byte
	refs []key
	// records, for a route configuration, locates its virtual hosts in wire's bytes,
	// so that the next edit copies the unchanged ones as they are (routes_wire.go).
	records *wireRecords
}

// cached is what the cache serves for s.
func (s served) cached() types.Resource {
	if s.wire != nil {
		return s.wire
	}
	return s.res
}

// wireResource is what the delta set is given for s.
func (s served) wireResource() wireResource {
	return wireResource{res: s.cached(), version: s.version, raw: s.raw}
}

func (s *Server) newRole(name string) *role {
	r := &role{name: name, caches: map[string]*cachev3.LinearCache{}, filled: map[string]bool{}, sets: map[string]*deltaSet{}, served: map[string]map[string]served{}, index: newIndex(), vhosts: map[string]vhostMemo{}, routeRefs: map[string]refCounts{}}
	for _, t := range roleTypes(name) {
		r.caches[t] = cachev3.NewLinearCache(t, cachev3.WithVersionPrefix(s.prefix), cachev3.WithLogger(cacheLogger{s.log}))
		r.sets[t] = newDeltaSet(t, s.prefix, &s.handed)
		r.served[t] = map[string]served{}
	}
	return r
}

// linear is the linear cache of typ, filled with what is served first if it is not
// yet. A Publish records what it serves before it pushes it to the caches, so a fill
// that comes between the two takes what is being published (which the push then hands
// the cache again, harmlessly), and one that comes before takes the state the push
// then updates.
func (s *Server) linear(rl *role, typ string) *cachev3.LinearCache {
	rl.fillMu.Lock()
	defer rl.fillMu.Unlock()
	if !rl.filled[typ] {
		s.mu.RLock()
		all := make(map[string]types.Resource, len(rl.served[typ]))
		for name, sv := range rl.served[typ] {
			all[name] = sv.cached()
		}
		s.mu.RUnlock()
		rl.caches[typ].SetResources(all)
		rl.filled[typ] = true
	}
	return rl.caches[typ]
}

// isFilled says whether the linear cache of typ must be kept up to date.
func (rl *role) isFilled(typ string) bool {
	rl.fillMu.Lock()
	defer rl.fillMu.Unlock()
	return rl.filled[typ]
}

// same says whether m is the map of typ last published.
func (rl *role) same(typ string, m map[string]types.Resource) bool {
	g, ok := rl.given[typ]
	return ok && m != nil && mapID(g) == mapID(m)
}

// remember notes the maps of r, once published.
func (rl *role) remember(r Resources) {
	rl.given = make(map[string]map[string]types.Resource, len(r))
	for typ, m := range r {
		if m != nil {
			rl.given[typ] = m
		}
	}
}

// mapID identifies a map (not its content).
func mapID(m map[string]types.Resource) uintptr { return reflect.ValueOf(m).Pointer() }

// roleTypes are the types served to role, in make-before-break order.
func roleTypes(role string) []string {
	if role == RoleExtauth {
		return []string{ExtAuthConfigType}
	}
	return ProxyTypes
}

// checkRole says why role is not one that can be served.
func checkRole(role string) error {
	if role == RoleExtauth {
		return nil
	}
	ns, name, ok := strings.Cut(role, "~")
	if !ok || ns == "" || name == "" || strings.Contains(name, "~") {
		return fmt.Errorf("role %q is neither %q nor a gateway proxy %q", role, RoleExtauth, "<namespace>~<proxy>")
	}
	return nil
}

func isProxyRole(role string) bool { return role != RoleExtauth }

// roleOf is the role a node names in its metadata.
func roleOf(n *core.Node) (string, error) {
	v, ok := n.GetMetadata().GetFields()[RoleKey]
	if !ok {
		return "", fmt.Errorf("node %q has no %q in its metadata: set it to %q or %q", n.GetId(), RoleKey, RoleExtauth, "<namespace>~<proxy>")
	}
	role := v.GetStringValue()
	if err := checkRole(role); err != nil {
		return "", fmt.Errorf("node %q: metadata.%s: %w", n.GetId(), RoleKey, err)
	}
	return role, nil
}

// checkType says why typeURL is not served to role.
func checkType(role, typeURL string) error {
	if !slices.Contains(roleTypes(role), typeURL) {
		return fmt.Errorf("role %q is not served %s (it is served %s)", role, typeURL, strings.Join(roleTypes(role), ", "))
	}
	return nil
}
