package readiness_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/code"

	"gatehouse.dev/gatehouse/integration/testbin"
)

const configID = "gatehouse-system.slow"

// TestReadinessFromTheControlPlane: a fresh extauth replica answered gRPC health
// SERVING before it had any config and then denied every Check for 0.8-3.9 s (issue
// 26). Now it is not ready (gRPC health of the server and of the ext_authz service
// NOT_SERVING, /ready 503) while the control plane is away and while the first state
// it sent is still being built (the plugin's Start is held by a gate file); it stays
// live (liveness SERVING, /healthz 200) throughout. From the first moment it says
// SERVING every Check gets its right answer, and it stays ready when the control plane
// is killed.
func TestReadinessFromTheControlPlane(t *testing.T) {
	dir, gate := t.TempDir(), filepath.Join(t.TempDir(), "gate")
	testbin.WriteFile(t, filepath.Join(dir, "auth_config.yaml"), authConfig("slow", gate, ""))
	xdsAddr := testbin.FreeAddr(t)
	e := startExtauth(t, testbin.FreeAddr(t), "--xds", xdsAddr)

	if diff := cmp.Diff(notReady, e.probe(t)); diff != "" {
		t.Errorf("with no control plane (-want +got):\n%s", diff)
	}
	cp := startControlPlane(t, dir, xdsAddr)
	testbin.Eventually(t, settle, func() error {
		if !strings.Contains(e.proc.Output(), "connected to the control plane") {
			return fmt.Errorf("extauth has not received its first state yet")
		}
		return nil
	})
	if diff := cmp.Diff(notReady, e.probe(t)); diff != "" {
		t.Errorf("with the first state received and not built (-want +got):\n%s", diff)
	}

	testbin.WriteFile(t, gate, "")
	expectRightFromFirstServing(t, e)

	cp.Kill()
	if diff := cmp.Diff(ready, e.probe(t)); diff != "" {
		t.Errorf("with the control plane killed (-want +got):\n%s", diff)
	}
	if got := e.check(t, configID, true); got != code.Code_OK {
		t.Errorf("Check with the control plane killed = %v, want OK", got)
	}
}

// TestReadinessFromFiles: with --config, extauth is not ready until the first full
// load of the folder is built, then ready, and every Check from then on is right.
func TestReadinessFromFiles(t *testing.T) {
	dir, gate := t.TempDir(), filepath.Join(t.TempDir(), "gate")
	testbin.WriteFile(t, filepath.Join(dir, "auth_config.yaml"), authConfig("slow", gate, ""))
	e := startExtauth(t, testbin.FreeAddr(t), "--config", dir)
	if diff := cmp.Diff(notReady, e.probe(t)); diff != "" {
		t.Errorf("with the first load not built (-want +got):\n%s", diff)
	}
	testbin.WriteFile(t, gate, "")
	expectRightFromFirstServing(t, e)
}

// expectRightFromFirstServing polls e's readiness until it says SERVING, and from that
// moment on checks that every surface says ready and that Checks get their right
// answers, counting the wrong ones (there must be none).
func expectRightFromFirstServing(t *testing.T, e *extauth) {
	t.Helper()
	testbin.Eventually(t, settle, func() error {
		if p := e.probe(t); p != ready {
			return fmt.Errorf("not ready yet: %+v", p)
		}
		return nil
	})
	wrong := 0
	for range 20 {
		if e.check(t, configID, true) != code.Code_OK {
			wrong++
		}
		if e.check(t, configID, false) != code.Code_PERMISSION_DENIED {
			wrong++
		}
	}
	if wrong != 0 {
		t.Errorf("%d of 40 Checks answered wrong once extauth said SERVING", wrong)
	}
}
