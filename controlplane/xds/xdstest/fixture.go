// Package xdstest builds consistent, valid xDS states of any size for tests and
// benchmarks of the xDS server and its clients, in the shape the control plane emits:
// one HTTP listener on RDS over ADS with ext_authz then the router, one route
// configuration with a virtual host per service (one secured route, one open), an EDS
// cluster and endpoints per service, and the extauth cluster on HTTP/2.
package xdstest

import (
	"fmt"
	"time"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthz "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	router "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	upstreamhttp "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// Names used by the fixtures.
const (
	ListenerName   = "http"
	RouteName      = "http"
	ExtauthCluster = "gatehouse-system.extauth"
	Namespace      = "bench"
)

// Service is the name of the i-th service ("svc-00042"); its cluster, endpoints and
// AuthConfig are "<Namespace>.<Service>".
func Service(i int) string { return fmt.Sprintf("svc-%05d", i) }

// ID is the i-th service's "<namespace>.<name>".
func ID(i int) string { return Namespace + "." + Service(i) }

// Proxy is the state of a gateway proxy with n services.
func Proxy(n int) xds.Resources {
	r := xds.Resources{
		xds.ListenerType: {ListenerName: Listener()},
		xds.RouteType:    {},
		xds.ClusterType:  {ExtauthCluster: ExtauthClusterResource()},
		xds.EndpointType: {ExtauthCluster: Endpoints(ExtauthCluster, "127.0.0.1", 8083)},
		xds.SecretType:   {},
	}
	rc := &route.RouteConfiguration{Name: RouteName}
	for i := range n {
		rc.VirtualHosts = append(rc.VirtualHosts, VirtualHost(i, 0))
		r[xds.ClusterType][ID(i)] = Cluster(ID(i))
		r[xds.EndpointType][ID(i)] = Endpoints(ID(i), "127.0.0.1", 9000+i%1000)
	}
	r[xds.RouteType][RouteName] = rc
	return r
}

// ProxyVHDS is Proxy(n) with the virtual hosts over VHDS: the route configuration has
// vhds and none of them, each is a VirtualHostType resource of its own.
func ProxyVHDS(n int) xds.Resources {
	r := Proxy(n)
	r[xds.RouteType][RouteName] = &route.RouteConfiguration{Name: RouteName, Vhds: &route.Vhds{ConfigSource: ADS()}}
	r[xds.VirtualHostType] = map[string]types.Resource{}
	for i := range n {
		r[xds.VirtualHostType][xds.VirtualHostName(RouteName, ID(i))] = VHDSVirtualHost(i, 0)
	}
	return r
}

// VHDSVirtualHost is VirtualHost(i, edit) as VHDS serves it: named after its resource,
// "<route configuration>/<id>".
func VHDSVirtualHost(i, edit int) *route.VirtualHost {
	vh := VirtualHost(i, edit)
	vh.Name = xds.VirtualHostName(RouteName, vh.GetName())
	return vh
}

// Extauth is the state of the extauth role with n AuthConfigs.
func Extauth(n int) xds.Resources {
	r := xds.Resources{xds.ExtAuthConfigType: {}}
	for i := range n {
		r[xds.ExtAuthConfigType][ID(i)] = ExtAuthConfig(ID(i), 0)
	}
	return r
}

// ExtAuthConfig is an AuthConfig with one step; edit changes its content.
func ExtAuthConfig(id string, edit int) *extauthv1.ExtAuthConfig {
	return &extauthv1.ExtAuthConfig{
		ConfigId:       id,
		RequestTimeout: durationpb.New(200*time.Millisecond + time.Duration(edit)*time.Millisecond),
		Steps: []*extauthv1.Step{{Kind: &extauthv1.Step_PluginAuth{PluginAuth: &extauthv1.PluginAuth{
			Name: "required_header", PluginFileName: "required_header.so", ExportedSymbolName: "Plugin",
		}}}},
	}
}

// Listener is the HTTP listener: RDS over ADS, ext_authz (fail closed) then router.
func Listener() *listener.Listener {
	authz := &extauthz.ExtAuthz{
		Services: &extauthz.ExtAuthz_GrpcService{GrpcService: &core.GrpcService{
			TargetSpecifier: &core.GrpcService_EnvoyGrpc_{EnvoyGrpc: &core.GrpcService_EnvoyGrpc{ClusterName: ExtauthCluster}},
			Timeout:         durationpb.New(200 * time.Millisecond),
		}},
		TransportApiVersion: core.ApiVersion_V3,
	}
	m := &hcm.HttpConnectionManager{
		StatPrefix: "http",
		RouteSpecifier: &hcm.HttpConnectionManager_Rds{Rds: &hcm.Rds{
			ConfigSource:    ADS(),
			RouteConfigName: RouteName,
		}},
		HttpFilters: []*hcm.HttpFilter{
			{Name: "envoy.filters.http.ext_authz", ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: Any(authz)}},
			{Name: "envoy.filters.http.router", ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: Any(&router.Router{})}},
		},
	}
	return &listener.Listener{
		Name:    ListenerName,
		Address: SocketAddress("0.0.0.0", 8080),
		FilterChains: []*listener.FilterChain{{Filters: []*listener.Filter{{
			Name:       "envoy.filters.network.http_connection_manager",
			ConfigType: &listener.Filter_TypedConfig{TypedConfig: Any(m)},
		}}}},
	}
}

// VirtualHost is the i-th service's virtual host: a secured route and an open one;
// edit changes its content.
func VirtualHost(i, edit int) *route.VirtualHost {
	secured := Any(&extauthz.ExtAuthzPerRoute{Override: &extauthz.ExtAuthzPerRoute_CheckSettings{
		CheckSettings: &extauthz.CheckSettings{ContextExtensions: map[string]string{"config_id": ID(i)}},
	}})
	open := Any(&extauthz.ExtAuthzPerRoute{Override: &extauthz.ExtAuthzPerRoute_Disabled{Disabled: true}})
	action := &route.Route_Route{Route: &route.RouteAction{ClusterSpecifier: &route.RouteAction_Cluster{Cluster: ID(i)}}}
	return &route.VirtualHost{
		Name:    ID(i),
		Domains: []string{Service(i) + ".example.com"},
		Routes: []*route.Route{
			{
				Match:                &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: fmt.Sprintf("/private/%d", edit)}},
				Action:               action,
				TypedPerFilterConfig: map[string]*anypb.Any{"envoy.filters.http.ext_authz": secured},
			},
			{
				Match:                &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/"}},
				Action:               action,
				TypedPerFilterConfig: map[string]*anypb.Any{"envoy.filters.http.ext_authz": open},
			},
		},
	}
}

// Cluster is an EDS cluster over ADS.
func Cluster(name string) *cluster.Cluster {
	return &cluster.Cluster{
		Name:                 name,
		ConnectTimeout:       durationpb.New(time.Second),
		ClusterDiscoveryType: &cluster.Cluster_Type{Type: cluster.Cluster_EDS},
		EdsClusterConfig:     &cluster.Cluster_EdsClusterConfig{EdsConfig: ADS()},
	}
}

// ExtauthClusterResource is the extauth EDS cluster, on HTTP/2.
func ExtauthClusterResource() *cluster.Cluster {
	c := Cluster(ExtauthCluster)
	c.TypedExtensionProtocolOptions = map[string]*anypb.Any{
		"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": Any(&upstreamhttp.HttpProtocolOptions{
			UpstreamProtocolOptions: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig{
				ProtocolConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{Http2ProtocolOptions: &core.Http2ProtocolOptions{}},
			}},
		}),
	}
	return c
}

// Endpoints is a ClusterLoadAssignment of one host.
func Endpoints(cluster, ip string, port int) *endpoint.ClusterLoadAssignment {
	return &endpoint.ClusterLoadAssignment{
		ClusterName: cluster,
		Endpoints: []*endpoint.LocalityLbEndpoints{{LbEndpoints: []*endpoint.LbEndpoint{{
			HostIdentifier: &endpoint.LbEndpoint_Endpoint{Endpoint: &endpoint.Endpoint{Address: SocketAddress(ip, port)}},
		}}}},
	}
}

// ADS is a config source of this control plane's ADS stream.
func ADS() *core.ConfigSource {
	return &core.ConfigSource{
		ConfigSourceSpecifier: &core.ConfigSource_Ads{Ads: &core.AggregatedConfigSource{}},
		ResourceApiVersion:    core.ApiVersion_V3,
	}
}

// SocketAddress is a TCP address.
func SocketAddress(ip string, port int) *core.Address {
	return &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{
		Address: ip, PortSpecifier: &core.SocketAddress_PortValue{PortValue: uint32(port)},
	}}}
}

// Any packs m, panicking on failure (which only a nil message could cause).
func Any(m proto.Message) *anypb.Any {
	a, err := anypb.New(m)
	if err != nil {
		panic(err)
	}
	return a
}

// Clone copies r's maps (not the resources), so a test can edit a copy and publish it.
func Clone(r xds.Resources) xds.Resources {
	out := xds.Resources{}
	for typ, byName := range r {
		out[typ] = make(map[string]types.Resource, len(byName))
		for name, res := range byName {
			out[typ][name] = res
		}
	}
	return out
}
