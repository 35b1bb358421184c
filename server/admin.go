package server

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"gatehouse.dev/gatehouse/internal/logging"
	"gatehouse.dev/gatehouse/internal/profiling"
)

// AdminHandler serves the extauth admin endpoints: /metrics, /logging (GET, PUT
// {"level": …}), /debug/pprof/, /auth-configs (the status of every AuthConfig),
// /healthz (liveness: 200 until SetNotServing) and /ready (readiness: 200 from the first
// complete config until SIGTERM, 503 with the reason otherwise), for probes that cannot
// present the client certificate the gRPC port requires. They follow gRPC health
// checking (readiness.go).
func AdminHandler(reg *Registry, gatherer prometheus.Gatherer, a *Authorizer) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if a != nil && !a.Live() {
			http.Error(w, "NOT_SERVING", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("SERVING\n"))
	})
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, _ *http.Request) {
		if a != nil && !a.Ready() {
			http.Error(w, "NOT_SERVING: "+a.NotReadyReason(), http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("SERVING\n"))
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	mux.Handle("/logging", logging.Handler())
	profiling.Register(mux)
	mux.HandleFunc("GET /auth-configs", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, reg.Statuses())
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
