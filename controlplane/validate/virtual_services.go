package validate

import (
	"fmt"
	"sort"
	"strings"

	"gatehouse.dev/gatehouse/controlplane/translate"
)

// candidate is a version of a VirtualService that may serve.
type candidate struct {
	i        int // index in the input
	vh       *translate.VirtualHost
	fallback bool // the last accepted version, standing in for a rejected one
	tier     int  // claim order: 0 keeps its domains from before, 1 otherwise
}

// virtualServices checks each VirtualService on its own and its references, then
// gives every domain to one VirtualService: Envoy refuses a route configuration with a
// domain twice, so of two VirtualServices claiming a domain one is Rejected.
//
// Who keeps a domain: the VirtualService that served it before, when it still claims
// it; otherwise the first in namespace/name order (after a restart, name order alone).
// A new VirtualService or an edit can therefore never take a domain from one that
// serves it. The loser is Rejected naming the winner, the winner gets a Warning naming
// the loser, and the loser's last accepted version serves if its domains are free.
func (r *run) virtualServices(idx []int) {
	var primaries, fallbacks []candidate
	why := map[int][]string{}
	for _, i := range idx {
		res := &r.out.Resources[i]
		vh, err := r.cache.VirtualHost(&res.Resource)
		var problems []string
		if err != nil {
			problems = reasons(err)
		}
		problems = append(problems, r.refProblems(vh)...)
		if len(problems) == 0 {
			primaries = append(primaries, candidate{i: i, vh: vh, tier: r.tier(vh)})
			continue
		}
		why[i] = problems
		if last := r.lastAccepted(i); last != nil {
			if lvh, lerr := r.cache.VirtualHost(last); lerr == nil && len(r.refProblems(lvh)) == 0 {
				fallbacks = append(fallbacks, candidate{i: i, vh: lvh, fallback: true})
			}
		}
	}
	sort.SliceStable(primaries, func(a, b int) bool { return primaries[a].tier < primaries[b].tier })
	owners := map[string]string{}
	served := map[int]*translate.VirtualHost{}
	warnings := map[int][]string{}
	ownerIdx := map[string]int{}
	for _, c := range append(primaries, fallbacks...) {
		if c.fallback && served[c.i] != nil {
			continue
		}
		var lost []string
		for d, dom := range c.vh.Domains {
			ld := strings.ToLower(dom)
			if w, taken := owners[ld]; taken {
				lost = append(lost, fmt.Sprintf("spec.virtualHost.domains[%d]: %q is already served by virtualservice %s", d, dom, w))
				if !c.fallback {
					warnings[ownerIdx[ld]] = append(warnings[ownerIdx[ld]], fmt.Sprintf("%s: %q is also claimed by virtualservice %s, which is rejected for it",
						domainPath(served[ownerIdx[ld]], ld), dom, c.vh.Name))
				}
			}
		}
		if len(lost) > 0 {
			if !c.fallback {
				why[c.i] = lost
				if last := r.lastAccepted(c.i); last != nil {
					if lvh, err := r.cache.VirtualHost(last); err == nil && len(r.refProblems(lvh)) == 0 {
						fallbacks = append(fallbacks, candidate{i: c.i, vh: lvh, fallback: true})
					}
				}
			}
			continue
		}
		for _, dom := range c.vh.Domains {
			owners[strings.ToLower(dom)] = c.vh.Name
			ownerIdx[strings.ToLower(dom)] = c.i
		}
		served[c.i] = c.vh
	}
	r.out.owners = owners
	for _, i := range idx {
		vh := served[i]
		switch {
		case vh != nil && why[i] == nil:
			state := Accepted
			if warnings[i] != nil {
				state = Warning
			}
			r.accept(i, state, warnings[i])
		case vh != nil:
			last := r.prev.last[r.out.Resources[i].Key()]
			r.reject(i, why[i], &last, "")
		default:
			r.reject(i, why[i], nil, r.missingNote(i))
		}
		if vh != nil {
			r.out.Accepted.VirtualHosts = append(r.out.Accepted.VirtualHosts, vh)
		}
	}
}

// tier is 0 for a VirtualService that served before and claims no domain another one
// served, 1 otherwise.
func (r *run) tier(vh *translate.VirtualHost) int {
	was := false
	for _, dom := range vh.Domains {
		owner, ok := r.prev.owners[strings.ToLower(dom)]
		if ok && owner != vh.Name {
			return 1
		}
		was = was || ok
	}
	if was {
		return 0
	}
	return 1
}

// domainPath is the field path of domain ld (lower case) in vh.
func domainPath(vh *translate.VirtualHost, ld string) string {
	for d, dom := range vh.Domains {
		if strings.ToLower(dom) == ld {
			return fmt.Sprintf("spec.virtualHost.domains[%d]", d)
		}
	}
	return "spec.virtualHost.domains"
}
