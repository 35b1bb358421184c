package pluginapi

// AuthorizationRequest is the request a step decides on. It is built once per Check;
// headers added by earlier steps of the same chain are already merged into Headers.
type AuthorizationRequest struct {
	// Method is the HTTP method, such as "GET".
	Method string
	// Path is the request path including the query string, as Envoy's :path.
	Path string
	// Host is the authority (Host header).
	Host string
	// Scheme is "http" or "https".
	Scheme string
	// Protocol is the HTTP protocol, such as "HTTP/1.1".
	Protocol string
	// Headers maps lower-case header names to values. Repeated headers are joined
	// with "," as Envoy does.
	Headers map[string]string
	// Body is the request body when the proxy is configured to send it.
	Body []byte
	// ContextExtensions are the per-route values set in the proxy configuration;
	// "config_id" names the AuthConfig.
	ContextExtensions map[string]string
	// Source and Destination describe the peers of the downstream connection.
	Source, Destination Peer
	// RequestID is the proxy's request id (x-request-id), for logs.
	RequestID string
	// State is shared by the steps of one chain for one request: a step may leave
	// values here for the steps after it.
	State map[string]any
	// RawCheckRequest is the protobuf encoding of the envoy.service.auth.v3.CheckRequest,
	// for plugins that need an attribute not copied above. Decoding it is the
	// plugin's business; the host does not share its protobuf types with plugins.
	RawCheckRequest []byte
}

// Peer is one side of the downstream connection.
type Peer struct {
	// Address is "ip:port" when known.
	Address string
	// Principal is the peer's identity from its TLS certificate, when there is one.
	Principal string
}

// Header returns the value of the named header; name is matched case-insensitively.
func (r *AuthorizationRequest) Header(name string) (string, bool) {
	v, ok := r.Headers[lower(name)]
	return v, ok
}

// lower avoids importing strings for a hot path that is almost always already lower case.
func lower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
