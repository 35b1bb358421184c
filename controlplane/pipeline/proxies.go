package pipeline

import (
	"reflect"

	"gatehouse.dev/gatehouse/controlplane/translate"
)

// proxiesMemo is the last proxies stage and the Accepted it was built from. The
// validator shares every list of the edge an edit does not change, so an edit of an
// AuthConfig (or anything else that serves in none of those lists) finds the same
// lists and reuses the proxies, instead of a pass over every virtual host.
type proxiesMemo struct {
	from    translate.Accepted
	proxies []*translate.Proxy
}

// of is translate.Proxies(a), reused when a is made of what the last one was.
func (m *proxiesMemo) of(a translate.Accepted) []*translate.Proxy {
	if m.proxies != nil && sameAccepted(m.from, a) {
		return m.proxies
	}
	m.from, m.proxies = a, translate.Proxies(a)
	return m.proxies
}

// sameAccepted says whether a and b hold the same lists, map and values (Proxies is a
// function of those, never modified once made).
func sameAccepted(a, b translate.Accepted) bool {
	return a.Settings == b.Settings && a.Extauthz == b.Extauthz &&
		sameSlice(a.VirtualHosts, b.VirtualHosts) && sameSlice(a.Clusters, b.Clusters) &&
		reflect.ValueOf(a.TLSCerts).UnsafePointer() == reflect.ValueOf(b.TLSCerts).UnsafePointer()
}

func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
