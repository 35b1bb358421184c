package translate

import (
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	tracev3 "github.com/envoyproxy/go-control-plane/envoy/config/trace/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/protobuf/types/known/durationpb"
)

// OpenTelemetryTracer is the name of stock Envoy's OpenTelemetry tracer.
const OpenTelemetryTracer = "envoy.tracers.opentelemetry"

// collectorTimeout bounds one export of spans to the collector.
const collectorTimeout = 5 * time.Second

// hcmTracing is the HTTP connection manager's tracing with t (nil when t is): Envoy's
// OpenTelemetry tracer, exporting over OTLP/gRPC to the CollectorCluster, tracing
// t.SamplePercent of requests. The ext_authz filter's call is a span of the request's
// trace, and Envoy sends its context (traceparent) to extauth with the call.
func hcmTracing(t *Tracing) *hcmv3.HttpConnectionManager_Tracing {
	if t == nil {
		return nil
	}
	return &hcmv3.HttpConnectionManager_Tracing{
		RandomSampling: &typev3.Percent{Value: t.SamplePercent},
		Provider: &tracev3.Tracing_Http{
			Name: OpenTelemetryTracer,
			ConfigType: &tracev3.Tracing_Http_TypedConfig{TypedConfig: mustAny(&tracev3.OpenTelemetryConfig{
				GrpcService: &corev3.GrpcService{
					TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: CollectorCluster}},
					Timeout:         durationpb.New(collectorTimeout),
				},
				ServiceName: t.ServiceName,
			})},
		},
	}
}

// EnvoyCollectorCluster is the cluster of t's OTLP collector: HTTP/2 (gRPC), its
// address resolved by the proxy (STRICT_DNS; an IP resolves to itself).
func EnvoyCollectorCluster(t *Tracing) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                          CollectorCluster,
		ConnectTimeout:                connectTimeout,
		ClusterDiscoveryType:          &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STRICT_DNS},
		DnsLookupFamily:               clusterv3.Cluster_V4_PREFERRED,
		TypedExtensionProtocolOptions: http2Options(),
		LoadAssignment: &endpointv3.ClusterLoadAssignment{ClusterName: CollectorCluster,
			Endpoints: []*endpointv3.LocalityLbEndpoints{{LbEndpoints: lbEndpoints([]Host{t.Collector})}}},
	}
}
