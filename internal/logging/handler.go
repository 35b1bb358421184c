package logging

import (
	"encoding/json"
	"net/http"
)

// levelBody is the body of GET and PUT /logging.
type levelBody struct {
	Level string `json:"level"`
}

// Handler serves /logging as zap's AtomicLevel does: GET answers {"level":"info"};
// PUT {"level":"debug"} changes the level of every logger at once and answers the new
// one; a bad body or level is 400 {"error": …}; other methods are 405.
func Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			writeJSON(w, http.StatusOK, levelBody{Level: Level()})
		case http.MethodPut:
			var b levelBody
			dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<10))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&b); err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": `body must be JSON like {"level": "debug"}`})
				return
			}
			if err := SetLevel(b.Level); err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
				return
			}
			writeJSON(w, http.StatusOK, levelBody{Level: Level()})
		default:
			w.Header().Set("Allow", "GET, PUT")
			writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "use GET, or PUT {\"level\": …}"})
		}
	})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
