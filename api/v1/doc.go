// Package v1 holds Gatehouse's declarative resources (AuthConfig, VirtualService,
// Upstream, Settings and the Secret shapes they reference) and decodes them from YAML.
//
// The types mirror the YAML field names exactly; decoding is strict, so a misspelt
// field is an error rather than a silently ignored setting. Every unknown field and
// wrongly typed value of a document is reported at once, each with its line and path:
//
//	x.yaml:6: AuthConfig default.plugin-auth: spec.configs[0].pluginAut: unknown field (did you mean pluginAuth?)
package v1

// API groups and kinds, as written in apiVersion and kind.
const (
	AuthConfigAPIVersion     = "enterprise.gateway.gatehouse.dev/v1"
	VirtualServiceAPIVersion = "gateway.gatehouse.dev/v1"
	CoreAPIVersion           = "core.gatehouse.dev/v1"
	SecretAPIVersion         = "v1"

	KindAuthConfig     = "AuthConfig"
	KindVirtualService = "VirtualService"
	KindUpstream       = "Upstream"
	KindSettings       = "Settings"
	KindSecret         = "Secret"

	// OAuthSecretType is the Secret type of an OIDC client secret; its data key is
	// OAuthSecretKey.
	OAuthSecretType = "extauth.gatehouse.dev/oauth"
	OAuthSecretKey  = "client-secret"
	// TLSSecretType is the Secret type of a certificate and key.
	TLSSecretType = "kubernetes.io/tls"
)

// Metadata names a resource.
type Metadata struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Ref points at another resource.
type Ref struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// ID is "<namespace>.<name>", the identity used across Gatehouse (ext_authz config_id).
func (m Metadata) ID() string { return m.Namespace + "." + m.Name }

// ID is "<namespace>.<name>" of the referenced resource, with the referrer's namespace
// as the default.
func (r Ref) ID(defaultNamespace string) string {
	ns := r.Namespace
	if ns == "" {
		ns = defaultNamespace
	}
	return ns + "." + r.Name
}

// TypeMeta is the apiVersion and kind of a document.
type TypeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

func (t *TypeMeta) types() *TypeMeta { return t }

// Meta returns the resource's metadata.
func (r *AuthConfig) Meta() *Metadata { return &r.Metadata }

// Meta returns the resource's metadata.
func (r *VirtualService) Meta() *Metadata { return &r.Metadata }

// Meta returns the resource's metadata.
func (r *Upstream) Meta() *Metadata { return &r.Metadata }

// Meta returns the resource's metadata.
func (r *Settings) Meta() *Metadata { return &r.Metadata }

// Meta returns the resource's metadata.
func (r *Secret) Meta() *Metadata { return &r.Metadata }
