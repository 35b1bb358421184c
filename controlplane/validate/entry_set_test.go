package validate

import (
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/internal/smallset"
)

// TestUserIndexIsASetPerKey adds and removes entries at random, across the size where
// a key's set turns from a slice into a map, and compares every key's set with a map's.
func TestUserIndexIsASetPerKey(t *testing.T) {
	entries := make([]*entry, 3*smallset.Few)
	for i := range entries {
		entries[i] = &entry{pos: int32(i)}
	}
	for _, tt := range []struct {
		name string
		keys int
	}{
		{"one key, many entries", 1},
		{"several keys", 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(1, uint64(tt.keys)))
			keys := []string{"Upstream a.x", "Upstream a.y", "AuthConfig a.x", "Secret a.s"}[:tt.keys]
			x, model := userIndex{}, map[string]map[*entry]bool{}
			for step := range 2000 {
				k, e := keys[rnd.IntN(len(keys))], entries[rnd.IntN(len(entries))]
				if rnd.IntN(3) == 0 {
					x.remove(k, e)
					delete(model[k], e)
				} else {
					x.add(k, e)
					if model[k] == nil {
						model[k] = map[*entry]bool{}
					}
					model[k][e] = true
				}
				for _, k := range keys {
					var got, want []int32
					x.each(k, func(e *entry) { got = append(got, e.pos) })
					for e := range model[k] {
						want = append(want, e.pos)
					}
					slices.Sort(got)
					slices.Sort(want)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("step %d: entries of %s (-want +got):\n%s", step, k, diff)
					}
					if _, ok := x[k]; ok != (len(want) > 0) {
						t.Fatalf("step %d: key %s kept %t with %d entries", step, k, ok, len(want))
					}
				}
			}
		})
	}
}

// TestEntrySize guards the size of an entry, one per resource: 224 bytes is a size
// class of Go's allocator, and a field more makes every entry 240.
func TestEntrySize(t *testing.T) {
	if n := unsafe.Sizeof(entry{}); n > 224 {
		t.Errorf("an entry is %d bytes; want at most 224 (30,000 entries at 10,000 services)", n)
	}
}
