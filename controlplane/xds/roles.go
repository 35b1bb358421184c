// Package xds serves the control plane's output to its clients over ADS (state of the
// world and delta) with go-control-plane's server and caches.
package xds

import (
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
)

// Node roles. A client names its role in its node metadata under RoleKey.
const (
	// RoleKey is the node metadata field that carries a client's role.
	RoleKey = "role"
	// ServingKey is the node metadata field (a bool) by which an extauth replica says
	// whether it answered Checks when it opened the stream. One that says false builds
	// its first complete config from the stream's first response and is not sent
	// Checks until then, so what is acknowledged does not wait for it meanwhile
	// (Server.EachServing). A client that does not say is taken to be serving.
	ServingKey = "serving"
	// RoleExtauth is every extauth server; it is served ExtAuthConfig resources.
	RoleExtauth = "extauth"
	// DefaultProxyRole is the gateway proxy a VirtualService is served on when it names
	// none. Proxy roles are "<namespace>~<proxy name>".
	DefaultProxyRole = "gatehouse-system~gateway-proxy"
)

// Type URLs served.
const (
	// ExtAuthConfigType is the type of the resources served to RoleExtauth, one per
	// AuthConfig, named by its config_id ("<namespace>.<name>").
	ExtAuthConfigType = "type.googleapis.com/gatehouse.extauth.v1.ExtAuthConfig"

	ListenerType = resourcev3.ListenerType
	RouteType    = resourcev3.RouteType
	ClusterType  = resourcev3.ClusterType
	EndpointType = resourcev3.EndpointType
	SecretType   = resourcev3.SecretType
	// VirtualHostType is VHDS: the virtual hosts of a route configuration that has
	// vhds, each a resource named VirtualHostName, as its name field is too (Envoy
	// keeps them by that field and removes them by resource name).
	VirtualHostType = resourcev3.VirtualHostType
)

// ProxyTypes are the types served to a gateway proxy role, in the order a change must
// reach it when something is added (clusters and endpoints before the listeners and
// routes that use them; the reverse when something is removed).
var ProxyTypes = []string{ClusterType, EndpointType, SecretType, ListenerType, RouteType, VirtualHostType}
