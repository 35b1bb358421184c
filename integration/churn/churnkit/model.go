// Package churnkit is the churn workload of issue 26 and its judge, shared by the churn
// test (integration/churn) and the churn section of `make bench`: a control plane, two
// extauth replicas, the gateway and an upstream as separate processes; routes added,
// edited and removed, a plugin swapped, the control plane killed and extauth restarted,
// all under steady traffic; and every response judged against what the resources said
// while it was in flight.
package churnkit

import (
	"fmt"
	"net/http"
)

// Kind is what a route is at one moment.
type Kind int

const (
	// Absent: no VirtualService serves the route's host (before its files, after removal).
	Absent Kind = iota
	// Open: a route without ext_authz.
	Open
	// Secured: ext_authz with an AuthConfig whose required_header step allows key V alone.
	Secured
	// JWT: jwt_authn (a token of the upstream's key set), then ext_authz as Secured.
	JWT
)

// State is a route's resources at one moment.
type State struct {
	Kind Kind
	V    int // the one key value allowed (Secured, JWT)
}

func (s State) String() string {
	switch s.Kind {
	case Absent:
		return "absent"
	case Open:
		return "open"
	case Secured:
		return fmt.Sprintf("secured(k%d)", s.V)
	default:
		return fmt.Sprintf("jwt(k%d)", s.V)
	}
}

// NoKey is a Req without the key header.
const NoKey = -1

// Req is what a request carries: the key header's value kKey (none when NoKey), and a
// valid token or none.
type Req struct {
	Key   int
	Token bool
}

func (r Req) String() string {
	s := "no key"
	if r.Key != NoKey {
		s = fmt.Sprintf("key k%d", r.Key)
	}
	if r.Token {
		s += ", token"
	}
	return s
}

// Answer is the status the resources of s prescribe for r: what Envoy, with the
// configuration the control plane emits for s, answers.
func (s State) Answer(r Req) int {
	switch s.Kind {
	case Absent:
		return http.StatusNotFound
	case Open:
		return http.StatusOK
	case JWT:
		if !r.Token {
			return http.StatusUnauthorized // jwt_authn: Jwt is missing
		}
	}
	if r.Key == s.V {
		return http.StatusOK
	}
	return http.StatusForbidden
}
