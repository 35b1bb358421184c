package validate

import "gatehouse.dev/gatehouse/internal/smallset"

// userIndex is the entries referencing each user key ("<Kind> <id>"): a small set each,
// since most keys are referenced by one or two entries (the VirtualServices of an
// Upstream or an AuthConfig) and a few by thousands (the extauth server's Upstream).
// The sets are held by value, written back after each change: a pointer each would be
// one more allocation per key.
type userIndex map[string]smallset.Set[*entry]

func (x userIndex) add(key string, e *entry) {
	s := x[key]
	s.Add(e)
	x[key] = s
}

func (x userIndex) remove(key string, e *entry) {
	s, ok := x[key]
	if !ok {
		return
	}
	if s.Remove(e) {
		delete(x, key)
		return
	}
	x[key] = s
}

// each calls f with every entry referencing key.
func (x userIndex) each(key string, f func(*entry)) {
	s := x[key]
	for e := range s.All() {
		f(e)
	}
}
