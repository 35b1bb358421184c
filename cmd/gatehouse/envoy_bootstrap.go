package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	"gatehouse.dev/gatehouse/controlplane/xds"
)

func envoyCommand(stdout, _ io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "envoy", Short: "Configuration for stock Envoy"}
	var addr, role, nodeID, admin string
	boot := &cobra.Command{
		Use:   "bootstrap --xds ADDR --role NS~NAME",
		Short: "Print /etc/envoy/envoy.yaml for a gateway proxy following the control plane",
		Long: "Prints a complete Envoy bootstrap: delta ADS to the control plane at --xds (LDS and CDS over\n" +
			"ADS; routes, endpoints and secrets follow), the node's metadata role, and the admin on\n" +
			"--admin-address (127.0.0.1:19000: it shows config, keep it on loopback). The ext_authz filter's\n" +
			"cluster (Settings spec.extauth.extauthzServerRef) arrives over CDS with the rest.\n" +
			"The output passes the bootstrap proto's validation.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := (&gatewayOptions{xds: addr, role: role, listen: "-"}).check(); err != nil {
				return exit(2, fmt.Errorf("envoy bootstrap: %w", err))
			}
			b, err := envoyBootstrap(addr, role, nodeID, admin)
			if err != nil {
				return exit(2, fmt.Errorf("envoy bootstrap: %w", err))
			}
			j, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(b)
			if err != nil {
				return err
			}
			return writeData(stdout, "yaml", json.RawMessage(j))
		},
	}
	boot.Flags().StringVar(&addr, "xds", defaultXDSListen, "the control plane's ADS address as Envoy reaches it (host:port)")
	boot.Flags().StringVar(&role, "role", xds.DefaultProxyRole, "the proxy role, <namespace>~<proxy name>")
	boot.Flags().StringVar(&nodeID, "node-id", "gateway-proxy", "the node id")
	boot.Flags().StringVar(&admin, "admin-address", defaultProxyAdmin, "Envoy's admin address")
	cmd.AddCommand(boot)
	return cmd
}

// xdsCluster is the bootstrap's one static cluster: the control plane.
const xdsCluster = "xds_cluster"

// envoyBootstrap builds the bootstrap and checks it with ValidateAll, the typed
// extension options it packs included.
func envoyBootstrap(addr, role, nodeID, admin string) (*bootstrapv3.Bootstrap, error) {
	xdsAddr, err := socketAddress(addr)
	if err != nil {
		return nil, fmt.Errorf("--xds: %w", err)
	}
	adminAddr, err := socketAddress(admin)
	if err != nil {
		return nil, fmt.Errorf("--admin-address: %w", err)
	}
	h2, err := anypb.New(&httpv3.HttpProtocolOptions{UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{
		ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{
			Http2ProtocolOptions: &corev3.Http2ProtocolOptions{}}}}})
	if err != nil {
		return nil, err
	}
	ads := func() *corev3.ConfigSource {
		return &corev3.ConfigSource{ResourceApiVersion: corev3.ApiVersion_V3, ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}}}
	}
	b := &bootstrapv3.Bootstrap{
		Node: &corev3.Node{Id: nodeID, Cluster: role, Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{
			xds.RoleKey: structpb.NewStringValue(role)}}},
		DynamicResources: &bootstrapv3.Bootstrap_DynamicResources{
			AdsConfig: &corev3.ApiConfigSource{
				ApiType: corev3.ApiConfigSource_DELTA_GRPC, TransportApiVersion: corev3.ApiVersion_V3,
				GrpcServices: []*corev3.GrpcService{{TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{
					EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: xdsCluster}}}},
			},
			LdsConfig: ads(),
			CdsConfig: ads(),
		},
		StaticResources: &bootstrapv3.Bootstrap_StaticResources{Clusters: []*clusterv3.Cluster{{
			Name:                          xdsCluster,
			ClusterDiscoveryType:          &clusterv3.Cluster_Type{Type: clusterv3.Cluster_STRICT_DNS},
			ConnectTimeout:                durationpb.New(5 * time.Second),
			TypedExtensionProtocolOptions: map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": h2},
			LoadAssignment: &endpointv3.ClusterLoadAssignment{ClusterName: xdsCluster, Endpoints: []*endpointv3.LocalityLbEndpoints{{
				LbEndpoints: []*endpointv3.LbEndpoint{{HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
					Address: xdsAddr}}}}}}},
		}}},
		Admin: &bootstrapv3.Admin{Address: adminAddr},
	}
	if err := b.ValidateAll(); err != nil {
		return nil, err
	}
	var inner httpv3.HttpProtocolOptions
	if err := h2.UnmarshalTo(&inner); err != nil {
		return nil, err
	}
	if err := inner.ValidateAll(); err != nil {
		return nil, err
	}
	return b, nil
}

func socketAddress(hostport string) (*corev3.Address, error) {
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
