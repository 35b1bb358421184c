package xds

import (
	"iter"
	"slices"
)

// referrers are the served resources that reference one resource. Almost every
// resource has one or two (a cluster its route configuration, a ClusterLoadAssignment
// its cluster), so they are a short slice: at 10k services a one-entry map for each of
// ~20,000 referenced resources held ~6 MB, the slice ~1 MB. A resource referenced by
// many (a cluster behind thousands of TLS virtual hosts, each its own route
// configuration) gets a map, so that an edit costs no scan of thousands of names.
type referrers struct {
	few  []key
	many map[key]struct{}
}

// maxFew is how many referrers stay in the slice.
const maxFew = 8

// add notes k as a referrer (once).
func (rs *referrers) add(k key) {
	switch {
	case rs.many != nil:
		rs.many[k] = struct{}{}
	case slices.Contains(rs.few, k):
	case len(rs.few) < maxFew:
		rs.few = append(rs.few, k)
	default:
		rs.many = make(map[key]struct{}, 2*maxFew)
		for _, f := range rs.few {
			rs.many[f] = struct{}{}
		}
		rs.many[k] = struct{}{}
		rs.few = nil
	}
}

// remove forgets k as a referrer, and says whether none is left.
func (rs *referrers) remove(k key) bool {
	if rs.many != nil {
		delete(rs.many, k)
		return len(rs.many) == 0
	}
	if i := slices.Index(rs.few, k); i >= 0 {
		rs.few = slices.Delete(rs.few, i, i+1)
	}
	return len(rs.few) == 0
}

// all are the referrers, in no particular order.
func (rs *referrers) all() iter.Seq[key] {
	return func(yield func(key) bool) {
		if rs == nil {
			return
		}
		for k := range rs.many {
			if !yield(k) {
				return
			}
		}
		for _, k := range rs.few {
			if !yield(k) {
				return
			}
		}
	}
}
