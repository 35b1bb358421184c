// Package chain runs the ordered steps of one AuthConfig for one request.
//
// Steps run in order; the first deny stops the chain and is the answer. Headers a step
// sets are merged into the request the next step sees and into the final allow. A step
// that errors, panics, passes its deadline or returns a header Envoy must not get
// denies with 500 (fail closed).
package chain

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/pluginapi/pluginhost"
)

// Step is one link of a chain: a plugin's AuthService or a built-in step.
type Step interface {
	// Name identifies the step in logs and errors, such as "step/required_header".
	Name() string
	// Authorize decides one request; errors are technical failures, not denials.
	Authorize(ctx context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error)
}

// Chain is the steps of one AuthConfig. It is immutable once it serves; a config change
// builds a new Chain and swaps it in, so in-flight requests finish on the old one.
type Chain struct {
	ID      string
	Steps   []Step
	Timeout time.Duration
	// Log reports the steps that get stuck (passed their deadline and still run) and
	// recover, once per change rather than per request.
	Log zerolog.Logger
	// AllowHeaders names the hop-by-hop headers (connection, upgrade, te, …) and host
	// that the steps may set or remove; any other is refused. Header syntax and
	// pseudo-headers are checked whatever this says.
	AllowHeaders []string

	once    sync.Once
	slots   []*budget // one per step, made on first use
	allowed map[string]bool
}

// prepare makes, once, what Run needs beside the steps, and returns the budgets.
func (c *Chain) prepare() []*budget {
	c.once.Do(func() {
		c.slots = make([]*budget, len(c.Steps))
		for i, s := range c.Steps {
			c.slots[i] = newBudget(c, s)
		}
		for _, h := range c.AllowHeaders {
			if c.allowed == nil {
				c.allowed = make(map[string]bool, len(c.AllowHeaders))
			}
			c.allowed[strings.ToLower(h)] = true
		}
	})
	return c.slots
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
		req.State = map[string]any{} // no size hint: storage comes with the first value, if any
	}
	var merged merger
	budgets := c.prepare()
	for i, s := range c.Steps {
		resp, err := call(ctx, s, budgets[i], req)
		if err == nil {
			// What a step returns goes to Envoy as it is: a header Envoy must not get
			// (CR or LF in a value, a pseudo-header, host) fails the step, closed.
			if err = pluginhost.CheckResponse(resp, c.allowed); err != nil {
				err = fmt.Errorf("%s: %w", s.Name(), err)
			}
		}
		if err != nil {
			return Outcome{Response: pluginapi.Deny(http.StatusInternalServerError, ""), Step: s.Name(), Err: err}
		}
		if !resp.Allowed {
			return Outcome{Response: resp, Step: s.Name()}
		}
		if i == len(c.Steps)-1 && merged.adopt(resp) {
			return Outcome{Response: resp}
		}
		merged.apply(req, resp)
	}
	return Outcome{Response: merged.response()}
}

type result struct {
	resp *pluginapi.AuthorizationResponse
	err  error
}

// States of one call, so exactly one of the caller (abandoning it) and the step's
// goroutine (returning) accounts for a late return.
const (
	running int32 = iota
	finished
	gaveUp
)

// call runs one step, turning a panic, a nil response or a missed deadline into an error.
// The step runs on its own goroutine so one that ignores its context cannot hold the
// request past the deadline; the call holds a slot of the step's budget until the step
// returns, so a stuck plugin uses up its own slots and no one else's.
func call(ctx context.Context, s Step, b *budget, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	if err := b.reserve(); err != nil {
		return nil, err
	}
	c := newStepCall(ctx, s, b, req)
	go c.run()
	select {
	case r := <-c.done:
		// The goroutine's send was its last use of c: it can serve another call.
		c.free()
		switch {
		case r.err != nil:
			return nil, fmt.Errorf("%s: %w", s.Name(), r.err)
		case r.resp == nil:
			return nil, fmt.Errorf("%s: returned neither a response nor an error", s.Name())
		}
		return r.resp, nil
	case <-ctx.Done():
		// Count the call stuck before claiming it, so the goroutine's uncount (which
		// needs the claim) always comes after. c is not reused: the goroutine may
		// still have it.
		b.abandon()
		if !c.state.CompareAndSwap(running, gaveUp) {
			b.returned() // it returned just now: not stuck after all
		}
		return nil, fmt.Errorf("%s: %w", s.Name(), ctx.Err())
	}
}

// stepCall is one call of a step, in one allocation that calls which return in time
// hand on to the next call (two allocations less per step of every Check).
type stepCall struct {
	ctx    context.Context
	step   Step
	budget *budget
	req    *pluginapi.AuthorizationRequest
	done   chan result // buffered: a late send never blocks
	state  atomic.Int32
}

var stepCalls = sync.Pool{New: func() any { return &stepCall{done: make(chan result, 1)} }}

func newStepCall(ctx context.Context, s Step, b *budget, req *pluginapi.AuthorizationRequest) *stepCall {
	c := stepCalls.Get().(*stepCall)
	c.ctx, c.step, c.budget, c.req = ctx, s, b, req
	c.state.Store(running)
	return c
}

// free returns c, whose result was received, for another call.
func (c *stepCall) free() {
	c.ctx, c.step, c.budget, c.req = nil, nil, nil, nil
	stepCalls.Put(c)
}

// run calls the step and sends the result, as its very last use of c.
func (c *stepCall) run() {
	r := c.invoke()
	if !c.state.CompareAndSwap(running, finished) {
		c.budget.returned()
	}
	c.budget.release()
	c.done <- r
}

func (c *stepCall) invoke() (r result) {
	defer func() {
		if p := recover(); p != nil {
			r = result{err: &PanicError{Step: c.step.Name(), Value: p, Stack: debug.Stack()}}
		}
	}()
	resp, err := c.step.Authorize(c.ctx, c.req)
	return result{resp, err}
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
