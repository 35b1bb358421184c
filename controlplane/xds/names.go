package xds

import (
	"hash/maphash"
	"strings"
	"sync"
	"weak"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
)

// nameSet is the names a delta stream subscribed to by name for one type. It is never
// modified once made, so every stream subscribed to the same names holds the same set:
// a gateway proxy subscribes to the endpoints of each of its clusters, the same names
// on every proxy of a gateway.
type nameSet struct {
	m   map[string]struct{}
	sum uint64 // of the names' hashes (nameSets.seed), the same for equal sets
}

var emptyNames = &nameSet{m: map[string]struct{}{}}

// nameSets hands out name sets, one per content while any stream holds it.
type nameSets struct {
	seed maphash.Seed

	mu    sync.Mutex
	sets  map[setKey][]weak.Pointer[nameSet]
	swept int // len(sets) after the last sweep of sets no stream holds
}

type setKey struct {
	sum uint64
	n   int
}

func newNameSets() *nameSets {
	return &nameSets{seed: maphash.MakeSeed(), sets: map[setKey][]weak.Pointer[nameSet]{}}
}

// subscription is what a delta stream subscribed to of one type: the wildcard, and
// names.
type subscription struct {
	wildcard bool
	names    *nameSet
}

// nameChange is what one delta request did to a stream's subscription of its type.
type nameChange struct {
	subscription // after the request
	// unsubscribed are the names the request unsubscribed from, each with whether it was
	// subscribed to then and whether the stream was wildcard then; go-control-plane's
	// rule for what the client holds after it needs both (unsubscribe).
	unsubscribed []unsubscribed
	changed      bool // the request subscribed or unsubscribed by name
	first        bool // the stream's first request of the type
}

type unsubscribed struct {
	name          string
	was, wildcard bool
}

// withoutNames takes the names other than the wildcard ("*") out of req's subscribe and
// unsubscribe lists; go-control-plane then sees the wildcard alone.
func withoutNames(req *discovery.DeltaDiscoveryRequest) {
	req.ResourceNamesSubscribe = onlyWildcard(req.GetResourceNamesSubscribe())
	req.ResourceNamesUnsubscribe = onlyWildcard(req.GetResourceNamesUnsubscribe())
}

func onlyWildcard(names []string) []string {
	var out []string
	for _, n := range names {
		if n == "*" {
			out = append(out, n)
		}
	}
	return out
}

// apply is old after subscribing to subscribe and then unsubscribing from unsubscribe,
// in order, as go-control-plane's Subscription.UpdateResourceSubscriptions makes it
// (without its legacy wildcard, which callbacks.keepNames makes explicit).
func (s *nameSets) apply(old subscription, subscribe, unsubscribe []string) nameChange {
	if old.names == nil {
		old.names = emptyNames
	}
	ch := nameChange{subscription: old}
	// What the request adds to the old names and takes from them, in order.
	in := func(name string, added, removed map[string]bool) bool {
		if added[name] {
			return true
		}
		_, ok := old.names.m[name]
		return ok && !removed[name]
	}
	added, removed := make(map[string]bool, len(subscribe)), make(map[string]bool, len(unsubscribe))
	sum, n := old.names.sum, len(old.names.m)
	for _, name := range subscribe {
		if name == "*" {
			ch.wildcard = true
			continue
		}
		ch.changed = true
		if !in(name, added, removed) {
			added[name] = true
			sum += s.hash(name)
			n++
		}
	}
	for _, name := range unsubscribe {
		if name == "*" {
			ch.wildcard = false
			continue
		}
		ch.changed = true
		was := in(name, added, removed)
		ch.unsubscribed = append(ch.unsubscribed, unsubscribed{name, was, ch.wildcard})
		if !was {
			continue
		}
		if added[name] {
			delete(added, name)
		} else {
			removed[name] = true
		}
		sum -= s.hash(name)
		n--
	}
	if len(added) == 0 && len(removed) == 0 {
		return ch
	}
	ch.names = s.get(old.names, added, removed, setKey{sum, n})
	return ch
}

func (s *nameSets) hash(name string) uint64 { return maphash.String(s.seed, name) }

// get is the set old with added and without removed: the one some stream already
// holds, or a new one.
func (s *nameSets) get(old *nameSet, added, removed map[string]bool, key setKey) *nameSet {
	if key.n == 0 {
		return emptyNames
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, wp := range s.sets[key] {
		if c := wp.Value(); c != nil && c.equals(old, added, removed, key.n) {
			return c
		}
	}
	m := make(map[string]struct{}, key.n)
	for name := range old.m {
		if !removed[name] {
			m[name] = struct{}{}
		}
	}
	for name := range added {
		m[strings.Clone(name)] = struct{}{} // not the request's bytes
	}
	made := &nameSet{m: m, sum: key.sum}
	s.sets[key] = append(s.sets[key], weak.Make(made))
	if len(s.sets) > 2*s.swept+64 {
		s.sweep()
	}
	return made
}

// equals says whether c holds the n names of old with added and without removed.
func (c *nameSet) equals(old *nameSet, added, removed map[string]bool, n int) bool {
	if len(c.m) != n {
		return false
	}
	for name := range added {
		if _, ok := c.m[name]; !ok {
			return false
		}
	}
	for name := range old.m {
		if _, ok := c.m[name]; !ok && !removed[name] {
			return false
		}
	}
	return true
}

// sweep forgets the sets no stream holds any longer (s.mu held).
func (s *nameSets) sweep() {
	for key, wps := range s.sets {
		live := wps[:0]
		for _, wp := range wps {
			if wp.Value() != nil {
				live = append(live, wp)
			}
		}
		if len(live) == 0 {
			delete(s.sets, key)
		} else {
			s.sets[key] = live
		}
	}
	s.swept = len(s.sets)
}
