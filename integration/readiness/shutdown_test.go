package readiness_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/code"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// manyConfigs is how many AuthConfigs the large apply builds; each plugin Start sleeps
// startDelay and they are built one after the other (one plugin file), so the apply
// takes about manyConfigs × startDelay = 60 s.
const (
	manyConfigs = 3000
	startDelay  = "20ms"
	// grace is the kubelet's terminationGracePeriodSeconds in the chart.
	grace = 30 * time.Second
)

// TestSigtermDuringALargeApply: SIGTERM while extauth applied thousands of configs did
// not end it until the apply was done (issue 26). Now the apply is cut short: the
// process exits within the grace period, long before the apply could have finished,
// and says how many configs it left unbuilt. While the first load was under way,
// extauth was not ready.
func TestSigtermDuringALargeApply(t *testing.T) {
	for _, source := range []string{"files", "control plane"} {
		t.Run(source, func(t *testing.T) {
			dir := t.TempDir()
			var b strings.Builder
			for i := range manyConfigs {
				fmt.Fprintf(&b, "---\n%s", authConfig(fmt.Sprintf("c%04d", i), "", startDelay))
			}
			testbin.WriteFile(t, filepath.Join(dir, "auth_configs.yaml"), b.String())
			args := []string{"--config", dir}
			if source == "control plane" {
				xdsAddr := testbin.FreeAddr(t)
				startControlPlane(t, dir, xdsAddr)
				args = []string{"--xds", xdsAddr}
			}
			e := startExtauth(t, testbin.FreeAddr(t), args...)
			// The first build opens the plugin: the apply is under way.
			testbin.Eventually(t, settle, func() error {
				if !strings.Contains(e.proc.Output(), `"message":"plugin version opened"`) {
					return fmt.Errorf("the apply has not started yet")
				}
				return nil
			})
			if p := e.probe(t); p != notReady {
				t.Errorf("during the first load: %+v, want not ready", p)
			}
			if err := e.proc.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			e.proc.Wait(t, grace)
			m := regexp.MustCompile(`"configs":(\d+),[^\n]*"message":"stopping: configs left unbuilt"`).FindStringSubmatch(e.proc.Output())
			if m == nil {
				t.Fatalf("extauth exited without saying it left configs unbuilt:\n%s", e.proc.Output())
			}
			if n, _ := strconv.Atoi(m[1]); n == 0 || n > manyConfigs {
				t.Errorf("configs left unbuilt = %d, want some of %d", n, manyConfigs)
			}
		})
	}
}

// TestStoppingReplicaFollowsTheControlPlane: on SIGTERM extauth ended its xDS stream at
// once but answered Checks until its health checkers had seen it stop, so the control
// plane no longer counted it among the replicas a new AuthConfig's routes wait for, and
// the proxy, still sending it Checks, was denied every request of a route published
// meanwhile (the churn run found it during a rolling restart, issue 26). Now a replica
// that was ready follows the control plane until it stops answering: the AuthConfig
// written after its SIGTERM serves there. A health checker told SERVING and not back
// yet keeps it answering for the whole --shutdown-delay.
func TestStoppingReplicaFollowsTheControlPlane(t *testing.T) {
	dir := t.TempDir()
	testbin.WriteFile(t, filepath.Join(dir, "first.yaml"), authConfig("first", "", "0s"))
	xdsAddr := testbin.FreeAddr(t)
	startControlPlane(t, dir, xdsAddr)
	e := startExtauth(t, testbin.FreeAddr(t), "--xds", xdsAddr, "--shutdown-delay", "2m")
	testbin.Eventually(t, settle, func() error {
		if p := e.probe(t); p != ready {
			return fmt.Errorf("%+v, want ready", p)
		}
		return nil
	})
	if err := e.proc.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	testbin.Eventually(t, settle, func() error {
		if !strings.Contains(e.proc.Output(), "answering Checks until the health checkers have seen it") {
			return fmt.Errorf("not stopping yet")
		}
		return nil
	})
	testbin.WriteFile(t, filepath.Join(dir, "second.yaml"), authConfig("second", "", "0s"))
	testbin.Eventually(t, settle, func() error {
		if c := e.check(t, "gatehouse-system.second", true); c != code.Code_OK {
			return fmt.Errorf("Check of the AuthConfig written after SIGTERM: %v, want OK", c)
		}
		return nil
	})
	if c := e.check(t, "gatehouse-system.first", false); c != code.Code_PERMISSION_DENIED {
		t.Errorf("Check without the header: %v, want PERMISSION_DENIED", c)
	}
	// The health checker comes back, sees NOT_SERVING, and the replica exits.
	if s := e.healthOf(t, ""); s != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("health while stopping: %v, want NOT_SERVING", s)
	}
	e.proc.Wait(t, grace)
}
