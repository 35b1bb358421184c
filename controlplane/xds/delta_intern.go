package xds

import (
	"unsafe"

	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
)

// intern makes the names and versions a stream's subscription holds the set's own
// strings wherever they are the same resource and version. Otherwise what the client
// announced, decoded from its requests (initial_resource_versions after a reconnect,
// the names it subscribes to: a name and a 64-character hash per resource), would
// stay for as long as the stream lives, one copy per client. It runs on the stream's
// goroutine (createWatch), the only one using the subscription's maps then; what the
// maps hold is unchanged. The known versions are interned only while they are the
// map req announced (go-control-plane's subscription starts with it); any other is one
// the set handed out, possibly a version table other streams share.
func (w *deltaSet) intern(req *cachev3.DeltaRequest, sub cachev3.Subscription) {
	if known := sub.ReturnedResources(); len(known) > 0 && mapAddr(known) == mapAddr(req.GetInitialResourceVersions()) {
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

// sameString says whether a and b share their bytes (not only their content).
func sameString(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}
