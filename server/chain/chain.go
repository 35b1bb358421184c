// Package chain runs the ordered steps of one AuthConfig for one request.
//
// Steps run in order; the first deny stops the chain and is the answer. Headers a step
// sets are merged into the request the next step sees and into the final allow. A step
// that errors, panics or passes its deadline denies with 500 (fail closed).
package chain

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Step is one link of a chain: a plugin's AuthService or a built-in step.
type Step interface {
	// Name identifies the step in logs and errors, such as "step/required_header".
	Name() string
	// Authorize decides one request; errors are technical failures, not denials.
	Authorize(ctx context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error)
}

// MaxAbandoned bounds the Authorize calls that ignored their deadline and still run.
// Past it, a chain denies at once instead of starting more of them.
const MaxAbandoned = 1024

// maxAbandoned is MaxAbandoned, variable so tests can reach the bound cheaply.
var maxAbandoned int64 = MaxAbandoned

// abandoned counts step calls that passed their deadline and have not returned yet.
var abandoned atomic.Int64

// Abandoned reports how many step calls passed their deadline and still run.
func Abandoned() int64 { return abandoned.Load() }

// Chain is the steps of one AuthConfig. It is immutable once built; a config change
// builds a new Chain and swaps it in, so in-flight requests finish on the old one.
type Chain struct {
	ID      string
	Steps   []Step
	Timeout time.Duration
}

// Outcome is the result of running a chain.
type Outcome struct {
	// Response is the deciding deny, or the merged allow.
	Response *pluginapi.AuthorizationResponse
	// Step is the step that denied or failed ("" when allowed).
	Step string
	// Err is set when a step failed technically; Response is then a 500 deny.
	Err error
}

// Run runs the chain on req, whose Headers it updates as steps add headers.
func (c *Chain) Run(ctx context.Context, req *pluginapi.AuthorizationRequest) Outcome {
	// The caller's deadline (Envoy sends one) usually comes first; a timer of our own
	// would then change nothing and cost a timer and four allocations per Check.
	if dl, ok := ctx.Deadline(); c.Timeout > 0 && (!ok || time.Until(dl) > c.Timeout) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	if req.State == nil {
		req.State = make(map[string]any, 2)
	}
	var merged merger
	for _, s := range c.Steps {
		resp, err := call(ctx, s, req)
		if err != nil {
			return Outcome{Response: pluginapi.Deny(http.StatusInternalServerError, ""), Step: s.Name(), Err: err}
		}
		if !resp.Allowed {
			return Outcome{Response: resp, Step: s.Name()}
		}
		merged.apply(req, resp)
	}
	return Outcome{Response: merged.response()}
}

type result struct {
	resp *pluginapi.AuthorizationResponse
	err  error
}

// call runs one step, turning a panic, a nil response or a missed deadline into an error.
// The step runs on its own goroutine so one that ignores its context cannot hold the
// request past the deadline.
func call(ctx context.Context, s Step, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	if n := abandoned.Load(); n >= maxAbandoned {
		return nil, fmt.Errorf("%s: not called: %d earlier calls ignored their deadline and still run", s.Name(), n)
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: &PanicError{Step: s.Name(), Value: p, Stack: debug.Stack()}}
			}
		}()
		resp, err := s.Authorize(ctx, req)
		done <- result{resp, err}
	}()
	select {
	case r := <-done:
		switch {
		case r.err != nil:
			return nil, fmt.Errorf("%s: %w", s.Name(), r.err)
		case r.resp == nil:
			return nil, fmt.Errorf("%s: returned neither a response nor an error", s.Name())
		}
		return r.resp, nil
	case <-ctx.Done():
		abandoned.Add(1)
		go func() { <-done; abandoned.Add(-1) }()
		return nil, fmt.Errorf("%s: %w", s.Name(), ctx.Err())
	}
}

// PanicError is a step panic, recovered.
type PanicError struct {
	Step  string
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// IsDeadline reports whether err is a step that passed its deadline.
func IsDeadline(err error) bool { return errors.Is(err, context.DeadlineExceeded) }
