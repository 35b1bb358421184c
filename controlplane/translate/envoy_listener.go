package translate

import (
	"sync"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	"github.com/envoyproxy/go-control-plane/pkg/wellknown"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// The HTTP listener every gateway proxy gets.
const (
	HTTPListenerName = "http"
	HTTPRouteConfig  = "http"
	HTTPAddress      = "0.0.0.0"
	HTTPPort         = 8080
)

// EnvoyListener builds the listener of l: an HTTP connection manager taking route
// configuration l.RouteConfig over ADS, with the filters its routes' options need
// (header_to_metadata, Lua, jwt_authn, rbac; docs/route-options.md says why in that
// order), ext_authz (when ext is set), then router.
// ext_authz fails closed: a check that errors or times out denies; it sends headers in
// their raw form (encode_raw_headers).
func EnvoyListener(l *Listener, ext *Extauthz) *listenerv3.Listener {
	if l.TLS {
		return EnvoyHTTPSListener(l, ext)
	}
	return &listenerv3.Listener{
		Name:    l.Name,
		Address: socketAddress(l.Address, int(l.Port)),
		FilterChains: []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{
			hcmFilter(l.Name, l.RouteConfig, l.VirtualHosts, ext, l.Tracing),
		}}},
	}
}

// hcmFilter is the HTTP connection manager of routeConfig's virtual hosts, tracing
// requests when tr is set.
func hcmFilter(statPrefix, routeConfig string, vhosts []*VirtualHost, ext *Extauthz, tr *Tracing) *listenerv3.Filter {
	filters := optionFilters(needsOf(vhosts))
	if ext != nil {
		filters = append(filters, &hcmv3.HttpFilter{
			Name: ExtAuthzFilterName,
			ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(&extauthzv3.ExtAuthz{
				Services: &extauthzv3.ExtAuthz_GrpcService{GrpcService: &corev3.GrpcService{
					TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: ext.Cluster}},
					Timeout:         durationpb.New(ext.Timeout),
				}},
				FailureModeAllow:    false,
				TransportApiVersion: corev3.ApiVersion_V3,
				// Header values as sent, repeated headers apart (header_map with
				// raw_value) rather than sanitized and comma-joined: extauth reads both,
				// and Envoy recommends this form.
				EncodeRawHeaders: true,
			})},
		})
	}
	filters = append(filters, &hcmv3.HttpFilter{
		Name:       wellknown.Router,
		ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(&routerv3.Router{})},
	})
	hcm := &hcmv3.HttpConnectionManager{
		StatPrefix: statPrefix,
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			ConfigSource:    adsSource(),
			RouteConfigName: routeConfig,
		}},
		HttpFilters: filters,
		// Browsers and curl send "host:port" when the port is not the scheme's default;
		// domains are written without ports, so match on the host alone.
		StripPortMode: &hcmv3.HttpConnectionManager_StripAnyHostPort{StripAnyHostPort: true},
		Tracing:       hcmTracing(tr),
	}
	return &listenerv3.Filter{
		Name:       wellknown.HTTPConnectionManager,
		ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(hcm)},
	}
}

func mustAny(m proto.Message) *anypb.Any {
	b, err := proto.Marshal(m) // as anypb.New marshals
	if err != nil {
		panic("translate: " + err.Error()) // marshalling a well-formed message cannot fail
	}
	return &anypb.Any{TypeUrl: typeURL(m), Value: b}
}

// typeURLs are the type URLs of the messages put in an Any, one string per type:
// anypb.New builds the URL afresh for each Any, one string for each secured route of
// each virtual host.
var typeURLs sync.Map // protoreflect.FullName → string

// typeURL is the type URL of m, as anypb.New makes it.
func typeURL(m proto.Message) string {
	name := m.ProtoReflect().Descriptor().FullName()
	if u, ok := typeURLs.Load(name); ok {
		return u.(string)
	}
	u, _ := typeURLs.LoadOrStore(name, "type.googleapis.com/"+string(name))
	return u.(string)
}
