package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// blockingBuilds builds every config at once, but the one named slow waits until
// release is closed and then fails (an identity provider that accepts connections and
// never answers).
type blockingBuilds struct {
	*fakeBuilds
	slow    string
	started chan struct{}
	release chan struct{}
}

func (b *blockingBuilds) build(ctx context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
	if cfg.GetConfigId() == b.slow {
		b.started <- struct{}{}
		<-b.release
		return nil, errors.New("oidc: discovery: timeout")
	}
	return b.fakeBuilds.build(ctx, cfg)
}

// TestSlowBuildsDelayNoOtherConfig: an OIDC AuthConfig whose issuer never answered
// made every unrelated edit take ~5 s to apply in extauth (49 requests allowed after a
// value was removed from an allow list), because each Apply built it again, in line
// with the others. Now an Apply does not build a failed config it is given unchanged,
// builds what changed side by side and serves each chain as soon as it is built, and
// RetryRejected builds off the lock. Nothing here is timed: the slow build is held
// until the test releases it.
func TestSlowBuildsDelayNoOtherConfig(t *testing.T) {
	b := &blockingBuilds{fakeBuilds: newFakeBuilds(), slow: "ns.oidc", started: make(chan struct{}, 4), release: make(chan struct{})}
	reg := server.NewRegistry(b.build, zerolog.Nop())
	// An OIDC-only config (no plugin step), listed first: built in turn, it would hold ns.a.
	oidc := func() *extauthv1.ExtAuthConfig { return &extauthv1.ExtAuthConfig{ConfigId: "ns.oidc"} }

	// The first Apply: ns.a serves while ns.oidc's build still waits.
	applied := make(chan []server.Status)
	go func() { applied <- reg.Apply(cfgs(oidc(), cfg("ns.a", time.Second)), nil) }()
	<-b.started
	waitServing(t, reg, "ns.a")
	b.release <- struct{}{}
	<-applied

	// An unrelated edit does not build ns.oidc again.
	done := make(chan []server.Status, 1)
	go func() { done <- reg.Apply(cfgs(oidc(), cfg("ns.a", 2*time.Second)), nil) }()
	select {
	case st := <-done:
		if c, _ := reg.Lookup("ns.a"); c.Timeout != 2*time.Second {
			t.Errorf("the edit of ns.a does not serve: %+v", st)
		}
	case <-b.started:
		t.Fatal("an Apply that did not change ns.oidc built it again")
	}

	// A retry of ns.oidc waits on its provider without holding up an Apply.
	retried := make(chan []server.Status)
	go func() { retried <- reg.RetryRejected() }()
	<-b.started
	go func() { done <- reg.Apply(cfgs(oidc(), cfg("ns.a", 3*time.Second)), nil) }()
	<-done
	if c, _ := reg.Lookup("ns.a"); c.Timeout != 3*time.Second {
		t.Error("an Apply waited for a retry")
	}
	close(b.release)
	st := <-retried
	for _, s := range st {
		if s.ID == "ns.oidc" && s.State != server.StateRejected {
			t.Errorf("ns.oidc after its retry failed: %+v", s)
		}
		if s.ID == "ns.a" && s.State != server.StateAccepted {
			t.Errorf("ns.a after the retry: %+v", s)
		}
	}
}

func waitServing(t *testing.T, reg *server.Registry, id string) {
	t.Helper()
	for range 2000 {
		if _, ok := reg.Lookup(id); ok {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s does not serve while another config builds", id)
}
