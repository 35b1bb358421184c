package snapshots

import (
	"errors"
	"fmt"
	"html"
	"net/http"
	"sort"

	"gatehouse.dev/gatehouse/controlplane/xds"
)

// DevHandler serves the deprecated developer API (port 10010, only while Settings
// spec.devMode is true): GET / a page, GET /xds the xDS cache keys (node roles), GET
// /xds/{key} the snapshot of one key, GET /clients the open xDS streams (role, node, and
// over mutual TLS the identity each presented), GET /api the latest input snapshot. Everything is
// redacted as /snapshots/* is; those endpoints replace this one.
func DevHandler(o Options) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Developer API</title><h1>Developer API</h1>
<p>Deprecated: use the admin server's /snapshots/input, /snapshots/edge, /snapshots/proxies and /snapshots/xds.</p>
<ul><li><a href="/xds">/xds</a>: xDS cache keys</li><li><a href="/clients">/clients</a>: the open xDS streams and who they are</li><li><a href="/api">/api</a>: the latest input snapshot</li>`)
		for _, k := range roles(o.Stages()) {
			fmt.Fprintf(w, "<li><a href=\"/xds/%s\">/xds/%s</a></li>", html.EscapeString(k), html.EscapeString(k))
		}
		fmt.Fprint(w, "</ul>\n")
	})
	mux.HandleFunc("GET /xds", func(w http.ResponseWriter, _ *http.Request) {
		keys := roles(o.Stages())
		sort.Strings(keys)
		WriteJSON(w, http.StatusOK, keys)
	})
	mux.HandleFunc("GET /xds/{key}", func(w http.ResponseWriter, r *http.Request) {
		key := r.PathValue("key")
		env, err := XDS(o.Stages(), key, o.Version, nil)
		switch {
		case errors.Is(err, ErrUnknownRole):
			WriteJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
		case err != nil:
			WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		default:
			WriteJSON(w, http.StatusOK, env.Data.(map[string]map[string]map[string]Served)[key])
		}
	})
	mux.HandleFunc("GET /clients", func(w http.ResponseWriter, _ *http.Request) {
		clients := []xds.Client{}
		if o.Clients != nil {
			clients = append(clients, o.Clients()...)
		}
		WriteJSON(w, http.StatusOK, clients)
	})
	mux.HandleFunc("GET /api", func(w http.ResponseWriter, _ *http.Request) {
		env, err := Input(o.Stages())
		if err != nil {
			WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
			return
		}
		WriteJSON(w, http.StatusOK, env.Data)
	})
	return mux
}
