package translate

// RouteOptions are the options of one VirtualService route, shared by the Routes of its
// matchers. Every field is data for fixed Envoy filters (jwt_authn, rbac, and the early
// transformations through header_to_metadata and one reviewed Lua script).
type RouteOptions struct {
	// Key names the route in listener-wide filter config: "<vs id>/routes[i]". It is the
	// route's jwt_authn requirement name.
	Key string `json:"key"`
	// JWT are the providers of which any one must verify the request's token; none
	// without jwt.
	JWT []*JWTProvider `json:"jwt,omitempty"`
	// RBAC are the policies of which one must allow the request; nil without rbac.
	RBAC []*RBACPolicy `json:"rbac,omitempty"`
	// Extractors run first, every one on the request as it arrived.
	Extractors []*Extractor `json:"extractors,omitempty"`
	// Headers are set from templates after the extractors ran, in order.
	Headers []*HeaderTemplate `json:"headers,omitempty"`
	// ClaimHeaders are the (lower-case) headers the JWT providers write: removed from
	// the request before jwt_authn runs, so only a verified claim can set them.
	ClaimHeaders []string `json:"claimHeaders,omitempty"`
}

// JWTProvider verifies tokens of one issuer with a remote key set.
type JWTProvider struct {
	// Name is unique in the listener: "<vs id>/routes[i]/<provider>".
	Name   string `json:"name"`
	Issuer string `json:"issuer,omitempty"`
	// Headers carry the token (Authorization with "Bearer " when none is given).
	Headers []TokenHeader `json:"headers"`
	JWKSURL string        `json:"jwksUrl"`
	// JWKSCluster is the cluster the key set is fetched through.
	JWKSCluster     string          `json:"jwksCluster"`
	ClaimsToHeaders []ClaimToHeader `json:"claimsToHeaders,omitempty"`
}

// TokenHeader is a header carrying a token after an optional prefix.
type TokenHeader struct {
	Name   string `json:"name"`
	Prefix string `json:"prefix,omitempty"`
}

// ClaimToHeader copies a verified claim into a request header.
type ClaimToHeader struct {
	Claim  string `json:"claim"`
	Header string `json:"header"`
}

// RBACPolicy allows a request whose JWT claims match one principal and whose method and
// path match the permissions.
type RBACPolicy struct {
	Name string `json:"name"`
	// Principals each require every claim to equal its value.
	Principals []map[string]string `json:"principals"`
	PathPrefix string              `json:"pathPrefix,omitempty"`
	Methods    []string            `json:"methods,omitempty"`
}

// Extractor takes a value from a request header: the whole match of Regex (Subgroup 0)
// or one capture group, the regex matching the whole value; "" when the header is
// missing or does not match.
type Extractor struct {
	// Key is unique in the route: "<transform index>.<name>".
	Key      string `json:"key"`
	Header   string `json:"header"`
	Regex    string `json:"regex"`
	Subgroup int    `json:"subgroup"`
}

// HeaderTemplate sets a request header to its parts, concatenated.
type HeaderTemplate struct {
	Name  string         `json:"name"`
	Parts []TemplatePart `json:"parts"`
}

// TemplatePart is literal Text, or the value of the extractor Value (an Extractor's Key).
type TemplatePart struct {
	Text  string `json:"text,omitempty"`
	Value string `json:"value,omitempty"`
}
