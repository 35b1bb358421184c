package xds

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestBooksFollowWhatTheClientHolds plays a delta client that acknowledges most
// responses and rejects some, through random edits: after every answer, what its
// books say it holds (view, and version of each name) is what it holds. Most
// responses bring a version table, as a wildcard stream's do; some do not (a table
// the books did not find), so the books also move between a table and a map of
// their own.
func TestBooksFollowWhatTheClientHolds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	name := func(i int) string { return fmt.Sprintf("ac-%02d", i) }
	served := map[string]string{}  // what the server serves
	thought := map[string]string{} // what the server takes the client to hold: what it sent
	client := map[string]string{}  // what the client holds
	var h held
	tables, nacks, conversions := 0, 0, 0
	for step := range 3000 {
		for range 1 + rng.IntN(3) {
			n := name(rng.IntN(40))
			if rng.IntN(4) == 0 {
				delete(served, n)
			} else {
				served[n] = fmt.Sprintf("v%d", step)
			}
		}
		sr := &sentResponse{}
		for _, n := range slices.Sorted(maps.Keys(served)) {
			if thought[n] != served[n] {
				sr.resources = append(sr.resources, &discovery.Resource{Name: n, Version: served[n]})
			}
		}
		for n := range thought {
			if _, ok := served[n]; !ok {
				sr.removed = append(sr.removed, n)
			}
		}
		if rng.IntN(5) != 0 {
			sr.table = &versionTable{seq: uint64(step), m: maps.Clone(served)}
			tables++
		} else if h.table != nil {
			conversions++
		}
		thought = maps.Clone(served)
		if rng.IntN(6) == 0 {
			h.refused(sr)
			nacks++
		} else {
			for _, n := range sr.removed {
				delete(client, n)
			}
			for _, r := range sr.resources {
				client[r.GetName()] = r.GetVersion()
			}
			h.took(sr)
		}
		if d := cmp.Diff(client, h.view(), cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("step %d: the books' view (-client holds +books say):\n%s", step, d)
		}
		for i := range 40 {
			want, wantOK := client[name(i)]
			if got, ok := h.version(name(i)); got != want || ok != wantOK {
				t.Fatalf("step %d: version(%s) = %q, %t; the client holds %q, %t", step, name(i), got, ok, want, wantOK)
			}
		}
	}
	if tables == 0 || nacks == 0 || conversions == 0 {
		t.Fatalf("the run saw %d tables, %d rejections, %d moves from a table to a map: each must happen", tables, nacks, conversions)
	}
}
