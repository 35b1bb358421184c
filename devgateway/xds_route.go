package devgateway

import (
	"fmt"
	"strings"

	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	h2mv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/header_to_metadata/v3"
	jwtv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	rbacfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// routeSpec is a RouteConfiguration the gateway can serve. The ext_authz per-route
// settings are kept by filter name: which name counts is the listener's business.
type routeSpec struct {
	name       string
	ignorePort bool
	removeHd   []string
	perFilter  map[string]*perFilter
	hosts      []*vhostSpec // the inline ones
	clusters   []string     // every cluster a route of hosts sends to
	// vhds: the configuration's virtual hosts also come as VirtualHost resources
	// (VHDS) named name/<virtual host name>, merged with the inline ones.
	vhds bool
	// level is the wire form of the configuration's fields other than its virtual
	// hosts when it was parsed with the memo (parseRouteConfigMemo), "" otherwise: two
	// specs of one level build each virtual host alike, so vhosts may reuse a build.
	level string
}

type vhostSpec struct {
	name      string
	domains   []string
	removeHd  []string
	perFilter map[string]*perFilter
	routes    []*routeSpecEntry
	// wire is its wire form, its key in a vhostMemo ("" when not in one).
	wire string
	// built is its last build by vhosts, for a configuration's level; set and read
	// under the Proxy's lock.
	built *builtVhost
}

// builtVhost is a virtual host built for a listener's filters (vhostBuild).
type builtVhost struct {
	by vhostBuild
	v  *vhost
}

// vhostBuild is what a virtual host's build depends on besides its spec: the route
// configuration's level and the filter chain's ext_authz name and option filters.
type vhostBuild struct {
	level, authz string
	opts         optionFilters
}

type routeSpecEntry struct {
	route     route // without the per-filter settings
	lua       *luaStage
	perFilter map[string]*perFilter
}

// perFilter is one filter's per-route config; one field is set, by its type.
type perFilter struct {
	authz   *authzPer
	extract []extractRule // header_to_metadata Config
	jwt     *jwtPer
	rbac    *rbacPer
}

// jwtPer is a jwt_authn PerRouteConfig.
type jwtPer struct {
	disabled    bool
	requirement string
}

// rbacPer is an RBACPerRoute; nil rules disable the filter for the route.
type rbacPer struct{ rules *rbacRules }

// authzPer is one ExtAuthzPerRoute.
type authzPer struct {
	disabled bool
	ext      map[string]string
}

func parseRouteConfig(rc *routev3.RouteConfiguration, path string, pr *problems) *routeSpec {
	pr.only(rc, path, "name", "virtual_hosts", "validate_clusters", "request_headers_to_remove", "ignore_port_in_host_matching", "typed_per_filter_config", "vhds")
	s := &routeSpec{
		name: rc.GetName(), ignorePort: rc.GetIgnorePortInHostMatching(), removeHd: lower(rc.GetRequestHeadersToRemove()),
		perFilter: parsePerFilter(rc.GetTypedPerFilterConfig(), join(path, "typed_per_filter_config"), pr),
		vhds:      rc.GetVhds() != nil,
	}
	if s.vhds {
		vp := join(path, "vhds")
		pr.only(rc.GetVhds(), vp, "config_source")
		configSource(rc.GetVhds().GetConfigSource(), join(vp, "config_source"), pr)
	}
	domains := map[string]string{}
	for i, vh := range rc.GetVirtualHosts() {
		s.hosts = append(s.hosts, parseVhost(vh, join(path, fmt.Sprintf("virtual_hosts[%d]", i)), domains, pr))
	}
	s.clusters = routeClusters(s.hosts)
	return s
}

// parseVhost parses one virtual host; domains holds the domains of the route
// configuration's virtual hosts before it (by virtual host name), and gets its own.
func parseVhost(vh *routev3.VirtualHost, vp string, domains map[string]string, pr *problems) *vhostSpec {
	pr.only(vh, vp, "name", "domains", "routes", "request_headers_to_remove", "typed_per_filter_config")
	v := &vhostSpec{
		name: vh.GetName(), removeHd: lower(vh.GetRequestHeadersToRemove()),
		perFilter: parsePerFilter(vh.GetTypedPerFilterConfig(), join(vp, "typed_per_filter_config"), pr),
	}
	for j, d := range vh.GetDomains() {
		dp := join(vp, fmt.Sprintf("domains[%d]", j))
		d = strings.ToLower(d)
		if other, ok := domains[d]; ok {
			pr.addf(dp, "%q is also a domain of virtual host %s", d, other)
		}
		if d != "*" && strings.Contains(strings.Trim(d, "*"), "*") || strings.HasPrefix(d, "*") && strings.HasSuffix(d, "*") && d != "*" {
			pr.addf(dp, "%q: a wildcard is only allowed at the start or the end", d)
		}
		domains[d] = vh.GetName()
		v.domains = append(v.domains, d)
	}
	for j, r := range vh.GetRoutes() {
		if e := parseRoute(r, join(vp, fmt.Sprintf("routes[%d]", j)), pr); e != nil {
			v.routes = append(v.routes, e)
		}
	}
	return v
}

// routeClusters is every cluster the routes of hosts send to, in order, once each.
func routeClusters(hosts []*vhostSpec) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range hosts {
		for _, e := range v.routes {
			if c := e.route.cluster; !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

func parseRoute(r *routev3.Route, path string, pr *problems) *routeSpecEntry {
	pr.only(r, path, "name", "match", "route", "request_headers_to_remove", "typed_per_filter_config", "metadata", "decorator")
	e := &routeSpecEntry{
		route:     route{name: r.GetName(), removeHd: lower(r.GetRequestHeadersToRemove())},
		perFilter: parsePerFilter(r.GetTypedPerFilterConfig(), join(path, "typed_per_filter_config"), pr),
		lua:       routeLua(r.GetMetadata(), join(path, "metadata"), pr),
	}
	m := r.GetMatch()
	pr.only(m, join(path, "match"), "prefix", "path", "path_separated_prefix", "case_sensitive")
	switch ps := m.GetPathSpecifier().(type) {
	case *routev3.RouteMatch_Prefix:
		e.route.kind, e.route.path = matchPrefix, ps.Prefix
	case *routev3.RouteMatch_Path:
		e.route.kind, e.route.path = matchPath, ps.Path
	case *routev3.RouteMatch_PathSeparatedPrefix:
		e.route.kind, e.route.path = matchSeparatedPrefix, ps.PathSeparatedPrefix
	}
	if cs := m.GetCaseSensitive(); cs != nil && !cs.GetValue() {
		e.route.fold, e.route.path = true, strings.ToLower(e.route.path)
	}
	ra := r.GetRoute()
	if ra == nil {
		pr.addf(path, "only route actions (to a cluster) are supported")
		return nil
	}
	pr.only(ra, join(path, "route"), "cluster")
	e.route.cluster = ra.GetCluster()
	if e.route.cluster == "" {
		return nil // reported by only
	}
	return e
}

// parsePerFilter reads typed_per_filter_config: the per-route configs of ext_authz,
// header_to_metadata, jwt_authn and rbac under any filter name, nothing else (another
// filter's per-route config means a filter the gateway lacks).
func parsePerFilter(m map[string]*anypb.Any, path string, pr *problems) map[string]*perFilter {
	if len(m) == 0 {
		return nil
	}
	out := map[string]*perFilter{}
	for name, a := range m {
		fp := path + "[" + name + "]"
		switch a.GetTypeUrl() {
		case "type.googleapis.com/envoy.extensions.filters.http.header_to_metadata.v3.Config":
			var c h2mv3.Config
			if err := unpackTyped(a, &c); err != nil {
				pr.addf(fp, "%v", err)
				continue
			}
			out[name] = &perFilter{extract: parseExtractRules(&c, fp, pr)}
		case "type.googleapis.com/envoy.extensions.filters.http.jwt_authn.v3.PerRouteConfig":
			var c jwtv3.PerRouteConfig
			if err := unpackTyped(a, &c); err != nil {
				pr.addf(fp, "%v", err)
				continue
			}
			out[name] = &perFilter{jwt: &jwtPer{disabled: c.GetDisabled(), requirement: c.GetRequirementName()}}
		case "type.googleapis.com/envoy.extensions.filters.http.rbac.v3.RBACPerRoute":
			var c rbacfilterv3.RBACPerRoute
			if err := unpackTyped(a, &c); err != nil {
				pr.addf(fp, "%v", err)
				continue
			}
			out[name] = &perFilter{rbac: &rbacPer{rules: parseRBACPerRoute(&c, fp, pr)}}
		default:
			var per extauthzv3.ExtAuthzPerRoute
			if err := unpackTyped(a, &per); err != nil {
				pr.addf(fp, "%v", err)
				continue
			}
			if cs := per.GetCheckSettings(); cs != nil {
				pr.only(cs, join(fp, "check_settings"), "context_extensions", "disable_request_body_buffering")
			}
			out[name] = &perFilter{authz: &authzPer{disabled: per.GetDisabled(), ext: per.GetCheckSettings().GetContextExtensions()}}
		}
	}
	return out
}

// vhosts builds the virtual hosts for a filter chain whose ext_authz filter is named
// authzName ("" for none) and whose option filters are opts. Per-route settings go from
// least to most specific, as in Envoy: ext_authz context extensions merge and the most
// specific one says whether it is disabled; for the other filters the most specific
// config wins. A route's jwt requirement is returned by name, resolved by the caller.
func (s *routeSpec) vhosts(authzName string, opts optionFilters) []*vhost {
	var out []*vhost
	jwtName := ""
	if opts.jwt != nil {
		jwtName = opts.jwt.name
	}
	by := vhostBuild{level: s.level, authz: authzName, opts: opts}
	for _, vs := range s.hosts {
		if b := vs.built; s.level != "" && b != nil && b.by == by {
			out = append(out, b.v)
			continue
		}
		v := &vhost{name: vs.name, domains: vs.domains}
		if s.level != "" {
			vs.built = &builtVhost{by: by, v: v}
		}
		for _, e := range vs.routes {
			rt := e.route
			rt.authz = true
			rt.removeHd = append(append(append([]string(nil), e.route.removeHd...), vs.removeHd...), s.removeHd...)
			if opts.lua != "" {
				rt.lua = e.lua
			}
			for _, layer := range []map[string]*perFilter{s.perFilter, vs.perFilter, e.perFilter} {
				if per := layer[opts.extract]; per != nil && opts.extract != "" && per.extract != nil {
					rt.extract = per.extract
				}
				if per := layer[jwtName]; per != nil && jwtName != "" && per.jwt != nil {
					rt.jwtReq = per.jwt.requirement
					if per.jwt.disabled {
						rt.jwtReq = ""
					}
				}
				if per := layer[opts.rbac]; per != nil && opts.rbac != "" && per.rbac != nil {
					rt.rbac = per.rbac.rules
				}
				per, ok := layer[authzName]
				if !ok || authzName == "" || per.authz == nil {
					continue
				}
				rt.authz = !per.authz.disabled
				if len(per.authz.ext) > 0 {
					merged := map[string]string{}
					for k, val := range rt.ext {
						merged[k] = val
					}
					for k, val := range per.authz.ext {
						merged[k] = val
					}
					rt.ext = merged
				}
			}
			v.routes = append(v.routes, &rt)
		}
		out = append(out, v)
	}
	return out
}
