package v1

import "sync"

// stringCache hands out one string for the same short scalar met again: the keys of a
// plugin's config, plugin names, namespaces, paths such as "/". Every decoded resource
// keeps its strings, and most of these short ones are the same few repeated in
// every resource. The cache is direct-mapped and small (a scalar
// replaces whatever shared its slot), so a name met once costs a slot for a while, not
// memory for ever.
type stringCache [1024]string

// maxCached is the longest scalar cached: longer ones (domains, URLs, names with a
// number) seldom repeat.
const maxCached = 32

// stringCaches are the caches of parses released: a parse uses one at a time, so it
// needs no lock.
var stringCaches = sync.Pool{New: func() any { return new(stringCache) }}

// str is b as a string, the one cached when it is there.
func (c *stringCache) str(b []byte) string {
	if len(b) > maxCached || len(b) == 0 {
		return string(b)
	}
	h := uint32(2166136261) // FNV-1a: deterministic, so which scalars share a slot is too
	for _, x := range b {
		h = (h ^ uint32(x)) * 16777619
	}
	slot := &c[h%uint32(len(c))]
	if *slot != string(b) { // compared without a copy
		*slot = string(b)
	}
	return *slot
}

// str is b as a string, shared with the same scalar met lately.
func (p *fastParser) str(b []byte) string {
	if p.strs == nil {
		p.strs = stringCaches.Get().(*stringCache)
	}
	return p.strs.str(b)
}
