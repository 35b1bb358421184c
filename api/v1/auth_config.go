package v1

import "encoding/json"

// AuthConfig is an ordered chain of auth steps that routes reference.
type AuthConfig struct {
	TypeMeta `json:",inline"`
	Metadata Metadata       `json:"metadata"`
	Spec     AuthConfigSpec `json:"spec"`
}

// AuthConfigSpec is the body of an AuthConfig.
type AuthConfigSpec struct {
	Configs []AuthStep `json:"configs"`
	// DecisionLog shapes the decision records of this AuthConfig's Checks, where
	// extauth writes them (--decision-log).
	DecisionLog *AuthConfigDecisionLog `json:"decisionLog,omitempty"`
}

// AuthConfigDecisionLog shapes the decision records of one AuthConfig's Checks.
type AuthConfigDecisionLog struct {
	// SampleRatio is the share of this AuthConfig's decided Checks recorded, from 0
	// (none) to 1 (all). It overrides extauth's --decision-log-sample for this
	// config_id; --decision-log-sample-config, where it names the config_id, overrides
	// it. Unset: --decision-log-sample.
	//
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=1
	SampleRatio *float64 `json:"sampleRatio,omitempty"`
}

// AuthStep holds exactly one of its fields.
type AuthStep struct {
	PluginAuth *PluginAuth `json:"pluginAuth,omitempty"`
	OAuth2     *OAuth2     `json:"oauth2,omitempty"`
}

// PluginAuth runs a compiled Go plugin.
type PluginAuth struct {
	Name               string `json:"name"`
	PluginFileName     string `json:"pluginFileName,omitempty"`
	ExportedSymbolName string `json:"exportedSymbolName,omitempty"`
	// Config is the plugin's own configuration, decoded strictly into its type.
	//
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Config json.RawMessage `json:"config,omitempty"`
	// Isolation is where the plugin runs: inProcess (the default, in the extauth
	// server) or process (a supervised worker process of its own, so that a crash or
	// a runaway allocation ends only the worker, at the cost of a round trip per call).
	//
	// +kubebuilder:validation:Enum=inProcess;process
	Isolation string `json:"isolation,omitempty"`
	// MemoryLimit caps a process-isolated worker's resident memory, as a Kubernetes
	// quantity such as "256Mi"; past it the worker is killed and started again.
	MemoryLimit string `json:"memoryLimit,omitempty"`
}

// Isolation values of PluginAuth.
const (
	IsolationInProcess = "inProcess"
	IsolationProcess   = "process"
)

// FileName is pluginFileName, defaulting to "<name>.so".
func (p *PluginAuth) FileName() string {
	if p.PluginFileName != "" {
		return p.PluginFileName
	}
	return p.Name + ".so"
}

// SymbolName is exportedSymbolName, defaulting to "<name>".
func (p *PluginAuth) SymbolName() string {
	if p.ExportedSymbolName != "" {
		return p.ExportedSymbolName
	}
	return p.Name
}

// OAuth2 wraps the OAuth2 step kinds.
type OAuth2 struct {
	OIDCAuthorizationCode *OIDCAuthorizationCode `json:"oidcAuthorizationCode,omitempty"`
}

// OIDCAuthorizationCode is the built-in OpenID Connect login step.
type OIDCAuthorizationCode struct {
	AppURL          string         `json:"appUrl"`
	CallbackPath    string         `json:"callbackPath"`
	ClientID        string         `json:"clientId"`
	ClientSecretRef *Ref           `json:"clientSecretRef,omitempty"`
	IssuerURL       string         `json:"issuerUrl"`
	Scopes          []string       `json:"scopes,omitempty"`
	Session         *OIDCSession   `json:"session,omitempty"`
	Headers         *OIDCHeaders   `json:"headers,omitempty"`
	LogoutPath      string         `json:"logoutPath,omitempty"`
	AfterLogoutURL  string         `json:"afterLogoutUrl,omitempty"`
	CookieOptions   *CookieOptions `json:"cookieOptions,omitempty"`
	// PreExpiryBuffer is a duration string such as "30s".
	PreExpiryBuffer string `json:"preExpiryBuffer,omitempty"`
}

// OIDCSession selects where tokens are kept.
type OIDCSession struct {
	FailOnFetchFailure  bool        `json:"failOnFetchFailure,omitempty"`
	Redis               *RedisStore `json:"redis,omitempty"`
	CookieEncryptionRef *Ref        `json:"cookieEncryptionKeyRef,omitempty"`
}

// RedisStore is a Redis session store.
type RedisStore struct {
	CookieName string       `json:"cookieName,omitempty"`
	Options    RedisOptions `json:"options"`
}

// RedisOptions address the store; Hosts is for a Redis Cluster.
type RedisOptions struct {
	Host  string   `json:"host,omitempty"`
	Hosts []string `json:"hosts,omitempty"`
}

// OIDCHeaders name the request headers tokens are placed in.
type OIDCHeaders struct {
	IDTokenHeader     string `json:"idTokenHeader,omitempty"`
	AccessTokenHeader string `json:"accessTokenHeader,omitempty"`
}

// CookieOptions shape the session cookie.
type CookieOptions struct {
	MaxAge   *int64 `json:"maxAge,omitempty"`
	Secure   *bool  `json:"secure,omitempty"`
	HTTPOnly *bool  `json:"httpOnly,omitempty"`
	SameSite string `json:"sameSite,omitempty"`
	Path     string `json:"path,omitempty"`
	Domain   string `json:"domain,omitempty"`
}
