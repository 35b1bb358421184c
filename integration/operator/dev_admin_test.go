package operator_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/testbin"
)

func settingsYAML(devMode bool) string {
	return fmt.Sprintf(`apiVersion: core.gatehouse.dev/v1
kind: Settings
metadata: {name: default, namespace: gatehouse-system}
spec: {devMode: %t}
`, devMode)
}

// TestDevAdmin: the deprecated developer API opens when Settings turn devMode on,
// serves its four endpoints redacted, and closes its port when devMode goes off.
func TestDevAdmin(t *testing.T) {
	dir, secrets := healthyDir(t)
	writeFile(t, dir, "settings.yaml", settingsYAML(false))
	dev := testbin.FreeAddr(t)
	cp := &controlPlane{dir: dir, xds: testbin.FreeAddr(t), admin: testbin.FreeAddr(t)}
	cp.proc = testbin.Start(t, nil, testbin.Gatehouse(t), "controlplane", "--resources", dir,
		"--xds-listen", cp.xds, "--admin-listen", cp.admin, "--dev-admin-listen", dev)
	testbin.WaitTCP(t, cp.proc, cp.admin, settle)
	open := func() bool {
		c, err := net.DialTimeout("tcp", dev, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	}
	testbin.Eventually(t, settle, func() error {
		if code, _, _ := httpDo(http.MethodGet, "http://"+cp.admin+"/snapshots/health", ""); code != 200 {
			return fmt.Errorf("no snapshot yet")
		}
		return nil
	})
	if open() {
		t.Fatalf("the developer API listens on %s with devMode false", dev)
	}

	writeFile(t, dir, "settings.yaml", settingsYAML(true))
	testbin.WaitTCP(t, cp.proc, dev, settle)
	for _, tt := range []struct{ path, want string }{
		{"/", "Developer API"},
		{"/xds", `"gatehouse-system~gateway-proxy"`},
		{"/xds/extauth", `"clientSecret": "<redacted>"`},
		{"/xds/gatehouse-system~gateway-proxy", "type.googleapis.com/envoy.config.cluster.v3.Cluster"},
		{"/api", `"client-secret": "<redacted>"`},
	} {
		code, body, err := httpDo(http.MethodGet, "http://"+dev+tt.path, "")
		if err != nil || code != http.StatusOK || !strings.Contains(body, tt.want) {
			t.Errorf("GET %s = %d (%v), want 200 with %s:\n%.300s", tt.path, code, err, tt.want, body)
		}
		assertNoSecret(t, tt.path, body, secrets)
	}
	_, keys, _ := httpDo(http.MethodGet, "http://"+dev+"/xds", "")
	var list []string
	if err := json.Unmarshal([]byte(keys), &list); err != nil || len(list) != 2 {
		t.Errorf("GET /xds = %s (%v), want a JSON array of the two keys", keys, err)
	}
	if code, _, _ := httpDo(http.MethodGet, "http://"+dev+"/xds/nobody~none", ""); code != http.StatusNotFound {
		t.Errorf("GET /xds/nobody~none = %d, want 404", code)
	}

	writeFile(t, dir, "settings.yaml", settingsYAML(false))
	testbin.Eventually(t, settle, func() error {
		if open() {
			return fmt.Errorf("the developer API still listens with devMode false")
		}
		return nil
	})
}
