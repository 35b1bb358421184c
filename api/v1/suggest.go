package v1

import (
	"reflect"
	"sort"
	"strings"
)

// suggest returns the known name closest to an unknown one: the same but for case, or
// at most two edits away (and fewer edits than the name has letters). "" when none is
// close enough to be a likely typo.
func suggest(unknown string, known map[string]reflect.Type) string {
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, n)
	}
	sort.Strings(names)
	best, bestDist := "", 3
	for _, n := range names {
		if n == unknown {
			continue // known but not usable here, such as a key that is not a string
		}
		d := editDistance(unknown, n)
		if strings.EqualFold(unknown, n) {
			d = 0
		}
		if d < bestDist && d < len(unknown) {
			best, bestDist = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
