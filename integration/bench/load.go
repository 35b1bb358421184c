package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"
)

// warmup is how long each server is loaded, unmeasured, before the first round.
const warmup = 2 * time.Second

// envoyTimeout is Envoy's default ext_authz timeout. ghz sends it as the gRPC
// deadline, as Envoy would, so that the servers see the deadline they see in production.
const envoyTimeout = 200 * time.Millisecond

// loader runs ghz against the servers.
type loader struct {
	ghz         string
	dir         string
	duration    time.Duration
	concurrency int
	clock       cpuClock
	data        map[string]string // request file by path name
}

// measurement is the outcome of one ghz run against one server.
type measurement struct {
	Round  int
	Server string
	Path   string
	ghzResult
	CPUPerCheck time.Duration // server CPU over the run divided by Count
	// Others is the share of the machine's CPU capacity that neither the server nor
	// ghz used during the run: other processes competing with the measurement.
	Others float64
}

// measure loads the servers alternately, rounds times per path. The bare server goes
// first in odd rounds and gatehouse in even ones, so a drift in the machine's speed
// does not favour either.
func (l *loader) measure(ctx context.Context, s servers, rounds int) ([]measurement, error) {
	var err error
	if l.clock, err = newCPUClock(ctx); err != nil {
		return nil, err
	}
	l.data = map[string]string{}
	for _, p := range paths {
		if l.data[p.name], err = writeRequest(l.dir, p.name, p.value); err != nil {
			return nil, err
		}
	}
	for _, srv := range []*server{s.bare, s.gatehouse} {
		progress(fmt.Sprintf("warming up %s for %s", srv.name, warmup))
		if _, _, err := l.ghzRun(ctx, srv, "allow", warmup); err != nil {
			return nil, err
		}
	}
	var runs []measurement
	for round := 1; round <= rounds; round++ {
		for _, p := range paths {
			order := []*server{s.bare, s.gatehouse}
			if round%2 == 0 {
				order[0], order[1] = order[1], order[0]
			}
			for _, srv := range order {
				r, err := l.measureOne(ctx, srv, p.name)
				if err != nil {
					return nil, err
				}
				r.Round = round
				progress(fmt.Sprintf("round %d/%d %-9s %-5s %6.0f req/s  p50 %s  p99 %s  %5.1f CPU-µs/Check  others %2.0f%%",
					round, rounds, srv.name, p.name, r.RPS, ms(r.P50), ms(r.P99), micros(r.CPUPerCheck), r.Others*100))
				runs = append(runs, r)
			}
		}
	}
	return runs, nil
}

// measureOne runs ghz once against srv and charges the server's CPU to its Checks.
func (l *loader) measureOne(ctx context.Context, srv *server, path string) (measurement, error) {
	pid := srv.proc.cmd.Process.Pid
	before, err := l.clock.used(pid)
	if err != nil {
		return measurement{}, err
	}
	busyBefore, err := l.clock.machineBusy()
	if err != nil {
		return measurement{}, err
	}
	start := time.Now()
	res, ghzCPU, err := l.ghzRun(ctx, srv, path, l.duration)
	if err != nil {
		return measurement{}, err
	}
	wall := time.Since(start)
	after, err := l.clock.used(pid)
	if err != nil {
		return measurement{}, err
	}
	busyAfter, err := l.clock.machineBusy()
	if err != nil {
		return measurement{}, err
	}
	if res.Count == 0 {
		return measurement{}, fmt.Errorf("ghz against %s (%s): no successful requests", srv.name, path)
	}
	others := busyAfter - busyBefore - (after - before) - ghzCPU
	return measurement{
		Server: srv.name, Path: path, ghzResult: res,
		CPUPerCheck: (after - before) / time.Duration(res.Count),
		Others:      max(float64(others)/float64(wall*time.Duration(runtime.NumCPU())), 0),
	}, nil
}

// ghzRun loads srv with the request of path for d and returns ghz's figures and the
// CPU time ghz itself used.
func (l *loader) ghzRun(ctx context.Context, srv *server, path string, d time.Duration) (ghzResult, time.Duration, error) {
	out := filepath.Join(l.dir, "ghz.json")
	ctx, cancel := context.WithTimeout(ctx, d+time.Minute)
	defer cancel()
	_, cpu, err := outputCPU(ctx, l.dir, l.ghz,
		"--insecure",
		"--call", "envoy.service.auth.v3.Authorization.Check",
		"-B", l.data[path],
		"-c", strconv.Itoa(l.concurrency),
		"-z", d.String(),
		"-t", envoyTimeout.String(),
		"--duration-stop", "wait",
		"-O", "json", "-o", out,
		srv.addr)
	if err != nil {
		return ghzResult{}, 0, fmt.Errorf("ghz against %s: %w", srv.name, err)
	}
	if err := srv.proc.exited(); err != nil {
		return ghzResult{}, 0, err
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return ghzResult{}, 0, err
	}
	res, err := parseGhz(b)
	return res, cpu, err
}
