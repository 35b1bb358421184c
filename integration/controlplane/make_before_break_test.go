package controlplane_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// slowAuthConfig is an AuthConfig of the slowstart plugin, whose service takes
// startFor to start in extauth and then, with no Header in its config, allows every
// request, marked with x-slowstart: allowed.
func slowAuthConfig(name, startFor string) string {
	return fmt.Sprintf(`apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: %s, namespace: gatehouse-system}
spec:
  configs:
    - pluginAuth:
        name: slowstart
        exportedSymbolName: Plugin
        config: {Delay: %s}
`, name, startFor)
}

// A route secured by a new AuthConfig whose plugin takes 4 s to start in extauth
// reaches the gateway only once extauth has acknowledged it: every request sent from
// the moment the files are written is answered right (the old route's answer, then
// the new one's), none denied for a config extauth does not have yet. Without the
// ordering, the gateway had the route at once and extauth denied it for ~3 s.
func TestANewRouteWaitsForExtauthToHaveItsAuthConfig(t *testing.T) {
	s := startSystem(t, "alpha")
	s.ex.Kill()
	s.plugins = testbin.PluginDir(t, "./integration/testdata/plugins/slowstart", "./plugins/required_header")
	s.startExtauth(t)
	s.expect(t, "/slow", alpha, http.StatusOK) // the "/" route, secured by plugin-auth

	// Poll /slow from before the files are written until the new route answers.
	var (
		mu      sync.Mutex
		answers = map[string]int{}
		done    = make(chan struct{})
		stop    = make(chan struct{})
	)
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			r, err := s.get("/slow", alpha)
			key := fmt.Sprint(r.status)
			switch {
			case err != nil:
				key = "error: " + err.Error()
			case r.upstream != nil && r.upstream.Headers["x-slowstart"] == "allowed":
				key = "new route"
			}
			mu.Lock()
			answers[key]++
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	testbin.WriteFile(t, filepath.Join(s.dir, "slow_auth.yaml"), slowAuthConfig("slow-auth", "4s"))
	vs := virtualService("default", `["*"]`, "/extra")
	vs = strings.Replace(vs, "      - matchers: [{prefix: /}]", `      - matchers: [{prefix: /slow}]
        routeAction: {single: {upstream: {name: echo, namespace: gatehouse-system}}}
        options: {extauth: {configRef: {name: slow-auth, namespace: gatehouse-system}}}
      - matchers: [{prefix: /}]`, 1)
	testbin.WriteFile(t, filepath.Join(s.dir, "virtual_service.yaml"), vs)
	s.expectDataPlane(t, "VirtualService", "default", "waiting for extauth to acknowledge its AuthConfig")
	testbin.Eventually(t, settle, func() error {
		mu.Lock()
		defer mu.Unlock()
		if answers["new route"] < 20 {
			return fmt.Errorf("answers so far: %v", answers)
		}
		return nil
	})
	close(stop)
	<-done
	s.expectDataPlane(t, "AuthConfig", "slow-auth", "extauth 1/1")
	s.expectDataPlane(t, "VirtualService", "default", "proxies 1/1")
	mu.Lock()
	defer mu.Unlock()
	for k, n := range answers {
		if k != "200" && k != "new route" {
			t.Errorf("%d requests answered %s while the route was added (all: %v)", n, k, answers)
		}
	}
}

// expectDataPlane polls /statuses until kind name says dataPlane.
func (s *system) expectDataPlane(t *testing.T, kind, name, dataPlane string) {
	t.Helper()
	testbin.Eventually(t, settle, func() error {
		all, err := s.statuses()
		if err != nil {
			return err
		}
		for _, r := range all {
			if r.Kind == kind && r.Name == name {
				if r.DataPlane != dataPlane {
					return fmt.Errorf("%s %s: data plane %q, want %q", kind, name, r.DataPlane, dataPlane)
				}
				return nil
			}
		}
		return fmt.Errorf("%s %s: no status", kind, name)
	})
}

// A new route does not wait for an extauth replica that is still building its first
// config (it is not ready, so no Check reaches it): with the bound far off, the route
// serves while a second replica spends 6 s building an AuthConfig of the slowstart
// plugin, and that replica has the new AuthConfig too once it is ready. Before, the
// route waited for it until it had built everything (or the bound passed).
func TestANewRouteDoesNotWaitForAReplicaStillJoining(t *testing.T) {
	s := startSystemWith(t, "alpha", "", "--extauth-ack-timeout", "2m")
	s.ex.Kill()
	s.plugins = testbin.PluginDir(t, "./integration/testdata/plugins/slowstart", "./plugins/required_header")
	s.startExtauth(t)
	s.expect(t, "/joining", alpha, http.StatusOK) // the "/" route, secured by plugin-auth
	testbin.WriteFile(t, filepath.Join(s.dir, "slow_auth.yaml"), slowAuthConfig("slow-auth", "6s"))
	s.expectDataPlane(t, "AuthConfig", "slow-auth", "extauth 1/1")

	admin := testbin.FreeAddr(t)
	second := testbin.Start(t, nil, testbin.Gatehouse(t), "extauth", "--xds", s.xds, "--plugin-dir", s.plugins,
		"--listen", testbin.FreeAddr(t), "--admin-listen", admin)
	s.expectDataPlane(t, "AuthConfig", "slow-auth", "extauth 1/2") // connected, building

	testbin.WriteFile(t, filepath.Join(s.dir, "joining_auth.yaml"), `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: joining-auth, namespace: gatehouse-system}
spec:
  configs:
    - pluginAuth: {name: required_header, exportedSymbolName: Plugin, config: {RequiredHeader: x-joining, AllowedValues: ["yes"]}}
`)
	vs := virtualService("default", `["*"]`, "/extra")
	vs = strings.Replace(vs, "      - matchers: [{prefix: /}]", `      - matchers: [{prefix: /joining}]
        routeAction: {single: {upstream: {name: echo, namespace: gatehouse-system}}}
        options: {extauth: {configRef: {name: joining-auth, namespace: gatehouse-system}}}
      - matchers: [{prefix: /}]`, 1)
	testbin.WriteFile(t, filepath.Join(s.dir, "virtual_service.yaml"), vs)
	s.expectDataPlane(t, "VirtualService", "default", "proxies 1/1")
	// The new route asks for x-joining, where the old one ("/", plugin-auth) let alpha
	// through.
	s.expect(t, "/joining", alpha, http.StatusForbidden)
	s.expect(t, "/joining", map[string]string{"x-joining": "yes"}, http.StatusOK)
	resp, err := http.Get("http://" + admin + "/ready")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Fatal("the second replica was ready by the time the new route served: the route waited for it to build its first config")
	}
	s.expectDataPlane(t, "AuthConfig", "joining-auth", "extauth 2/2")
	if second.Exited() {
		t.Fatalf("the second replica exited:\n%s", second.Output())
	}
}
