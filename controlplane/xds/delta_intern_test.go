package xds

import (
	"maps"
	"slices"
	"strings"
	"testing"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/proto"
)

// TestInternKeepsWhatClientsHold reconnects named and wildcard clients that announce
// what they hold, their requests decoded as the server decodes them: each is answered,
// even when up to date, and what the response makes its known versions (a version
// table, or a map of its own for a client subscribed to part of what is served) holds
// the set's strings, the versions served; only the version the set does not serve is
// sent again. The names they subscribed to are kept in strings of the name set.
func TestInternKeepsWhatClientsHold(t *testing.T) {
	const typ = EndpointType
	ds, upsert := servedEndpointSet(t, typ, 20)
	own := func(s string) string { return strings.Clone(s) } // a client's copy
	stale := "bench.svc-00003"
	for _, tc := range []struct {
		name      string
		subscribe func(names []string) []string
	}{
		{"named, every name", func(names []string) []string { return names }},
		{"named, all but one", func(names []string) []string { return names[:len(names)-1] }},
		{"named, up to date", func(names []string) []string { return names[1:] }},
		{"wildcard", func([]string) []string { return []string{"*"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var names []string
			for name := range upsert {
				if name != stale {
					names = append(names, own(name))
				}
			}
			names = append([]string{own(stale)}, names...)
			subscribe := tc.subscribe(names)
			announced, want := map[string]string{}, map[string]string{}
			for _, name := range names {
				if subscribe[0] == "*" || slices.Contains(subscribe, name) {
					announced[own(name)] = own(upsert[name].version())
					want[name] = upsert[name].version()
				}
			}
			if _, ok := announced[stale]; ok {
				announced[stale] = "an old version"
			}
			ch := make(chan cachev3.DeltaResponse, 1)
			b, err := proto.Marshal(&discovery.DeltaDiscoveryRequest{TypeUrl: typ, ResourceNamesSubscribe: subscribe, InitialResourceVersions: announced})
			if err != nil {
				t.Fatal(err)
			}
			decoded := &discovery.DeltaDiscoveryRequest{}
			if err := unmarshalDeltaRequest(b, decoded, true); err != nil {
				t.Fatal(err)
			}
			req, sub, change := firstRequest(newNameSets(), decoded)
			if _, err := ds.createWatch(req, sub, ch, change); err != nil {
				t.Fatal(err)
			}
			for name := range sub.SubscribedResources() {
				if slices.ContainsFunc(subscribe, func(s string) bool { return sameString(s, name) }) {
					t.Errorf("subscribed %s is still the client's string", name)
				}
			}
			select {
			case r := <-ch:
				resp, _ := r.GetDeltaDiscoveryResponse()
				_, staleSubscribed := want[stale]
				if sent := len(resp.GetResources()); staleSubscribed && (sent != 1 || resp.GetResources()[0].GetName() != stale) || !staleSubscribed && sent != 0 {
					t.Errorf("sent %d resources, want %s alone if subscribed", sent, stale)
				}
				next := r.GetNextVersionMap()
				if !maps.Equal(next, want) {
					t.Errorf("known versions %v, want %v", next, want)
				}
				for name, v := range next {
					if r := ds.resources[name]; !sameString(name, r.name) || !sameString(v, r.version()) {
						t.Errorf("%s %s is still the client's string", name, v)
					}
				}
			default:
				t.Fatal("nothing was sent")
			}
		})
	}
}
