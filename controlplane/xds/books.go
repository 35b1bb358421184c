package xds

import "maps"

// held is what a client acknowledged of one type, name → version, kept one of two
// ways. A wildcard delta client's responses each bring it to a version table
// (deltaSet), so its books keep the table of the last response it acknowledged, shared
// with every client at the same change, and in stale only where the client differs
// from it: the resources of responses it rejected since, at the version it still
// holds, or "" where it holds none. Any other client's books keep a map of their own.
type held struct {
	table *versionTable
	stale map[string]string
	own   map[string]string
}

// view is every name the client holds and its version; the caller must not modify it.
func (h *held) view() map[string]string {
	if h == nil {
		return nil
	}
	if h.table == nil {
		return h.own
	}
	if len(h.stale) == 0 {
		return h.table.m
	}
	m := maps.Clone(h.table.m)
	for n, v := range h.stale {
		if v == "" {
			delete(m, n)
		} else {
			m[n] = v
		}
	}
	return m
}

// snapshot is view, to be read once the books are unlocked: a table as it is, a map
// of its own copied.
func (h *held) snapshot() map[string]string {
	if h == nil {
		return nil
	}
	if h.table == nil {
		return maps.Clone(h.own)
	}
	return h.view()
}

// version is the version of name the client holds, if any.
func (h *held) version(name string) (string, bool) {
	if h == nil {
		return "", false
	}
	if h.table == nil {
		v, ok := h.own[name]
		return v, ok
	}
	if v, ok := h.stale[name]; ok {
		return v, v != ""
	}
	v, ok := h.table.m[name]
	return v, ok
}

// took records a response the client acknowledged.
func (h *held) took(sr *sentResponse) {
	switch {
	case sr.sotw != nil: // the response is the client's whole set of the type
		names, versions := sr.namesAndVersions()
		h.table, h.stale, h.own = nil, nil, make(map[string]string, len(names))
		for _, n := range names {
			h.own[n] = versions[n]
		}
	case sr.table != nil && h.table == nil && len(h.own) > 0:
		// From a map of its own to a table: where the two differ is stale.
		v := h.own
		apply(v, sr)
		h.stale = map[string]string{}
		for n, ver := range v {
			if sr.table.m[n] != ver {
				h.stale[n] = ver
			}
		}
		for n := range sr.table.m {
			if _, ok := v[n]; !ok {
				h.stale[n] = ""
			}
		}
		h.table, h.own = sr.table, nil
	case sr.table != nil:
		// What the response carried, the client now holds as the table has it; the
		// rest of stale it still holds as before.
		for _, r := range sr.resources {
			delete(h.stale, r.GetName())
		}
		for _, n := range sr.removed {
			delete(h.stale, n)
		}
		h.table = sr.table
	default:
		if h.table != nil || len(h.stale) > 0 {
			h.own = maps.Clone(h.view())
			h.table, h.stale = nil, nil
		}
		if h.own == nil {
			h.own = make(map[string]string, len(sr.resources))
		}
		apply(h.own, sr)
	}
}

// refused records a delta response the client rejected: it keeps what it held of the
// resources the response carried or removed. A map of its own already says so.
func (h *held) refused(sr *sentResponse) {
	if sr.sotw != nil || h.table == nil && len(h.own) > 0 {
		return
	}
	mark := func(n string) {
		if _, ok := h.stale[n]; ok {
			return
		}
		if h.stale == nil {
			h.stale = map[string]string{}
		}
		h.stale[n], _ = h.version(n)
	}
	for _, r := range sr.resources {
		mark(r.GetName())
	}
	for _, n := range sr.removed {
		mark(n)
	}
}

// apply makes m hold what delta response sr carried.
func apply(m map[string]string, sr *sentResponse) {
	for _, n := range sr.removed {
		delete(m, n)
	}
	for _, r := range sr.resources {
		m[r.GetName()] = r.GetVersion()
	}
}
