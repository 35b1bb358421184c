package fanout

import (
	"context"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// churnResult is the control plane's memory under a steady stream of edits.
type churnResult struct {
	Duration time.Duration
	Edits    int
	RSS      []int64 // every second
	// Heap is the live heap before the edits and after, once every client took in all:
	// what memory flat under edits means (RSS also holds garbage not yet returned).
	Heap [2]int64
	Load string
}

// churn edits at 10 a second for d, kinds in turn, with the whole fleet connected,
// and samples the control plane's resident memory every second.
func churn(ctx context.Context, p *plane, d time.Duration, version *int) (*churnResult, error) {
	r := &churnResult{Duration: d}
	var err error
	if r.Heap[0], err = liveHeap(ctx, p); err != nil {
		return nil, err
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	end := time.Now().Add(d)
	next := time.Now()
	for time.Now().Before(end) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
		*version++
		if err := edit(p.dir, kinds[r.Edits%len(kinds)], (r.Edits*7919)%p.n, *version); err != nil {
			return nil, err
		}
		r.Edits++
		if time.Now().After(next) {
			rss, err := benchkit.RSS(p.proc.Pid())
			if err != nil {
				return nil, err
			}
			r.RSS = append(r.RSS, rss)
			next = next.Add(time.Second)
		}
	}
	// Every client catches up before the next part starts.
	if _, err := p.waitComplete(ctx, 2*time.Minute); err != nil {
		return nil, err
	}
	// Each proxy may still be taking in the last route configurations (megabytes each,
	// one in flight per client): the heap is read once nothing has arrived for a while.
	if err := p.waitQuiet(ctx, 2*time.Second, 3*time.Minute); err != nil {
		return nil, err
	}
	if r.Heap[1], err = liveHeap(ctx, p); err != nil {
		return nil, err
	}
	r.Load = benchkit.LoadAverage()
	return r, nil
}
