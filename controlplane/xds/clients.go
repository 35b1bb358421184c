package xds

import (
	"sort"
	"time"
)

// Client is one open xDS stream as the admin endpoints and `gatehouse check` see it.
type Client struct {
	// Role is "" until the node named a valid one.
	Role string `json:"role"`
	Node string `json:"node"`
	// Identity is the SPIFFE ID of the certificate the client presented, and NotAfter
	// its end, when roles are taken from certificates.
	Identity string     `json:"identity,omitempty"`
	NotAfter *time.Time `json:"notAfter,omitempty"`
	// Unanswered counts, by type, the responses sent that the client has neither ACKed
	// nor NACKed yet.
	Unanswered map[string]int `json:"unanswered,omitempty"`
}

// Clients returns every open stream, by role then node.
func (s *Server) Clients() []Client {
	c := s.cb
	c.mu.Lock()
	out := make([]Client, 0, len(c.streams))
	for _, b := range c.streams {
		cl := Client{Role: b.role, Node: b.node, Identity: b.peer.ID}
		if !b.peer.NotAfter.IsZero() {
			t := b.peer.NotAfter
			cl.NotAfter = &t
		}
		for typ, sent := range b.sent {
			if len(sent) > 0 {
				if cl.Unanswered == nil {
					cl.Unanswered = map[string]int{}
				}
				cl.Unanswered[typ] = len(sent)
			}
		}
		out = append(out, cl)
	}
	c.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Role != out[j].Role {
			return out[i].Role < out[j].Role
		}
		return out[i].Node < out[j].Node
	})
	return out
}
