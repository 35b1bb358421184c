package devgateway

import (
	"bytes"
	"errors"
	"fmt"
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
// R/<virtual host name>.
func vhdsRoute(n string) string {
	return n[:max(strings.LastIndex(n, "/"), 0)]
}

// vhdsName is update's name check for VirtualHost resources: a resource is named
// R/<virtual host name>, R its route configuration.
func vhdsName(vh *routev3.VirtualHost, n string, pr *problems) {
	i := strings.LastIndex(n, "/")
	switch {
	case i < 0:
		pr.addf("", "the resource's name %q is not <route config>/<virtual host name>", n)
	case n[i+1:] != vh.GetName():
		pr.addf("name", "%q is not the virtual host name %q the resource's name %q ends with", vh.GetName(), n[i+1:], n)
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

// uniqueDomains refuses each VirtualHost this update brings that claims a domain
// another virtual host of its route configuration has (the inline ones count when the
// configuration has vhds), as Envoy rejects such an update: it keeps its previous
// version, unless that one now clashes too (then it is absent), and every other
// virtual host is kept. Only what the update brings is reported, as in update.
func (p *Proxy) uniqueDomains(next map[string]*vhdsHost, rs map[string]*anypb.Any) error {
	last := p.given[resourcev3.VirtualHostType]
	claimed := map[string]map[string]string{} // by route configuration, domain: virtual host
	domainsOf := func(route string) map[string]string {
		c, ok := claimed[route]
		if !ok {
			c = map[string]string{}
			if rc := p.routes[route]; rc != nil && rc.vhds {
				for _, v := range rc.hosts {
					claim(c, v)
				}
			}
			claimed[route] = c
		}
		return c
	}
	var brought []string
	for _, n := range slices.Sorted(maps.Keys(next)) {
		if old := p.vhds[n]; old != nil && old.spec == next[n].spec {
			claim(domainsOf(vhdsRoute(n)), old.spec) // they agreed before this update
			continue
		}
		brought = append(brought, n)
	}
	var errs []error
	for _, n := range brought {
		c := domainsOf(vhdsRoute(n))
		var pr problems
		if clashes(c, next[n].spec, "", &pr) {
			if a, ok := last[n]; !ok || a != rs[n] {
				errs = append(errs, pr.err("virtual host "+n))
			}
			delete(next, n)
			if old := p.vhds[n]; old != nil && !clashes(c, old.spec, "", &problems{}) {
				next[n] = old
			}
		}
		if v := next[n]; v != nil {
			claim(c, v.spec)
		}
	}
	return errors.Join(errs...)
}

// checkRoutesVHDS refuses each route configuration with vhds whose inline virtual
// hosts claim a domain one of its VirtualHosts has: it keeps its previous version (or
// is absent). Only what the update brings is reported, as in update. Caller holds p.mu.
func (p *Proxy) checkRoutesVHDS(prev map[string]*routeSpec, rs map[string]*anypb.Any) error {
	last := p.given[resourcev3.RouteType]
	var errs []error
	for _, n := range slices.Sorted(maps.Keys(p.routes)) {
		s := p.routes[n]
		if !s.vhds || len(s.hosts) == 0 || len(p.vhdsOf[n]) == 0 {
			continue
		}
		c := map[string]string{}
		for _, v := range p.vhdsOf[n] {
			claim(c, v)
		}
		var pr problems
		for i, v := range s.hosts {
			clashes(c, v, fmt.Sprintf("virtual_hosts[%d]", i), &pr)
		}
		if len(pr) == 0 {
			continue
		}
		if a, ok := last[n]; !ok || a != rs[n] {
			errs = append(errs, pr.err("route config "+n))
		}
		delete(p.routes, n)
		if old := prev[n]; old != nil {
			p.routes[n] = old
		}
	}
	return errors.Join(errs...)
}

// claim records v's domains in c, domain: virtual host name.
func claim(c map[string]string, v *vhostSpec) {
	for _, d := range v.domains {
		c[d] = v.name
	}
}

// clashes reports each domain of v that c has, with the field path of v vp, as
// parseVhost does, and says whether there was one.
func clashes(c map[string]string, v *vhostSpec, vp string, pr *problems) bool {
	found := false
	for j, d := range v.domains {
		if other, ok := c[d]; ok {
			pr.addf(join(vp, fmt.Sprintf("domains[%d]", j)), "%q is also a domain of virtual host %s", d, other)
			found = true
		}
	}
	return found
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
	names := make([]string, 0, len(p.vhds))
	for n := range p.vhds {
		names = append(names, n)
	}
	slices.Sort(names)
	p.vhdsOf = map[string][]*vhostSpec{}
	for _, n := range names {
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
