package pipeline

import (
	"reflect"

	"gatehouse.dev/gatehouse/controlplane/translate"
)

// proxiesMemo is the last proxies stage and the Accepted it was built from. The
// validator shares every list of the edge an edit does not change, so an edit of an
// AuthConfig (or anything else that serves in none of those lists) finds the same
// lists and reuses the proxies, and an edit of an Upstream reuses their listeners,
// instead of a pass over every virtual host.
type proxiesMemo struct {
	from    translate.Accepted
	proxies []*translate.Proxy
}

// of is translate.Proxies(a), reused when a is made of what the last one was.
func (m *proxiesMemo) of(a translate.Accepted) []*translate.Proxy {
	switch {
	case m.proxies != nil && sameHosts(m.from, a) && a.Clusters.Same(m.from.Clusters):
	case m.proxies != nil && sameHosts(m.from, a):
		m.proxies = translate.ProxiesWithClusters(m.proxies, a.Clusters)
	default:
		m.proxies = translate.Proxies(a)
	}
	m.from = a
	return m.proxies
}

// sameHosts says whether a and b hold the same virtual hosts, certificates and
// settings: the listeners Proxies makes are a function of those (and its values are
// never modified once made).
func sameHosts(a, b translate.Accepted) bool {
	return a.Settings == b.Settings && a.Extauthz == b.Extauthz && a.VirtualHosts.Same(b.VirtualHosts) &&
		reflect.ValueOf(a.TLSCerts).UnsafePointer() == reflect.ValueOf(b.TLSCerts).UnsafePointer()
}
