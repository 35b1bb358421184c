package snapshots

import (
	"errors"
	"net/http"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/mtls"
)

// Options are where the views read from.
type Options struct {
	// Stages returns the pipeline's last stages.
	Stages func() pipeline.Stages
	// Overview, when set, returns them without the xds stage (pipeline.Overview), at
	// once: the views other than /snapshots/xds read it instead of Stages.
	Overview func() pipeline.Stages
	// Clients, when set, returns the open xDS streams.
	Clients func() []xds.Client
	// Version, when set, returns the version a resource is served at.
	Version func(role, typeURL, name string) string
	// Certificate, when set, returns the certificate xDS is served with.
	Certificate func() mtls.Peer
	// ServedBy, CaughtUp and Held, when set, tell how far resources reached the clients
	// (xds.Server.ServedBy and CaughtUpCount, pipeline.Pipeline.Held): see DataPlane.
	ServedBy func(role, typeURL string, names []string) ([]int, int)
	CaughtUp func(role string, typeURLs ...string) (int, int)
	Held     func(id string) bool
}

// Register serves on mux: GET /snapshots/input, /snapshots/edge, /snapshots/proxies,
// /snapshots/xds (?role= keeps one role) and /snapshots/health. Each answers an
// Envelope: 200 with data, 503 before the first snapshot, 404 for an unknown role.
func Register(mux *http.ServeMux, o Options) {
	clients := func() []xds.Client {
		if o.Clients == nil {
			return nil
		}
		return o.Clients()
	}
	serve := func(path string, view func(r *http.Request) (Envelope, error)) {
		mux.HandleFunc("GET "+path, func(w http.ResponseWriter, r *http.Request) {
			env, err := view(r)
			switch {
			case errors.Is(err, ErrNoSnapshot):
				WriteJSON(w, http.StatusServiceUnavailable, Envelope{Error: err.Error(), Status: Status{Counts: map[string]int{}}})
			case errors.Is(err, ErrUnknownRole):
				WriteJSON(w, http.StatusNotFound, Envelope{Error: err.Error(), Status: Status{Counts: map[string]int{}}})
			case err != nil:
				WriteJSON(w, http.StatusInternalServerError, Envelope{Error: err.Error(), Status: Status{Counts: map[string]int{}}})
			default:
				WriteJSON(w, http.StatusOK, env)
			}
		})
	}
	overview := o.Stages
	if o.Overview != nil {
		overview = o.Overview
	}
	serve("/snapshots/input", func(*http.Request) (Envelope, error) { return Input(overview()) })
	serve("/snapshots/edge", func(*http.Request) (Envelope, error) { return Edge(overview(), o) })
	serve("/snapshots/proxies", func(*http.Request) (Envelope, error) { return Proxies(overview()) })
	serve("/snapshots/xds", func(r *http.Request) (Envelope, error) {
		return XDS(o.Stages(), r.URL.Query().Get("role"), o.Version, clients())
	})
	serve("/snapshots/health", func(*http.Request) (Envelope, error) {
		env, err := Health(overview(), clients())
		if d, ok := env.Data.(HealthData); ok && o.Certificate != nil {
			c := o.Certificate()
			d.Certificate = &c
			env.Data = d
		}
		return env, err
	})
}
