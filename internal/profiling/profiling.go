// Package profiling serves Go's runtime profiles on an admin mux. Every admin server
// (extauth, the control plane, the gateway) mounts them the same way, on loopback.
package profiling

import (
	"net/http"
	"net/http/pprof"
)

// Register serves the runtime profiles under /debug/pprof/ on mux.
func Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}
