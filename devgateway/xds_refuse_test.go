package devgateway_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	faultv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/fault/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcherv3 "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"gatehouse.dev/gatehouse/devgateway"
)

// TestProxyRefuses: a resource using what the gateway does not implement is NACKed
// with its field path and never served; the previous config keeps serving.
func TestProxyRefuses(t *testing.T) {
	authzAddr := startAuthz(t, &authzServer{})
	echo := tagged(t, "echo")
	good := []types.Resource{http2Cluster(t, "ns.extauth"), edsCluster("ns.echo"), cla(t, "ns.extauth", authzAddr),
		cla(t, "ns.echo", echo), httpListener(t, "ns.extauth", time.Second), appRoutes(t)}

	withHCM := func(edit func(h *hcmv3.HttpConnectionManager)) types.Resource {
		h := hcm(t, "http", extAuthzFilter(t, "ns.extauth", time.Second), routerFilter(t))
		edit(h)
		return listenerWith(t, "http", devgateway.HTTPPort, h)
	}
	withExtAuthz := func(edit func(e *extauthzv3.ExtAuthz)) types.Resource {
		return withHCM(func(h *hcmv3.HttpConnectionManager) {
			var e extauthzv3.ExtAuthz
			if err := h.HttpFilters[0].GetTypedConfig().UnmarshalTo(&e); err != nil {
				t.Fatal(err)
			}
			edit(&e)
			h.HttpFilters[0].ConfigType = &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &e)}
		})
	}
	withRoute := func(edit func(r *routev3.Route)) types.Resource {
		rc := appRoutes(t)
		r := rc.VirtualHosts[0].Routes[1]
		edit(r)
		return rc
	}
	tests := []struct {
		name    string
		res     types.Resource
		wantErr string
	}{
		{
			name: "an unknown HTTP filter",
			res: withHCM(func(h *hcmv3.HttpConnectionManager) {
				fault := &hcmv3.HttpFilter{Name: "envoy.filters.http.fault", ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &faultv3.HTTPFault{})}}
				h.HttpFilters = append([]*hcmv3.HttpFilter{fault}, h.HttpFilters...)
			}),
			wantErr: "listener http: filter_chains[0].filters[0].typed_config.http_filters[0]: filter envoy.filters.http.fault (type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault) is not supported",
		},
		{
			name: "a filter after the router",
			res: withHCM(func(h *hcmv3.HttpConnectionManager) {
				h.HttpFilters = []*hcmv3.HttpFilter{h.HttpFilters[1], h.HttpFilters[0]}
			}),
			wantErr: "http_filters[0]: the router must be the last filter",
		},
		{
			name:    "path normalization",
			res:     withHCM(func(h *hcmv3.HttpConnectionManager) { h.NormalizePath = wrapperspb.Bool(true) }),
			wantErr: "typed_config.normalize_path: path normalization is not supported",
		},
		{
			name: "routes from somewhere other than ADS",
			res: withHCM(func(h *hcmv3.HttpConnectionManager) {
				h.GetRds().ConfigSource = &corev3.ConfigSource{ConfigSourceSpecifier: &corev3.ConfigSource_Path{Path: "/x"}}
			}),
			wantErr: "rds.config_source.path: not supported",
		},
		{
			name:    "ext_authz sending the body",
			res:     withExtAuthz(func(e *extauthzv3.ExtAuthz) { e.WithRequestBody = &extauthzv3.BufferSettings{MaxRequestBytes: 10} }),
			wantErr: "http_filters[0].typed_config.with_request_body: not supported",
		},
		{
			name: "ext_authz over HTTP",
			res: withExtAuthz(func(e *extauthzv3.ExtAuthz) {
				e.Services = &extauthzv3.ExtAuthz_HttpService{HttpService: &extauthzv3.HttpService{ServerUri: &corev3.HttpUri{Uri: "http://x", HttpUpstreamType: &corev3.HttpUri_Cluster{Cluster: "ns.extauth"}, Timeout: durationpb.New(time.Second)}}}
			}),
			wantErr: "grpc_service: is required (http_service is not supported)",
		},
		{
			name: "a listener on a port the gateway does not map",
			res: func() types.Resource {
				l := httpListener(t, "ns.extauth", time.Second)
				l.Name = "other"
				l.Address.GetSocketAddress().PortSpecifier = &corev3.SocketAddress_PortValue{PortValue: 9090}
				return l
			}(),
			wantErr: "listener other: address.socket_address.port_value: 9090 is not a port this gateway serves ([8080 8443])",
		},
		{
			name: "a regex route",
			res: withRoute(func(r *routev3.Route) {
				r.Match.PathSpecifier = &routev3.RouteMatch_SafeRegex{SafeRegex: &matcherv3.RegexMatcher{Regex: "/a.*"}}
			}),
			wantErr: "route config http: virtual_hosts[0].routes[1].match.safe_regex: not supported",
		},
		{
			name: "a header matcher",
			res: withRoute(func(r *routev3.Route) {
				r.Match.Headers = []*routev3.HeaderMatcher{{Name: "x-admin", HeaderMatchSpecifier: &routev3.HeaderMatcher_PresentMatch{PresentMatch: true}}}
			}),
			wantErr: "routes[1].match.headers: not supported",
		},
		{
			name: "weighted clusters",
			res: withRoute(func(r *routev3.Route) {
				r.GetRoute().ClusterSpecifier = &routev3.RouteAction_WeightedClusters{WeightedClusters: &routev3.WeightedCluster{Clusters: []*routev3.WeightedCluster_ClusterWeight{{Name: "ns.echo", Weight: wrapperspb.UInt32(1)}}}}
			}),
			wantErr: "routes[1].route.weighted_clusters: not supported",
		},
		{
			name: "a redirect",
			res: withRoute(func(r *routev3.Route) {
				r.Action = &routev3.Route_Redirect{Redirect: &routev3.RedirectAction{HostRedirect: "x"}}
			}),
			wantErr: "routes[1]: only route actions (to a cluster) are supported",
		},
		{
			name: "another filter's per-route config",
			res: withRoute(func(r *routev3.Route) {
				r.TypedPerFilterConfig["envoy.filters.http.router"] = mustAny(t, &routerv3.Router{})
			}),
			wantErr: "typed_per_filter_config[envoy.filters.http.router]: is a type.googleapis.com/envoy.extensions.filters.http.router.v3.Router, not a type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute",
		},
		{
			name: "a domain served twice",
			res: func() types.Resource {
				rc := appRoutes(t)
				rc.VirtualHosts = append(rc.VirtualHosts, vhost("again", []string{"*"}, openRoute(t, "/", "ns.echo")))
				return rc
			}(),
			wantErr: `virtual_hosts[1].domains[0]: "*" is also a domain of virtual host app`,
		},
		{
			name: "an original destination cluster",
			res: func() types.Resource {
				c := edsCluster("ns.echo")
				c.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_ORIGINAL_DST}
				c.EdsClusterConfig = nil
				c.LbPolicy = clusterv3.Cluster_CLUSTER_PROVIDED
				return c
			}(),
			wantErr: "cluster ns.echo: type: ORIGINAL_DST is not supported",
		},
		{
			name:    "an endpoint Envoy's validation refuses",
			res:     cla(t, "ns.echo", "127.0.0.1:70000"),
			wantErr: "cluster load assignment ns.echo: invalid ClusterLoadAssignment.Endpoints[0]",
		},
		{
			name: "client certificates",
			res: func() types.Resource {
				l := httpListener(t, "ns.extauth", time.Second)
				l.FilterChains[0].TransportSocket = downstreamTLS(t, "cert", func(d *tlsContext) { d.RequireClientCertificate = wrapperspb.Bool(true) })
				return l
			}(),
			wantErr: "transport_socket.typed_config.require_client_certificate: client certificates are not supported",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, url := newProxy(t)
			feed(t, p, good...)
			typ := typeOf(tt.res)
			others := []types.Resource{tt.res}
			// Send the refused resource with the rest of its type, as the xDS client does.
			for _, r := range good {
				if typeOf(r) == typ && nameOf(r) != nameOf(tt.res) {
					others = append(others, r)
				}
			}
			err := p.Handle(typ, set(t, others...))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Handle error:\n%v\nwant it to contain:\n%s", err, tt.wantErr)
			}
			for _, path := range []string{"/open", "/app"} {
				if resp, body := do(t, "GET", url+path, "app.example", nil); resp.StatusCode != http.StatusOK {
					t.Errorf("GET %s after the refusal: %d %q, want the previous config serving (200)", path, resp.StatusCode, body)
				}
			}
		})
	}
}

func nameOf(r types.Resource) string { return cachev3.GetResourceName(r) }
