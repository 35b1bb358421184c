package translate

import (
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	upstreamhttpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"gatehouse.dev/gatehouse/internal/envoysds"
	"gatehouse.dev/gatehouse/internal/mtls"
)

// HTTPProtocolOptionsKey is the typed_extension_protocol_options key of a cluster's
// HTTP protocol options.
const HTTPProtocolOptionsKey = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"

// ConnectTimeout is every cluster's connect timeout.
const ConnectTimeout = 5 * time.Second

// EnvoyCluster builds the Envoy cluster of c, and its ClusterLoadAssignment when the
// endpoints are served over EDS (nil otherwise). When c is the ext_authz filter's server
// (ext.Cluster; ext may be nil) the cluster speaks HTTP/2 to its hosts, as the extauth
// server's gRPC needs, mutual TLS when ext.TLSSDSDir is set (ExtauthzTLS), and
// health-checks them (extauthHealthChecks).
//
// Host names vs IPs: EDS carries addresses, not names (Envoy refuses an EDS endpoint
// that is not an IP), so a cluster whose hosts are all IPs is an EDS cluster fed over
// ADS, and a cluster with a host name is a STRICT_DNS cluster with its hosts inline:
// the proxy resolves the name itself, with the resolver and TTLs of the network the
// traffic goes through, where the control plane resolving it would freeze one answer
// and see another network's DNS. Discovered endpoints (Kubernetes) are IPs: EDS.
func EnvoyCluster(c *Cluster, ext *Extauthz) (*clusterv3.Cluster, *endpointv3.ClusterLoadAssignment) {
	out := &clusterv3.Cluster{Name: c.Name, ConnectTimeout: connectTimeout}
	if ext != nil && ext.Cluster == c.Name {
		if ext.TLSSDSDir != "" {
			out.TransportSocket = ExtauthzTLS(ext.TLSSDSDir)
		}
		out.TypedExtensionProtocolOptions = http2Options()
		out.HealthChecks, out.CommonLbConfig = extauthHealthChecks, extauthLbConfig
	}
	cla := &endpointv3.ClusterLoadAssignment{ClusterName: c.Name, Endpoints: []*endpointv3.LocalityLbEndpoints{{LbEndpoints: lbEndpoints(c.Hosts)}}}
	if !c.Discovered && !c.IPOnly() {
		out.ClusterDiscoveryType = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STRICT_DNS}
		out.DnsLookupFamily = clusterv3.Cluster_V4_PREFERRED
		out.LoadAssignment = cla
		return out, nil
	}
	out.ClusterDiscoveryType, out.EdsClusterConfig = edsType, edsConfig
	return out, cla
}

// http2Options are the protocol options of a gRPC cluster: HTTP/2 to every host.
func http2Options() map[string]*anypb.Any {
	opts, err := anypb.New(&upstreamhttpv3.HttpProtocolOptions{
		UpstreamProtocolOptions: &upstreamhttpv3.HttpProtocolOptions_ExplicitHttpConfig_{
			ExplicitHttpConfig: &upstreamhttpv3.HttpProtocolOptions_ExplicitHttpConfig{
				ProtocolConfig: &upstreamhttpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
					Http2ProtocolOptions: &corev3.Http2ProtocolOptions{},
				},
			},
		},
	})
	if err != nil {
		panic("translate: " + err.Error()) // marshalling a well-formed message cannot fail
	}
	return map[string]*anypb.Any{HTTPProtocolOptionsKey: opts}
}

// ExtauthHealthInterval is how often Envoy health-checks each extauth replica.
const ExtauthHealthInterval = time.Second

// The extauth cluster's health checking: every replica is asked gRPC health (service "",
// which extauth reports SERVING only from its first complete config until SIGTERM) every
// ExtauthHealthInterval, with or without traffic. NOT_SERVING takes a replica out at
// once, two failed connections do; one SERVING brings it back. A replica Envoy learns
// of starts out unhealthy until its first check passes, and panic mode is off: with no
// replica ready, a Check fails (the ext_authz filter's failure mode) rather than going
// to a replica that would deny for want of config.
var (
	extauthHealthChecks = []*corev3.HealthCheck{{
		Timeout:            durationpb.New(ExtauthHealthInterval),
		Interval:           durationpb.New(ExtauthHealthInterval),
		NoTrafficInterval:  durationpb.New(ExtauthHealthInterval),
		UnhealthyThreshold: wrapperspb.UInt32(2),
		HealthyThreshold:   wrapperspb.UInt32(1),
		HealthChecker:      &corev3.HealthCheck_GrpcHealthCheck_{GrpcHealthCheck: &corev3.HealthCheck_GrpcHealthCheck{}},
	}}
	extauthLbConfig = &clusterv3.Cluster_CommonLbConfig{HealthyPanicThreshold: &typev3.Percent{Value: 0}}
)

// ExtauthzTLS is the transport socket of the extauth server's cluster with Settings
// spec.extauth.tls: TLS 1.3, the proxy's certificate and CA from the SDS files in sdsDir,
// and a server certificate naming the extauth role (envoysds.UpstreamTLS).
func ExtauthzTLS(sdsDir string) *corev3.TransportSocket {
	ts, err := envoysds.TransportSocket(sdsDir, mtls.RoleExtauth)
	if err != nil {
		panic("translate: " + err.Error()) // SettingsOf checked sdsDir
	}
	return ts
}

// What every EDS cluster has alike, built once and shared (messages are never modified
// once built), so that no cluster holds a copy of its own.
var (
	connectTimeout = durationpb.New(ConnectTimeout)
	edsType        = &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS}
	edsConfig      = &clusterv3.Cluster_EdsClusterConfig{EdsConfig: adsSource()}
)

func lbEndpoints(hosts []Host) []*endpointv3.LbEndpoint {
	out := make([]*endpointv3.LbEndpoint, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, &endpointv3.LbEndpoint{HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
			Address: socketAddress(h.Addr, int(h.Port)),
		}}})
	}
	return out
}

// adsSource is "over the same ADS stream", the config source of everything we serve.
func adsSource() *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
		ResourceApiVersion:    corev3.ApiVersion_V3,
	}
}
