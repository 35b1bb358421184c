package controlplane

import (
	"context"
	"fmt"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds/xdsbench"
	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// churnResult is the control plane's memory under a steady stream of edits.
type churnResult struct {
	Rate     int // edits per second
	Duration time.Duration
	Edits    int
	// Samples are the control plane's RSS and Go heap in use, once a second, the
	// first taken before the churn starts.
	Samples []memSample
	// CaughtUp is how long after the last edit its new version (and the last of each
	// other kind) was on the streams.
	CaughtUp time.Duration
}

type memSample struct {
	At        time.Duration
	RSS, Heap int64
}

// churn rewrites one file every 1/rate seconds for d, rotating over the kinds and
// spread over the services, without waiting for each to arrive, and samples memory
// every second; then it waits until the last edit of each kind is on the streams.
func (e *Editor) churn(ctx context.Context, rate int, d time.Duration) (*churnResult, error) {
	res := &churnResult{Rate: rate, Duration: d}
	pid := e.CP.Proc.Pid()
	sample := func(at time.Duration) error {
		r, err := benchkit.RSS(pid)
		if err != nil {
			return err
		}
		heap, err := e.CP.metric(ctx, "go_memstats_heap_inuse_bytes")
		if err != nil {
			return err
		}
		res.Samples = append(res.Samples, memSample{At: at, RSS: r, Heap: int64(heap)})
		return nil
	}
	if err := sample(0); err != nil {
		return nil, err
	}
	type last struct {
		w         *xdsbench.Watcher
		typ, name string
		old       string
	}
	lastOf := map[Kind]last{}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	start := time.Now()
	nextSample := time.Second
	for j := 0; time.Since(start) < d; j++ {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
		k := Kinds[j%len(Kinds)]
		i := e.service(j)
		w, typ, name := e.target(k, i)
		lastOf[k] = last{w: w, typ: typ, name: name, old: w.Version(typ, name)}
		e.v++
		if err := EditResource(e.Dir, k, i, e.v); err != nil {
			return nil, err
		}
		res.Edits++
		if at := time.Since(start); at >= nextSample {
			if err := sample(at); err != nil {
				return nil, err
			}
			nextSample += time.Second
		}
		if err := e.CP.Proc.Exited(); err != nil {
			return nil, err
		}
	}
	end := time.Now()
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for k, l := range lastOf {
		if _, err := l.w.WaitNew(wctx, l.typ, l.name, l.old); err != nil {
			return nil, fmt.Errorf("churn: the last %s edit never arrived: %w", k, err)
		}
	}
	res.CaughtUp = time.Since(end)
	if err := sample(time.Since(start)); err != nil {
		return nil, err
	}
	return res, nil
}
