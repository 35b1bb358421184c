package devgateway

import (
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
)

// Echoed is what the echo upstream returns: the request it received.
type Echoed struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Host    string            `json:"host"`
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body,omitempty"`
}

// Echo is the example upstream: it answers 200 with the request it received as JSON,
// so a curl through the gateway shows what the upstream saw.
func Echo() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		e := Echoed{Method: r.Method, Path: r.URL.RequestURI(), Host: r.Host, Headers: map[string]string{}, Body: string(body)}
		keys := make([]string, 0, len(r.Header))
		for k := range r.Header {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			e.Headers[strings.ToLower(k)] = strings.Join(r.Header[k], ",")
		}
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(e)
	})
}
