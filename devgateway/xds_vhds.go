package devgateway

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// vhdsHost is a VirtualHost resource (VHDS), parsed as an inline virtual host is. It
// belongs to the route configuration its resource name starts with (vhdsRoute), which
// uses it only when it has vhds. Specs are never modified once parsed, so they are
// shared.
type vhdsHost struct {
	spec *vhostSpec
	a    *anypb.Any // the resource spec was parsed from (or one with its bytes)
}

// vhdsRoute is the route configuration R of a VirtualHost resource named
// R/<virtual host>.
func vhdsRoute(n string) string {
	return n[:max(strings.LastIndex(n, "/"), 0)]
}

// vhdsName is update's name check for VirtualHost resources: a resource is named
// R/<virtual host>, R its route configuration, and so is the virtual host (Envoy keeps
// VHDS virtual hosts by their name and removes them by resource name).
func vhdsName(vh *routev3.VirtualHost, n string, pr *problems) {
	switch {
	case strings.LastIndex(n, "/") <= 0:
		pr.addf("", "the resource's name %q is not <route config>/<virtual host>", n)
	case vh.GetName() != n:
		pr.addf("name", "%q is not the resource's name %q", vh.GetName(), n)
	}
}

// updateVirtualHosts takes the full set of VirtualHost resources, as Handle does.
// Caller holds p.mu.
func (p *Proxy) updateVirtualHosts(rs map[string]*anypb.Any) error {
	typeURL := resourcev3.VirtualHostType
	next, err := update(p.vhds, rs, p.given[typeURL], typeURL, "virtual host", new(routev3.VirtualHost), vhdsName,
		func(vh *routev3.VirtualHost, pr *problems) *vhdsHost {
			return &vhdsHost{spec: parseVhost(vh, "", map[string]string{}, pr)}
		}, p.sameVirtualHost)
	for n, h := range next {
		if h.a == nil { // parsed now
			h.a = rs[n]
		}
	}
	err = errors.Join(err, p.uniqueDomains(next, rs))
	p.vhds, p.vhdsSeen = next, true
	p.groupVHDS()
	return err
}

// sameVirtualHost is update's quick parse of VirtualHost resources: the one named n the
// last update took, when a is its very *anypb.Any or has its bytes. Only the resources
// that changed are decoded and parsed then.
func (p *Proxy) sameVirtualHost(n string, a *anypb.Any) (*vhdsHost, bool) {
	old := p.vhds[n]
	if old == nil || old.a != a && (old.a.GetTypeUrl() != a.GetTypeUrl() || !bytes.Equal(old.a.GetValue(), a.GetValue())) {
		return nil, false
	}
	return &vhdsHost{spec: old.spec, a: a}, true
}

// groupVHDS sets vhdsOf from vhds: each route configuration's VHDS virtual hosts, in
// resource name order.
func (p *Proxy) groupVHDS() {
	p.vhdsOf = map[string][]*vhostSpec{}
	for _, n := range slices.Sorted(maps.Keys(p.vhds)) {
		r := vhdsRoute(n)
		p.vhdsOf[r] = append(p.vhdsOf[r], p.vhds[n].spec)
	}
}

// served is the route configuration s as a listener serves it: with vhds, its inline
// virtual hosts then its VHDS ones. It says false while no VirtualHost response has
// arrived, as Envoy's listener warms until the first one. Caller holds p.mu.
func (p *Proxy) served(s *routeSpec) (*routeSpec, bool) {
	if !s.vhds {
		return s, true
	}
	if !p.vhdsSeen {
		return nil, false
	}
	merged := *s
	merged.hosts = append(slices.Clip(s.hosts), p.vhdsOf[s.name]...)
	merged.clusters = routeClusters(merged.hosts)
	return &merged, true
}
