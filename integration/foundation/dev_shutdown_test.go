package foundation_test

import (
	"net/http"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/testbin"
)

const slowResources = `
apiVersion: core.gatehouse.dev/v1
kind: Settings
metadata: {name: default, namespace: gatehouse-system}
spec: {extauth: {requestTimeout: 10s}}
---
apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: echo, namespace: gatehouse-system}
spec: {static: {hosts: [{addr: 127.0.0.1, port: 1}]}}
---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: slow, namespace: gatehouse-system}
spec:
  configs:
    - pluginAuth:
        name: faulty
        exportedSymbolName: Plugin
        config: {Mode: hang, HangFor: 3s}
---
apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: slow, namespace: gatehouse-system}
spec:
  virtualHost:
    routes:
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: echo}}}
        options: {extauth: {configRef: {name: slow}}}
`

// TestDevShutdownDrainsInFlightRequests is the regression test of issue 12 finding 16:
// on SIGTERM, `gatehouse dev` closed its echo upstream (and extauth) together with the
// gateway, so a request in flight that passed auth got an error instead of its answer.
// Now the gateway stops accepting and drains first, and what is behind it stops after.
func TestDevShutdownDrainsInFlightRequests(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "slow.yaml"), slowResources)
	gw := testbin.FreeAddr(t)
	p := testbin.Start(t, nil, testbin.Gatehouse(t), "dev", "--resources", dir, "--plugin-dir", plugins(t),
		"--listen", gw, "--extauth-listen", testbin.FreeAddr(t), "--echo-listen", testbin.FreeAddr(t))
	testbin.WaitTCP(t, p, gw, 20*time.Second)

	type result struct {
		status int
		err    error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := (&http.Client{Timeout: 20 * time.Second}).Get("http://" + gw + "/")
		if err != nil {
			done <- result{err: err}
			return
		}
		resp.Body.Close()
		done <- result{status: resp.StatusCode}
	}()
	// The Check takes 3s (the plugin hangs); stop dev while the request waits on it.
	time.Sleep(time.Second)
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.status != http.StatusOK {
		t.Fatalf("in-flight request during shutdown: status %d, err %v; want 200 from the echo upstream", r.status, r.err)
	}
	p.Wait(t, 20*time.Second)
}
