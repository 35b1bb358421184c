package xds

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// referrers keep every referrer once, through the switch from a slice to a map and
// back to empty, in whatever order they are added and removed.
func TestReferrers(t *testing.T) {
	k := func(i int) key { return key{ClusterType, "c" + strconv.Itoa(i)} }
	sorted := func(rs *referrers) []key {
		out := slices.Collect(rs.all())
		slices.SortFunc(out, cmpKeys)
		return out
	}
	tests := []struct {
		name   string
		add    []int
		remove []int
		want   []int
	}{
		{name: "one", add: []int{1}, want: []int{1}},
		{name: "added twice", add: []int{1, 1, 2}, want: []int{1, 2}},
		{name: "removed", add: []int{1, 2, 3}, remove: []int{2}, want: []int{1, 3}},
		{name: "removed, not there", add: []int{1}, remove: []int{5}, want: []int{1}},
		{name: "all removed", add: []int{1, 2}, remove: []int{2, 1}},
		{name: "past maxFew", add: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 3}, want: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{name: "past maxFew, some removed", add: []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, remove: []int{0, 9, 4}, want: []int{1, 2, 3, 5, 6, 7, 8}},
		{name: "past maxFew, all removed", add: []int{0, 1, 2, 3, 4, 5, 6, 7, 8}, remove: []int{0, 1, 2, 3, 4, 5, 6, 7, 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs := &referrers{}
			for _, i := range tt.add {
				rs.add(k(i))
			}
			empty := false
			for _, i := range tt.remove {
				empty = rs.remove(k(i))
			}
			var want []key
			for _, i := range tt.want {
				want = append(want, k(i))
			}
			slices.SortFunc(want, cmpKeys)
			if diff := cmp.Diff(want, sorted(rs), cmp.AllowUnexported(key{})); diff != "" {
				t.Errorf("referrers (-want +got):\n%s", diff)
			}
			if len(tt.remove) > 0 && empty != (len(tt.want) == 0) {
				t.Errorf("remove said empty=%v with %d referrers left", empty, len(tt.want))
			}
		})
	}
	var none *referrers
	if got := slices.Collect(none.all()); len(got) != 0 {
		t.Errorf("nil referrers: %v", got)
	}
}

func cmpKeys(a, b key) int {
	if c := strings.Compare(a.typ, b.typ); c != 0 {
		return c
	}
	return strings.Compare(a.name, b.name)
}
