package main

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"gatehouse.dev/gatehouse/controlplane/snapshots"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/internal/logging"
	"gatehouse.dev/gatehouse/internal/profiling"
	"gatehouse.dev/gatehouse/internal/version"
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
	// DataPlane is how far it reached the clients (snapshots.DataPlane).
	DataPlane string `json:"dataPlane,omitempty"`
}

// controlplaneAdmin serves the control plane's admin endpoints: /snapshots/* (the
// stages, redacted, in an envelope), GET /statuses (every resource's status, in input
// order), /logging, /metrics, /version, /zpages (recent spans) and /debug/pprof/.
func controlplaneAdmin(cp *controlplane) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(cp.gatherer, promhttp.HandlerOpts{}))
	mux.Handle("/logging", logging.Handler())
	profiling.Register(mux)
	mux.Handle("GET /zpages", cp.tracing.Handler())
	mux.Handle("GET /zpages/tracez", cp.tracing.Handler())
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, _ *http.Request) {
		snapshots.WriteJSON(w, http.StatusOK, versionBody{Version: version.Version})
	})
	snapshots.Register(mux, cp.snapshotOptions())
	mux.HandleFunc("GET /statuses", func(w http.ResponseWriter, _ *http.Request) {
		edge := cp.pipeline.Overview().Edge
		w.Header().Set("Content-Type", "application/json")
		if edge == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "no resources read yet"})
			return
		}
		all := edge.Resources.Slice()
		dp := snapshots.DataPlane(cp.snapshotOptions(), all)
		out := make([]resourceStatus, 0, len(all))
		for i, r := range all {
			out = append(out, resourceStatus{
				APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Origin: r.Origin,
				State: r.State(), Statuses: r.Statuses, Serving: r.Serving != "", DataPlane: dp[i],
			})
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	return mux
}

// snapshotOptions are where the snapshot views of cp read from.
func (cp *controlplane) snapshotOptions() snapshots.Options {
	o := snapshots.Options{Stages: cp.pipeline.Stages, Overview: cp.pipeline.Overview, Clients: cp.xds.Clients, Version: cp.xds.Version,
		ServedBy: cp.xds.ServedBy, CaughtUp: cp.xds.CaughtUpCount, Held: cp.pipeline.Held}
	if cp.certs != nil {
		o.Certificate = cp.certs.Self
	}
	return o
}
