package snapshots

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// ErrUnreachable wraps the error of Fetch when the admin server did not answer.
var ErrUnreachable = errors.New("control plane admin unreachable")

// Fetch GETs path (e.g. "/snapshots/health") from the admin server at addr and decodes
// the envelope's data into data. An answer with an error in its envelope is returned as
// an error (wrapping ErrNoSnapshot for a 503), with the status it came with.
func Fetch(ctx context.Context, addr, path string, data any) (Status, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return Status{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Status{}, fmt.Errorf("%w at %s (is `gatehouse controlplane --admin-listen %s` running?): %w", ErrUnreachable, addr, addr, err)
	}
	defer resp.Body.Close()
	var env struct {
		Status Status          `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		return Status{}, fmt.Errorf("GET %s: %s, not a snapshot envelope: %w", path, resp.Status, err)
	}
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable:
		return env.Status, fmt.Errorf("GET %s: %w", path, ErrNoSnapshot)
	case resp.StatusCode != http.StatusOK || env.Error != "":
		return env.Status, fmt.Errorf("GET %s: %s: %s", path, resp.Status, env.Error)
	}
	if data != nil {
		if err := json.Unmarshal(env.Data, data); err != nil {
			return env.Status, fmt.Errorf("GET %s: decoding the data: %w", path, err)
		}
	}
	return env.Status, nil
}
