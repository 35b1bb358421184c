package server

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSortedStatusIsSorted: the statuses kept in order from one Apply to the next are
// those of a sort from scratch, whatever ids come and go between two Applies.
func TestSortedStatusIsSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 26))
	var prev []Status
	var prevByID map[string]Status
	for round := range 300 {
		status := map[string]Status{}
		for id, st := range prevByID {
			if rng.IntN(10) > 0 { // most ids stay
				status[id] = st
			}
		}
		for range rng.IntN(4) * rng.IntN(4) {
			id := fmt.Sprintf("ns.c%03d", rng.IntN(400))
			status[id] = Status{ID: id, State: StateAccepted}
		}
		for id := range status {
			if rng.IntN(20) == 0 {
				status[id] = Status{ID: id, State: StateRejected, Reason: fmt.Sprint("round ", round)}
			}
		}
		got := sortedStatus(prev, prevByID, status)
		want := make([]Status, 0, len(status))
		for _, st := range status {
			want = append(want, st)
		}
		slices.SortFunc(want, func(a, b Status) int { return strings.Compare(a.ID, b.ID) })
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("round %d (-sorted from scratch +kept in order):\n%s", round, diff)
		}
		prev, prevByID = got, status
	}
}
