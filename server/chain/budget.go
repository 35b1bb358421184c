package chain

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"
)

// MaxCallsPerStep bounds the calls of one step that run at once, counting those that
// passed their deadline and still run (stuck). Every call reserves a slot before it
// starts and gives it back when the step returns, however late, so the stuck calls of
// a step can never exceed the bound. A step at its bound denies at once; the steps of
// other plugins, and their routes, are not touched.
const MaxCallsPerStep = 1024

// maxCallsPerStep is MaxCallsPerStep, variable so tests can reach the bound cheaply.
var maxCallsPerStep int64 = MaxCallsPerStep

// budget is the call slots of one step of one chain.
type budget struct {
	configID, step, plugin string
	log                    zerolog.Logger
	max                    int64

	running atomic.Int64 // calls holding a slot: in time or stuck
	stuck   atomic.Int64 // calls that passed their deadline and still run
	// exhausted is set when a call was refused for want of a slot; it is logged once
	// and cleared when the step has half its slots free again.
	exhausted atomic.Bool
}

func newBudget(c *Chain, s Step) *budget {
	b := &budget{configID: c.ID, step: s.Name(), log: c.Log, max: maxCallsPerStep}
	if f, ok := s.(interface{ File() string }); ok {
		b.plugin = f.File()
	}
	return b
}

// reserve takes a slot, or reports that none is free. It never lets running pass max:
// a Load then an Add would let concurrent callers overshoot.
func (b *budget) reserve() error {
	for {
		n := b.running.Load()
		if n >= b.max {
			stuck := b.stuck.Load()
			if b.exhausted.CompareAndSwap(false, true) {
				b.event(b.log.Error()).Int64("running", n).Int64("stuck", stuck).
					Msg("step has no call slot left; its requests are denied until its calls return")
			}
			return fmt.Errorf("%s: not called: %d calls of this step still run, %d of them past their deadline (plugin stuck?)", b.step, n, stuck)
		}
		if b.running.CompareAndSwap(n, n+1) {
			return nil
		}
	}
}

// release gives a slot back when the step returns.
func (b *budget) release() {
	n := b.running.Add(-1)
	if n <= b.max/2 && b.exhausted.Load() && b.exhausted.CompareAndSwap(true, false) {
		b.event(b.log.Info()).Int64("running", n).Msg("step has call slots again")
	}
}

// abandon records that a call passed its deadline and still runs.
func (b *budget) abandon() {
	abandoned.Add(1)
	if b.stuck.Add(1) == 1 {
		track(b)
		b.event(b.log.Warn()).Msg("step call passed its deadline and still runs; the plugin ignores its context")
	}
}

// returned records that an abandoned call finally returned.
func (b *budget) returned() {
	abandoned.Add(-1)
	if b.stuck.Add(-1) == 0 {
		track(b)
		b.event(b.log.Info()).Msg("every stuck call of the step has returned")
	}
}

func (b *budget) event(e *zerolog.Event) *zerolog.Event {
	e = e.Str("config_id", b.configID).Str("step", b.step)
	if b.plugin != "" {
		e = e.Str("plugin", b.plugin)
	}
	return e
}

// abandoned counts step calls that passed their deadline and have not returned yet,
// over every step.
var abandoned atomic.Int64

// Abandoned reports how many step calls, over every step, passed their deadline and
// still run.
func Abandoned() int64 { return abandoned.Load() }

// stuckSet holds the budgets with stuck calls, including those of chains that no
// longer serve, so the stuck calls stay visible until they return.
var (
	stuckMu  sync.Mutex
	stuckSet = map[*budget]struct{}{}
)

// track files b by its stuck count as it is now. Every change of the count to or from
// zero calls it after the change, so the last call sees the last count, whatever
// order concurrent calls take the lock in.
func track(b *budget) {
	stuckMu.Lock()
	defer stuckMu.Unlock()
	if b.stuck.Load() > 0 {
		stuckSet[b] = struct{}{}
	} else {
		delete(stuckSet, b)
	}
}

// StuckStep is how many calls of one step passed their deadline and still run.
type StuckStep struct {
	ConfigID string `json:"-"`
	Step     string `json:"step"`
	// Plugin is the plugin file of the step ("" for a built-in step).
	Plugin string `json:"plugin,omitempty"`
	Calls  int64  `json:"calls"`
}

// Stuck reports every step with stuck calls, over every chain, sorted by config_id
// then step, summing the steps that have the same config_id, name and plugin (an old
// and a new version of one config).
func Stuck() []StuckStep {
	sum := map[StuckStep]int64{}
	stuckMu.Lock()
	for b := range stuckSet {
		if n := b.stuck.Load(); n > 0 {
			sum[StuckStep{ConfigID: b.configID, Step: b.step, Plugin: b.plugin}] += n
		}
	}
	stuckMu.Unlock()
	return sortStuck(sum)
}

// Stuck reports the steps of c with stuck calls, in chain order.
func (c *Chain) Stuck() []StuckStep {
	if !c.prepared.Load() {
		return nil // never run: no call of it can be stuck (and its budgets need not be made)
	}
	var out []StuckStep
	for _, b := range c.slots {
		if n := b.stuck.Load(); n > 0 {
			out = append(out, StuckStep{ConfigID: b.configID, Step: b.step, Plugin: b.plugin, Calls: n})
		}
	}
	return out
}

func sortStuck(sum map[StuckStep]int64) []StuckStep {
	out := make([]StuckStep, 0, len(sum))
	for k, n := range sum {
		k.Calls = n
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ConfigID != out[j].ConfigID {
			return out[i].ConfigID < out[j].ConfigID
		}
		if out[i].Step != out[j].Step {
			return out[i].Step < out[j].Step
		}
		return out[i].Plugin < out[j].Plugin
	})
	return out
}
