package translate

import (
	"fmt"
	"net"
	"sort"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// Names shared by the Envoy resources we generate.
const (
	// RouteConfigName is the one route configuration every listener uses.
	RouteConfigName = "gatehouse-routes"
	// ExtAuthzFilterName is the ext_authz HTTP filter's name, and the key of its
	// per-route config.
	ExtAuthzFilterName = "envoy.filters.http.ext_authz"
	// ExtAuthzCluster is the cluster that reaches the extauth server.
	ExtAuthzCluster = "gatehouse-extauth"
	// ConfigIDKey is the context extension that names a route's AuthConfig.
	ConfigIDKey = "config_id"
)

// Envoy is the Envoy configuration for a set of resources.
type Envoy struct {
	Routes   *routev3.RouteConfiguration
	Clusters []*clusterv3.Cluster
	// Rejected holds the problems of each VirtualService or Upstream left out, by
	// "<kind> <namespace>.<name>".
	Rejected map[string]error
}

// ToEnvoy translates VirtualServices and Upstreams. A resource with problems is left
// out (and reported) so the rest keeps serving. Routes without an AuthConfig get
// ext_authz disabled; routes with one send its id as config_id.
func ToEnvoy(set *apiv1.Set) *Envoy {
	out := &Envoy{Routes: &routev3.RouteConfiguration{Name: RouteConfigName}, Rejected: map[string]error{}}
	clusters := map[string]bool{}
	for _, u := range set.Upstreams {
		c, err := cluster(u)
		if err == nil && clusters[c.GetName()] {
			// Envoy refuses a cluster list with a name twice; the first one serves.
			err = fmt.Errorf("upstream %s: defined twice; the first definition is served", u.Metadata.ID())
		}
		if err != nil {
			out.Rejected["Upstream "+u.Metadata.ID()] = err
			continue
		}
		clusters[c.GetName()] = true
		out.Clusters = append(out.Clusters, c)
	}
	authConfigs := map[string]bool{}
	for _, ac := range set.AuthConfigs {
		authConfigs[ac.Metadata.ID()] = true
	}
	// Envoy refuses the whole route configuration when two virtual hosts share a name
	// or a domain, so a VirtualService that clashes with an earlier one is left out.
	hosts, domains := map[string]bool{}, map[string]string{}
	for _, vs := range set.VirtualServices {
		vh, err := virtualHost(vs, clusters, authConfigs)
		if err == nil {
			err = clash(vs, vh, hosts, domains)
		}
		if err != nil {
			out.Rejected["VirtualService "+vs.Metadata.ID()] = err
			continue
		}
		hosts[vh.GetName()] = true
		for _, d := range vh.GetDomains() {
			domains[strings.ToLower(d)] = vh.GetName()
		}
		out.Routes.VirtualHosts = append(out.Routes.VirtualHosts, vh)
	}
	sort.Slice(out.Clusters, func(i, j int) bool { return out.Clusters[i].GetName() < out.Clusters[j].GetName() })
	return out
}

// clash reports vh's name or domains already taken by an earlier virtual host, or a
// domain listed twice in vh.
func clash(vs *apiv1.VirtualService, vh *routev3.VirtualHost, hosts map[string]bool, domains map[string]string) error {
	var errs fieldErrors
	if hosts[vh.GetName()] {
		errs.add("metadata.name", "defined twice; the first definition is served")
	}
	own := map[string]bool{}
	for i, d := range vh.GetDomains() {
		d = strings.ToLower(d)
		switch path := fmt.Sprintf("spec.virtualHost.domains[%d]", i); {
		case domains[d] != "":
			errs.addf(path, "%q is already served by virtualservice %s", d, domains[d])
		case own[d]:
			errs.addf(path, "%q is listed twice", d)
		}
		own[d] = true
	}
	return errs.err("virtualservice " + vs.Metadata.ID())
}

// ClusterName is the Envoy cluster of the Upstream with id "<namespace>.<name>".
func ClusterName(upstreamID string) string { return upstreamID }

func cluster(u *apiv1.Upstream) (*clusterv3.Cluster, error) {
	var errs fieldErrors
	st := u.Spec.Static
	if st == nil {
		errs.add("spec.static", "is required (the only upstream kind served without Kubernetes discovery)")
		return nil, errs.err("upstream " + u.Metadata.ID())
	}
	if len(st.Hosts) == 0 {
		errs.add("spec.static.hosts", "at least one host is required")
	}
	if st.UseTLS {
		// Serving it without TLS would send the traffic in the clear.
		errs.add("spec.static.useTls", "not supported yet; the upstream is not served rather than served without TLS")
	}
	discovery := clusterv3.Cluster_STATIC
	var lbs []*endpointv3.LbEndpoint
	for i, h := range st.Hosts {
		path := fmt.Sprintf("spec.static.hosts[%d]", i)
		if h.Addr == "" {
			errs.add(path+".addr", "is required")
		}
		if h.Port <= 0 || h.Port > 65535 {
			errs.addf(path+".port", "%d is not a port", h.Port)
		}
		if net.ParseIP(h.Addr) == nil {
			discovery = clusterv3.Cluster_STRICT_DNS
		}
		lbs = append(lbs, &endpointv3.LbEndpoint{HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
			Address: socketAddress(h.Addr, h.Port),
		}}})
	}
	if err := errs.err("upstream " + u.Metadata.ID()); err != nil {
		return nil, err
	}
	name := ClusterName(u.Metadata.ID())
	return &clusterv3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: discovery},
		ConnectTimeout:       durationpb.New(5 * time.Second),
		LoadAssignment: &endpointv3.ClusterLoadAssignment{
			ClusterName: name,
			Endpoints:   []*endpointv3.LocalityLbEndpoints{{LbEndpoints: lbs}},
		},
	}, nil
}

func socketAddress(addr string, port int) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address:       addr,
		PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: uint32(port)},
	}}}
}

func virtualHost(vs *apiv1.VirtualService, clusters, authConfigs map[string]bool) (*routev3.VirtualHost, error) {
	var errs fieldErrors
	vh := &routev3.VirtualHost{Name: vs.Metadata.ID(), Domains: vs.Spec.VirtualHost.Domains}
	if len(vh.Domains) == 0 {
		vh.Domains = []string{"*"}
	}
	if vs.Spec.SSLConfig != nil {
		errs.add("spec.sslConfig", "not supported yet")
	}
	for i, r := range vs.Spec.VirtualHost.Routes {
		path := fmt.Sprintf("spec.virtualHost.routes[%d]", i)
		for _, rt := range routes(vs.Metadata.Namespace, r, path, clusters, authConfigs, &errs) {
			vh.Routes = append(vh.Routes, rt)
		}
	}
	if err := errs.err("virtualservice " + vs.Metadata.ID()); err != nil {
		return nil, err
	}
	return vh, nil
}

// routes returns one Envoy route per matcher (a route without matchers matches "/").
func routes(ns string, r apiv1.Route, path string, clusters, authConfigs map[string]bool, errs *fieldErrors) []*routev3.Route {
	action := routeAction(ns, r.RouteAction, path+".routeAction", clusters, errs)
	perFilter, remove := routeOptions(ns, r.Options, path+".options", authConfigs, errs)
	if action == nil || perFilter == nil {
		return nil
	}
	matchers := r.Matchers
	if len(matchers) == 0 {
		matchers = []apiv1.Matcher{{Prefix: "/"}}
	}
	var out []*routev3.Route
	for j, m := range matchers {
		if m.Prefix == "" || m.Prefix[0] != '/' {
			errs.addf(fmt.Sprintf("%s.matchers[%d].prefix", path, j), "%q must start with \"/\"", m.Prefix)
			continue
		}
		out = append(out, &routev3.Route{
			Name:                   fmt.Sprintf("%s.matchers[%d]", path, j),
			Match:                  &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: m.Prefix}},
			Action:                 action,
			TypedPerFilterConfig:   perFilter,
			RequestHeadersToRemove: remove,
		})
	}
	return out
}

func routeAction(ns string, ra *apiv1.RouteAction, path string, clusters map[string]bool, errs *fieldErrors) *routev3.Route_Route {
	if ra == nil || ra.Single == nil {
		errs.add(path+".single", "is required")
		return nil
	}
	var id string
	switch d := ra.Single; {
	case d.Upstream != nil:
		id = d.Upstream.ID(ns)
	case d.Kube != nil:
		kns := d.Kube.Ref.Namespace
		if kns == "" {
			kns = ns
		}
		// Discovered upstreams are named <namespace>-<service>-<port> in the
		// service's namespace.
		id = fmt.Sprintf("%s.%s-%s-%d", kns, kns, d.Kube.Ref.Name, d.Kube.Ref.Port)
	default:
		errs.add(path+".single", "names neither upstream nor kube")
		return nil
	}
	if !clusters[ClusterName(id)] {
		errs.addf(path+".single", "upstream %s does not exist or was rejected", id)
		return nil
	}
	return &routev3.Route_Route{Route: &routev3.RouteAction{
		ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: ClusterName(id)},
	}}
}

// routeOptions returns the per-filter configs and the headers to remove. Options we do
// not translate yet reject the route: ignoring an RBAC or JWT block would open it.
func routeOptions(ns string, o *apiv1.RouteOptions, path string, authConfigs map[string]bool, errs *fieldErrors) (map[string]*anypb.Any, []string) {
	authz := &extauthzv3.ExtAuthzPerRoute{Override: &extauthzv3.ExtAuthzPerRoute_Disabled{Disabled: true}}
	var remove []string
	if o != nil {
		if o.Extauth != nil && o.Extauth.ConfigRef != nil {
			id := o.Extauth.ConfigRef.ID(ns)
			if !authConfigs[id] {
				errs.addf(path+".extauth.configRef", "authconfig %s does not exist", id)
				return nil, nil
			}
			authz.Override = &extauthzv3.ExtAuthzPerRoute_CheckSettings{CheckSettings: &extauthzv3.CheckSettings{
				ContextExtensions: map[string]string{ConfigIDKey: id},
			}}
		}
		if o.HeaderManipulation != nil {
			remove = o.HeaderManipulation.RequestHeadersToRemove
		}
		unsupported := []struct {
			name string
			set  bool
		}{{"stagedTransformations", o.StagedTransformations != nil}, {"jwt", o.JWT != nil}, {"rbac", o.RBAC != nil}}
		for _, u := range unsupported {
			if u.set {
				errs.add(path+"."+u.name, "not supported yet; the route is not served rather than served without it")
			}
		}
	}
	a, err := anypb.New(authz)
	if err != nil {
		errs.add(path+".extauth", err.Error())
		return nil, nil
	}
	return map[string]*anypb.Any{ExtAuthzFilterName: a}, remove
}
