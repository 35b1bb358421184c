package source

import (
	"encoding/json"
	"iter"
	"slices"
)

// chunkSize is how many resources a chunk of Resources holds when it is made; an edit
// copies one chunk and the list of chunks, not the whole set.
const chunkSize = 256

// Resources is an ordered set of resources (by apiVersion, kind, namespace, name; a key
// appears once). It is immutable: With returns a new set that shares every chunk the
// edit did not touch, so an edit among tens of thousands of resources copies a few
// kilobytes, and a published Input stays as it was for whoever holds it.
//
// A set holds pointers to its resources, which are never modified: the Dir source's
// files, successive Inputs and validation's entries share one Resource each, rather
// than a copy each.
//
// The zero value is the empty set.
type Resources struct {
	chunks [][]*Resource // each non-empty and in order
	n      int
}

// NewResources makes a set of rs, which must be in key order with each key once. It
// keeps rs: the caller must not modify it afterwards.
func NewResources(rs []Resource) Resources {
	ps := make([]*Resource, len(rs))
	for i := range rs {
		ps[i] = &rs[i]
	}
	return newResources(ps)
}

// NewResourcesOf makes a set of the resources rs points to, which must be in key order
// with each key once. It keeps rs and the resources: the caller must modify neither
// afterwards. Successive sets may share resources (a source that remembers what it
// decoded hands the same one to each Input while it does not change).
func NewResourcesOf(rs []*Resource) Resources { return newResources(rs) }

// newResources makes a set of rs, in key order with each key once, keeping rs and the
// resources it points to.
func newResources(rs []*Resource) Resources {
	out := Resources{n: len(rs)}
	for len(rs) > 0 {
		k := min(chunkSize, len(rs))
		out.chunks = append(out.chunks, rs[:k:k])
		rs = rs[k:]
	}
	return out
}

// Len is the number of resources.
func (rs Resources) Len() int { return rs.n }

// All yields every resource in key order. The resources are shared: never modify them.
func (rs Resources) All() iter.Seq[*Resource] {
	return func(yield func(*Resource) bool) {
		for _, c := range rs.chunks {
			for _, r := range c {
				if !yield(r) {
					return
				}
			}
		}
	}
}

// Slice returns a copy of every resource, in key order.
func (rs Resources) Slice() []Resource {
	out := make([]Resource, 0, rs.n)
	for _, c := range rs.chunks {
		for _, r := range c {
			out = append(out, *r)
		}
	}
	return out
}

// Get returns the resource of k (shared: never modify it).
func (rs Resources) Get(k Key) (*Resource, bool) {
	c := rs.chunkOf(k)
	if c == len(rs.chunks) {
		return nil, false
	}
	i, ok := find(rs.chunks[c], k)
	if !ok {
		return nil, false
	}
	return rs.chunks[c][i], true
}

// Same says whether rs and o are the same set, made by the same NewResources or With
// (not merely equal).
func (rs Resources) Same(o Resources) bool {
	if rs.n != o.n || len(rs.chunks) != len(o.chunks) {
		return false
	}
	return len(rs.chunks) == 0 || &rs.chunks[0] == &o.chunks[0]
}

// With returns rs with put added or replacing the resources of their keys, and the
// resources of remove taken out (a key absent from rs is ignored). put must not hold
// a key twice; it is kept: the caller must not modify it afterwards. Only the chunks
// where keys change are copied.
func (rs Resources) With(put []Resource, remove []Key) Resources {
	ps := make([]*Resource, len(put))
	for i := range put {
		ps[i] = &put[i]
	}
	return rs.with(ps, remove)
}

// WithShared is With of resources that are kept as they are, not copied: put must not
// hold a key twice, and neither put nor the resources may be modified afterwards.
func (rs Resources) WithShared(put []*Resource, remove []Key) Resources { return rs.with(put, remove) }

// with is With of resources that are kept as they are.
func (rs Resources) with(put []*Resource, remove []Key) Resources {
	if len(put) == 0 && len(remove) == 0 {
		return rs
	}
	chunks := slices.Clone(rs.chunks)
	copied := map[int]bool{}
	edit := func(c int) []*Resource {
		if !copied[c] {
			chunks[c] = slices.Clip(slices.Clone(chunks[c]))
			copied[c] = true
		}
		return chunks[c]
	}
	n := rs.n
	for _, k := range remove {
		c := chunkOf(chunks, k)
		if c == len(chunks) {
			continue
		}
		if i, ok := find(chunks[c], k); ok {
			chunks[c] = slices.Delete(edit(c), i, i+1)
			n--
			if len(chunks[c]) == 0 {
				// chunkOf needs every chunk non-empty (a file edited in place
				// removes its resources and puts them back).
				chunks, copied = dropChunk(chunks, copied, c)
			}
		}
	}
	for _, r := range put {
		c := chunkOf(chunks, r.Key())
		if c == len(chunks) {
			if c == 0 {
				chunks, copied[0] = append(chunks, nil), true
			} else {
				c-- // after every key: the last chunk takes it
			}
		}
		ch := edit(c)
		i, ok := find(ch, r.Key())
		if ok {
			ch[i] = r
			continue
		}
		chunks[c] = slices.Insert(ch, i, r)
		n++
	}
	return Resources{chunks: rebalance(chunks, copied), n: n}
}

// dropChunk takes chunk c out of chunks (With's own copy), keeping track of which of
// the others were copied.
func dropChunk(chunks [][]*Resource, copied map[int]bool, c int) ([][]*Resource, map[int]bool) {
	kept := make(map[int]bool, len(copied))
	for i := range copied {
		switch {
		case i < c:
			kept[i] = true
		case i > c:
			kept[i-1] = true
		}
	}
	return slices.Delete(chunks, c, c+1), kept
}

// rebalance drops the chunks an edit emptied and splits those it grew too large.
func rebalance(chunks [][]*Resource, copied map[int]bool) [][]*Resource {
	out := make([][]*Resource, 0, len(chunks)+1)
	for i, c := range chunks {
		switch {
		case len(c) == 0:
		case copied[i] && len(c) > 2*chunkSize:
			out = append(out, c[:chunkSize:chunkSize], c[chunkSize:])
		default:
			out = append(out, c)
		}
	}
	return out
}

// chunkOf is the chunk where k is or belongs: the first whose last key is not below
// k, or len(rs.chunks) when k is after every key.
func (rs Resources) chunkOf(k Key) int { return chunkOf(rs.chunks, k) }

func chunkOf(chunks [][]*Resource, k Key) int {
	i, _ := slices.BinarySearchFunc(chunks, k, func(c []*Resource, k Key) int {
		return c[len(c)-1].Key().Compare(k)
	})
	return i
}

// MarshalJSON writes the set as a JSON array.
func (rs Resources) MarshalJSON() ([]byte, error) {
	if rs.n == 0 {
		return []byte("[]"), nil
	}
	return json.Marshal(rs.Slice())
}

// UnmarshalJSON reads a JSON array in key order.
func (rs *Resources) UnmarshalJSON(b []byte) error {
	var s []Resource
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*rs = NewResources(s)
	return nil
}
