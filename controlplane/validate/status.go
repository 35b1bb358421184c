// Package validate is the edge stage of the control plane: it gives every resource of
// an Input a status (Accepted, Warning or Rejected, with every reason and the field
// path it concerns) and decides what serves.
//
// One bad resource never blocks the others. A Rejected resource keeps its last
// Accepted version serving when that version is still consistent with the rest (its
// references resolve, its domains are free); one never accepted is left out, and so
// is whatever references it (with a reason naming it).
package validate

import (
	"errors"

	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
)

// State is a resource's state.
type State string

// States, from best to worst.
const (
	Accepted State = "Accepted"
	// Warning is served, with something the user should know.
	Warning  State = "Warning"
	Rejected State = "Rejected"
)

// ReportedBy is the reporter of the statuses validation gives.
const ReportedBy = "gatehouse"

// Status is what one reporter says about a resource.
type Status struct {
	State State `json:"state"`
	// Reasons are "<field path>: <problem>", every one found.
	Reasons []string `json:"reasons,omitempty"`
	// ReportedBy is "gatehouse", or "<role>/<node id>" for a client's NACK.
	ReportedBy string `json:"reportedBy"`
}

// Resource is an input resource with its statuses.
type Resource struct {
	// Resource is shared with the Input (and never modified).
	*source.Resource
	// Statuses holds validation's status first, then one per client that NACKed it.
	Statuses []Status `json:"statuses"`
	// Serving is the hash of the version that serves: this one, its last accepted
	// version, or "" when nothing of it serves.
	Serving string `json:"serving,omitempty"`
}

// State is the worst state of r's statuses.
func (r *Resource) State() State {
	worst := Accepted
	for _, s := range r.Statuses {
		if s.State == Rejected || (s.State == Warning && worst == Accepted) {
			worst = s.State
		}
	}
	return worst
}

// acceptedStatuses are the statuses of a resource Accepted without a reason, as most
// are: every such Resource of an edge shares them rather than holding a copy. Like the rest of an edge they are never modified; the
// capacity is the length, so an append makes a copy.
var acceptedStatuses = []Status{{State: Accepted, ReportedBy: ReportedBy}}[:1:1]

// reasons are the problems of err: a ResourceError's field-path problems, or its text.
func reasons(err error) []string {
	var re *translate.ResourceError
	if errors.As(err, &re) {
		return append([]string(nil), re.Problems...)
	}
	return []string{err.Error()}
}

// Notes added to the reasons of a Rejected resource, saying what serves instead.
const (
	noteLastServes = "the last accepted version keeps serving"
	noteNotServed  = "not served: no accepted version of it is consistent with the other resources"
	noteNever      = "not served: it was never accepted"
)
