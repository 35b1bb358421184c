package churn_test

import (
	"context"
	"os"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/churn/churnkit"
	"gatehouse.dev/gatehouse/integration/testbin"
)

// TestChurnAnswersRight: routes added, AuthConfigs edited, routes removed, a plugin
// .so replaced, the control plane killed with SIGKILL and restarted, and each extauth
// replica restarted in turn, all under steady traffic and a poller per change. Every
// response is judged against what the resources said while it was in flight (inside a
// change's window, the old and the new answer both count): none may be a 5xx or fail,
// none wrongly allowed, none wrongly denied. Counting, not timing. No file is written
// while the control plane is down (QuietRestart: a known limit); the bench's churn
// section writes throughout. It runs with the routes in one route configuration and
// again with each a virtual host of its own over VHDS.
func TestChurnAnswersRight(t *testing.T) {
	ctx := context.Background()
	root := testbin.Root(t)
	bins, err := churnkit.Build(ctx, root, testbin.Gatehouse(t), testbin.TempDir(t, "gatehouse-churn-bin-"))
	if err != nil {
		t.Fatal(err)
	}
	o := churnkit.Options{
		Routes: 200, Duration: 20 * time.Second, Rate: 100, Workers: 32,
		New: 20, Edits: 20, Deletes: 10,
		SwapPlugin: true, KillControlPlane: true, QuietRestart: true, RestartExtauth: 2,
		PollEvery: 10 * time.Millisecond, PollTail: 100 * time.Millisecond, Seed: 26,
	}
	// Both ways the gateway can take its routes: in one route configuration, and each
	// VirtualService a virtual host of its own over VHDS (Settings spec.virtualHostDiscovery).
	for _, vhds := range []bool{false, true} {
		t.Run(map[bool]string{false: "route configuration", true: "vhds"}[vhds], func(t *testing.T) {
			// The processes' logs stay behind when the test fails.
			dir, err := os.MkdirTemp("", "gatehouse-churn-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("the processes' logs are in %s", dir)
				} else {
					os.RemoveAll(dir)
				}
			})
			s, err := churnkit.StartSystem(ctx, dir, bins, o.Routes, 2, false, vhds)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Stop()
			run, err := churnkit.Do(ctx, s, o)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("churn:\n%s", run.Summary(20))
			v := run.Verdict
			if v.Failed+v.WronglyAllowed+v.WronglyDenied != 0 {
				t.Errorf("%d responses failed or 5xx, %d wrongly allowed, %d wrongly denied", v.Failed, v.WronglyAllowed, v.WronglyDenied)
			}
			if n := len(run.Unclosed()); n != 0 {
				t.Errorf("%d changes never took effect", n)
			}
			if n := len(run.Changes); n != o.New+o.Edits+o.Deletes {
				t.Errorf("%d changes made, want %d", n, o.New+o.Edits+o.Deletes)
			}
			if len(run.Events) != 3 {
				t.Errorf("%d disturbances happened, want 3: %+v", len(run.Events), run.Events)
			}
			if v.Requests < 500 {
				t.Errorf("only %d steady requests: too few to say anything", v.Requests)
			}
		})
	}
}
