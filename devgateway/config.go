// Package devgateway is a small HTTP front that plays Envoy's part for the subset of the
// Envoy config Gatehouse generates, on a laptop and in end-to-end tests: domains, prefix
// routes, clusters (EDS, static, DNS), per-route ext_authz (config_id or disabled),
// request header removal and TLS listeners with SDS certificates. It reads the same
// protos Envoy would get, either over xDS (Proxy) or handed over in-process (Gateway),
// and refuses what it does not implement rather than ignoring it.
// It is not a production proxy: production is Envoy.
package devgateway

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
)

// ExtAuthzFilterName is the key of the ext_authz per-route config.
const ExtAuthzFilterName = "envoy.filters.http.ext_authz"

// Config is what the in-process Gateway serves: one route configuration and its
// clusters, every route checked by the Gateway's one ext_authz client.
type Config struct {
	Routes   *routev3.RouteConfiguration
	Clusters []*clusterv3.Cluster
	// CheckTimeout bounds each ext_authz call (DefaultCheckTimeout when zero); past it
	// the request is denied with 403, as Envoy does with failure_mode_allow off.
	CheckTimeout time.Duration
}

// compile builds the table of an in-process Config. The Host header's port is ignored.
func compile(cfg Config, authz authv3.AuthorizationClient) (*table, error) {
	timeout := cfg.CheckTimeout
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	t := &table{
		clusters: map[string]*upstream{},
		port:     portStripAny,
		authz:    &authzFilter{client: authz, timeout: timeout, statusOnError: http.StatusForbidden},
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
	rt := &route{name: r.GetName(), path: r.GetMatch().GetPrefix(), cluster: r.GetRoute().GetCluster(), authz: true, removeHd: lower(r.GetRequestHeadersToRemove())}
	if rt.path == "" {
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
