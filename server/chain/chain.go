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
	// OnStep, when set, is told how long each step took, on the run's goroutine as the
	// step returns: from the end of the step before (its header check and merge
	// included) or the start of the run. One clock reading a step, not two. A call
	// that outlived its deadline is not reported (the stuck-call metrics count it).
	// ctx is the Check's context (the caller may have answered already when the
	// deadline passed just as the step returned).
	OnStep func(ctx context.Context, step int, took time.Duration)

	once     sync.Once
	prepared atomic.Bool // set once slots and allowed are made
	slots    []*budget   // one per step, made on first use
	allowed  map[string]bool
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
		c.prepared.Store(true)
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

	run *run // set when Response is the run's merged allow, until Release
}

// Release lets the next Run reuse what a merged allow is made of. Call it once the
// Response was read and nothing refers to its maps any more (the server does, after
// turning it into Envoy's answer); the Response must not be used after. An outcome
// never released is simply not reused.
func (o *Outcome) Release() {
	if o.run != nil {
		o.run.free()
		o.run = nil
	}
}

// Run runs the chain on req, whose Headers it updates as steps add headers.
//
// The steps run on a goroutine of their own, one after the other, so a step that
// ignores its context cannot hold the request past the deadline: Run answers at the
// deadline and leaves the step running. Each step call holds a slot of the step's
// budget until the step returns, so a stuck plugin uses up its own slots and no one
// else's. One goroutine per Check, not per step: a further step costs its own work.
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
	slots := c.prepare()
	if len(c.Steps) == 0 {
		return Outcome{Response: pluginapi.Allow()}
	}
	// The first step's slot is taken here, so a step at its bound denies at once,
	// without a goroutine; the run's goroutine takes the others' as it goes.
	if err := slots[0].reserve(); err != nil {
		return failed(c.Steps[0], err)
	}
	r := newRun(ctx, c, req)
	r.inStep = true
	start(r)
	select {
	case out := <-r.done:
		if out.run == nil { // else the merged allow is still r's, until released
			r.free() // the goroutine's send was its last use of r
		}
		return out
	case <-ctx.Done():
		return r.giveUp(ctx.Err())
	}
}

// steps runs the steps in order, on the run's goroutine, and returns the outcome.
func (r *run) steps() Outcome {
	c := r.chain
	merged := &r.merged
	// Steps are timed on the monotonic clock alone, by time.Since of one reading taken
	// before the first step: time.Since reads the monotonic clock only, less than a
	// time.Now per step would read.
	var begun time.Time
	var last time.Duration
	if c.OnStep != nil {
		begun = time.Now()
	}
	for i, s := range c.Steps {
		if err := r.ctx.Err(); i > 0 && err != nil {
			// Past the deadline no further step starts (step 0 holds its slot
			// already: it is called, with its context done, and gives it back).
			return failed(s, fmt.Errorf("%s: %w", s.Name(), err))
		}
		resp, err, ok := r.call(i)
		if !ok {
			return Outcome{} // given up: nobody reads it
		}
		if c.OnStep != nil {
			now := time.Since(begun)
			c.OnStep(r.ctx, i, now-last)
			last = now
		}
		if err == nil {
			// What a step returns goes to Envoy as it is: a header Envoy must not get
			// (CR or LF in a value, a pseudo-header, host) fails the step, closed.
			if err = pluginhost.CheckResponse(resp, c.allowed); err != nil {
				err = fmt.Errorf("%s: %w", s.Name(), err)
			}
		}
		if err != nil {
			return failed(s, err)
		}
		if !resp.Allowed {
			return Outcome{Response: resp, Step: s.Name()}
		}
		if i == len(c.Steps)-1 && merged.adopt(resp) {
			// Run's contract holds all the same: req.Headers shows the allow's sets.
			adoptInto(r.req, resp)
			return Outcome{Response: resp}
		}
		merged.apply(r.req, resp)
	}
	merged.into(&r.resp)
	return Outcome{Response: &r.resp, run: r}
}

// failed is the 500 deny of a step that failed technically.
func failed(s Step, err error) Outcome {
	return Outcome{Response: pluginapi.Deny(http.StatusInternalServerError, ""), Step: s.Name(), Err: err}
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
