package chain

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"gatehouse.dev/gatehouse/pluginapi"
)

// run is one Run of a chain: what its goroutine and the caller share. Runs that end
// in time are reused (the goroutine's send of the outcome is its last use of one).
type run struct {
	ctx   context.Context
	chain *Chain
	req   *pluginapi.AuthorizationRequest
	done  chan Outcome // buffered: the send of a run given up never blocks

	// mu orders the caller giving up against the goroutine starting and ending
	// step calls, so exactly one of them accounts for a call that outlives the
	// deadline: the caller counts it stuck, the goroutine uncounts it when it returns.
	mu     sync.Mutex
	step   int  // the step running, or the next to run
	inStep bool // the step's Authorize is running
	gaveUp bool

	// merged and resp are the merged allow of a chain of several steps: kept with the
	// run, so their maps serve the next run too once the outcome is released.
	merged merger
	resp   pluginapi.AuthorizationResponse
}

var runs = sync.Pool{New: func() any { return &run{done: make(chan Outcome, 1)} }}

func newRun(ctx context.Context, c *Chain, req *pluginapi.AuthorizationRequest) *run {
	r := runs.Get().(*run)
	r.ctx, r.chain, r.req = ctx, c, req
	r.step, r.inStep, r.gaveUp = 0, false, false
	return r
}

// free returns r, whose outcome was received (and released, if it was the merged
// allow), for another Run.
func (r *run) free() {
	r.ctx, r.chain, r.req = nil, nil, nil
	r.merged.reset()
	r.resp = pluginapi.AuthorizationResponse{}
	runs.Put(r)
}

// run is the goroutine's work: the steps, then the outcome, as its very last use of r.
func (r *run) run() {
	out := r.steps()
	r.done <- out
}

// A new goroutine starts with a small stack, and a step's calls grow it: the runtime
// copies the stack as it grows, on every new goroutine again. So runs go to runners,
// goroutines that keep their grown stacks between runs, as grpc-go's stream workers do.
// There are at most maxRunners; when none waits, a run gets a goroutine of its own.
// A runner whose step never returns stays with that step.
var (
	runners    = make(chan *run) // unbuffered: a send succeeds only when a runner waits
	runnersN   atomic.Int32
	maxRunners = int32(4 * runtime.GOMAXPROCS(0))
)

// start runs r on a waiting runner, or a new one while there are fewer than
// maxRunners, or else on a goroutine that ends with r.
func start(r *run) {
	select {
	case runners <- r:
		return
	default:
	}
	if runnersN.Add(1) <= maxRunners {
		go runner(r)
		return
	}
	runnersN.Add(-1)
	go r.run()
}

// runner runs r, then every run it is handed, for the life of the process.
func runner(r *run) {
	for {
		r.run()
		r = <-runners
	}
}

// giveUp is the caller's answer at the deadline: the step running (or about to) fails
// with err, and a call still running is counted stuck until it returns.
func (r *run) giveUp(err error) Outcome {
	r.mu.Lock()
	r.gaveUp = true
	s := r.chain.Steps[r.step]
	if r.inStep {
		r.chain.slots[r.step].abandon()
	}
	r.mu.Unlock()
	return failed(s, fmt.Errorf("%s: %w", s.Name(), err))
}

// call runs step i holding a slot of its budget (step 0's taken by Run), turning a
// panic or a nil response into an error. ok is false when the caller gave up on the run, before or during the
// call: the run must stop.
func (r *run) call(i int) (resp *pluginapi.AuthorizationResponse, err error, ok bool) {
	s, b := r.chain.Steps[i], r.chain.slots[i]
	if i > 0 { // step 0's slot was taken by Run, which started this goroutine to call it
		r.mu.Lock()
		if r.gaveUp {
			r.mu.Unlock()
			return nil, nil, false
		}
		r.step = i
		if err := b.reserve(); err != nil {
			r.mu.Unlock()
			return nil, err, true
		}
		r.inStep = true
		r.mu.Unlock()
	}

	resp, err = invoke(r.ctx, s, r.req)

	r.mu.Lock()
	r.inStep = false
	abandoned := r.gaveUp
	r.mu.Unlock()
	if abandoned {
		b.returned() // counted stuck by giveUp, under mu, before this
	}
	b.release()
	switch {
	case abandoned:
		return nil, nil, false
	case err != nil:
		return nil, fmt.Errorf("%s: %w", s.Name(), err), true
	case resp == nil:
		return nil, fmt.Errorf("%s: returned neither a response nor an error", s.Name()), true
	}
	return resp, nil, true
}

// invoke calls the step's Authorize, recovering a panic as a PanicError.
func invoke(ctx context.Context, s Step, req *pluginapi.AuthorizationRequest) (resp *pluginapi.AuthorizationResponse, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = nil, &PanicError{Step: s.Name(), Value: p, Stack: debug.Stack()}
		}
	}()
	return s.Authorize(ctx, req)
}
