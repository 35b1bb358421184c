// Package chunked holds List, an immutable list kept in chunks of a fixed size, so
// that a copy with a few elements replaced shares every chunk it does not touch.
//
// The control plane's edge stage lists every resource and what serves: an edit of one
// resource replaces one element of a few lists. As plain slices, each such edge would
// copy its lists whole, and whoever compared two edges would look at every element. A List edited through an Editor
// copies the chunk it writes and the list of chunks (a few kilobytes), and Changes
// compares two lists chunk by chunk, looking inside only those they do not share.
package chunked

import (
	"encoding/json"
	"iter"
	"slices"
)

// Size is how many elements a chunk holds (the last may hold fewer).
const Size = 256

// List is an immutable list. Elements are found by position in constant time. The zero
// value is the empty list.
type List[T comparable] struct {
	chunks [][]T // each Size long but the last, which is not empty
	n      int
}

// Of is a List of s, which it keeps: the caller must not modify s afterwards. Two
// Lists of the same slice share their chunks.
func Of[T comparable](s []T) List[T] {
	l := List[T]{n: len(s)}
	if len(s) > 0 {
		l.chunks = make([][]T, 0, (len(s)+Size-1)/Size)
	}
	for len(s) > 0 {
		k := min(Size, len(s))
		l.chunks = append(l.chunks, s[:k:k])
		s = s[k:]
	}
	return l
}

// Len is the number of elements.
func (l List[T]) Len() int { return l.n }

// At is the element at position i, which must be in [0, Len()).
func (l List[T]) At(i int) T {
	if i < 0 || i >= l.n {
		panic("chunked: index out of range")
	}
	return l.chunks[i/Size][i%Size]
}

// All yields every position and element, in order.
func (l List[T]) All() iter.Seq2[int, T] {
	return func(yield func(int, T) bool) {
		i := 0
		for _, c := range l.chunks {
			for _, v := range c {
				if !yield(i, v) {
					return
				}
				i++
			}
		}
	}
}

// Values yields every element, in order.
func (l List[T]) Values() iter.Seq[T] {
	return func(yield func(T) bool) {
		for _, c := range l.chunks {
			for _, v := range c {
				if !yield(v) {
					return
				}
			}
		}
	}
}

// Slice is a copy of the elements, in order; nil when there are none.
func (l List[T]) Slice() []T {
	if l.n == 0 {
		return nil
	}
	out := make([]T, 0, l.n)
	for _, c := range l.chunks {
		out = append(out, c...)
	}
	return out
}

// Same says whether l and o share every chunk: the same list, or one edited into the
// other with no element replaced. Equal lists made apart are not Same.
func (l List[T]) Same(o List[T]) bool {
	if l.n != o.n || len(l.chunks) != len(o.chunks) {
		return false
	}
	for i, c := range l.chunks {
		if !sameChunk(c, o.chunks[i]) {
			return false
		}
	}
	return true
}

func sameChunk[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Shared counts the chunks of b that are those of a at the same place, and the
// chunks of b: what an edit of a into b copied is the difference (edges are measured
// and tested with it).
func Shared[T comparable](a, b List[T]) (shared, chunks int) {
	for k, c := range b.chunks {
		if k < len(a.chunks) && sameChunk(a.chunks[k], c) {
			shared++
		}
	}
	return shared, len(b.chunks)
}

// Changes calls f with every position where a and b, of the same length, hold
// different elements, in order. Only the chunks they do not share are looked into, so
// comparing a list with an edited copy of it costs the chunks edited (and one
// comparison per chunk). It reports whether the lengths were equal: when they are not,
// f is never called.
func Changes[T comparable](a, b List[T], f func(i int, old, new T)) bool {
	if a.n != b.n {
		return false
	}
	for k, c := range a.chunks {
		d := b.chunks[k]
		if sameChunk(c, d) {
			continue
		}
		for j, v := range c {
			if d[j] != v {
				f(k*Size+j, v, d[j])
			}
		}
	}
	return true
}

// Builder makes a List by appending to it. The zero value is ready to use.
type Builder[T comparable] struct {
	l List[T]
}

// Append adds v at the end.
func (b *Builder[T]) Append(v T) {
	last := len(b.l.chunks) - 1
	if last < 0 || len(b.l.chunks[last]) == Size {
		b.l.chunks = append(b.l.chunks, make([]T, 0, Size))
		last++
	}
	b.l.chunks[last] = append(b.l.chunks[last], v)
	b.l.n++
}

// Len is the number of elements appended.
func (b *Builder[T]) Len() int { return b.l.n }

// List is what was appended. The Builder must not be used afterwards.
func (b *Builder[T]) List() List[T] {
	l := b.l
	b.l = List[T]{}
	return l
}

// Editor makes a copy of a List with elements replaced; the List it started from is
// left as it was.
type Editor[T comparable] struct {
	l      List[T]
	copied map[int]bool // the chunks copied, by index
}

// Edit starts a copy of l to replace elements of.
func (l List[T]) Edit() *Editor[T] {
	return &Editor[T]{l: l}
}

// Set replaces the element at position i, which must be in [0, Len()).
func (e *Editor[T]) Set(i int, v T) {
	if i < 0 || i >= e.l.n {
		panic("chunked: index out of range")
	}
	k := i / Size
	if e.l.chunks[k][i%Size] == v {
		return
	}
	if !e.copied[k] {
		if e.copied == nil {
			e.copied = map[int]bool{}
			e.l.chunks = slices.Clone(e.l.chunks)
		}
		e.l.chunks[k] = slices.Clip(slices.Clone(e.l.chunks[k]))
		e.copied[k] = true
	}
	e.l.chunks[k][i%Size] = v
}

// List is the copy. When no element was replaced it is the List edited (Same). The
// Editor must not be used afterwards.
func (e *Editor[T]) List() List[T] {
	l := e.l
	*e = Editor[T]{}
	return l
}

// MarshalJSON writes the list as a JSON array.
func (l List[T]) MarshalJSON() ([]byte, error) {
	if l.n == 0 {
		return []byte("[]"), nil
	}
	return json.Marshal(l.Slice())
}

// UnmarshalJSON reads a JSON array.
func (l *List[T]) UnmarshalJSON(b []byte) error {
	var s []T
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*l = Of(s)
	return nil
}
