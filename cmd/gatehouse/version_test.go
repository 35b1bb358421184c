package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/internal/version"
)

func TestVersionAgainstTheServer(t *testing.T) {
	serve := func(v string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(`{"version":"` + v + `"}`))
		}))
		t.Cleanup(srv.Close)
		return strings.TrimPrefix(srv.URL, "http://")
	}
	same, other := serve(version.Version), serve("9.9.9")
	tests := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"same", []string{"--admin", same}, 0, "server: " + version.Version, ""},
		{"same strict", []string{"--admin", same, "--strict"}, 0, "server: " + version.Version, ""},
		{"differs", []string{"--admin", other}, 0, "server: 9.9.9", "warning: the client (" + version.Version + ") and the control plane (9.9.9) differ"},
		{"differs strict", []string{"--admin", other, "--strict"}, 1, "server: 9.9.9", "warning:"},
		{"no server", []string{"--admin", "127.0.0.1:1"}, 0, "server: unknown", ""},
		{"no server strict", []string{"--admin", "127.0.0.1:1", "--strict"}, 1, "server: unknown", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code, _ := runWith(append([]string{"version"}, tt.args...), &out, &errOut)
			if code != tt.code || !strings.Contains(out.String(), "client: "+version.Version) || !strings.Contains(out.String(), tt.out) || !strings.Contains(errOut.String(), tt.err) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d with %q and %q", code, out.String(), errOut.String(), tt.code, tt.out, tt.err)
			}
		})
	}
}
