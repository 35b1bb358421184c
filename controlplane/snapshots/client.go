package snapshots

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ErrUnreachable wraps the error of Fetch when the admin server did not answer.
var ErrUnreachable = errors.New("control plane admin unreachable")

// Fetch GETs path (e.g. "/snapshots/health") from the admin server at addr and decodes
// the envelope's data into data. An answer with an error in its envelope is returned as
// an error (wrapping ErrNoSnapshot for a 503), with the status it came with.
func Fetch(ctx context.Context, addr, path string, data any) (Status, error) {
	st, err := FetchVia(ctx, http.DefaultClient, "http://"+addr, path, data)
	if errors.Is(err, ErrUnreachable) {
		return st, fmt.Errorf("%w at %s (is `gatehouse controlplane --admin-listen %s` running?): %w", ErrUnreachable, addr, addr, errors.Unwrap(err))
	}
	return st, err
}

// FetchVia is Fetch with client from the admin server at the URL base: reached another
// way, such as through the Kubernetes API server's Service proxy. An answer of that API
// server itself (a Kubernetes Status: no endpoints, forbidden, the pod unreachable)
// wraps ErrUnreachable with its message.
func FetchVia(ctx context.Context, client *http.Client, base, path string, data any) (Status, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	if err != nil {
		return Status{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return Status{}, unreachable{err}
	}
	defer resp.Body.Close()
	var env struct {
		Status json.RawMessage `json:"status"`
		Data   json.RawMessage `json:"data"`
		Error  string          `json:"error"`
		// Kind and Message are those of a Kubernetes Status.
		Kind    string `json:"kind"`
		Message string `json:"message"`
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Status{}, unreachable{err}
	}
	if err := json.Unmarshal(body, &env); err != nil {
		return Status{}, fmt.Errorf("GET %s: %s, not a snapshot envelope (%.200q): %w", path, resp.Status, body, err)
	}
	if env.Kind == "Status" {
		return Status{}, unreachable{fmt.Errorf("the Kubernetes API server answered %s: %s", resp.Status, env.Message)}
	}
	var st Status
	if len(env.Status) > 0 {
		if err := json.Unmarshal(env.Status, &st); err != nil {
			return Status{}, fmt.Errorf("GET %s: %s, not a snapshot envelope: %w", path, resp.Status, err)
		}
	}
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable:
		return st, fmt.Errorf("GET %s: %w", path, ErrNoSnapshot)
	case resp.StatusCode != http.StatusOK || env.Error != "":
		return st, fmt.Errorf("GET %s: %s: %s", path, resp.Status, env.Error)
	}
	if data != nil {
		if err := json.Unmarshal(env.Data, data); err != nil {
			return st, fmt.Errorf("GET %s: decoding the data: %w", path, err)
		}
	}
	return st, nil
}

// unreachable is an error of reaching the admin server; it is ErrUnreachable, and
// unwraps to its cause.
type unreachable struct{ cause error }

func (u unreachable) Error() string        { return ErrUnreachable.Error() + ": " + u.cause.Error() }
func (u unreachable) Unwrap() error        { return u.cause }
func (u unreachable) Is(target error) bool { return target == ErrUnreachable }
