package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rs/zerolog"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// TestStopInterruptsApply: SIGTERM during the apply of thousands of configs did not
// end the process, since the apply built every one of them first (issue 26). Stop now
// makes an Apply return at once: the builds under way are given up (their context
// ends), even one that ignores its context, and the configs not built are Rejected
// with ErrStopping. What served before keeps serving.
func TestStopInterruptsApply(t *testing.T) {
	const n = 2000
	started := make(chan string, n)
	never := make(chan struct{}) // a build that ignores its context
	reg := server.NewRegistry(func(ctx context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
		switch cfg.GetConfigId() {
		case "ns.old":
			return &chain.Chain{ID: cfg.GetConfigId()}, nil
		case "ns.stubborn":
			started <- cfg.GetConfigId()
			<-never
		}
		started <- cfg.GetConfigId()
		<-ctx.Done()
		return nil, ctx.Err()
	}, zerolog.Nop())
	t.Cleanup(func() { close(never) })
	reg.Apply(cfgs(cfg("ns.old", time.Second)), nil)

	list := cfgs(cfg("ns.old", time.Second), &extauthv1.ExtAuthConfig{ConfigId: "ns.stubborn"})
	for i := range n {
		list = append(list, &extauthv1.ExtAuthConfig{ConfigId: fmt.Sprintf("ns.c%04d", i)})
	}
	applied := make(chan []server.Status, 1)
	go func() { applied <- reg.Apply(list, nil) }()
	for range server.MaxParallelBuilds { // every build slot is taken
		<-started
	}
	reg.Stop()
	var statuses []server.Status
	select {
	case statuses = <-applied:
	case <-time.After(30 * time.Second):
		t.Fatal("Apply did not return after Stop")
	}
	if !reg.Stopped() {
		t.Error("Stopped() = false after Stop")
	}
	notBuilt := 0
	for _, st := range statuses {
		switch {
		case st.ID == "ns.old":
			if st.State != server.StateAccepted {
				t.Errorf("status of the unchanged config = %+v, want Accepted", st)
			}
		case st.State == server.StateRejected && st.Reason == server.ErrStopping.Error():
			notBuilt++
		default:
			t.Errorf("status %+v, want Rejected: %v", st, server.ErrStopping)
		}
	}
	if notBuilt != n+1 {
		t.Errorf("%d configs reported not built, want %d", notBuilt, n+1)
	}
	if _, ok := reg.Lookup("ns.old"); !ok {
		t.Error("the config that served before the interrupted Apply stopped serving")
	}
	// A later Apply builds nothing.
	if st := reg.Apply(cfgs(cfg("ns.new", time.Second)), nil); len(st) != 1 || st[0].Reason != server.ErrStopping.Error() {
		t.Errorf("Apply after Stop = %+v, want ns.new not built", st)
	}
}
