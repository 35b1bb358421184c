package devgateway

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

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
