package smallset

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSetIsASet adds and removes members at random, across the size where the slice
// turns into a map and back to empty, and compares the set with a map after every step.
func TestSetIsASet(t *testing.T) {
	for _, members := range []int{2, Few, 3 * Few} {
		rnd := rand.New(rand.NewPCG(1, uint64(members)))
		var s Set[int]
		model := map[int]bool{}
		for step := range 3000 {
			v := rnd.IntN(members)
			if rnd.IntN(3) == 0 {
				delete(model, v)
				if empty := s.Remove(v); empty != (len(model) == 0) {
					t.Fatalf("%d members, step %d: Remove said empty=%v with %d left", members, step, empty, len(model))
				}
			} else {
				s.Add(v)
				model[v] = true
			}
			got := slices.Sorted(s.All())
			var want []int
			for v := range model {
				want = append(want, v)
			}
			slices.Sort(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("%d members, step %d (-want +got):\n%s", members, step, diff)
			}
			if s.Len() != len(want) {
				t.Fatalf("%d members, step %d: Len = %d, want %d", members, step, s.Len(), len(want))
			}
		}
	}
	var none *Set[int]
	if none.Len() != 0 || len(slices.Collect(none.All())) != 0 {
		t.Error("a nil Set has members")
	}
}

// TestAllStops: a range loop that breaks stops the iteration, in the slice and in the map.
func TestAllStops(t *testing.T) {
	for _, n := range []int{Few, 2 * Few} {
		var s Set[int]
		for i := range n {
			s.Add(i)
		}
		seen := 0
		for range s.All() {
			seen++
			if seen == 3 {
				break
			}
		}
		if seen != 3 {
			t.Errorf("%d members: the loop saw %d after breaking at 3", n, seen)
		}
	}
}
