package translate

import (
	"time"

	"gatehouse.dev/gatehouse/internal/chunked"
)

// The proxies model: what each gateway proxy serves, independent of Envoy's messages.
// Model values are shared between stages and never modified once built.

// Proxy is one gateway proxy role ("<namespace>~<proxy name>") and what it serves.
type Proxy struct {
	Role      string      `json:"role"`
	Listeners []*Listener `json:"listeners"`
	// Clusters are every accepted Upstream, in name order.
	Clusters chunked.List[*Cluster] `json:"clusters"`
	// Extauthz is the ext_authz filter; nil when its server's Upstream does not exist
	// (then no route is secured: validation rejects those that would be).
	Extauthz *Extauthz `json:"extauthz,omitempty"`
	// Secrets are the TLS certificates the HTTPS listener's virtual hosts use, in name
	// order, served over SDS.
	Secrets []*TLSCert `json:"secrets,omitempty"`
	// Tracing, when set, adds the CollectorCluster (Settings spec.tracing).
	Tracing *Tracing `json:"tracing,omitempty"`
}

// Listener is one port and the virtual hosts it serves through one route configuration.
type Listener struct {
	Name    string `json:"name"`
	Address string `json:"address"`
	Port    uint32 `json:"port"`
	// RouteConfig is the route configuration of a plain-text listener. A TLS listener
	// has one filter chain per virtual host, each with its own route configuration
	// (HTTPSRouteConfig).
	RouteConfig string `json:"routeConfig,omitempty"`
	// VirtualHostDiscovery, on a plain-text listener, serves its virtual hosts as
	// resources of their own over VHDS, named VHDSName, and the route configuration
	// without them.
	VirtualHostDiscovery bool           `json:"virtualHostDiscovery,omitempty"`
	TLS                  bool           `json:"tls,omitempty"`
	VirtualHosts         []*VirtualHost `json:"virtualHosts"`
	// Tracing, when set, traces the listener's requests (Settings spec.tracing).
	Tracing *Tracing `json:"tracing,omitempty"`
}

// Extauthz is where the ext_authz filter sends its checks.
type Extauthz struct {
	Cluster string        `json:"cluster"`
	Timeout time.Duration `json:"timeout"`
	// TLSSDSDir, when set, makes the cluster mutual TLS with the certificates of the SDS
	// files in that folder on the proxy (Settings spec.extauth.tls.sdsDir).
	TLSSDSDir string `json:"tlsSdsDir,omitempty"`
}

// VirtualHost is the translation of one VirtualService.
type VirtualHost struct {
	// Name is the VirtualService's id, "<namespace>.<name>".
	Name string `json:"name"`
	// Hash is the content hash of the VirtualService it was built from.
	Hash    string   `json:"-"`
	Domains []string `json:"domains"`
	Routes  []*Route `json:"routes"`
	// TLSSecret is the id of the TLS Secret of sslConfig: the virtual host is served on
	// the HTTPS listener with that certificate, and only there. "" for HTTP.
	TLSSecret string `json:"tlsSecret,omitempty"`
	// Refs are every resource the VirtualService references, for validation.
	Refs []Ref `json:"refs,omitempty"`
}

// Route is one matcher of a VirtualService route.
type Route struct {
	// Name is the field path of its matcher ("spec.virtualHost.routes[0].matchers[0]").
	Name   string `json:"name"`
	Prefix string `json:"prefix"`
	// Cluster is the Upstream id ("<namespace>.<name>") the route sends to.
	Cluster string `json:"cluster"`
	// AuthConfig is the config_id of the AuthConfig securing it; "" when open.
	AuthConfig             string   `json:"authConfig,omitempty"`
	RequestHeadersToRemove []string `json:"requestHeadersToRemove,omitempty"`
	// Options are jwt, rbac and early transformations; nil without any.
	Options *RouteOptions `json:"options,omitempty"`
}

// Cluster is the translation of one Upstream.
type Cluster struct {
	// Name is the Upstream's id, which is also the Envoy cluster's name.
	Name  string `json:"name"`
	Hash  string `json:"-"`
	Hosts []Host `json:"hosts"`
	// Discovered says the hosts are a Kubernetes Service's ready endpoints (possibly
	// none): always served over EDS.
	Discovered bool `json:"discovered,omitempty"`
}

// Host is one endpoint of a Cluster.
type Host struct {
	Addr string `json:"addr"`
	Port uint32 `json:"port"`
}

// Ref is a reference from one resource to another, for validation.
type Ref struct {
	// Kind is the referenced kind (Upstream, AuthConfig, Secret).
	Kind string `json:"kind"`
	// ID is the referenced "<namespace>.<name>".
	ID string `json:"id"`
	// Path is the referencing field.
	Path string `json:"path"`
	// SecretType is the Secret type required, for Secret references.
	SecretType string `json:"secretType,omitempty"`
}
