package main

import (
	"context"
	"fmt"
)

// rateShare is the share of the bare server's pinned maximum at which latency is
// compared: a rate both servers sustain, so the p99 is that of a server with room to
// spare, not of a queue.
const rateShare = 0.7

// measureAtRate loads the servers alternately with workload w at rps requests per
// second, rounds times.
func (l *loader) measureAtRate(ctx context.Context, ph phase, w string, rps, rounds int) ([]measurement, error) {
	var runs []measurement
	for round := 1; round <= rounds; round++ {
		for _, srv := range alternate(ph.servers, round) {
			r, err := l.measureOne(ctx, srv, w, ph.companions, rps)
			if err != nil {
				return nil, err
			}
			r.Round = round
			progress(fmt.Sprintf("round %d/%d %-9s %-6s at %d req/s: p50 %s  p99 %s  %5.1f CPU-µs/Check",
				round, rounds, srv.name, w, rps, ms(r.P50), ms(r.P99), micros(r.CPUPerCheck)))
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// measureUnpinned loads the servers as measure does but with ghz and the servers free
// to run on every CPU, as a machine that pins nothing would; the servers are pinned
// back afterwards.
func (l *loader) measureUnpinned(ctx context.Context, ph phase, rounds int) ([]measurement, error) {
	if !canPin() {
		return nil, nil // every run was unpinned already
	}
	if err := pinPhase(ctx, ph, allCPUs()); err != nil {
		return nil, err
	}
	l.unpinned = true
	runs, err := l.measure(ctx, ph, rounds)
	l.unpinned = false
	if perr := pinPhase(ctx, ph, serverCPU); err == nil {
		err = perr
	}
	return runs, err
}

// alternate is the order the servers are loaded in a round: the bare server first in
// odd rounds, gatehouse first in even ones, so a drift in the machine's speed favours
// neither.
func alternate(s servers, round int) []*server {
	if round%2 == 0 {
		return []*server{s.gatehouse, s.bare}
	}
	return []*server{s.bare, s.gatehouse}
}
