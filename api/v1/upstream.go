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
}

// ExtauthSettings configure the ext_authz filter and server.
type ExtauthSettings struct {
	// RequestTimeout is a duration string; 200ms when empty.
	RequestTimeout    string `json:"requestTimeout,omitempty"`
	ExtauthzServerRef *Ref   `json:"extauthzServerRef,omitempty"`
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
