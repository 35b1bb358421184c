package xds

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"github.com/envoyproxy/go-control-plane/pkg/server/stream/v3"
	"google.golang.org/protobuf/encoding/protowire"
)

// TestAnnouncedIsComparedAsTheMapIs compares random announcements (stale, missing and
// unknown names, names announced twice) with what a set serves, for wildcard and named
// subscriptions, entry by entry (allAnnounced) and as the map proto would decode
// (all): whenever the first answers, it finds the same resources to send and to
// remove, and the client then holds the version table (a name announced twice, the
// second time with another version, must not be judged by its first); it answers for
// every announcement of a wildcard or covering client that names nothing twice.
func TestAnnouncedIsComparedAsTheMapIs(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const typ = EndpointType
	name := func(i int) string { return fmt.Sprintf("bench.svc-%05d", i) }
	ds, _ := servedEndpointSet(t, typ, 30)
	answered, twiceSeen := map[string]int{}, 0
	for run := range 2000 {
		var sub cachev3.Subscription
		kind := []string{"wildcard", "covering", "partial"}[rng.IntN(3)]
		switch kind {
		case "wildcard":
			sub = stream.NewDeltaSubscription([]string{"*"}, nil, nil, false)
		case "covering", "partial":
			var names []string
			for i := range 34 {
				if kind == "covering" && i < 30 || rng.IntN(2) == 0 {
					names = append(names, name(i))
				}
			}
			sub = stream.NewDeltaSubscription(names, nil, nil, false)
		}
		var entries []byte
		twice := false
		seen := map[string]bool{}
		for i := range 34 {
			if rng.IntN(6) == 0 {
				continue // not announced
			}
			v := "stale"
			if r, ok := ds.resources[name(i)]; ok && rng.IntN(4) > 0 {
				v = r.version()
			}
			reps := 1
			if rng.IntN(60) == 0 {
				reps = 2
			}
			for range reps {
				if seen[name(i)] {
					twice = true
				}
				seen[name(i)] = true
				entries = appendEntry(entries, name(i), v)
				v = "another"
			}
		}
		a := announced(entries)
		changed, removed, covers, ok := ds.allAnnounced(a, sub)
		if twice {
			twiceSeen++
		}
		wantChanged, wantRemoved, wantCovers, err := ds.all(a.versions(), sub)
		if err != nil {
			t.Fatal(err)
		}
		if !twice && (kind == "wildcard" || kind == "covering") && !ok {
			t.Fatalf("run %d (%s): not answered", run, kind)
		}
		if !ok {
			continue
		}
		answered[kind]++
		asMap := func(ms []missed) map[string]string {
			m := map[string]string{}
			for _, c := range ms {
				m[c.name] = c.version
			}
			return m
		}
		if !maps.Equal(asMap(changed), asMap(wantChanged)) || len(changed) != len(wantChanged) {
			t.Fatalf("run %d (%s): to send %v, the map says %v", run, kind, asMap(changed), asMap(wantChanged))
		}
		slices.Sort(wantRemoved)
		if !slices.Equal(removed, wantRemoved) {
			t.Fatalf("run %d (%s): to remove %v, the map says %v", run, kind, removed, wantRemoved)
		}
		if !sub.IsWildcard() && (!covers || !wantCovers) {
			t.Fatalf("run %d (%s): answered a named client that does not cover what is served", run, kind)
		}
	}
	if answered["wildcard"] == 0 || answered["covering"] == 0 || twiceSeen == 0 {
		t.Fatalf("answered %v; %d announcements named a resource twice", answered, twiceSeen)
	}
}

func appendEntry(b []byte, name, version string) []byte {
	var e []byte
	e = protowire.AppendString(protowire.AppendTag(e, 1, protowire.BytesType), name)
	e = protowire.AppendString(protowire.AppendTag(e, 2, protowire.BytesType), version)
	return protowire.AppendBytes(protowire.AppendTag(b, initialVersionsField, protowire.BytesType), e)
}

// TestAnnouncedDigestSparesTheComparison: a wildcard client that announces exactly what
// is served, in any order, is answered from the digests without looking any entry up;
// one stale version, one name missing or one unknown name goes through the comparison
// entry by entry, which finds it.
func TestAnnouncedDigestSparesTheComparison(t *testing.T) {
	const typ = ClusterType
	ds, _ := servedEndpointSet(t, typ, 50)
	wildcard := stream.NewDeltaSubscription([]string{"*"}, nil, nil, false)
	announce := func(edit func(map[string]string)) announced {
		held := map[string]string{}
		for n, r := range ds.resources {
			held[n] = r.version()
		}
		edit(held)
		var entries []byte
		for n, v := range held { // map order: any order
			entries = appendEntry(entries, n, v)
		}
		return entries
	}
	for _, tc := range []struct {
		name    string
		edit    func(map[string]string)
		compare bool // entry by entry
		send    int
		remove  int
	}{
		{"exactly what is served", func(map[string]string) {}, false, 0, 0},
		{"one stale version", func(h map[string]string) { h["bench.svc-00007"] = "old" }, true, 1, 0},
		{"one name missing", func(h map[string]string) { delete(h, "bench.svc-00007") }, true, 1, 0},
		{"one unknown name", func(h map[string]string) { h["gone"] = "v" }, true, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stamp := ds.stamp
			changed, removed, _, ok := ds.allAnnounced(announce(tc.edit), wildcard)
			if !ok || len(changed) != tc.send || len(removed) != tc.remove {
				t.Fatalf("answered %t: %d to send, %d to remove; want %d and %d", ok, len(changed), len(removed), tc.send, tc.remove)
			}
			if compared := ds.stamp != stamp; compared != tc.compare {
				t.Errorf("compared entry by entry: %t, want %t", compared, tc.compare)
			}
		})
	}
}

// servedEndpointSet is a delta set of typ serving n resources named bench.svc-00000 on
// (each a ClusterLoadAssignment, whatever typ is), and what it was handed.
func servedEndpointSet(t *testing.T, typ string, n int) (*deltaSet, map[string]wireResource) {
	t.Helper()
	ds := newDeltaSet(typ, "p-", nil)
	upsert := map[string]wireResource{}
	for i := range n {
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
	return ds, upsert
}
