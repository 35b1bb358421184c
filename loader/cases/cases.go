// Package cases runs request cases against a built plugin (`gatehouse plugin test`):
// each case's request goes to the real .so in a child process (a loader.Worker, the
// gatehouse binary re-executed), and its answer is checked as the server checks it
// (pluginhost.CheckResponse) and compared with what the case wants (plugintest.Want, the
// expectation authors use in their unit tests). A panic, a missed deadline, a header
// Envoy must not get or a crash fails that case, not the run.
package cases

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"gatehouse.dev/gatehouse/loader"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/pluginapi/pluginhost"
	"gatehouse.dev/gatehouse/pluginapi/plugintest"
)

// DefaultTimeout bounds one case's Authorize call.
const DefaultTimeout = time.Second

// Case is one request and what the plugin must answer.
type Case struct {
	Name    string          `json:"name"`
	Request Request         `json:"request"`
	Want    plugintest.Want `json:"want"`
}

// Request is a case's request; the method defaults to GET and the path to /.
type Request struct {
	Method  string            `json:"method,omitempty"`
	Path    string            `json:"path,omitempty"`
	Host    string            `json:"host,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
}

// Parse reads a cases document (JSON: {"cases": [...]}) strictly and checks every case.
func Parse(doc []byte) ([]Case, error) {
	var f struct {
		Cases []Case `json:"cases"`
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if len(f.Cases) == 0 {
		return nil, errors.New("no cases: write them under a top-level cases: key")
	}
	var errs []error
	seen := map[string]bool{}
	for i, c := range f.Cases {
		switch {
		case c.Name == "":
			errs = append(errs, fmt.Errorf("cases[%d]: no name", i))
		case seen[c.Name]:
			errs = append(errs, fmt.Errorf("cases[%d]: the name %q is used twice", i, c.Name))
		}
		seen[c.Name] = true
		if err := c.Want.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("cases[%d] (%s): want: %w", i, c.Name, err))
		}
	}
	return f.Cases, errors.Join(errs...)
}

// Result is one case's outcome.
type Result struct {
	Name string `json:"name"`
	Want string `json:"want"`
	// Got is "allow", "deny N" or "error".
	Got string `json:"got"`
	OK  bool   `json:"ok"`
	// Problems say how the answer differs from the case's want.
	Problems []string      `json:"problems,omitempty"`
	Duration time.Duration `json:"durationNs"`
}

// Options say which plugin to run and how.
type Options struct {
	// Executable is the gatehouse binary; empty means this process's.
	Executable string
	File       string
	Symbol     string
	// Config is the step's config (JSON).
	Config []byte
	// Timeout bounds each case (DefaultTimeout when zero).
	Timeout time.Duration
}

// Run runs every case in order. The error is a plugin that could not be started at all.
func Run(ctx context.Context, o Options, cs []Case) ([]Result, error) {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	start := func() (*loader.Worker, error) {
		return loader.StartWorker(loader.WorkerOptions{Executable: o.Executable, File: o.File, Symbol: o.Symbol, Config: o.Config})
	}
	w, err := start()
	if err != nil {
		return nil, err
	}
	defer func() { w.Close() }()
	out := make([]Result, 0, len(cs))
	for _, c := range cs {
		out = append(out, runOne(ctx, w, c, o.Timeout))
		if !w.Up() {
			// The case crashed the worker: the next one gets a fresh process rather
			// than waiting for the restart backoff.
			w.Close()
			if w, err = start(); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

func runOne(ctx context.Context, w *loader.Worker, c Case, timeout time.Duration) Result {
	req := request(c.Request)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	began := time.Now()
	resp, err := w.Authorize(ctx, req)
	took := time.Since(began)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		err = fmt.Errorf("Authorize did not return within %s (set --timeout to wait longer)", timeout)
	case err == nil:
		err = pluginhost.CheckResponse(resp, nil)
	case !w.Up():
		// The call crashed the worker: what it printed (a panic on a goroutine of
		// the plugin's, with its stack) is the reason the author needs.
		if printed := w.Printed(); printed != "" {
			err = fmt.Errorf("%w; it printed:\n%s", err, printed)
		}
	}
	problems := c.Want.Mismatches(resp, err)
	got := "error" // the error itself is the problem listed
	if err == nil {
		got = plugintest.Got(resp, nil)
	}
	return Result{Name: c.Name, Want: c.Want.String(), Got: got, OK: len(problems) == 0, Problems: problems, Duration: took}
}

func request(r Request) *pluginapi.AuthorizationRequest {
	method, path := r.Method, r.Path
	if method == "" {
		method = "GET"
	}
	if path == "" {
		path = "/"
	}
	b := plugintest.NewRequest(method, path).Headers(r.Headers).Body(r.Body)
	if r.Host != "" {
		b.Host(r.Host)
	}
	return b.Build()
}
