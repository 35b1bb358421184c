package proxyadmin

import (
	"fmt"
	"net/http"
	"sort"
	"strings"

	"gatehouse.dev/gatehouse/controlplane/snapshots"
	"gatehouse.dev/gatehouse/internal/logging"
	"gatehouse.dev/gatehouse/internal/profiling"
)

// Loggers are the named loggers GET /logging lists, as Envoy names them. The dev
// gateway writes one log stream, so they share one level.
var Loggers = []string{"admin", "config", "connection", "ext_authz", "filter", "grpc", "http", "http2", "main", "router", "secret", "upstream"}

// Options are what the admin server shows.
type Options struct {
	Recorder *Recorder
	Logs     *LogBuffer
	// Listeners returns the served listeners: name → local address.
	Listeners func() map[string]string
	// Ready reports whether every listener serves a complete config.
	Ready func() bool
}

// Handler serves the proxy admin endpoints.
func Handler(o Options) http.Handler {
	mux := http.NewServeMux()
	dump := func(w http.ResponseWriter, r *http.Request) {
		_, eds := r.URL.Query()["include_eds"]
		b, err := o.Recorder.ConfigDump(eds)
		if err != nil {
			http.Error(w, "config_dump: "+err.Error(), http.StatusInternalServerError)
			return
		}
		snapshots.WriteJSON(w, http.StatusOK, rawJSON(b))
	}
	mux.HandleFunc("GET /config_dump", dump)
	mux.HandleFunc("POST /config_dump", dump)
	mux.HandleFunc("/logging", serveLogging)
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, o.Recorder.Stats(o.Ready != nil && o.Ready()))
	})
	mux.HandleFunc("GET /listeners", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		ls := o.Listeners()
		names := make([]string, 0, len(ls))
		for n := range ls {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(w, "%s::%s\n", n, ls[n])
		}
	})
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, _ *http.Request) {
		if o.Ready != nil && o.Ready() {
			fmt.Fprintln(w, "LIVE")
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "PRE_INITIALIZING")
	})
	mux.HandleFunc("GET /logs", func(w http.ResponseWriter, r *http.Request) { serveLogs(w, r, o.Logs) })
	profiling.Register(mux)
	return mux
}

// rawJSON marshals as the JSON it holds.
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }

// envoyLevels maps Envoy's level names onto ours.
var envoyLevels = map[string]string{
	"trace": "debug", "debug": "debug", "info": "info", "warning": "warn", "warn": "warn",
	"error": "error", "critical": "fatal",
}

// serveLogging is Envoy's /logging: GET lists the loggers and their level; POST
// ?level=L sets every logger; POST ?<logger>=L names one logger (they share one level
// here, so it sets them all and says so).
func serveLogging(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	q := r.URL.Query()
	if r.Method == http.MethodPost && len(q) > 0 {
		if len(q) != 1 {
			http.Error(w, "logging: give one of ?level=L or ?<logger>=L", http.StatusBadRequest)
			return
		}
		for k, v := range q {
			if k != "level" && !contains(Loggers, k) {
				http.Error(w, fmt.Sprintf("logging: unknown logger %q (loggers: %s)", k, strings.Join(Loggers, ", ")), http.StatusBadRequest)
				return
			}
			lvl, ok := envoyLevels[strings.ToLower(v[0])]
			if !ok {
				http.Error(w, fmt.Sprintf("logging: unknown level %q (trace, debug, info, warning, error, critical)", v[0]), http.StatusBadRequest)
				return
			}
			if err := logging.SetLevel(lvl); err != nil {
				http.Error(w, "logging: "+err.Error(), http.StatusBadRequest)
				return
			}
			if k != "level" {
				fmt.Fprintf(w, "the dev gateway has one log stream: every logger is now at %s\n", lvl)
			}
		}
	} else if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "logging: use GET, or POST ?level=L", http.StatusMethodNotAllowed)
		return
	}
	fmt.Fprintln(w, "active loggers:")
	for _, l := range Loggers {
		fmt.Fprintf(w, "  %s: %s\n", l, logging.Level())
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// serveLogs writes the recent log lines; ?follow=true keeps writing new ones until the
// client goes away.
func serveLogs(w http.ResponseWriter, r *http.Request, b *LogBuffer) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	follow := r.URL.Query().Get("follow") == "true"
	lines, ch, stop := b.Lines(follow)
	defer stop()
	for _, l := range lines {
		_, _ = w.Write(l)
	}
	if !follow {
		return
	}
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case l := <-ch:
			if _, err := w.Write(l); err != nil {
				return
			}
			if fl != nil {
				fl.Flush()
			}
		}
	}
}
