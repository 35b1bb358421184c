package xds

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/stream/v3"
)

// TestInternKeepsWhatClientsHold reconnects a named and a wildcard client that
// announce what they hold in strings of their own (as decoded from a request): after
// their first watch, the subscriptions hold the same names and versions as before,
// now in the set's strings, except a version the set does not serve; nothing is sent,
// since the clients are up to date.
func TestInternKeepsWhatClientsHold(t *testing.T) {
	const typ = EndpointType
	ds := newDeltaSet(typ, "p-", nil)
	upsert := map[string]wireResource{}
	for i := range 20 {
		name := fmt.Sprintf("bench.svc-%05d", i)
		sv, err := newServed(typ, name, endpoints(name, 9000+i))
		if err != nil {
			t.Fatal(err)
		}
		upsert[name] = sv.wireResource()
	}
	if err := ds.update(upsert, nil); err != nil {
		t.Fatal(err)
	}
	own := func(s string) string { return strings.Clone(s) } // a client's copy
	announced := map[string]string{}
	var names []string
	for name, r := range upsert {
		announced[own(name)] = own(r.version())
		names = append(names, own(name))
	}
	stale := "bench.svc-00003"
	announced[stale] = "an old version"
	for _, wildcard := range []bool{false, true} {
		subscribe := names
		if wildcard {
			subscribe = []string{"*"}
		}
		// The subscription starts with the map the request announced, as go-control-plane's.
		initial := maps.Clone(announced)
		sub := stream.NewDeltaSubscription(subscribe, nil, initial, false)
		ch := make(chan cachev3.DeltaResponse, 1)
		req := &discovery.DeltaDiscoveryRequest{TypeUrl: typ, ResourceNamesSubscribe: subscribe, InitialResourceVersions: initial}
		if _, err := ds.createWatch(req, sub, ch, nil); err != nil {
			t.Fatal(err)
		}
		if got := sub.ReturnedResources(); !maps.Equal(got, announced) {
			t.Errorf("wildcard %t: the subscription holds %v, want what was announced %v", wildcard, got, announced)
		}
		for name, v := range sub.ReturnedResources() {
			r := ds.resources[name]
			if !sameString(name, r.name) || name != stale && !sameString(v, r.version()) {
				t.Errorf("wildcard %t: %s %s is still the client's string", wildcard, name, v)
			}
		}
		if !wildcard {
			for name := range sub.SubscribedResources() {
				if !sameString(name, ds.resources[name].name) {
					t.Errorf("subscribed %s is still the client's string", name)
				}
			}
		}
		// Only the stale version is sent again.
		select {
		case r := <-ch:
			resp, _ := r.GetDeltaDiscoveryResponse()
			if len(resp.GetResources()) != 1 || resp.GetResources()[0].GetName() != stale {
				t.Errorf("wildcard %t: sent %d resources, want %s alone", wildcard, len(resp.GetResources()), stale)
			}
		default:
			t.Errorf("wildcard %t: the stale version was not sent again", wildcard)
		}
	}
}
