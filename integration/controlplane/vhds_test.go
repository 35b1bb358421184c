package controlplane_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/integration/testbin"
)

const vhdsSettings = `apiVersion: core.gatehouse.dev/v1
kind: Settings
metadata: {name: default, namespace: gatehouse-system}
spec:
  virtualHostDiscovery: true
`

// TestControlPlaneEndToEndOverVHDS: Settings spec.virtualHostDiscovery, written while
// the system serves, moves the gateway's virtual hosts from the route configuration to
// VHDS without a wrong answer; then everything TestControlPlaneEndToEnd checks holds
// with each VirtualService a virtual host of its own: edits, a Rejected edit, a NACK,
// a control-plane crash and restart.
func TestControlPlaneEndToEndOverVHDS(t *testing.T) {
	s := startSystem(t, "alpha, beta")
	s.expect(t, "/", alpha, http.StatusOK)
	testbin.WriteFile(t, filepath.Join(s.dir, "settings.yaml"), vhdsSettings)
	s.expectVHDS(t, "http/gatehouse-system.default")
	s.expect(t, "/", alpha, http.StatusOK)
	s.expect(t, "/", wrong, http.StatusForbidden)
	endToEnd(t, s, "extauth/")
}

// expectVHDS polls the control plane's served state until the gateway's role is served
// the VHDS virtual host name and the route configuration has no virtual host inline.
func (s *system) expectVHDS(t *testing.T, name string) {
	t.Helper()
	testbin.Eventually(t, settle, func() error {
		status, body, err := testbin.Get("http://" + s.admin + "/snapshots/xds?role=" + xds.DefaultProxyRole)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			return fmt.Errorf("GET /snapshots/xds: %d", status)
		}
		if !strings.Contains(body, `"`+name+`"`) || !strings.Contains(body, `"vhds"`) {
			return fmt.Errorf("%s is not served over VHDS yet", name)
		}
		return nil
	})
}
