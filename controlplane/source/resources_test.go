package source

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func testResource(i, v int) Resource {
	return Resource{APIVersion: "core.gatehouse.dev/v1", Kind: "Upstream", Namespace: "ns", Name: fmt.Sprintf("u%05d", i), Hash: fmt.Sprint(v)}
}

// TestResourcesWithIsAnEditedSlice edits a set of several chunks at random (puts of new
// and existing keys, removals of present and absent ones) and compares each result
// with the same edits made to a plain sorted slice.
func TestResourcesWithIsAnEditedSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var model []Resource
	for i := 0; i < 3000; i += 2 {
		model = append(model, testResource(i, 0))
	}
	rs := NewResources(slices.Clone(model))
	var history Resources
	for step := range 300 {
		var put []Resource
		var remove []Key
		seen := map[int]bool{}
		for range rng.IntN(40) + 1 {
			i := rng.IntN(3100)
			if seen[i] {
				continue
			}
			seen[i] = true
			if rng.IntN(3) == 0 {
				r := testResource(i, 0)
				remove = append(remove, r.Key())
			} else {
				put = append(put, testResource(i, step+1))
			}
		}
		next := rs.With(put, remove)
		before := model
		for _, k := range remove {
			if i, ok := find(model, k); ok {
				model = slices.Delete(slices.Clone(model), i, i+1)
			}
		}
		for _, r := range put {
			i, ok := find(model, r.Key())
			model = slices.Clone(model)
			if ok {
				model[i] = r
			} else {
				model = slices.Insert(model, i, r)
			}
		}
		history, rs = rs, next
		// cmp.Diff only on a mismatch: it takes long over thousands of resources.
		if got := rs.Slice(); !slices.Equal(model, got) {
			t.Fatalf("step %d: -slice +Resources:\n%s", step, cmp.Diff(model, got))
		}
		if want, got := sliceDiff(before, model), rs.Diff(history); !slices.EqualFunc(want, got, sameChange) {
			t.Fatalf("step %d: Diff (-of the slices +of the sets):\n%s", step, cmp.Diff(want, got, cmpopts.EquateEmpty()))
		}
		if rs.Len() != len(model) {
			t.Fatalf("step %d: Len %d, want %d", step, rs.Len(), len(model))
		}
		for _, r := range put {
			got, ok := rs.Get(r.Key())
			if !ok || got.Hash != r.Hash {
				t.Fatalf("step %d: Get(%s) = %v, %t; want hash %s", step, r.Key(), got, ok, r.Hash)
			}
		}
		for _, k := range remove {
			if _, ok := rs.Get(k); ok && !slices.ContainsFunc(put, func(r Resource) bool { return r.Key() == k }) {
				t.Fatalf("step %d: %s is still there after its removal", step, k)
			}
		}
		for _, c := range rs.chunks {
			if len(c) == 0 || len(c) > 2*chunkSize {
				t.Fatalf("step %d: a chunk of %d resources", step, len(c))
			}
		}
	}
}

// TestResourcesWithLeavesTheOriginal checks that a set edited is unchanged for whoever
// holds it (a published Input is never modified).
func TestResourcesWithLeavesTheOriginal(t *testing.T) {
	var all []Resource
	for i := range 1000 {
		all = append(all, testResource(i, 0))
	}
	rs := NewResources(slices.Clone(all))
	gone := testResource(700, 0)
	edited := rs.With([]Resource{testResource(5, 1), testResource(1500, 1)}, []Key{gone.Key()})
	if diff := cmp.Diff(all, rs.Slice()); diff != "" {
		t.Fatalf("the original changed (-before +after):\n%s", diff)
	}
	if edited.Len() != 1000 || edited.Same(rs) || !rs.Same(rs) {
		t.Fatalf("edited has %d resources, Same(original) %t", edited.Len(), edited.Same(rs))
	}
}

// sliceDiff is what Diff should say of two plain sorted slices.
func sliceDiff(old, now []Resource) []Change {
	var out []Change
	i, j := 0, 0
	for i < len(old) || j < len(now) {
		c := 1
		switch {
		case i == len(old):
		case j == len(now):
			c = -1
		default:
			c = old[i].Key().Compare(now[j].Key())
		}
		switch {
		case c < 0:
			out = append(out, Change{Was: &old[i], I: i, J: j})
			i++
		case c > 0:
			out = append(out, Change{Now: &now[j], I: i, J: j})
			j++
		default:
			if old[i].Hash != now[j].Hash {
				out = append(out, Change{Was: &old[i], Now: &now[j], I: i, J: j})
			}
			i, j = i+1, j+1
		}
	}
	return out
}

func sameChange(a, b Change) bool {
	same := func(x, y *Resource) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.I == b.I && a.J == b.J && same(a.Was, b.Was) && same(a.Now, b.Now)
}
