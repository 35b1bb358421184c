package loader

import (
	"encoding/json"
	"time"

	"gatehouse.dev/gatehouse/pluginapi"
)

// The isolation worker (a plugin run in a child process, see Worker) and its parent
// talk over a unix socket pair with encoding/gob, which carries strings as bytes, so
// header values that are not UTF-8 arrive as Envoy sent them. State, a map of any
// values, crosses as JSON: values that JSON cannot carry stay behind.

// workerRequest asks the worker to authorize one request. Req.State is not sent (see
// State).
type workerRequest struct {
	ID       uint64
	Deadline time.Time
	Req      pluginapi.AuthorizationRequest
	State    []byte // JSON of Req.State
}

// workerResponse is the answer to the request with the same ID; ID 0 with no error
// says the worker started. State is the request's State after the call, so later steps
// see what the plugin put there.
type workerResponse struct {
	ID    uint64
	Resp  *pluginapi.AuthorizationResponse
	State []byte
	Err   string
}

// encodeState is state as JSON, leaving out the values JSON cannot carry.
func encodeState(state map[string]any) []byte {
	if len(state) == 0 {
		return nil
	}
	ok := make(map[string]json.RawMessage, len(state))
	for k, v := range state {
		if b, err := json.Marshal(v); err == nil {
			ok[k] = b
		}
	}
	b, _ := json.Marshal(ok)
	return b
}

// decodeState merges the JSON state b into state.
func decodeState(b []byte, state map[string]any) {
	if len(b) == 0 || state == nil {
		return
	}
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		for k, v := range m {
			state[k] = v
		}
	}
}
