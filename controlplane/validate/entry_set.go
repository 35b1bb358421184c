package validate

import "slices"

// userIndex is the entries referencing each user key ("<Kind> <id>").
//
// Most keys are referenced by one or two entries (the VirtualServices of an Upstream
// or an AuthConfig): a slice costs 8 bytes an entry where a map costs ~240 bytes for
// its first (4.8 MB at 10,000 services). A key referenced by more than smallSet
// entries (the extauth server's Upstream, by every secured VirtualService) gets a map,
// so adding and removing stay constant-time.
type userIndex map[string]entrySet

// smallSet is the most entries an entrySet holds in a slice.
const smallSet = 16

// entrySet is a set of entries: few, or many when it outgrew smallSet.
type entrySet struct {
	few  []*entry
	many map[*entry]struct{}
}

func (x userIndex) add(key string, e *entry) {
	s := x[key]
	switch {
	case s.many != nil:
		s.many[e] = struct{}{}
	case slices.Contains(s.few, e):
	case len(s.few) < smallSet:
		s.few = append(s.few, e)
	default:
		s.many = make(map[*entry]struct{}, 2*smallSet)
		for _, u := range s.few {
			s.many[u] = struct{}{}
		}
		s.many[e] = struct{}{}
		s.few = nil
	}
	x[key] = s
}

func (x userIndex) remove(key string, e *entry) {
	s, ok := x[key]
	if !ok {
		return
	}
	if s.many != nil {
		delete(s.many, e)
	} else if i := slices.Index(s.few, e); i >= 0 {
		s.few = slices.Delete(s.few, i, i+1) // each's callers never index: no one ranges over it
	}
	if len(s.few) == 0 && len(s.many) == 0 {
		delete(x, key)
		return
	}
	x[key] = s
}

// each calls f with every entry referencing key.
func (x userIndex) each(key string, f func(*entry)) {
	s := x[key]
	for _, e := range s.few {
		f(e)
	}
	for e := range s.many {
		f(e)
	}
}
