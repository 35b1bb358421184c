// Package bootstrap builds the bootstrap of a stock Envoy that is a Gatehouse
// gateway proxy: delta ADS to the control plane, the node's role, the admin address, and
// optionally mutual TLS to the control plane with certificates from file-based SDS. Its
// listeners wait for the control plane's first configuration, without a time limit.
package bootstrap

import (
	"fmt"
	"net"
	"strconv"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"sigs.k8s.io/yaml"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/envoysds"
	"gatehouse.dev/gatehouse/internal/mtls"
)

// XDSCluster is the bootstrap's one static cluster: the control plane.
const XDSCluster = "xds_cluster"

// Options say what Build makes.
type Options struct {
	// XDS is the control plane's ADS address as Envoy reaches it (host:port).
	XDS string
	// Role is the proxy role, <namespace>~<proxy name>; NodeID the node id.
	Role, NodeID string
	// Admin is Envoy's admin address (host:port).
	Admin string
	// TLSDir, when set, is the proxy's certificate folder (mtls): Envoy then reaches the
	// control plane over mutual TLS, with its certificate and CA from the SDS files in
	// SDSDir (envoysds.Write of TLSDir), and accepts only a control plane's certificate.
	TLSDir, SDSDir string
}

// Build makes the bootstrap and checks it with ValidateAll, the typed configs it packs
// (protocol options, the TLS context) included.
func Build(o Options) (*bootstrapv3.Bootstrap, error) {
	xdsAddr, err := SocketAddress(o.XDS)
	if err != nil {
		return nil, fmt.Errorf("xds address: %w", err)
	}
	adminAddr, err := SocketAddress(o.Admin)
	if err != nil {
		return nil, fmt.Errorf("admin address: %w", err)
	}
	h2 := &httpv3.HttpProtocolOptions{UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{
		ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
			Http2ProtocolOptions: &corev3.Http2ProtocolOptions{}}}}}
	if err := h2.ValidateAll(); err != nil {
		return nil, err
	}
	h2Any, err := anypb.New(h2)
	if err != nil {
		return nil, err
	}
	cluster := &clusterv3.Cluster{
		Name:                          XDSCluster,
		ClusterDiscoveryType:          &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STRICT_DNS},
		ConnectTimeout:                durationpb.New(5 * time.Second),
		TypedExtensionProtocolOptions: map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": h2Any},
		LoadAssignment: &endpointv3.ClusterLoadAssignment{ClusterName: XDSCluster, Endpoints: []*endpointv3.LocalityLbEndpoints{{
			LbEndpoints: []*endpointv3.LbEndpoint{{HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
				Address: xdsAddr}}}}}}},
	}
	if o.TLSDir != "" || o.SDSDir != "" {
		if err := envoysds.CheckDir(o.TLSDir); err != nil {
			return nil, fmt.Errorf("certificate folder: %w", err)
		}
		if err := envoysds.CheckDir(o.SDSDir); err != nil {
			return nil, fmt.Errorf("SDS folder: %w", err)
		}
		if cluster.TransportSocket, err = envoysds.TransportSocket(o.SDSDir, mtls.RoleControlplane); err != nil {
			return nil, err
		}
	}
	// No initial_fetch_timeout (0): Envoy waits for the first CDS and LDS responses as
	// long as it takes, so its listeners stay out (and its /ready says not LIVE) until the
	// control plane has sent a complete configuration, where Envoy's default of 15 s
	// would open them with whatever had arrived, or nothing.
	ads := func() *corev3.ConfigSource {
		return &corev3.ConfigSource{ResourceApiVersion: corev3.ApiVersion_V3, InitialFetchTimeout: durationpb.New(0),
			ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}}}
	}
	b := &bootstrapv3.Bootstrap{
		Node: &corev3.Node{Id: o.NodeID, Cluster: o.Role, Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{
			xds.RoleKey: structpb.NewStringValue(o.Role)}}},
		DynamicResources: &bootstrapv3.Bootstrap_DynamicResources{
			AdsConfig: &corev3.ApiConfigSource{
				ApiType: corev3.ApiConfigSource_DELTA_GRPC, TransportApiVersion: corev3.ApiVersion_V3,
				GrpcServices: []*corev3.GrpcService{{TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{
					EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: XDSCluster}}}},
			},
			LdsConfig: ads(),
			CdsConfig: ads(),
		},
		StaticResources: &bootstrapv3.Bootstrap_StaticResources{Clusters: []*clusterv3.Cluster{cluster}},
		Admin:           &bootstrapv3.Admin{Address: adminAddr},
	}
	if err := b.ValidateAll(); err != nil {
		return nil, err
	}
	return b, nil
}

// YAML is b as Envoy reads it from a file (proto field names, keys sorted).
func YAML(b *bootstrapv3.Bootstrap) ([]byte, error) {
	j, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(b)
	if err != nil {
		return nil, err
	}
	return yaml.JSONToYAML(j)
}

// SocketAddress is the Envoy address of host:port.
func SocketAddress(hostport string) (*corev3.Address, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, err
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return nil, fmt.Errorf("%q: port must be 1-65535", hostport)
	}
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address: host, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: uint32(p)}}}}, nil
}
