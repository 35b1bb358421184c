package plugintest

import (
	"strings"

	"gatehouse.dev/gatehouse/pluginapi"
)

// RequestBuilder builds an AuthorizationRequest the way the server fills one from
// Envoy's CheckRequest. Start one with NewRequest.
type RequestBuilder struct {
	r pluginapi.AuthorizationRequest
}

// NewRequest starts a request with method and path (the path may hold a query), over
// HTTP/1.1 with scheme "http" and host "example.com".
func NewRequest(method, path string) *RequestBuilder {
	return &RequestBuilder{r: pluginapi.AuthorizationRequest{
		Method: method, Path: path, Host: "example.com", Scheme: "http", Protocol: "HTTP/1.1",
		Headers: map[string]string{}, ContextExtensions: map[string]string{},
	}}
}

// Header adds a request header. Names are lower-cased and a repeated header's values
// are joined with ",", as Envoy hands them to the server.
func (b *RequestBuilder) Header(name, value string) *RequestBuilder {
	k := strings.ToLower(name)
	if old, ok := b.r.Headers[k]; ok {
		value = old + "," + value
	}
	b.r.Headers[k] = value
	return b
}

// Headers adds every header of h, as Header does.
func (b *RequestBuilder) Headers(h map[string]string) *RequestBuilder {
	for k, v := range h {
		b.Header(k, v)
	}
	return b
}

// Body sets the request body (the proxy sends it only when configured to).
func (b *RequestBuilder) Body(body string) *RequestBuilder {
	b.r.Body = []byte(body)
	return b
}

// Host sets the authority.
func (b *RequestBuilder) Host(host string) *RequestBuilder {
	b.r.Host = host
	return b
}

// Scheme sets the scheme, "http" or "https".
func (b *RequestBuilder) Scheme(scheme string) *RequestBuilder {
	b.r.Scheme = scheme
	return b
}

// ContextExtension sets a per-route context extension, such as "config_id".
func (b *RequestBuilder) ContextExtension(key, value string) *RequestBuilder {
	b.r.ContextExtensions[key] = value
	return b
}

// Source sets the downstream peer's address ("ip:port") and TLS principal.
func (b *RequestBuilder) Source(address, principal string) *RequestBuilder {
	b.r.Source = pluginapi.Peer{Address: address, Principal: principal}
	return b
}

// RequestID sets the proxy's request id.
func (b *RequestBuilder) RequestID(id string) *RequestBuilder {
	b.r.RequestID = id
	return b
}

// State sets a value an earlier step of the chain left for this one.
func (b *RequestBuilder) State(key string, value any) *RequestBuilder {
	if b.r.State == nil {
		b.r.State = map[string]any{}
	}
	b.r.State[key] = value
	return b
}

// Build returns the request. Each call returns a fresh copy, so one builder can serve
// several cases.
func (b *RequestBuilder) Build() *pluginapi.AuthorizationRequest {
	r := b.r
	r.Headers = copyMap(b.r.Headers)
	r.ContextExtensions = copyMap(b.r.ContextExtensions)
	r.Body = append([]byte(nil), b.r.Body...)
	r.State = make(map[string]any, len(b.r.State))
	for k, v := range b.r.State {
		r.State[k] = v
	}
	return &r
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
