package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"gatehouse.dev/gatehouse/internal/mtls"
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
	data        map[string]string // request file by workload name
	// unpinned runs ghz wherever the kernel puts it (the secondary, unpinned figures).
	unpinned bool
}

// newLoader returns a loader with no request files yet.
func newLoader(ctx context.Context, ghz, dir string, duration time.Duration, concurrency int) (*loader, error) {
	clock, err := newCPUClock(ctx)
	if err != nil {
		return nil, err
	}
	return &loader{ghz: ghz, dir: dir, duration: duration, concurrency: concurrency, clock: clock, data: map[string]string{}}, nil
}

// phase is what one measure call loads: the two servers, the workloads (names of
// request files in loader.data) in the order they are loaded, and companion processes
// that serve gatehouse (redis-server, the OpenID provider) and whose CPU is counted
// beside the server's.
type phase struct {
	servers
	loads      []string
	companions []companion
}

// companion is a process whose CPU a phase reports per Check.
type companion struct {
	name string
	pid  int
}

// measurement is the outcome of one ghz run against one server.
type measurement struct {
	Round  int
	Server string
	Path   string // the workload
	ghzResult
	CPUPerCheck time.Duration // server CPU over the run divided by Count
	// Companions is each companion's CPU over the run divided by Count, in the
	// order of phase.companions.
	Companions []time.Duration
	// Others is the share of the machine's CPU capacity that neither the server, its
	// companions nor ghz used during the run: other processes competing with the
	// measurement.
	Others float64
}

// measure loads the servers alternately, rounds times per workload, at full speed. The bare server
// goes first in odd rounds and gatehouse in even ones, so a drift in the machine's
// speed does not favour either.
func (l *loader) measure(ctx context.Context, ph phase, rounds int) ([]measurement, error) {
	for _, srv := range []*server{ph.bare, ph.gatehouse} {
		for _, w := range ph.loads {
			progress(fmt.Sprintf("warming up %s with %s for %s", srv.name, w, warmup))
			if _, _, err := l.ghzRun(ctx, srv, w, warmup, 0); err != nil {
				return nil, err
			}
		}
	}
	var runs []measurement
	for round := 1; round <= rounds; round++ {
		for _, w := range ph.loads {
			for _, srv := range alternate(ph.servers, round) {
				r, err := l.measureOne(ctx, srv, w, ph.companions, 0)
				if err != nil {
					return nil, err
				}
				r.Round = round
				progress(fmt.Sprintf("round %d/%d %-9s %-6s %6.0f req/s  p50 %s  p99 %s  %5.1f CPU-µs/Check  others %2.0f%%",
					round, rounds, srv.name, w, r.RPS, ms(r.P50), ms(r.P99), micros(r.CPUPerCheck), r.Others*100))
				runs = append(runs, r)
			}
		}
	}
	return runs, nil
}

// measureOne runs ghz once against srv, at rps requests per second (0: as fast as it
// can), and charges the server's CPU, and each companion's, to its Checks.
func (l *loader) measureOne(ctx context.Context, srv *server, load string, companions []companion, rps int) (measurement, error) {
	pids := []int{srv.proc.cmd.Process.Pid}
	for _, c := range companions {
		pids = append(pids, c.pid)
	}
	before, err := l.cpuOf(pids)
	if err != nil {
		return measurement{}, err
	}
	busyBefore, err := l.clock.machineBusy()
	if err != nil {
		return measurement{}, err
	}
	start := time.Now()
	res, ghzCPU, err := l.ghzRun(ctx, srv, load, l.duration, rps)
	if err != nil {
		return measurement{}, err
	}
	wall := time.Since(start)
	after, err := l.cpuOf(pids)
	if err != nil {
		return measurement{}, err
	}
	busyAfter, err := l.clock.machineBusy()
	if err != nil {
		return measurement{}, err
	}
	if res.Count == 0 {
		return measurement{}, fmt.Errorf("ghz against %s (%s): no successful requests", srv.name, load)
	}
	m := measurement{Server: srv.name, Path: load, ghzResult: res}
	others := busyAfter - busyBefore - ghzCPU
	for i := range pids {
		used := after[i] - before[i]
		others -= used
		if i == 0 {
			m.CPUPerCheck = used / time.Duration(res.Count)
		} else {
			m.Companions = append(m.Companions, used/time.Duration(res.Count))
		}
	}
	m.Others = max(float64(others)/float64(wall*time.Duration(runtime.NumCPU())), 0)
	return m, nil
}

// cpuOf is the CPU time each of pids has used so far.
func (l *loader) cpuOf(pids []int) ([]time.Duration, error) {
	out := make([]time.Duration, len(pids))
	for i, pid := range pids {
		var err error
		if out[i], err = l.clock.used(pid); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ghzRun loads srv with the request of path for d, at rps requests per second (0: as
// fast as it can), and returns ghz's figures and the CPU time ghz itself used. ghz
// runs on the load CPU unless the loader is unpinned.
func (l *loader) ghzRun(ctx context.Context, srv *server, path string, d time.Duration, rps int) (ghzResult, time.Duration, error) {
	out := filepath.Join(l.dir, "ghz.json")
	ctx, cancel := context.WithTimeout(ctx, d+time.Minute)
	defer cancel()
	bin, args := pinned(clientCPU, l.ghz)
	if l.unpinned {
		bin, args = l.ghz, nil
	}
	if rps > 0 {
		args = append(args, "--rps", strconv.Itoa(rps))
	}
	if srv.clientTLS == "" {
		args = append(args, "--insecure")
	} else {
		args = append(args, "--cacert", filepath.Join(srv.clientTLS, mtls.CAFile),
			"--cert", filepath.Join(srv.clientTLS, mtls.CertFile), "--key", filepath.Join(srv.clientTLS, mtls.KeyFile))
	}
	_, cpu, err := outputCPU(ctx, l.dir, bin, append(args,
		"--call", "envoy.service.auth.v3.Authorization.Check",
		"-B", l.data[path],
		"-c", strconv.Itoa(l.concurrency),
		"-z", d.String(),
		"-t", envoyTimeout.String(),
		"--duration-stop", "wait",
		"-O", "json", "-o", out,
		srv.addr)...)
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
