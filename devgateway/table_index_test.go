package devgateway

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// linearVhostFor is the virtual host choice by a look at every domain of every
// virtual host, Envoy's precedence spelled out: the reference the index must agree
// with.
func linearVhostFor(hosts []*vhost, host string) *vhost {
	type cand struct {
		v          *vhost
		rank, size int
	}
	var cs []cand
	for _, v := range hosts {
		for _, d := range v.domains {
			d = strings.ToLower(d)
			switch {
			case d == host:
				cs = append(cs, cand{v, 0, len(d)})
			case strings.HasPrefix(d, "*") && d != "*" && strings.HasSuffix(host, d[1:]) && len(host) > len(d)-1:
				cs = append(cs, cand{v, 1, len(d)})
			case strings.HasSuffix(d, "*") && d != "*" && strings.HasPrefix(host, d[:len(d)-1]) && len(host) > len(d)-1:
				cs = append(cs, cand{v, 2, len(d)})
			case d == "*":
				cs = append(cs, cand{v, 3, 0})
			}
		}
	}
	if len(cs) == 0 {
		return nil
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].rank != cs[j].rank {
			return cs[i].rank < cs[j].rank
		}
		return cs[i].size > cs[j].size
	})
	return cs[0].v
}

// TestHostIndexAgreesWithALookAtEveryDomain: the index picks the virtual host the
// precedence rules pick (exact, longest suffix wildcard, longest prefix wildcard, "*",
// the first of equals), for named cases and for random tables and hosts.
func TestHostIndexAgreesWithALookAtEveryDomain(t *testing.T) {
	named := []*vhost{
		{name: "a", domains: []string{"api.example.com"}},
		{name: "b", domains: []string{"*.example.com"}},
		{name: "c", domains: []string{"*.api.example.com", "API.other"}},
		{name: "d", domains: []string{"api.*"}},
		{name: "e", domains: []string{"api.example.*"}},
		{name: "f", domains: []string{"*"}},
		{name: "g", domains: []string{"api.example.com", "*"}}, // a duplicate: a wins
	}
	for host, want := range map[string]string{
		"api.example.com": "a", "x.example.com": "b", "v1.api.example.com": "c", "api.other": "c",
		"api.example.org": "e", "api.nothing": "d", "example.com": "f", ".example.com": "f", "api.": "f", // a wildcard never matches the empty string
	} {
		if got := (&table{hosts: named}).vhostFor(host); got == nil || got.name != want {
			t.Errorf("%s: got %v, want %s", host, got, want)
		}
	}

	rng := rand.New(rand.NewPCG(1, 2))
	labels := []string{"a", "b", "api", "x", "example", "com", ""}
	name := func() string {
		parts := make([]string, 1+rng.IntN(3))
		for i := range parts {
			parts[i] = labels[rng.IntN(len(labels))]
		}
		return strings.Join(parts, ".")
	}
	for round := range 300 {
		var hosts []*vhost
		for i := range 1 + rng.IntN(12) {
			v := &vhost{name: fmt.Sprint(i)}
			for range 1 + rng.IntN(3) {
				d := name()
				switch rng.IntN(5) {
				case 0:
					d = "*" + d
				case 1:
					d += "*"
				case 2:
					if rng.IntN(4) == 0 {
						d = "*"
					}
				}
				v.domains = append(v.domains, d)
			}
			hosts = append(hosts, v)
		}
		tb := &table{hosts: hosts}
		for range 30 {
			host := name()
			if got, want := tb.vhostFor(host), linearVhostFor(hosts, host); got != want {
				t.Fatalf("round %d, host %q: index picks %v, every domain looked at picks %v (hosts %v)", round, host, got, want, hosts)
			}
		}
	}
}
