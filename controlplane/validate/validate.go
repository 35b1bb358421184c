package validate

import (
	"slices"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
)

// work is the set of entries to validate again in one run, by kind.
type work map[string]map[*entry]struct{}

func (w work) add(e *entry) {
	if w[e.res.Kind] == nil {
		w[e.res.Kind] = map[*entry]struct{}{}
	}
	w[e.res.Kind][e] = struct{}{}
}

// sorted returns the entries of kind in key order. aligned is every entry in key
// order: when much of a kind is to be validated again (a start, new settings), picking
// them out of it is cheaper than sorting them (comparing keys of entries scattered in
// memory).
func (w work) sorted(kind string, aligned []*entry) []*entry {
	todo := w[kind]
	out := make([]*entry, 0, len(todo))
	if len(todo) >= pickMin {
		for _, e := range aligned {
			if e.res.Kind != kind {
				continue // the other kinds' entries, without a lookup each
			}
			if _, ok := todo[e]; ok {
				out = append(out, e)
			}
		}
		if len(out) == len(todo) {
			return out
		}
		out = out[:0] // some are not in aligned (being removed): sort them all
	}
	for e := range todo {
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b *entry) int { return a.res.Key().Compare(b.res.Key()) })
	return out
}

// pickMin is how many entries of a kind make sorted pick them out of all entries in
// order rather than sort them: below it, walking every entry costs more than sorting.
const pickMin = 256

// Validate computes the edge stage of in, which holds each key once, in key order, as
// every Source publishes it.
func (v *Validator) Validate(in *source.Input) *Edge {
	w := work{}
	removed := v.diff(in, w)
	if v.Full || !v.started {
		for _, e := range v.aligned {
			w.add(e)
		}
	}
	v.started = true
	if len(w[apiv1.KindSettings]) > 0 || hasKind(removed, apiv1.KindSettings) {
		if v.applySettings() {
			for _, e := range v.aligned {
				w.add(e) // a new timeout or extauth server concerns every resource
			}
		}
	}
	for _, e := range removed {
		v.remove(e, w)
	}
	for _, e := range w.sorted(apiv1.KindSecret, v.aligned) {
		v.secret(e, w)
	}
	for _, e := range w.sorted(apiv1.KindUpstream, v.aligned) {
		v.upstream(e, w)
	}
	for _, e := range w.sorted(apiv1.KindAuthConfig, v.aligned) {
		v.authConfig(e, w)
	}
	v.virtualServices(w, removed)
	v.resolveRemembered()
	out := v.output(in)
	for _, e := range removed {
		out.Removed = append(out.Removed, e.res.Key())
	}
	return out
}

// Serving is the version of every resource that serves, in key order: its current
// version, or its last accepted one while the current is rejected.
func (v *Validator) Serving() []*source.Resource {
	out := make([]*source.Resource, 0, len(v.aligned))
	for _, e := range v.aligned {
		if e.serving != nil {
			out = append(out, e.serving)
		}
	}
	return out
}

func hasKind(es []*entry, kind string) bool {
	for _, e := range es {
		if e.res.Kind == kind {
			return true
		}
	}
	return false
}

// diff compares the new input with the previous one: a resource whose hash changed,
// or that is new, goes to w; removed ones are returned. The input shares every chunk
// an edit did not touch with the previous one, and those are not looked at.
func (v *Validator) diff(in *source.Input, w work) []*entry {
	changes := in.Resources.Diff(v.prev)
	moved := false // a resource came or went: entries change places
	for _, c := range changes {
		moved = moved || c.Was == nil || c.Now == nil
	}
	aligned := v.aligned
	if moved {
		aligned = make([]*entry, 0, in.Resources.Len())
	}
	var removed []*entry
	i := 0 // what of v.aligned was copied to aligned
	for _, c := range changes {
		if moved {
			aligned = append(aligned, v.aligned[i:c.I]...)
			i = c.I
		}
		switch {
		case c.Now == nil: // gone
			e := v.aligned[c.I]
			e.removed = true
			removed = append(removed, e)
			i++
		case c.Was == nil: // new
			e := &entry{res: c.Now}
			if v.Remembered != nil {
				// Decoded only if this version is rejected (lastOf), or at the end of
				// the run (resolveRemembered): most are accepted and never need it.
				e.last = remembered
				v.unresolved = append(v.unresolved, e)
			}
			aligned = append(aligned, e)
			w.add(e)
			v.markUsers(userKey(e.res.Kind, e.res.ID()), w) // it may be what they missed
		default:
			e := v.aligned[c.I]
			if moved {
				aligned = append(aligned, e)
				i++
			}
			if c.Now.Hash != e.res.Hash {
				w.add(e)
			}
			e.res = c.Now
			v.invalidate(e)
		}
	}
	if moved {
		aligned = append(aligned, v.aligned[i:]...)
	}
	v.prev, v.aligned = in.Resources, aligned
	v.moved = v.moved || moved
	return removed
}

// markUsers adds every entry referencing key to w.
func (v *Validator) markUsers(key string, w work) {
	v.users.each(key, w.add)
}

// index records that e references keys (replacing what it referenced before).
func (v *Validator) index(e *entry, keys []string) {
	for _, k := range e.refs {
		v.users.remove(k, e)
	}
	e.refs = keys
	for _, k := range keys {
		v.users.add(k, e)
	}
}

// remove forgets a resource that left the input; what referenced it is validated again.
func (v *Validator) remove(e *entry, w work) {
	v.index(e, nil)
	delete(v.lastT, e)
	id := e.res.ID()
	switch e.res.Kind {
	case apiv1.KindSecret:
		delete(v.secrets, id)
	case apiv1.KindUpstream:
		if e.cluster != nil {
			delete(v.clusters, id)
		}
	case apiv1.KindAuthConfig:
		if e.ext != nil {
			delete(v.acs, id)
		}
	}
	v.markUsers(userKey(e.res.Kind, id), w)
}
