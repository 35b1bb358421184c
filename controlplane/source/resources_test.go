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
			if i, ok := findIn(model, k); ok {
				model = slices.Delete(slices.Clone(model), i, i+1)
			}
		}
		for _, r := range put {
			i, ok := findIn(model, r.Key())
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

// TestResourcesWithEmptiesAChunk: removals that empty a chunk, with puts in the same
// edit (a file edited in place removes its resources and puts them back).
func TestResourcesWithEmptiesAChunk(t *testing.T) {
	keys := func(rs []Resource) []Key {
		var ks []Key
		for _, r := range rs {
			ks = append(ks, r.Key())
		}
		return ks
	}
	three := []Resource{testResource(1, 0), testResource(2, 0), testResource(3, 0)}
	var many []Resource // three chunks: [0, 256), [256, 512), [512, 600)
	for i := range 600 {
		many = append(many, testResource(i, 0))
	}
	tests := []struct {
		name   string
		start  []Resource
		put    []Resource
		remove []Key
	}{
		{name: "the only chunk emptied and filled again", start: three,
			put: []Resource{testResource(1, 1), testResource(2, 1), testResource(3, 1)}, remove: keys(three)},
		{name: "the only chunk emptied, another key put", start: three,
			put: []Resource{testResource(9, 1)}, remove: keys(three)},
		{name: "a middle chunk emptied, keys put before and after it", start: many,
			put: []Resource{testResource(300, 1), testResource(100, 1), testResource(700, 1)}, remove: keys(many[256:512])},
		{name: "every chunk emptied", start: many, put: []Resource{testResource(5, 1)}, remove: keys(many)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NewResources(slices.Clone(tt.start)).With(tt.put, tt.remove)
			var want []Resource
			for _, r := range tt.start {
				if !slices.Contains(tt.remove, r.Key()) {
					want = append(want, r)
				}
			}
			for _, r := range tt.put {
				i, ok := findIn(want, r.Key())
				if ok {
					want[i] = r
				} else {
					want = slices.Insert(want, i, r)
				}
			}
			if diff := cmp.Diff(want, got.Slice()); diff != "" {
				t.Errorf("-want +got:\n%s", diff)
			}
			for _, c := range got.chunks {
				if len(c) == 0 {
					t.Errorf("an empty chunk is left")
				}
			}
		})
	}
}

// findIn is where k is, or would be, in rs (in key order).
func findIn(rs []Resource, k Key) (int, bool) {
	return slices.BinarySearchFunc(rs, k, func(r Resource, k Key) int { return r.Key().Compare(k) })
}
