package main

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"gatehouse.dev/gatehouse/controlplane/validate"
)

// resourceStatus is one resource in GET /statuses: who it is, where it came from and
// what every reporter says of it. It carries no resource content, so no secret.
type resourceStatus struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Namespace  string            `json:"namespace"`
	Name       string            `json:"name"`
	Origin     string            `json:"origin,omitempty"`
	State      validate.State    `json:"state"`
	Statuses   []validate.Status `json:"statuses"`
	// Serving is false when no version of the resource serves (Rejected and never
	// accepted).
	Serving bool `json:"serving"`
}

// controlplaneAdmin serves GET /statuses (every resource's status, in input order) and
// /metrics. The snapshot endpoints of the operator-surfaces work build on the same
// pipeline stages.
func controlplaneAdmin(cp *controlplane) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(cp.gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /statuses", func(w http.ResponseWriter, _ *http.Request) {
		edge := cp.pipeline.Stages().Edge
		w.Header().Set("Content-Type", "application/json")
		if edge == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "no resources read yet"})
			return
		}
		out := make([]resourceStatus, 0, len(edge.Resources))
		for i := range edge.Resources {
			r := &edge.Resources[i]
			out = append(out, resourceStatus{
				APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Origin: r.Origin,
				State: r.State(), Statuses: r.Statuses, Serving: r.Serving != "",
			})
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	return mux
}
