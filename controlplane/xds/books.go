package xds

import "maps"

// held is what a client acknowledged of one type, name → version, kept one of two
// ways. A delta client that holds all that is served of the type (deltaSet: wildcard,
// or subscribed to every name) is brought by each response to a version table, so its
// books keep the table of the last response it acknowledged, shared with every client
// at the same change, and in stale only where the client differs from it: the
// resources of responses it rejected since, at the version it still holds, or "" where
// it holds none. Any other client's books keep a map of their own.
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

// ack records what an acknowledged (or, nack, rejected) response carried (c.mu held).
func (b *streamBook) ack(typeURL string, sr *sentResponse, nack bool) {
	h := b.heldOf(typeURL)
	if nack {
		h.refused(sr)
	} else {
		h.took(sr)
	}
}

// heldOf is the book of typeURL, made when missing (c.mu held).
func (b *streamBook) heldOf(typeURL string) *held {
	if b.acked == nil {
		b.acked = map[string]*held{}
	}
	h := b.acked[typeURL]
	if h == nil {
		h = &held{}
		b.acked[typeURL] = h
	}
	return h
}

// ackBooked records, of what an acknowledged response carried, the names booked
// (c.mu held).
func (b *streamBook) ackBooked(typeURL string, sr *sentResponse, booked map[string]bool) {
	h := b.heldOf(typeURL)
	if h.own == nil {
		h.own = map[string]string{}
	}
	if sr.sotw != nil {
		names, versions := sr.namesAndVersions()
		clear(h.own) // the response is the client's whole set of the type
		for _, n := range names {
			if booked[n] {
				h.own[n] = versions[n]
			}
		}
		return
	}
	for _, n := range sr.removed {
		delete(h.own, n)
	}
	for _, r := range sr.resources {
		if booked[r.GetName()] {
			h.own[r.GetName()] = r.GetVersion()
		}
	}
}

// Book makes the books keep, from now on, which clients acknowledge names of typeURL,
// a type they do not keep whole (clusters, endpoints: thousands per client), for
// EachAcked; Unbook ends it and forgets what was kept. A caller books the names it
// is about to publish and waits for.
func (s *Server) Book(typeURL string, names ...string) {
	c := s.cb
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.booked == nil {
		c.booked = map[string]map[string]bool{}
	}
	if c.booked[typeURL] == nil {
		c.booked[typeURL] = map[string]bool{}
	}
	for _, n := range names {
		c.booked[typeURL][n] = true
	}
}

// Unbook: see Book.
func (s *Server) Unbook(typeURL string, names ...string) {
	c := s.cb
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range names {
		delete(c.booked[typeURL], n)
	}
	for _, b := range c.streams {
		if h := b.acked[typeURL]; h != nil {
			for _, n := range names {
				delete(h.own, n)
			}
		}
	}
}

// bookTypes are the types whose acknowledged versions the books keep: what the
// make-before-break order and the data-plane statuses read. A book holds an entry per
// resource per client, so the types every proxy holds thousands of (clusters,
// endpoints) are left out.
var bookTypes = []string{ExtAuthConfigType, RouteType, VirtualHostType}

// EachAcked calls f with every open stream of role (whose node named it) and what its
// client acknowledged of typeURL (one of ExtAuthConfigType and RouteType, or the
// names booked of another type: Book), name →
// version (nil when nothing yet). f must not
// keep or modify the map; it runs with the books locked, so it must be quick.
func (s *Server) EachAcked(role, typeURL string, f func(node string, acked map[string]string)) {
	c := s.cb
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.streams {
		if b.role == role {
			f(b.node, b.acked[typeURL].view())
		}
	}
}

// EachServing is EachAcked without the clients still joining: those that said they
// were not serving yet (ServingKey) and have answered no response of typeURL on this
// stream. Such a client answers no Check until it has built what the stream's first
// response brings, so waiting for it would only hold back the others' changes.
func (s *Server) EachServing(role, typeURL string, f func(node string, acked map[string]string)) {
	c := s.cb
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.streams {
		if b.role == role && !(b.joining && b.acked[typeURL] == nil) {
			f(b.node, b.acked[typeURL].view())
		}
	}
}

// namesAndVersions are the names and versions of what a response carried.
func (sr *sentResponse) namesAndVersions() ([]string, map[string]string) {
	versions := map[string]string{}
	if sr.sotw == nil {
		names := make([]string, 0, len(sr.resources))
		for _, r := range sr.resources {
			names = append(names, r.GetName())
			versions[r.GetName()] = r.GetVersion()
		}
		return names, versions
	}
	var names []string
	for _, a := range sr.sotw.GetResources() {
		name := a.GetTypeUrl()
		if m, err := a.UnmarshalNew(); err == nil {
			name = resourceName(m)
		}
		names = append(names, name)
		versions[name] = sr.sotw.GetVersionInfo()
	}
	return names, versions
}

// CaughtUp says whether every open stream of a proxy role (any role but extauth's)
// acknowledged the version of typeURL's (RouteType's) resources that is published now: none has a
// response of that type unanswered, and each version it acknowledged is the one served.
func (s *Server) CaughtUp(typeURL string) bool {
	type book struct {
		role  string
		acked map[string]string
	}
	var all []book
	c := s.cb
	c.mu.Lock()
	for _, b := range c.streams {
		if b.role == "" || b.role == RoleExtauth {
			continue
		}
		if len(b.sent[typeURL]) > 0 {
			c.mu.Unlock()
			return false
		}
		all = append(all, book{b.role, b.acked[typeURL].snapshot()})
	}
	c.mu.Unlock()
	for _, h := range all {
		for name, v := range h.acked {
			if s.Version(h.role, typeURL, name) != v {
				return false
			}
		}
	}
	return true
}

// ServedBy counts, for each of names of typeURL (ExtAuthConfigType or RouteType), the open streams of role that
// acknowledged the version served now; total is the number of open streams of role.
func (s *Server) ServedBy(role, typeURL string, names []string) (counts []int, total int) {
	want := make([]string, len(names))
	for i, n := range names {
		want[i] = s.Version(role, typeURL, n)
	}
	counts = make([]int, len(names))
	c := s.cb
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.streams {
		if b.role != role {
			continue
		}
		total++
		h := b.acked[typeURL]
		for i, n := range names {
			if v, ok := h.version(n); ok && want[i] != "" && v == want[i] {
				counts[i]++
			}
		}
	}
	return counts, total
}

// CaughtUpCount counts the open streams of role that acknowledged the version of
// every resource of each of typeURLs (booked types: ExtAuthConfigType, RouteType,
// VirtualHostType) they hold that is served now, with none unanswered.
func (s *Server) CaughtUpCount(role string, typeURLs ...string) (n, total int) {
	var held [][]map[string]string // per stream, per type
	c := s.cb
	c.mu.Lock()
	for _, b := range c.streams {
		if b.role != role {
			continue
		}
		total++
		acked := make([]map[string]string, 0, len(typeURLs))
		for _, typeURL := range typeURLs {
			if len(b.sent[typeURL]) > 0 {
				acked = nil
				break
			}
			acked = append(acked, b.acked[typeURL].snapshot())
		}
		if acked != nil {
			held = append(held, acked)
		}
	}
	c.mu.Unlock()
	for _, stream := range held {
		up := true
		for i, acked := range stream {
			for name, v := range acked {
				up = up && s.Version(role, typeURLs[i], name) == v
			}
		}
		if up {
			n++
		}
	}
	return n, total
}
