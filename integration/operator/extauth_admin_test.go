package operator_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/controlplane/snapshots"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/integration/testbin"
)

// TestExtauthAdmin: extauth's admin shows a span per Check with a child per step at
// /zpages, times each step in /metrics, and changes its log level with PUT /logging.
func TestExtauthAdmin(t *testing.T) {
	extauth, admin, echo, gw := testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t)
	dir := t.TempDir()
	hostPort := func(a string) (string, string) { h, p, _ := net.SplitHostPort(a); return h, p }
	eh, ep := hostPort(extauth)
	ch, cport := hostPort(echo)
	writeFile(t, dir, "upstreams.yaml", fmt.Sprintf(`apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: extauth, namespace: gatehouse-system}
spec: {static: {hosts: [{addr: %s, port: %s}]}}
---
apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: echo, namespace: gatehouse-system}
spec: {static: {hosts: [{addr: %s, port: %s}]}}
`, eh, ep, ch, cport))
	writeFile(t, dir, "auth_configs.yaml", pluginAuthYAML)
	writeFile(t, dir, "virtual_services.yaml", virtualServiceYAML("default", "*", "echo"))
	cp := startControlPlane(t, dir)
	bin := testbin.Gatehouse(t)
	ex := testbin.Start(t, nil, bin, "extauth", "--xds", cp.xds, "--plugin-dir", testbin.SamplePlugins(t), "--listen", extauth, "--admin-listen", admin,
		"--trace-sample-ratio", "1") // every Check recorded, so the few below show in /zpages
	g := testbin.Start(t, nil, bin, "gateway", "--xds", cp.xds, "--role", xds.DefaultProxyRole, "--listen", gw,
		"--https-listen", "", "--admin-listen", "", "--echo-listen", echo)
	testbin.WaitTCP(t, ex, admin, settle)
	testbin.WaitTCP(t, g, gw, settle)
	get := func(value string) (int, error) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+gw+"/", nil)
		req.Header.Set("x-required", value)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	testbin.Eventually(t, settle, func() error {
		if code, err := get("alpha"); err != nil || code != http.StatusOK {
			return fmt.Errorf("GET / with alpha: %d %v", code, err)
		}
		if code, err := get("nope"); err != nil || code != http.StatusForbidden {
			return fmt.Errorf("GET / with nope: %d %v", code, err)
		}
		return nil
	})

	_, page, _ := httpDo(http.MethodGet, "http://"+admin+"/zpages", "")
	for _, want := range []string{"extauth.Check", "extauth.step"} {
		if !strings.Contains(page, want) {
			t.Errorf("extauth /zpages lacks the span %s", want)
		}
	}
	_, metrics, _ := httpDo(http.MethodGet, "http://"+admin+"/metrics", "")
	if !strings.Contains(metrics, `gatehouse_extauth_step_seconds_count{config_id="gatehouse-system.plugin-auth",step="`) {
		t.Errorf("extauth /metrics lacks the step latency of plugin-auth")
	}

	// The version extauth applied is the one the control plane serves.
	var served map[string]map[string]map[string]struct {
		Version string `json:"version"`
	}
	if _, err := snapshots.Fetch(context.Background(), cp.admin, "/snapshots/xds?role=extauth", &served); err != nil {
		t.Fatal(err)
	}
	v := served[xds.RoleExtauth][xds.ExtAuthConfigType]["gatehouse-system.plugin-auth"].Version
	if want := fmt.Sprintf(`gatehouse_extauth_xds_config_version{config_id="gatehouse-system.plugin-auth",version=%q} 1`, v); v == "" || !strings.Contains(metrics, want) {
		t.Errorf("extauth /metrics lacks %s", want)
	}

	if code, body, _ := httpDo(http.MethodPut, "http://"+admin+"/logging", `{"level":"debug"}`); code != 200 || !jsonEqual(body, `{"level":"debug"}`) {
		t.Fatalf("PUT /logging debug = %d %s", code, body)
	}
	mark := len(ex.Output())
	// A deny is logged at debug level only.
	testbin.Eventually(t, settle, func() error {
		if _, err := get("nope"); err != nil {
			return err
		}
		if !strings.Contains(ex.Output()[mark:], `"level":"debug"`) {
			return fmt.Errorf("no debug line after PUT /logging debug")
		}
		return nil
	})
	if code, body, _ := httpDo(http.MethodPut, "http://"+admin+"/logging", `{"level":"info"}`); code != 200 {
		t.Fatalf("PUT /logging info = %d %s", code, body)
	}
	mark = len(ex.Output())
	for range 5 {
		if code, err := get("nope"); err != nil || code != http.StatusForbidden {
			t.Fatalf("GET / with nope: %d %v", code, err)
		}
	}
	if out := ex.Output()[mark:]; strings.Contains(out, `"level":"debug"`) {
		t.Errorf("debug lines at level info:\n%s", out)
	}
}
