package churnkit

import (
	"math/rand/v2"
	"sync"
	"time"
)

// routes is the workload's view of the resources: each route's state as last written,
// the routes that exist (which the steady load picks from), and every change.
type routes struct {
	mu      sync.Mutex
	dir     string
	n       int           // routes before the run: Initial; the others Absent
	state   map[int]State // routes changed so far
	live    []int
	where   map[int]int // index in live
	changes []Change
}

func newRoutes(dir string, n int) *routes {
	r := &routes{dir: dir, n: n, state: map[int]State{}, where: map[int]int{}}
	for i := range n {
		r.add(i)
	}
	return r
}

func (r *routes) add(i int) {
	r.where[i] = len(r.live)
	r.live = append(r.live, i)
}

func (r *routes) remove(i int) {
	j, ok := r.where[i]
	if !ok {
		return
	}
	last := r.live[len(r.live)-1]
	r.live[j], r.where[last] = last, j
	r.live = r.live[:len(r.live)-1]
	delete(r.where, i)
}

func (r *routes) get(i int) State {
	if s, ok := r.state[i]; ok {
		return s
	}
	return before(r.n)(i)
}

// before is each route's state before a run on n routes.
func before(n int) func(int) State {
	return func(i int) State {
		if i < n {
			return Initial(i)
		}
		return State{Kind: Absent}
	}
}

// pick is a route that exists and its state, at random.
func (r *routes) pick(rng *rand.Rand) (int, State) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := r.live[rng.IntN(len(r.live))]
	return i, r.get(i)
}

// change writes route i's files for to (removes them for Absent) and records the
// change, its time taken just before the first file is touched. The writes of one
// change are not interleaved with another's.
func (r *routes) change(i int, what string, to State) (Change, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := Change{Route: i, What: what, From: r.get(i), To: to, At: time.Now()}
	var err error
	switch {
	case to.Kind == Absent:
		r.remove(i)
		err = removeRoute(r.dir, i)
	case c.From.Kind == Absent:
		err = writeRoute(r.dir, i, to, true)
		r.add(i)
	default: // an AuthConfig edit: the VirtualService stays as it is
		err = writeRoute(r.dir, i, to, false)
	}
	r.state[i] = to
	r.changes = append(r.changes, c)
	return c, err
}

func (r *routes) all() []Change {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Change(nil), r.changes...)
}

// steadyReq is a request for a route in state s: mostly the key it allows, else a
// neighbouring key or none (and for the JWT route, no token).
func steadyReq(rng *rand.Rand, s State) Req {
	x := rng.Float64()
	switch s.Kind {
	case Open, Absent:
		return Req{Key: NoKey}
	case JWT:
		switch {
		case x < 0.5:
			return Req{Key: s.V, Token: true}
		case x < 0.75:
			return Req{Key: s.V}
		}
		return Req{Key: s.V + 1, Token: true}
	}
	switch {
	case x < 0.5:
		return Req{Key: s.V}
	case x < 0.7 && s.V > 0:
		return Req{Key: s.V - 1}
	case x < 0.85:
		return Req{Key: s.V + 1}
	}
	return Req{Key: NoKey}
}

// telling are the requests whose answers differ between c's old and new state, which
// its poller alternates.
func telling(c Change) []Req {
	var out []Req
	for _, r := range []Req{{Key: c.To.V, Token: true}, {Key: c.From.V, Token: true}, {Key: NoKey, Token: true}, {Key: NoKey}} {
		if c.From.Answer(r) != c.To.Answer(r) {
			out = append(out, r)
		}
	}
	return out
}
