package xds

import (
	"unsafe"

	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
)

// intern makes the names a stream subscribed to the set's own strings wherever the set
// serves them. Otherwise the names it subscribed to, decoded from its requests, would
// stay for as long as the stream lives, one copy per client. It runs on the stream's
// goroutine (createWatch), the only one using the subscription's maps then; what they
// hold is unchanged. What a client announced it holds is not kept: the first response
// replaces it with a version table or with ownCopy.
func (w *deltaSet) intern(sub cachev3.Subscription) {
	if sub.IsWildcard() {
		return
	}
	subscribed := sub.SubscribedResources()
	var names []string
	for name := range subscribed {
		if r, ok := w.resources[name]; ok && !sameString(name, r.name) {
			names = append(names, name)
		}
	}
	for _, name := range names {
		delete(subscribed, name)
		subscribed[w.resources[name].name] = struct{}{}
	}
}

// internKnown makes the versions a named subscription's client announced (known) the
// set's own strings, in place, when no response replaced them: the client was up to
// date. The map is the request's (go-control-plane's subscription starts with it),
// used by this stream alone.
func (w *deltaSet) internKnown(known map[string]string) {
	var names []string
	for name, v := range known {
		if r, ok := w.resources[name]; ok && (!sameString(name, r.name) || v == r.version() && !sameString(v, r.version())) {
			names = append(names, name)
		}
	}
	for _, name := range names {
		r, v := w.resources[name], known[name]
		if v == r.version() {
			v = r.version()
		}
		delete(known, name)
		known[r.name] = v
	}
}

// ownCopy is known in a new map whose names and versions are the set's own strings
// wherever they are the same resource and version, so that what a client announced,
// decoded from its request, does not stay.
func (w *deltaSet) ownCopy(known map[string]string) map[string]string {
	m := make(map[string]string, len(known))
	for name, v := range known {
		if r, ok := w.resources[name]; ok {
			name = r.name
			if v == r.version() {
				v = r.version()
			}
		}
		m[name] = v
	}
	return m
}

// sameString says whether a and b share their bytes (not only their content).
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}
