// Package devgateway is a small HTTP front that plays Envoy's part for the subset of the
// generated Envoy config Gatehouse needs on a laptop and in end-to-end tests: domains,
// prefix routes, static clusters, per-route ext_authz (config_id or disabled) and
// request header removal. It reads the same route and cluster protos Envoy would get.
// It is not a production proxy: production is Envoy.
package devgateway

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
)

// ExtAuthzFilterName is the key of the ext_authz per-route config.
const ExtAuthzFilterName = "envoy.filters.http.ext_authz"

// Config is what the gateway serves: one route configuration and its clusters.
type Config struct {
	Routes   *routev3.RouteConfiguration
	Clusters []*clusterv3.Cluster
	// CheckTimeout bounds each ext_authz call (DefaultCheckTimeout when zero); past it
	// the request is denied with 403, as Envoy does with failure_mode_allow off.
	CheckTimeout time.Duration
}

// table is a compiled Config, immutable once built.
type table struct {
	timeout  time.Duration
	hosts    []*vhost
	clusters map[string]*upstream
}

type vhost struct {
	name    string
	domains []string
	routes  []*route
}

type route struct {
	name     string
	prefix   string
	cluster  string
	authz    bool              // false when ext_authz is disabled for the route
	ext      map[string]string // context extensions sent with the Check
	removeHd []string
}

type upstream struct {
	addrs []string
	next  atomic.Uint64
}

func (u *upstream) pick() string {
	return u.addrs[int(u.next.Add(1)-1)%len(u.addrs)]
}

func compile(cfg Config) (*table, error) {
	t := &table{clusters: map[string]*upstream{}, timeout: cfg.CheckTimeout}
	if t.timeout <= 0 {
		t.timeout = DefaultCheckTimeout
	}
	var errs []error
	for _, c := range cfg.Clusters {
		u := &upstream{}
		for _, le := range c.GetLoadAssignment().GetEndpoints() {
			for _, lb := range le.GetLbEndpoints() {
				sa := lb.GetEndpoint().GetAddress().GetSocketAddress()
				u.addrs = append(u.addrs, net.JoinHostPort(sa.GetAddress(), strconv.Itoa(int(sa.GetPortValue()))))
			}
		}
		if len(u.addrs) == 0 {
			errs = append(errs, fmt.Errorf("cluster %s: no endpoints", c.GetName()))
			continue
		}
		t.clusters[c.GetName()] = u
	}
	for _, vh := range cfg.Routes.GetVirtualHosts() {
		v := &vhost{name: vh.GetName(), domains: vh.GetDomains()}
		for _, r := range vh.GetRoutes() {
			rt, err := compileRoute(r, t.clusters)
			if err != nil {
				errs = append(errs, fmt.Errorf("virtual host %s: %w", vh.GetName(), err))
				continue
			}
			v.routes = append(v.routes, rt)
		}
		t.hosts = append(t.hosts, v)
	}
	return t, errors.Join(errs...)
}

func compileRoute(r *routev3.Route, clusters map[string]*upstream) (*route, error) {
	rt := &route{name: r.GetName(), prefix: r.GetMatch().GetPrefix(), cluster: r.GetRoute().GetCluster(), authz: true, removeHd: lower(r.GetRequestHeadersToRemove())}
	if rt.prefix == "" {
		return nil, fmt.Errorf("route %s: only prefix matching is supported", r.GetName())
	}
	if _, ok := clusters[rt.cluster]; !ok {
		return nil, fmt.Errorf("route %s: unknown cluster %q", r.GetName(), rt.cluster)
	}
	if a, ok := r.GetTypedPerFilterConfig()[ExtAuthzFilterName]; ok {
		var per extauthzv3.ExtAuthzPerRoute
		if err := a.UnmarshalTo(&per); err != nil {
			return nil, fmt.Errorf("route %s: ext_authz per-route config: %w", r.GetName(), err)
		}
		rt.authz = !per.GetDisabled()
		rt.ext = per.GetCheckSettings().GetContextExtensions()
	}
	return rt, nil
}

func lower(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ToLower(s)
	}
	return out
}

// match finds the virtual host for host (port stripped) with Envoy's precedence: exact
// domain, then the longest suffix wildcard ("*.example.com"), then the longest prefix
// wildcard ("example.*"), then "*"; and the first route whose prefix matches path.
func (t *table) match(host, path string) (*route, bool) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(host)
	vh := t.vhostFor(host)
	if vh == nil {
		return nil, false
	}
	for _, r := range vh.routes {
		if strings.HasPrefix(path, r.prefix) {
			return r, true
		}
	}
	return nil, false
}

func (t *table) vhostFor(host string) *vhost {
	type cand struct {
		v    *vhost
		rank int // lower is better
		size int // longer wildcard wins within a rank
	}
	var cs []cand
	for _, v := range t.hosts {
		for _, d := range v.domains {
			d = strings.ToLower(d)
			switch {
			case d == host:
				cs = append(cs, cand{v, 0, len(d)})
			case strings.HasPrefix(d, "*") && d != "*" && strings.HasSuffix(host, d[1:]) && len(host) > len(d)-1:
				cs = append(cs, cand{v, 1, len(d)})
			case strings.HasSuffix(d, "*") && d != "*" && strings.HasPrefix(host, d[:len(d)-1]) && len(host) > len(d)-1:
				cs = append(cs, cand{v, 2, len(d)})
			case d == "*":
				cs = append(cs, cand{v, 3, 0})
			}
		}
	}
	if len(cs) == 0 {
		return nil
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].rank != cs[j].rank {
			return cs[i].rank < cs[j].rank
		}
		return cs[i].size > cs[j].size
	})
	return cs[0].v
}
