package translate

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	"google.golang.org/protobuf/types/known/anypb"
)

// authzDisabled is the per-route config of every open route; one message serves them
// all (messages are never modified once built), and so does one map of it for the open
// routes without other options.
var (
	authzDisabled   = mustAny(&extauthzv3.ExtAuthzPerRoute{Override: &extauthzv3.ExtAuthzPerRoute_Disabled{Disabled: true}})
	openPerFilter   = map[string]*anypb.Any{ExtAuthzFilterName: authzDisabled}
	matchRootPrefix = &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: "/"}}
)

// EnvoyVirtualHost builds the Envoy virtual host of vh. Secured routes send their
// AuthConfig's id as the config_id context extension; open routes disable ext_authz.
//
// Parts that are equal are built once and shared, as messages are never modified once
// built: consecutive routes to one cluster share their action, every "/"
// match is one message, and open routes without options one per-filter map.
func EnvoyVirtualHost(vh *VirtualHost) *routev3.VirtualHost {
	out := &routev3.VirtualHost{Name: vh.Name, Domains: vh.Domains, Routes: make([]*routev3.Route, 0, len(vh.Routes))}
	opts := map[*RouteOptions]*envoyRouteOptions{}
	var action *routev3.Route_Route // the last route's
	for _, r := range vh.Routes {
		perFilter := openPerFilter
		if r.AuthConfig != "" || r.Options != nil {
			authz := authzDisabled
			if r.AuthConfig != "" {
				authz = mustAny(&extauthzv3.ExtAuthzPerRoute{Override: &extauthzv3.ExtAuthzPerRoute_CheckSettings{
					CheckSettings: &extauthzv3.CheckSettings{ContextExtensions: map[string]string{ConfigIDKey: r.AuthConfig}},
				}})
			}
			perFilter = map[string]*anypb.Any{ExtAuthzFilterName: authz}
		}
		var md *corev3.Metadata
		if r.Options != nil {
			eo := opts[r.Options]
			if eo == nil {
				eo = buildRouteOptions(r.Options)
				opts[r.Options] = eo
			}
			for k, v := range eo.perFilter {
				perFilter[k] = v
			}
			md = eo.metadata
		}
		match := matchRootPrefix
		if r.Prefix != "/" {
			match = &routev3.RouteMatch{PathSpecifier: &routev3.RouteMatch_Prefix{Prefix: r.Prefix}}
		}
		if action == nil || action.Route.GetCluster() != r.Cluster {
			action = &routev3.Route_Route{Route: &routev3.RouteAction{
				ClusterSpecifier: &routev3.RouteAction_Cluster{Cluster: r.Cluster},
			}}
		}
		out.Routes = append(out.Routes, &routev3.Route{
			Name:                   r.Name,
			Metadata:               md,
			Match:                  match,
			Action:                 action,
			TypedPerFilterConfig:   perFilter,
			RequestHeadersToRemove: r.RequestHeadersToRemove,
		})
	}
	return out
}

// EnvoyRouteConfiguration is the route configuration name holding vhosts, in order.
func EnvoyRouteConfiguration(name string, vhosts []*routev3.VirtualHost) *routev3.RouteConfiguration {
	return &routev3.RouteConfiguration{Name: name, VirtualHosts: vhosts}
}

// vhdsSource has a route configuration's virtual hosts come over VHDS on the proxy's
// ADS stream.
var vhdsSource = &routev3.Vhds{ConfigSource: &corev3.ConfigSource{
	ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
	ResourceApiVersion:    corev3.ApiVersion_V3,
}}

// EnvoyVHDSRouteConfiguration is the route configuration name whose virtual hosts
// are served over VHDS, each as the resource xds.VirtualHostName(name, its name).
func EnvoyVHDSRouteConfiguration(name string) *routev3.RouteConfiguration {
	return &routev3.RouteConfiguration{Name: name, Vhds: vhdsSource}
}
