package pluginapi

// AuthorizationResponse is a step's decision. Build one with Allow, Deny,
// Unauthenticated or Forbidden and add headers with the With… methods.
type AuthorizationResponse struct {
	// Allowed is true when the request may continue.
	Allowed bool
	// Status is the HTTP status sent to the client on a deny (403 when zero).
	Status int
	// Body is sent to the client on a deny.
	Body string
	// RequestHeaders are set on the request (replacing any value) for the steps
	// that follow and, at the end of the chain, for the upstream.
	RequestHeaders map[string]string
	// AppendRequestHeaders are appended to the request's existing values.
	AppendRequestHeaders map[string]string
	// RemoveRequestHeaders are removed from the request.
	RemoveRequestHeaders []string
	// ResponseHeaders go to the client: on a deny with the denied response, on an
	// allow added to the upstream's response.
	ResponseHeaders map[string]string
	// ResponseHeaderValues go to the client like ResponseHeaders, but each value is
	// sent as its own header line, for headers that repeat such as Set-Cookie.
	ResponseHeaderValues map[string][]string
}

// Allow lets the request continue.
func Allow() *AuthorizationResponse { return &AuthorizationResponse{Allowed: true} }

// Deny stops the chain and answers the client with status and body.
func Deny(status int, body string) *AuthorizationResponse {
	return &AuthorizationResponse{Status: status, Body: body}
}

// The statuses are numbers, not net/http's constants: importing net/http for three
// constants linked it into every plugin (more than doubling the sample plugin) and
// into every relink of `gatehouse dev --plugin-module`, while pluginapi is all a plugin
// needs to import from Gatehouse.
const (
	statusUnauthorized = 401
	statusForbidden    = 403
)

// Forbidden denies with 403 and an empty body.
func Forbidden() *AuthorizationResponse { return Deny(statusForbidden, "") }

// Unauthenticated denies with 401 and an empty body.
func Unauthenticated() *AuthorizationResponse { return Deny(statusUnauthorized, "") }

// WithRequestHeader sets a request header (lower-cased) and returns r.
func (r *AuthorizationResponse) WithRequestHeader(name, value string) *AuthorizationResponse {
	r.RequestHeaders = put(r.RequestHeaders, lower(name), value)
	return r
}

// WithAppendedRequestHeader appends a value to a request header and returns r.
func (r *AuthorizationResponse) WithAppendedRequestHeader(name, value string) *AuthorizationResponse {
	r.AppendRequestHeaders = put(r.AppendRequestHeaders, lower(name), value)
	return r
}

// WithoutRequestHeader removes a request header and returns r.
func (r *AuthorizationResponse) WithoutRequestHeader(name string) *AuthorizationResponse {
	r.RemoveRequestHeaders = append(r.RemoveRequestHeaders, lower(name))
	return r
}

// WithResponseHeader adds a header to the response the client gets and returns r.
func (r *AuthorizationResponse) WithResponseHeader(name, value string) *AuthorizationResponse {
	r.ResponseHeaders = put(r.ResponseHeaders, lower(name), value)
	return r
}

// WithAddedResponseHeader adds one more line of a repeatable response header (lower-cased),
// such as Set-Cookie, and returns r.
func (r *AuthorizationResponse) WithAddedResponseHeader(name, value string) *AuthorizationResponse {
	if r.ResponseHeaderValues == nil {
		r.ResponseHeaderValues = make(map[string][]string, 1)
	}
	k := lower(name)
	r.ResponseHeaderValues[k] = append(r.ResponseHeaderValues[k], value)
	return r
}

// StatusCode is the HTTP status of a deny, defaulting to 403.
func (r *AuthorizationResponse) StatusCode() int {
	if r.Status == 0 {
		return statusForbidden
	}
	return r.Status
}

func put(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = make(map[string]string, 1)
	}
	m[k] = v
	return m
}
