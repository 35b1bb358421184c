package snapshots

import (
	"bytes"
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
	b, err := Redacted(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"error":"snapshots: cannot render the answer"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(Indent(b))
}

// Indent indents JSON by two spaces and ends it with a newline.
func Indent(b []byte) []byte {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return b
	}
	out.WriteByte('\n')
	return out.Bytes()
}
