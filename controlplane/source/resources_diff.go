package source

// Change is a key whose resource differs between two sets: Was and Now are its
// resource in the old and the new set (nil where it is absent), at index I of the old
// set and J of the new one (where it is, or would be inserted).
type Change struct {
	Was, Now *Resource
	I, J     int
}

// Diff returns the keys whose resource differs between old and rs (another Hash or
// Origin), in key order. A chunk both sets share (an edit made with With
// keeps every chunk it did not touch) is skipped without a look at its resources, so
// comparing a set with the one it was edited from costs what the edit touched.
func (rs Resources) Diff(old Resources) []Change {
	var out []Change
	a, b := cursor{chunks: old.chunks}, cursor{chunks: rs.chunks}
	for !a.done() || !b.done() {
		if a.k == 0 && b.k == 0 && !a.done() && !b.done() && sameChunk(a.chunk(), b.chunk()) {
			a.skip()
			b.skip()
			continue
		}
		c := 1
		switch {
		case a.done():
		case b.done():
			c = -1
		default:
			c = a.at().Key().Compare(b.at().Key())
		}
		switch {
		case c < 0:
			out = append(out, Change{Was: a.at(), I: a.i, J: b.i})
			a.next()
		case c > 0:
			out = append(out, Change{Now: b.at(), I: a.i, J: b.i})
			b.next()
		default:
			if x, y := a.at(), b.at(); x.Hash != y.Hash || x.Origin != y.Origin {
				out = append(out, Change{Was: x, Now: y, I: a.i, J: b.i})
			}
			a.next()
			b.next()
		}
	}
	return out
}

func sameChunk(x, y []*Resource) bool { return len(x) == len(y) && &x[0] == &y[0] }

// cursor walks the chunks of a set: chunk c, resource k in it, index i in the set.
type cursor struct {
	chunks  [][]*Resource
	c, k, i int
}

func (u *cursor) done() bool         { return u.c == len(u.chunks) }
func (u *cursor) chunk() []*Resource { return u.chunks[u.c] }
func (u *cursor) at() *Resource      { return u.chunks[u.c][u.k] }

func (u *cursor) next() {
	u.i++
	if u.k++; u.k == len(u.chunks[u.c]) {
		u.c, u.k = u.c+1, 0
	}
}

func (u *cursor) skip() {
	u.i += len(u.chunks[u.c])
	u.c, u.k = u.c+1, 0
}
