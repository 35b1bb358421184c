package server_test

import (
	"context"
	"testing"
	"time"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// TestAConfigOnItsWayIsWaitedFor: once the first config is built, a Check that names a
// config_id not serving yet gets that config when it comes within the wait, and one
// that does not come is denied within half of the Check's time, so the denial reaches
// the proxy before its timeout.
func TestAConfigOnItsWayIsWaitedFor(t *testing.T) {
	reg := server.NewRegistry(func(_ context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
		return &chain.Chain{ID: cfg.GetConfigId()}, nil
	}, testLogger(t))
	reg.Apply(cfgs(cfg("ns.a", 0)), nil)

	got := make(chan string, 1)
	go func() {
		c, ok := reg.AwaitConfig(context.Background(), "ns.b")
		if !ok {
			got <- "not found"
			return
		}
		got <- c.ID
	}()
	time.Sleep(20 * time.Millisecond) // the Check is waiting (or about to)
	reg.Apply(cfgs(cfg("ns.a", 0), cfg("ns.b", 0)), nil)
	select {
	case id := <-got:
		if id != "ns.b" {
			t.Errorf("the waiting Check got %s, want the chain of ns.b", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting Check never got ns.b")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*server.MaxConfigWait)
	defer cancel()
	if c, ok := reg.AwaitConfig(ctx, "ns.never"); ok {
		t.Errorf("a config_id that never comes: got the chain of %s", c.ID)
	}
	if ctx.Err() != nil {
		t.Error("the Check was answered only after its deadline")
	}
}
