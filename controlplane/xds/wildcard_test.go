package xds_test

import (
	"maps"
	"math/rand/v2"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdstest"
)

// TestWildcardClientsKeepUpWithEveryPublish publishes random edits, additions and
// removals (some batches larger than the server's log of changes) to extauth while
// delta clients that subscribe to everything follow: one ACKs at once, one only after
// several publishes, and one reconnects now and then with the versions it holds. After
// every round, what each client holds (versions applied from the responses, removals
// taken out) must be exactly what is published, and nothing is sent that the client
// holds already.
func TestWildcardClientsKeepUpWithEveryPublish(t *testing.T) {
	s := startServer(t)
	rng := rand.New(rand.NewPCG(5, 6))
	published := map[string]types.Resource{}
	for i := range 40 {
		published[xdstest.ID(i)] = xdstest.ExtAuthConfig(xdstest.ID(i), 0)
	}
	publish := func() {
		t.Helper()
		if err := s.Publish(xds.RoleExtauth, xds.Resources{xds.ExtAuthConfigType: maps.Clone(published)}); err != nil {
			t.Fatal(err)
		}
	}
	publish()
	want := func() map[string]string {
		out := map[string]string{}
		for name := range published {
			out[name] = s.Version(xds.RoleExtauth, xds.ExtAuthConfigType, name)
		}
		return out
	}
	prompt := newFollower(t, s.addr, "prompt", nil)
	lagging := newFollower(t, s.addr, "lagging", nil)
	reconnecting := newFollower(t, s.addr, "reconnecting", nil)
	for round := range 40 {
		batch := 1 + rng.IntN(5)
		if round%20 == 9 {
			batch = 8000 // more names than the log keeps, in one change
		}
		for range batch {
			id := xdstest.ID(rng.IntN(8000))
			switch rng.IntN(4) {
			case 0:
				delete(published, id)
			default:
				published[id] = xdstest.ExtAuthConfig(id, round+1+rng.IntN(1000))
			}
		}
		publish()
		if round%3 == 2 {
			reconnecting = newFollower(t, s.addr, "reconnecting", reconnecting.known)
		}
		for _, f := range []*follower{prompt, reconnecting} {
			f.until(want())
		}
		if round%4 == 3 {
			lagging.until(want())
		}
	}
	lagging.until(want())
}

// follower is a delta client of extauth that applies what it is sent.
type follower struct {
	t     *testing.T
	name  string
	c     *deltaClient
	known map[string]string
}

func newFollower(t *testing.T, addr, name string, known map[string]string) *follower {
	f := &follower{t: t, name: name, known: maps.Clone(known)}
	if f.known == nil {
		f.known = map[string]string{}
	}
	f.c = newDelta(t, addr, node(name, xds.RoleExtauth), map[string]map[string]string{xds.ExtAuthConfigType: known}, xds.ExtAuthConfigType)
	return f
}

// until applies and ACKs responses until the client holds want.
func (f *follower) until(want map[string]string) {
	f.t.Helper()
	deadline := time.After(wait)
	for !maps.Equal(f.known, want) {
		var r *discovery.DeltaDiscoveryResponse
		select {
		case r = <-f.c.resps:
		case err := <-f.c.err:
			f.t.Fatalf("%s: stream ended: %v", f.name, err)
		case <-deadline:
			f.t.Fatalf("%s holds what is not published (-published +held):\n%s", f.name, cmp.Diff(want, f.known))
		}
		for _, res := range r.GetResources() {
			if f.known[res.GetName()] == res.GetVersion() {
				f.t.Errorf("%s: %s sent again at the version it holds", f.name, res.GetName())
			}
			f.known[res.GetName()] = res.GetVersion()
		}
		for _, name := range r.GetRemovedResources() {
			delete(f.known, name)
		}
		f.c.answer(r, "")
	}
}
