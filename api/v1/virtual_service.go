package v1

// VirtualService routes a set of domains to upstreams.
type VirtualService struct {
	TypeMeta `json:",inline"`
	Metadata Metadata           `json:"metadata"`
	Spec     VirtualServiceSpec `json:"spec"`
}

// VirtualServiceSpec is the body of a VirtualService.
type VirtualServiceSpec struct {
	SSLConfig   *SSLConfig  `json:"sslConfig,omitempty"`
	VirtualHost VirtualHost `json:"virtualHost"`
}

// SSLConfig enables HTTPS with a TLS Secret.
type SSLConfig struct {
	SecretRef Ref `json:"secretRef"`
}

// VirtualHost lists domains and their routes.
type VirtualHost struct {
	Domains []string `json:"domains"`
	Routes  []Route  `json:"routes"`
}

// Route matches requests and sends them to one destination.
type Route struct {
	Matchers    []Matcher     `json:"matchers,omitempty"`
	RouteAction *RouteAction  `json:"routeAction,omitempty"`
	Options     *RouteOptions `json:"options,omitempty"`
}

// Matcher matches a path prefix.
type Matcher struct {
	Prefix string `json:"prefix,omitempty"`
}

// RouteAction picks the destination.
type RouteAction struct {
	Single *Destination `json:"single,omitempty"`
}

// Destination is an Upstream or an orchestrator service.
type Destination struct {
	Upstream *Ref        `json:"upstream,omitempty"`
	Kube     *KubeTarget `json:"kube,omitempty"`
}

// KubeTarget routes to an orchestrator service.
type KubeTarget struct {
	Ref KubeRef `json:"ref"`
}

// KubeRef names a service port.
type KubeRef struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Port      int    `json:"port"`
}

// RouteOptions are the per-route filters.
type RouteOptions struct {
	Extauth               *ExtauthOption         `json:"extauth,omitempty"`
	StagedTransformations *StagedTransformations `json:"stagedTransformations,omitempty"`
	HeaderManipulation    *HeaderManipulation    `json:"headerManipulation,omitempty"`
	JWT                   *JWTOption             `json:"jwt,omitempty"`
	RBAC                  *RBACOption            `json:"rbac,omitempty"`
}

// ExtauthOption references the AuthConfig that secures a route.
type ExtauthOption struct {
	ConfigRef *Ref `json:"configRef,omitempty"`
}

// HeaderManipulation edits the request before it goes upstream.
type HeaderManipulation struct {
	RequestHeadersToRemove []string `json:"requestHeadersToRemove,omitempty"`
}

// StagedTransformations run transformations at fixed stages.
type StagedTransformations struct {
	Early *TransformationStage `json:"early,omitempty"`
}

// TransformationStage is a list of request transforms.
type TransformationStage struct {
	RequestTransforms []RequestTransform `json:"requestTransforms,omitempty"`
}

// RequestTransform wraps one request transformation.
type RequestTransform struct {
	RequestTransformation Transformation `json:"requestTransformation"`
}

// Transformation holds a template.
type Transformation struct {
	TransformationTemplate *TransformationTemplate `json:"transformationTemplate,omitempty"`
}

// TransformationTemplate extracts values and renders headers from them.
type TransformationTemplate struct {
	Extractors map[string]Extractor      `json:"extractors,omitempty"`
	Headers    map[string]TemplateString `json:"headers,omitempty"`
}

// Extractor takes a regex capture group from a header.
type Extractor struct {
	Header   string `json:"header"`
	Regex    string `json:"regex"`
	Subgroup int    `json:"subgroup,omitempty"`
}

// TemplateString is a text template that may reference extractors as {{ name }}.
type TemplateString struct {
	Text string `json:"text"`
}

// JWTOption verifies JWTs per provider.
type JWTOption struct {
	Providers map[string]JWTProvider `json:"providers,omitempty"`
}

// JWTProvider is one issuer and its keys.
type JWTProvider struct {
	Issuer          string          `json:"issuer,omitempty"`
	TokenSource     *TokenSource    `json:"tokenSource,omitempty"`
	ClaimsToHeaders []ClaimToHeader `json:"claimsToHeaders,omitempty"`
	JWKS            *JWKS           `json:"jwks,omitempty"`
}

// TokenSource says where the token is read from.
type TokenSource struct {
	Headers []TokenHeader `json:"headers,omitempty"`
}

// TokenHeader is a header carrying a token.
type TokenHeader struct {
	Header string `json:"header"`
	Prefix string `json:"prefix,omitempty"`
}

// ClaimToHeader copies a claim into a request header.
type ClaimToHeader struct {
	Claim  string `json:"claim"`
	Header string `json:"header"`
}

// JWKS locates the key set.
type JWKS struct {
	Remote *RemoteJWKS `json:"remote,omitempty"`
}

// RemoteJWKS is fetched from url through an Upstream.
type RemoteJWKS struct {
	URL         string `json:"url"`
	UpstreamRef Ref    `json:"upstreamRef"`
}

// RBACOption holds named policies; a request matching none is denied.
type RBACOption struct {
	Policies map[string]RBACPolicy `json:"policies,omitempty"`
}

// RBACPolicy allows its principals the listed permissions.
type RBACPolicy struct {
	Principals  []RBACPrincipal  `json:"principals,omitempty"`
	Permissions *RBACPermissions `json:"permissions,omitempty"`
}

// RBACPrincipal matches JWT claims.
type RBACPrincipal struct {
	JWTPrincipal JWTPrincipal `json:"jwtPrincipal"`
}

// JWTPrincipal requires claims to have values.
type JWTPrincipal struct {
	Claims map[string]string `json:"claims"`
}

// RBACPermissions are what a policy allows.
type RBACPermissions struct {
	PathPrefix string   `json:"pathPrefix,omitempty"`
	Methods    []string `json:"methods,omitempty"`
}
