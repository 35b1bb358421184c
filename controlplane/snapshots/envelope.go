package snapshots

import (
	"encoding/json"
	"net/http"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds"
)

// Envelope is the body of every /snapshots/* answer.
type Envelope struct {
	Status Status `json:"status"`
	Data   any    `json:"data"`
	// Error is set, with a non-2xx code, when there is no data to show.
	Error string `json:"error"`
}

// Status is what the envelope says about its data.
type Status struct {
	// Version counts the control plane's runs since it started; Time is when the one
	// shown finished.
	Version uint64    `json:"version"`
	Time    time.Time `json:"time,omitzero"`
	// Source names where the resources come from.
	Source string `json:"source,omitempty"`
	// Counts are what the data holds, by kind (and state), type or role.
	Counts map[string]int `json:"counts"`
	// Clients are the open xDS streams (xds and health only).
	Clients []xds.Client `json:"clients,omitempty"`
}

// WriteJSON writes v, redacted, as indented JSON with code. Every admin surface writes
// through it (or through Redacted), so no answer skips redaction.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	tree, err := Redacted(v)
	if err != nil {
		code, tree = http.StatusInternalServerError, map[string]string{"error": err.Error()}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // "<redacted>", not "\u003credacted\u003e"
	_ = enc.Encode(tree)
}
