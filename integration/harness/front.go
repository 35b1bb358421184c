package harness

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server/chain"
)

// Echo is what the front's built-in upstream saw of an allowed request.
type Echo struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
}

// Front plays the proxy for a chain in tests that drive a step directly: it builds
// the AuthorizationRequest from the HTTP request, sends a deny to the client as is
// (status, headers, repeated headers, body), and on an allow applies the header
// changes and answers with the Echo of the request the upstream would get.
type Front struct {
	URL   string
	Chain *chain.Chain
	srv   *http.Server
}

// StartFront serves c on 127.0.0.1:port until the test ends.
func StartFront(t testing.TB, port int, c *chain.Chain) *Front {
	t.Helper()
	l, err := net.Listen("tcp", addr(port))
	if err != nil {
		t.Fatalf("harness: front: %v", err)
	}
	f := &Front{URL: "http://" + addr(port), Chain: c}
	f.srv = &http.Server{Handler: f, ReadHeaderTimeout: 5 * time.Second}
	go f.srv.Serve(l)
	t.Cleanup(func() { f.srv.Close() })
	return f
}

// ServeHTTP implements http.Handler.
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := Request(r)
	out := f.Chain.Run(r.Context(), req)
	resp := out.Response
	if !resp.Allowed {
		writeHeaders(w, resp)
		w.WriteHeader(resp.StatusCode())
		w.Write([]byte(resp.Body))
		return
	}
	h := make(map[string]string, len(req.Headers))
	for k, v := range req.Headers { // Run merged the allow's changes into req
		h[k] = v
	}
	writeHeaders(w, resp)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(Echo{Method: req.Method, Path: req.Path, Headers: h})
}

// Request is the AuthorizationRequest a proxy would send for r.
func Request(r *http.Request) *pluginapi.AuthorizationRequest {
	h := make(map[string]string, len(r.Header)+1)
	for k, vs := range r.Header {
		sep := ","
		if strings.EqualFold(k, "cookie") {
			sep = "; "
		}
		h[strings.ToLower(k)] = strings.Join(vs, sep)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return &pluginapi.AuthorizationRequest{
		Method:            r.Method,
		Path:              r.RequestURI,
		Host:              r.Host,
		Scheme:            scheme,
		Headers:           h,
		ContextExtensions: map[string]string{"config_id": "test"},
		RequestID:         r.Header.Get("X-Request-Id"),
	}
}

func writeHeaders(w http.ResponseWriter, resp *pluginapi.AuthorizationResponse) {
	for k, v := range resp.ResponseHeaders {
		w.Header().Set(k, v)
	}
	for k, vs := range resp.ResponseHeaderValues {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
}
