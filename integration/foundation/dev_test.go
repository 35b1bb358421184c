package foundation_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/devgateway"
	"gatehouse.dev/gatehouse/integration/testbin"
)

// devGateway is a running `gatehouse dev`.
type devGateway struct {
	proc *testbin.Process
	base string // http://addr of the gateway
}

func startDev(t *testing.T, extra ...string) *devGateway {
	t.Helper()
	gw, ex, echo := testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t)
	args := append([]string{"dev", "--plugin-dir", plugins(t), "--listen", gw, "--extauth-listen", ex, "--echo-listen", echo}, extra...)
	p := testbin.Start(t, nil, testbin.Gatehouse(t), args...)
	testbin.WaitTCP(t, p, gw, 10*time.Second)
	return &devGateway{proc: p, base: "http://" + gw}
}

// answer is what a client sees of a response through the gateway.
type answer struct {
	Status        int
	ContentLength string
	// Upstream is the request as the echo upstream saw it (nil when it was not reached).
	Upstream *devgateway.Echoed
}

func (d *devGateway) get(t *testing.T, host, path string, headers map[string]string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, d.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	a := answer{Status: resp.StatusCode, ContentLength: resp.Header.Get("Content-Length")}
	if resp.Header.Get("Content-Type") == "application/json" {
		a.Upstream = &devgateway.Echoed{}
		if err := json.Unmarshal(body, a.Upstream); err != nil {
			t.Fatalf("echo body: %v\n%s", err, body)
		}
	}
	return a
}

// TestDevReadmeSession is the curl session the README shows, on the embedded examples.
func TestDevReadmeSession(t *testing.T) {
	d := startDev(t)

	t.Run("allowed: 200 and the upstream sees the plugin's header", func(t *testing.T) {
		a := d.get(t, "", "/", map[string]string{"x-required": "alpha"})
		if a.Status != http.StatusOK || a.Upstream == nil {
			t.Fatalf("got %+v, want 200 from the echo upstream", a)
		}
		if got := a.Upstream.Headers["matched-allowed-headers"]; got != "true" {
			t.Errorf("upstream header matched-allowed-headers = %q, want true", got)
		}
	})
	for _, tc := range []struct {
		name    string
		headers map[string]string
	}{
		{"missing header", nil},
		{"value outside AllowedValues", map[string]string{"x-required": "nope"}},
	} {
		t.Run("denied: "+tc.name+" is 403 with an empty body", func(t *testing.T) {
			a := d.get(t, "", "/", tc.headers)
			if diff := cmp.Diff(answer{Status: http.StatusForbidden, ContentLength: "0"}, a); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	t.Run("route without an AuthConfig: 200 with no auth", func(t *testing.T) {
		a := d.get(t, "", "/public/hello", nil)
		if a.Status != http.StatusOK || a.Upstream == nil || a.Upstream.Path != "/public/hello" {
			t.Fatalf("got %+v, want 200 from the echo upstream for /public/hello", a)
		}
		if _, ok := a.Upstream.Headers["matched-allowed-headers"]; ok {
			t.Error("the unauthenticated route went through the plugin")
		}
	})
}

const devResources = `
apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: echo, namespace: apps}
spec:
  static:
    hosts: [{addr: 127.0.0.1, port: %d}]
---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: team, namespace: apps}
spec:
  configs:
    - pluginAuth:
        name: required_header
        exportedSymbolName: Plugin
        config: {RequiredHeader: x-team, AllowedValues: [%s]}
---
apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: api, namespace: apps}
spec:
  virtualHost:
    domains: [api.example.test]
    routes:
      - matchers: [{prefix: /open}]
        routeAction: {single: {upstream: {name: echo}}}
        options:
          headerManipulation: {requestHeadersToRemove: [x-internal]}
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: echo}}}
        options:
          extauth: {configRef: {name: team}}
`

func TestDevOwnResources(t *testing.T) {
	dir := t.TempDir()
	echo := testbin.FreeAddr(t)
	var port int
	if _, err := fmt.Sscanf(echo, "127.0.0.1:%d", &port); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "resources.yaml")
	writeFile(t, file, fmt.Sprintf(devResources, port, "red"))
	gw, ex := testbin.FreeAddr(t), testbin.FreeAddr(t)
	p := testbin.Start(t, nil, testbin.Gatehouse(t), "dev", "--resources", dir, "--plugin-dir", plugins(t),
		"--listen", gw, "--extauth-listen", ex, "--echo-listen", echo)
	testbin.WaitTCP(t, p, gw, 10*time.Second)
	d := &devGateway{proc: p, base: "http://" + gw}

	tests := []struct {
		name, host, path string
		headers          map[string]string
		status           int
	}{
		{"secured route allows the configured value", "api.example.test", "/v1", map[string]string{"x-team": "red"}, 200},
		{"secured route denies another value", "api.example.test", "/v1", map[string]string{"x-team": "blue"}, 403},
		{"host with a port still matches the domain", "api.example.test:8080", "/v1", map[string]string{"x-team": "red"}, 200},
		{"open route needs nothing", "api.example.test", "/open", nil, 200},
		{"unknown domain is 404", "other.example.test", "/v1", map[string]string{"x-team": "red"}, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if a := d.get(t, tt.host, tt.path, tt.headers); a.Status != tt.status {
				t.Errorf("status %d, want %d (%+v)", a.Status, tt.status, a)
			}
		})
	}
	t.Run("requestHeadersToRemove keeps the header from the upstream", func(t *testing.T) {
		a := d.get(t, "api.example.test", "/open", map[string]string{"x-internal": "secret", "x-kept": "1"})
		if a.Upstream == nil || a.Upstream.Headers["x-kept"] != "1" {
			t.Fatalf("got %+v", a)
		}
		if v, ok := a.Upstream.Headers["x-internal"]; ok {
			t.Errorf("upstream saw x-internal=%q", v)
		}
	})
	t.Run("an edit of the resources is served without restart", func(t *testing.T) {
		writeFile(t, file, fmt.Sprintf(devResources, port, "blue"))
		testbin.Eventually(t, 5*time.Second, func() error {
			if a := d.get(t, "api.example.test", "/v1", map[string]string{"x-team": "blue"}); a.Status != 200 {
				return fmt.Errorf("blue: %d", a.Status)
			}
			return nil
		})
	})
}
