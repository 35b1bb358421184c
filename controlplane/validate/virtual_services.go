package validate

import (
	"fmt"
	"slices"
	"strings"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
)

// candidate is a version of a VirtualService that may serve.
type candidate struct {
	e        *entry
	vh       *translate.VirtualHost
	version  *source.Resource
	fallback bool // the last accepted version, standing in for a rejected one
	tier     int  // claim order: 0 keeps its domains from before, 1 otherwise
}

// virtualServices validates the VirtualServices in w and gives every domain to one
// VirtualService: Envoy refuses a route configuration with a domain twice, so of two
// VirtualServices claiming a domain one is Rejected.
//
// Who keeps a domain: the VirtualService serving it, as long as it still claims it;
// among the others, the first in namespace/name order (after a restart, name order
// alone). A new VirtualService or an edit therefore never takes a domain from one that
// serves it. The loser is Rejected naming the winner, the winner gets a Warning naming
// the loser, and the loser's last accepted version serves if its domains are free.
// When a domain changes hands, those rejected for it are validated again.
func (v *Validator) virtualServices(w work, removed []*entry) {
	restatus := map[*entry]bool{}
	batch := w.sorted(apiv1.KindVirtualService, v.aligned)
	for _, e := range removed {
		if e.res.Kind == apiv1.KindVirtualService {
			batch = append(batch, e)
		}
	}
	// Each batch only hands on who lost a domain that then changed hands; the bound is
	// a guard, never reached in the randomized comparison with full runs.
	for round := 0; len(batch) > 0 && round < 100; round++ {
		next := work{}
		v.resolve(batch, next, restatus)
		batch = next.sorted(apiv1.KindVirtualService, v.aligned)
	}
	for e := range restatus {
		if !e.removed && e.vh != nil && e.state != codeRejected {
			v.accept(e, stateOf(v.warnings(e)), v.warnings(e))
		}
	}
}

func stateOf(warnings []string) State {
	if len(warnings) > 0 {
		return Warning
	}
	return Accepted
}

// resolve validates batch (in key order, removed entries last) and settles their
// domains; those rejected for a domain that changed hands go to next.
//
// Every candidate version (the current one when valid, else or also the last accepted
// one) claims in (tier, key) order, the current version before the last; an entry
// serves with its current version if that loses no domain, else with its last one if
// that loses none. Tier 0 is a candidate of a
// VirtualService that served domains before and claims none another one served: so
// what serves keeps its domains, including a last accepted version serving for a
// rejected edit, and nobody takes them by claiming them.
func (v *Validator) resolve(batch []*entry, next work, restatus map[*entry]bool) {
	batch = v.withRivals(batch)
	before := map[string]*entry{} // domain → owner before this batch, for the batch's domains
	ownedBefore := map[*entry]bool{}
	for _, e := range batch {
		for _, d := range e.domains {
			before[d] = e
			delete(v.owners, d)
		}
		ownedBefore[e] = len(e.domains) > 0
		e.domains = nil
		v.unwant(e, restatus)
	}
	var queue []candidate
	why := map[*entry][]string{}
	primary := map[*entry]*translate.VirtualHost{} // the valid current versions
	for _, e := range batch {
		e.vh = nil
		if e.removed {
			v.index(e, nil)
			continue
		}
		self := vhOf(&e.self, e.res)
		problems := v.refProblems(self.vh)
		if self.err != nil {
			problems = append(reasons(self.err), problems...)
		}
		refs := v.refKeys(self.vh, nil)
		if len(problems) == 0 {
			queue = append(queue, candidate{e: e, vh: self.vh, version: e.res, tier: v.tier(e, self.vh, ownedBefore[e], before)})
			primary[e] = self.vh
		} else if self.vh != nil {
			why[e] = append(problems, v.authWarnings(self.vh)...) // every problem at once
		} else {
			why[e] = problems
		}
		if last := v.lastVersion(e); last != nil {
			lt := vhOf(v.lastTranslation(e), last)
			refs = v.refKeys(lt.vh, refs)
			if lt.err == nil && len(v.refProblems(lt.vh)) == 0 {
				queue = append(queue, candidate{e: e, vh: lt.vh, version: last, fallback: true, tier: v.tier(e, lt.vh, ownedBefore[e], before)})
			}
		}
		v.index(e, refs)
	}
	// The batch is in key order: a stable sort by tier keeps it, and each entry's
	// current version before its last.
	slices.SortStableFunc(queue, func(a, b candidate) int { return a.tier - b.tier })
	served := map[*entry]*candidate{}
	for _, c := range queue {
		cur := served[c.e]
		if cur != nil && (c.fallback || !cur.fallback) {
			continue
		}
		if lost := v.lost(c.e, c.vh); len(lost) > 0 {
			// It wants every domain it claims: whoever serves one, or takes a free one
			// later, may change what it gets.
			for _, dom := range c.vh.Domains {
				v.want(c.e, strings.ToLower(dom), restatus)
			}
			if !c.fallback {
				why[c.e] = lost
			}
			continue
		}
		if cur != nil {
			// Its last version took the lead; the current one wins after all.
			for _, d := range c.e.domains {
				delete(v.owners, d)
			}
			c.e.domains = nil
		}
		for _, dom := range c.vh.Domains {
			v.owners[strings.ToLower(dom)] = c.e
			c.e.domains = append(c.e.domains, strings.ToLower(dom))
		}
		served[c.e] = &c
	}
	for _, e := range batch {
		if e.removed {
			continue
		}
		c := served[e]
		if c != nil {
			e.vh = c.vh
		}
		if vh := primary[e]; vh != nil && (c == nil || c.fallback) {
			// Named against the final owners, so the reason does not depend on the order
			// the domains were claimed in.
			if lost := v.lost(e, vh); len(lost) > 0 {
				why[e] = lost
			}
		}
		switch {
		case c != nil && !c.fallback:
			v.accept(e, stateOf(v.warnings(e)), v.warnings(e))
		case c != nil:
			v.reject(e, why[e], c.version)
		default:
			v.reject(e, why[e], nil)
		}
	}
	// A domain taken or given up: whoever was rejected for it is validated again, as
	// its reason names the owner.
	changed := map[string]bool{}
	for d, was := range before {
		if v.owners[d] != was {
			changed[d] = true
		}
	}
	for _, e := range batch {
		for _, d := range e.domains {
			if before[d] != e {
				changed[d] = true
			}
		}
	}
	for d := range changed {
		for u := range v.wanters[d] {
			next.add(u) // even if in this batch: it may have lost d to an owner that left it
		}
		if o := v.owners[d]; o != nil {
			restatus[o] = true
		}
	}
}

// lost are the reasons vh cannot serve for e: the domains another one serves.
func (v *Validator) lost(e *entry, vh *translate.VirtualHost) []string {
	var out []string
	for i, dom := range vh.Domains {
		if o := v.owners[strings.ToLower(dom)]; o != nil && o != e {
			out = append(out, fmt.Sprintf("spec.virtualHost.domains[%d]: %q is already served by virtualservice %s", i, dom, o.res.ID()))
		}
	}
	return out
}

// withRivals adds to batch every VirtualService rejected for a domain that a member
// of batch serves: those domains are decided again, among all who claim them.
func (v *Validator) withRivals(batch []*entry) []*entry {
	in := map[*entry]bool{}
	for _, e := range batch {
		in[e] = true
	}
	added := false
	for n := 0; n < len(batch); n++ {
		for _, d := range batch[n].domains {
			for u := range v.wanters[d] {
				if !in[u] {
					in[u], added = true, true
					batch = append(batch, u)
				}
			}
		}
	}
	if added {
		slices.SortStableFunc(batch, func(a, b *entry) int {
			if a.removed != b.removed {
				if a.removed {
					return 1
				}
				return -1
			}
			return a.res.Key().Compare(b.res.Key())
		})
	}
	return batch
}

// want records that e was rejected for domain d.
func (v *Validator) want(e *entry, d string, restatus map[*entry]bool) {
	if slices.Contains(v.wanted[e], d) {
		return
	}
	if v.wanters[d] == nil {
		v.wanters[d] = map[*entry]struct{}{}
	}
	v.wanters[d][e] = struct{}{}
	v.wanted[e] = append(v.wanted[e], d)
	if o := v.owners[d]; o != nil {
		restatus[o] = true
	}
}

// unwant forgets the domains e was rejected for.
func (v *Validator) unwant(e *entry, restatus map[*entry]bool) {
	for _, d := range v.wanted[e] {
		delete(v.wanters[d], e)
		if len(v.wanters[d]) == 0 {
			delete(v.wanters, d)
		}
		if o := v.owners[d]; o != nil {
			restatus[o] = true
		}
	}
	delete(v.wanted, e)
}

// warnings name, for each domain e serves, the VirtualServices rejected for it.
func (v *Validator) warnings(e *entry) []string {
	out := v.authWarnings(e.vh)
	for i, dom := range e.vh.Domains {
		var names []string
		for u := range v.wanters[strings.ToLower(dom)] {
			names = append(names, u.res.ID())
		}
		slices.Sort(names)
		for _, n := range names {
			out = append(out, fmt.Sprintf("spec.virtualHost.domains[%d]: %q is also claimed by virtualservice %s, which is rejected for it", i, dom, n))
		}
	}
	return out
}

// tier is 0 for a VirtualService that served before and claims no domain another one
// served, 1 otherwise.
func (v *Validator) tier(e *entry, vh *translate.VirtualHost, served bool, before map[string]*entry) int {
	if !served {
		return 1
	}
	for _, dom := range vh.Domains {
		d := strings.ToLower(dom)
		if o := v.owners[d]; o != nil && o != e {
			return 1
		}
		if o := before[d]; o != nil && o != e {
			return 1
		}
	}
	return 0
}

func vhOf(t *translation, r *source.Resource) *translation {
	if t.key != r.Hash {
		vh, err := translate.VirtualHostOf(r.Object.(*apiv1.VirtualService), r.Hash)
		*t = translation{key: r.Hash, vh: vh, err: err}
	}
	return t
}
