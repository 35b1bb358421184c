package server_test

import (
	"context"
	"fmt"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
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

// TestCheckBeforeTheFirstConfig: a Check that names a config_id before the first
// config is applied waits for it rather than being denied for a config on its way (a
// file-fed extauth accepts connections while its first load builds); it is denied when
// its deadline passes or the registry stops first.
func TestCheckBeforeTheFirstConfig(t *testing.T) {
	build := func(_ context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
		return &chain.Chain{ID: cfg.GetConfigId(), Steps: []chain.Step{requiredHeader("x", "1")}, Timeout: time.Minute}, nil
	}
	allowed := func(resp *authv3.CheckResponse, err error) bool { return err == nil && resp.GetStatus().GetCode() == 0 }
	t.Run("answered once the config is applied", func(t *testing.T) {
		reg := server.NewRegistry(build, zerolog.Nop())
		a := server.NewAuthorizer(reg, zerolog.Nop(), nil)
		got := make(chan bool, 1)
		go func() {
			got <- allowed(a.Check(context.Background(), checkRequest("ns.a", map[string]string{"x": "1"})))
		}()
		reg.Apply(cfgs(cfg("ns.a", time.Minute)), nil)
		if !<-got {
			t.Error("the Check sent before the first config was not allowed")
		}
	})
	t.Run("denied at its deadline", func(t *testing.T) {
		a := server.NewAuthorizer(server.NewRegistry(build, zerolog.Nop()), zerolog.Nop(), nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		if allowed(a.Check(ctx, checkRequest("ns.a", map[string]string{"x": "1"}))) {
			t.Error("allowed with no config")
		}
	})
	t.Run("denied when stopping", func(t *testing.T) {
		reg := server.NewRegistry(build, zerolog.Nop())
		a := server.NewAuthorizer(reg, zerolog.Nop(), nil)
		got := make(chan bool, 1)
		go func() {
			got <- allowed(a.Check(context.Background(), checkRequest("ns.a", map[string]string{"x": "1"})))
		}()
		reg.Stop()
		if <-got {
			t.Error("allowed with no config")
		}
	})
	t.Run("no wait once a config was applied", func(t *testing.T) {
		reg := server.NewRegistry(build, zerolog.Nop())
		reg.Apply(nil, nil)
		a := server.NewAuthorizer(reg, zerolog.Nop(), nil)
		if allowed(a.Check(context.Background(), checkRequest("ns.unknown", nil))) {
			t.Error("an unknown config_id was allowed")
		}
	})
}
