// Package smallset is a set for the control plane's reverse indexes (who references a
// resource). Almost every resource is referenced by one or two others, and a map per
// resource costs a map's header and buckets for its first member where a slice costs
// the member's size. A Set holds its members in a slice until it has
// more than Few of them, and then in a map, so that a resource referenced by thousands
// (the extauth server's Upstream, by every secured VirtualService) is still added to
// and removed from in constant time.
package smallset

import (
	"iter"
	"slices"
)

// Few is the most members a Set keeps in its slice.
const Few = 8

// Set is a set of comparable values; the zero Set is empty and ready to use.
type Set[T comparable] struct {
	few  []T
	many map[T]struct{}
}

// Add puts v in the set, once.
func (s *Set[T]) Add(v T) {
	switch {
	case s.many != nil:
		s.many[v] = struct{}{}
	case slices.Contains(s.few, v):
	case len(s.few) < Few:
		s.few = append(s.few, v)
	default:
		s.many = make(map[T]struct{}, 2*Few)
		for _, u := range s.few {
			s.many[u] = struct{}{}
		}
		s.many[v] = struct{}{}
		s.few = nil
	}
}

// Remove takes v out of the set and says whether the set is empty now.
func (s *Set[T]) Remove(v T) (empty bool) {
	if s.many != nil {
		delete(s.many, v)
		return len(s.many) == 0
	}
	if i := slices.Index(s.few, v); i >= 0 {
		s.few = slices.Delete(s.few, i, i+1)
	}
	return len(s.few) == 0
}

// Len is the number of members.
func (s *Set[T]) Len() int {
	if s == nil {
		return 0
	}
	return len(s.few) + len(s.many)
}

// All yields the members in no particular order; a nil Set has none.
func (s *Set[T]) All() iter.Seq[T] {
	return func(yield func(T) bool) {
		if s == nil {
			return
		}
		for v := range s.many {
			if !yield(v) {
				return
			}
		}
		for _, v := range s.few {
			if !yield(v) {
				return
			}
		}
	}
}
