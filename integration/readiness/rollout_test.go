package readiness_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/devgateway"
	"gatehouse.dev/gatehouse/integration/testbin"
)

// restartConfigDelay is how long a restarted replica takes to build its config (the
// plugin's Start): the window in which it used to deny everything.
const restartConfigDelay = "1500ms"

// tally counts the answers of the request loops.
type tally struct {
	total, failed, wronglyDenied, wronglyAllowed atomic.Int64
	mu                                           sync.Mutex
	firstWrong                                   string
}

func (c *tally) wrong(what string, n *atomic.Int64) {
	n.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.firstWrong == "" {
		c.firstWrong = what
	}
}

// TestRollingRestartBehindTheGateway: one extauth replica's restart cost 54-171 wrongly
// denied requests: the gateway kept calling the stopped replica, then the new one
// denied configs it had not received yet (issue 26). Here the gateway (`gatehouse
// gateway`, which health-checks the extauth cluster as Envoy does with what the control
// plane emits) sits in front of two replicas, each restarted in turn under four request
// loops; a restarted replica takes restartConfigDelay to build its config. Every
// response must be right: 200 with the allowed header, 403 without; none failed.
// Counting, not timing.
func TestRollingRestartBehindTheGateway(t *testing.T) {
	echo := httptest.NewServer(devgateway.Echo())
	t.Cleanup(echo.Close)
	replicas := []string{testbin.FreeAddr(t), testbin.FreeAddr(t)}
	dir := t.TempDir()
	testbin.WriteFile(t, filepath.Join(dir, "upstreams.yaml"), testbin.Upstream("echo", echo.Listener.Addr().String())+"---\n"+testbin.Upstream("extauth", replicas...))
	// A request timeout well above a busy machine's scheduling delays, so a timeout is
	// not taken for a failure of the rollout.
	testbin.WriteFile(t, filepath.Join(dir, "settings.yaml"), `apiVersion: core.gatehouse.dev/v1
kind: Settings
metadata: {name: default, namespace: gatehouse-system}
spec:
  extauth: {requestTimeout: 5s}
`)
	testbin.WriteFile(t, filepath.Join(dir, "auth_config.yaml"), authConfig("slow", "", restartConfigDelay))
	testbin.WriteFile(t, filepath.Join(dir, "virtual_service.yaml"), `apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: default, namespace: gatehouse-system}
spec:
  virtualHost:
    domains: ["*"]
    routes:
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: echo, namespace: gatehouse-system}}}
        options:
          extauth: {configRef: {name: slow, namespace: gatehouse-system}}
`)
	xdsAddr := testbin.FreeAddr(t)
	startControlPlane(t, dir, xdsAddr)
	ex := make([]*extauth, len(replicas))
	for i, addr := range replicas {
		ex[i] = startExtauth(t, addr, "--xds", xdsAddr)
	}
	gw := testbin.FreeAddr(t)
	gateway := testbin.Start(t, nil, testbin.Gatehouse(t), "gateway", "--xds", xdsAddr, "--role", xds.DefaultProxyRole,
		"--listen", gw, "--https-listen", "", "--admin-listen", "")
	testbin.WaitTCP(t, gateway, gw, settle)
	client := &http.Client{Timeout: 20 * time.Second}
	get := func(allowed bool) (int, error) {
		req, err := http.NewRequest(http.MethodGet, "http://"+gw+"/", nil)
		if err != nil {
			return 0, err
		}
		if allowed {
			req.Header.Set(header, value)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	// Both replicas serve through the gateway before the loops start.
	testbin.Eventually(t, settle, func() error {
		if _, err := get(true); err != nil {
			return err
		}
		for i, e := range ex {
			if e.checksAllowed(t, configID) == 0 {
				return fmt.Errorf("replica %d has not been sent a Check yet", i)
			}
		}
		return nil
	})

	var c tally
	stop := make(chan struct{})
	var loops sync.WaitGroup
	for range 4 {
		loops.Go(func() {
			for allowed := true; ; allowed = !allowed {
				select {
				case <-stop:
					return
				default:
				}
				c.total.Add(1)
				status, err := get(allowed)
				switch {
				case err != nil || status >= 500:
					c.wrong(fmt.Sprintf("allowed=%t: %d, %v", allowed, status, err), &c.failed)
				case allowed && status != http.StatusOK:
					c.wrong(fmt.Sprintf("with the header: %d", status), &c.wronglyDenied)
				case !allowed && status != http.StatusForbidden:
					c.wrong(fmt.Sprintf("without the header: %d", status), &c.wronglyAllowed)
				}
			}
		})
	}
	for i, addr := range replicas {
		before := c.total.Load()
		if err := ex[i].proc.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		ex[i].proc.Wait(t, grace)
		ex[i] = startExtauth(t, addr, "--xds", xdsAddr)
		// The new replica is in rotation once the gateway sends it Checks; only then is
		// the next one restarted, as a rollout waits for readiness.
		testbin.Eventually(t, settle, func() error {
			if ex[i].checksAllowed(t, configID) == 0 {
				return fmt.Errorf("the restarted replica %d has not been sent a Check yet", i)
			}
			return nil
		})
		t.Logf("replica %d (%s) restarted; %d requests meanwhile", i, filepath.Base(addr), c.total.Load()-before)
	}
	close(stop)
	loops.Wait()

	t.Logf("%d requests: %d failed, %d wrongly denied, %d wrongly allowed", c.total.Load(), c.failed.Load(), c.wronglyDenied.Load(), c.wronglyAllowed.Load())
	if c.failed.Load()+c.wronglyDenied.Load()+c.wronglyAllowed.Load() != 0 {
		t.Errorf("%d failed, %d wrongly denied, %d wrongly allowed of %d requests; the first: %s",
			c.failed.Load(), c.wronglyDenied.Load(), c.wronglyAllowed.Load(), c.total.Load(), c.firstWrong)
	}
	if c.total.Load() < 100 {
		t.Errorf("only %d requests during the rollout: too few to say anything", c.total.Load())
	}
}
