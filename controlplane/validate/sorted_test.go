package validate

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
)

// TestWorkSorted: the entries of a kind come out in key order whether they are few
// (sorted) or many (picked out of every entry in order), and an entry that is not
// among every entry (one being removed) is not lost.
func TestWorkSorted(t *testing.T) {
	kinds := []string{apiv1.KindAuthConfig, apiv1.KindUpstream, apiv1.KindVirtualService}
	var aligned []*entry
	for _, kind := range kinds {
		for i := range 1000 {
			aligned = append(aligned, &entry{res: &source.Resource{Kind: kind, Namespace: "ns", Name: fmt.Sprintf("r-%04d", i)}})
		}
	}
	slices.SortFunc(aligned, func(a, b *entry) int { return a.res.Key().Compare(b.res.Key()) })
	outside := &entry{res: &source.Resource{Kind: apiv1.KindUpstream, Namespace: "ns", Name: "r-0500x"}, removed: true}
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 10, pickMin - 1, pickMin, 700, 1000} {
		for _, withOutside := range []bool{false, true} {
			w := work{}
			var want []*entry
			for _, i := range r.Perm(len(aligned)) {
				if e := aligned[i]; e.res.Kind == apiv1.KindUpstream && len(want) < n {
					w.add(e)
					want = append(want, e)
				} else if e.res.Kind != apiv1.KindUpstream && r.IntN(2) == 0 {
					w.add(e) // other kinds in the work too
				}
			}
			if withOutside {
				w.add(outside)
				want = append(want, outside)
			}
			slices.SortFunc(want, func(a, b *entry) int { return a.res.Key().Compare(b.res.Key()) })
			if got := w.sorted(apiv1.KindUpstream, aligned); !slices.Equal(got, want) {
				t.Errorf("%d upstreams (outside %v): got %d entries, want %d in key order", n, withOutside, len(got), len(want))
			}
		}
	}
}

// BenchmarkWorkSorted is a start's 10,000 entries of a kind (of 30,000) put in key
// order: picked out of every entry in order, or sorted (no entries in order given).
func BenchmarkWorkSorted(b *testing.B) {
	var aligned []*entry
	w := work{}
	for _, kind := range []string{apiv1.KindAuthConfig, apiv1.KindUpstream, apiv1.KindVirtualService} {
		for i := range 10000 {
			e := &entry{res: &source.Resource{APIVersion: "v1", Kind: kind, Namespace: fmt.Sprintf("ns%02d", i%10), Name: fmt.Sprintf("r-%05d", i)}}
			aligned = append(aligned, e)
			w.add(e)
		}
	}
	slices.SortFunc(aligned, func(a, b *entry) int { return a.res.Key().Compare(b.res.Key()) })
	for _, tc := range []struct {
		name    string
		aligned []*entry
	}{{"picked", aligned}, {"sorted", nil}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if got := w.sorted(apiv1.KindUpstream, tc.aligned); len(got) != 10000 {
					b.Fatal(len(got))
				}
			}
		})
	}
}
