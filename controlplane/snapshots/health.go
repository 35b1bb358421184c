package snapshots

import (
	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/mtls"
)

// HealthData is everything `gatehouse check` needs in one read: the statuses (not the
// content) of every resource that is not Accepted, how many of each kind serve, what
// could not be read, each proxy role and whether its last publish failed, and the open
// xDS streams (in the envelope's status). A healthy system's view is small whatever
// its size.
type HealthData struct {
	// Resources are those with a status other than Accepted, in input order.
	Resources []ResourceHealth `json:"resources"`
	// Serving counts the resources that serve, by kind.
	Serving       map[string]int    `json:"serving"`
	Problems      []source.Problem  `json:"problems,omitempty"`
	Proxies       []string          `json:"proxies"`
	PublishErrors map[string]string `json:"publishErrors,omitempty"`
	Nacks         []xds.Nack        `json:"nacks,omitempty"`
	// Certificate is the one xDS is served with, over mutual TLS.
	Certificate *mtls.Peer `json:"certificate,omitempty"`
}

// ResourceHealth is one resource's statuses.
type ResourceHealth struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Namespace  string            `json:"namespace"`
	Name       string            `json:"name"`
	Origin     string            `json:"origin,omitempty"`
	State      validate.State    `json:"state"`
	Statuses   []validate.Status `json:"statuses"`
	// Serving is false when no version of it serves.
	Serving bool `json:"serving"`
}

// Health is the view `gatehouse check` reads. Counts are by "<kind>/<state>".
func Health(st pipeline.Stages, clients []xds.Client) (Envelope, error) {
	if st.Edge == nil {
		return Envelope{}, ErrNoSnapshot
	}
	s := status(st)
	s.Clients = clients
	d := HealthData{
		Resources: []ResourceHealth{}, Serving: map[string]int{}, Problems: st.Edge.Problems,
		Proxies: []string{}, PublishErrors: st.PublishErrors, Nacks: st.Nacks,
	}
	for r := range st.Edge.Resources.Values() {
		state := r.State()
		s.Counts[r.Kind+"/"+string(state)]++
		if r.Serving != "" {
			d.Serving[r.Kind]++
		}
		if state == validate.Accepted {
			continue
		}
		d.Resources = append(d.Resources, ResourceHealth{
			APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Origin: r.Origin,
			State: state, Statuses: r.Statuses, Serving: r.Serving != "",
		})
	}
	for _, p := range st.Proxies {
		d.Proxies = append(d.Proxies, p.Role)
	}
	return Envelope{Status: s, Data: d}, nil
}
