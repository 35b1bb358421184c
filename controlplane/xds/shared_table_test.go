package xds_test

import (
	"maps"
	"testing"
	"time"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdstest"
)

// TestUnsubscribingLeavesOtherClientsAsTheyWere connects two wildcard extauth clients
// (which the server brings to the same version table) and has one unsubscribe from a
// config by name: that client is sent it again, as go-control-plane's subscription
// rules say, and the other is unaffected; after an edit of another config, each is sent
// that one alone.
func TestUnsubscribingLeavesOtherClientsAsTheyWere(t *testing.T) {
	s := startServer(t)
	published := xdstest.Extauth(4)
	if err := s.Publish(xds.RoleExtauth, published); err != nil {
		t.Fatal(err)
	}
	a := newDelta(t, s.addr, node("extauth-a", xds.RoleExtauth), nil, xds.ExtAuthConfigType)
	b := newDelta(t, s.addr, node("extauth-b", xds.RoleExtauth), nil, xds.ExtAuthConfigType)
	for _, c := range []*deltaClient{a, b} {
		r := c.next()
		if len(r.GetResources()) != 4 {
			t.Fatalf("first response: %d configs, want 4", len(r.GetResources()))
		}
		c.answer(r, "")
	}

	if err := a.stream.Send(&discovery.DeltaDiscoveryRequest{TypeUrl: xds.ExtAuthConfigType, ResourceNamesUnsubscribe: []string{xdstest.ID(1)}}); err != nil {
		t.Fatal(err)
	}
	r := a.next()
	if d := cmp.Diff([]string{xdstest.ID(1)}, names(r)); d != "" {
		t.Errorf("sent after unsubscribing (-want +got):\n%s", d)
	}
	a.answer(r, "")

	edited := maps.Clone(published[xds.ExtAuthConfigType])
	edited[xdstest.ID(2)] = xdstest.ExtAuthConfig(xdstest.ID(2), 1)
	if err := s.Publish(xds.RoleExtauth, xds.Resources{xds.ExtAuthConfigType: edited}); err != nil {
		t.Fatal(err)
	}
	for who, c := range map[string]*deltaClient{"a": a, "b": b} {
		r := c.next()
		if d := cmp.Diff([]string{xdstest.ID(2)}, names(r)); d != "" || len(r.GetRemovedResources()) > 0 {
			t.Errorf("client %s: sent after an edit (-want +got):\n%s; removed %v", who, d, r.GetRemovedResources())
		}
		c.answer(r, "")
	}
	// Both acknowledged the current version of each (once the server read the ACKs).
	deadline := time.Now().Add(wait)
	for {
		counts, total := s.ServedBy(xds.RoleExtauth, xds.ExtAuthConfigType, []string{xdstest.ID(1), xdstest.ID(2)})
		d := cmp.Diff([]int{2, 2}, counts)
		if d == "" && total == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("served by (-want +got):\n%s; of %d", d, total)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
