package translate

import (
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
)

// Names shared by the Envoy resources we generate.
const (
	// ExtAuthzFilterName is the ext_authz HTTP filter's name, and the key of its
	// per-route config.
	ExtAuthzFilterName = "envoy.filters.http.ext_authz"
	// ConfigIDKey is the context extension that names a route's AuthConfig.
	ConfigIDKey = "config_id"
)

// ClusterName is the Envoy cluster of the Upstream with id "<namespace>.<name>".
func ClusterName(upstreamID string) string { return upstreamID }

func socketAddress(addr string, port int) *corev3.Address {
	return &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
		Address:       addr,
		PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: uint32(port)},
	}}}
}
