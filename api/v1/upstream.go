package v1

// Upstream is a destination for routes.
type Upstream struct {
	TypeMeta `json:",inline"`
	Metadata Metadata     `json:"metadata"`
	Spec     UpstreamSpec `json:"spec"`
}

// UpstreamSpec holds one upstream kind.
type UpstreamSpec struct {
	Static *StaticUpstream `json:"static,omitempty"`
	Kube   *KubeUpstream   `json:"kube,omitempty"`
}

// StaticUpstream is a fixed list of hosts.
type StaticUpstream struct {
	Hosts  []Host `json:"hosts"`
	UseTLS bool   `json:"useTls,omitempty"`
}

// Host is one address.
type Host struct {
	Addr string `json:"addr"`
	Port int    `json:"port"`
}

// KubeUpstream is a discovered orchestrator service.
type KubeUpstream struct {
	ServiceName      string `json:"serviceName"`
	ServiceNamespace string `json:"serviceNamespace"`
	ServicePort      int    `json:"servicePort"`
	// Selector is the Service's pod selector, as discovery found it (informational).
	Selector map[string]string `json:"selector,omitempty"`

	// Endpoints are the ready endpoints of the Service port. The Kubernetes source fills
	// them in from EndpointSlices (never nil, then); they are never read from a document,
	// and nil means no discovery ran.
	Endpoints []Host `json:"-"`
}

// Settings configures the gateway as a whole.
type Settings struct {
	TypeMeta `json:",inline"`
	Metadata Metadata     `json:"metadata"`
	Spec     SettingsSpec `json:"spec"`
}

// SettingsSpec is the body of Settings.
type SettingsSpec struct {
	Extauth *ExtauthSettings `json:"extauth,omitempty"`
	DevMode bool             `json:"devMode,omitempty"`
	// Discovery shapes Kubernetes service discovery; it is on for every namespace the
	// control plane watches unless this says otherwise.
	Discovery *DiscoverySettings `json:"discovery,omitempty"`
	// Tracing, when set, has the gateway proxies trace requests with Envoy's
	// OpenTelemetry tracer and send the trace context on to extauth, whose spans then
	// sit inside the proxies' traces.
	Tracing *TracingSettings `json:"tracing,omitempty"`
	// VirtualHostDiscovery, when true, serves each VirtualService of a plain-text
	// listener to the gateway proxies as a virtual host of its own over Envoy's VHDS,
	// rather than every one of them inside the listener's route configuration: an edit
	// then sends one virtual host, not all of them. VHDS is delta xDS only, so every
	// proxy must use delta ADS (the bootstrap `gatehouse bootstrap` writes does).
	VirtualHostDiscovery bool `json:"virtualHostDiscovery,omitempty"`
}

// TracingSettings turn on tracing in the gateway proxies.
type TracingSettings struct {
	// OTLPCollector is host:port of the OTLP/gRPC receiver the proxies send their
	// spans to, such as otel-collector.monitoring:4317 (plain text, HTTP/2).
	OTLPCollector string `json:"otlpCollector"`
	// SamplePercent is the share of requests, in percent (0 to 100), the proxies
	// trace (Envoy's random_sampling); 1 when unset.
	//
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	SamplePercent *float64 `json:"samplePercent,omitempty"`
	// ServiceName is the service.name of the proxies' spans; gatehouse-gateway-proxy
	// when empty.
	ServiceName string `json:"serviceName,omitempty"`
}

// DiscoverySettings turn Kubernetes service discovery off or limit it.
type DiscoverySettings struct {
	// Enabled is true when unset.
	Enabled *bool `json:"enabled,omitempty"`
	// Namespaces limits discovery to these namespaces (all watched ones when empty).
	Namespaces []string `json:"namespaces,omitempty"`
	// Labels limits discovery to the Services carrying all of these labels.
	Labels map[string]string `json:"labels,omitempty"`
}

// On says whether discovery runs.
func (d *DiscoverySettings) On() bool { return d == nil || d.Enabled == nil || *d.Enabled }

// ExtauthSettings configure the ext_authz filter and server.
type ExtauthSettings struct {
	// RequestTimeout is a duration string; 200ms when empty.
	RequestTimeout    string `json:"requestTimeout,omitempty"`
	ExtauthzServerRef *Ref   `json:"extauthzServerRef,omitempty"`
	// TLS, when set, makes the gateway proxies reach the extauth server over mutual TLS.
	TLS *ExtauthTLS `json:"tls,omitempty"`
}

// ExtauthTLS is mutual TLS from the gateway proxies to the extauth server: TLS 1.3, the
// proxy's client certificate and CA from file-based SDS, and a server certificate naming
// the extauth role.
type ExtauthTLS struct {
	// SDSDir is the absolute path, on every gateway proxy, of the folder holding the SDS
	// files sds-certificate.yaml and sds-validation.yaml that name the proxy's certificate
	// folder (written by gatehouse envoy sds; the chart puts them in /etc/envoy).
	SDSDir string `json:"sdsDir"`
}

// Secret is a core v1 Secret; Data values are base64 in YAML and decoded here.
type Secret struct {
	TypeMeta   `json:",inline"`
	Metadata   Metadata          `json:"metadata"`
	Type       string            `json:"type,omitempty"`
	Data       map[string][]byte `json:"data,omitempty"`
	StringData map[string]string `json:"stringData,omitempty"`
}

// Value returns data[key], or stringData[key] as Kubernetes merges it.
func (s *Secret) Value(key string) ([]byte, bool) {
	if v, ok := s.StringData[key]; ok {
		return []byte(v), true
	}
	v, ok := s.Data[key]
	return v, ok
}
