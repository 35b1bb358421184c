package fanout

import (
	"context"
	"fmt"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdsfleet"
	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// stallResult is what one client that stops reading did to the others and to the
// control plane.
type stallResult struct {
	Limit       time.Duration
	Others      []time.Duration // VirtualService edits to every other proxy while it stalls
	Dropped     time.Duration   // stall → the control plane counting its stream dropped
	RSSBefore   int64
	RSSStalled  int64 // after the edits, the stalled client still connected
	DropsMetric float64
	Load        string
}

// stalled adds a proxy that stops reading, times VirtualService edits to the others
// meanwhile (five; each sends the whole route configuration, so the stalled stream's
// window fills), and waits for the control plane to drop it.
func stalled(ctx context.Context, p *plane, limit time.Duration, version *int) (*stallResult, error) {
	r := &stallResult{Limit: limit}
	c, err := xdsfleet.Start(ctx, p.xds, xds.DefaultProxyRole, "proxy-stalled", nil)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := c.WaitFor(wctx, func() bool { return c.Answered() && p.complete(c) }); err != nil {
		return nil, err
	}
	if r.RSSBefore, err = benchkit.RSS(p.proc.Pid()); err != nil {
		return nil, err
	}
	c.Stall()
	stalledAt := time.Now()
	for i := range 5 {
		*version++
		last, _, err := timeEdit(ctx, p, "VirtualService", i, *version)
		if err != nil {
			return nil, err
		}
		r.Others = append(r.Others, last)
	}
	if r.RSSStalled, err = benchkit.RSS(p.proc.Pid()); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(limit + time.Minute)
	for {
		if r.DropsMetric, err = benchkit.Metric(ctx, "http://"+p.admin+"/metrics", "gatehouse_xds_dropped_streams_total"); err != nil {
			return nil, err
		}
		if r.DropsMetric > 0 {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the stalled client was not dropped within %s", limit+time.Minute)
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.Dropped = time.Since(stalledAt)
	r.Load = benchkit.LoadAverage()
	return r, nil
}
