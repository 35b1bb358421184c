package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// cpOptions are the control-plane section's flags.
type cpOptions struct {
	sizes     []int         // numbers of services; the largest also gets churn and extauth
	starts    int           // starts timed per size
	edits     int           // edits of each kind per size
	churn     time.Duration // 0 skips the churn
	churnRate int
	// extauthHeap is where to write extauth's heap profile; "" writes none.
	extauthHeap string
}

// parseSizes reads "1000,10000".
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-cp-sizes %q: want positive numbers separated by commas", s)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// cpResult is what the control-plane section measured.
type cpResult struct {
	Options cpOptions
	Pinned  bool
	Scales  []cpScale
	Churn   *churnResult   // at the largest size
	Extauth *extauthResult // at the largest size
	GoBench []goBenchLine
}

// cpScale is one size's figures.
type cpScale struct {
	N int
	cpStart
	Starts    []cpStart // every start, in the order they ran; the embedded one is their median
	Peak      int64     // the highest RSS of the last start's whole run (VmHWM after the edits and the churn)
	RSSEdited int64     // after the edits
	Edits     []editSeries
}

// cpStart is one start's figures.
type cpStart struct {
	ReadyExtauth time.Duration // process start → first complete state on the stream
	ReadyProxy   time.Duration
	CPUReady     time.Duration // the control plane's CPU time until then
	OtherReady   float64       // the share of the machine other processes used meanwhile
	RSSReady     int64         // after the first complete state
	FileReady    int64         // of RSSReady, mapped files' pages (the binary's)
	PeakReady    int64         // the highest RSS until then (VmHWM)
}

// ready is the start's time to the first complete state of both roles.
func (s cpStart) ready() time.Duration { return max(s.ReadyExtauth, s.ReadyProxy) }

// medianStart is the start whose ready time is the median of starts' (the lower of
// the two middle ones for an even number).
func medianStart(starts []cpStart) cpStart {
	sorted := slices.SortedFunc(slices.Values(starts), func(a, b cpStart) int { return cmp.Compare(a.ready(), b.ready()) })
	return sorted[(len(sorted)-1)/2]
}

// runControlplaneSection measures `gatehouse controlplane` at each size.
func runControlplaneSection(ctx context.Context, o cpOptions, bins binaries, procs *procSet, tmp string) (*cpResult, error) {
	res := &cpResult{Options: o, Pinned: canPin()}
	if res.Pinned {
		release, err := pinClients(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	clock, err := newCPUClock(ctx)
	if err != nil {
		return nil, err
	}
	for idx, n := range o.sizes {
		largest := idx == len(o.sizes)-1
		sc, err := measureScale(ctx, o, bins, procs, tmp, n, largest, clock, res)
		if err != nil {
			return nil, fmt.Errorf("controlplane at %d services: %w", n, err)
		}
		res.Scales = append(res.Scales, sc)
	}
	return res, nil
}

func measureScale(ctx context.Context, o cpOptions, bins binaries, procs *procSet, tmp string, n int, largest bool, clock cpuClock, res *cpResult) (cpScale, error) {
	sc := cpScale{N: n}
	base := filepath.Join(tmp, fmt.Sprintf("controlplane-%d", n))
	dir := filepath.Join(base, "resources")
	progress(fmt.Sprintf("controlplane: writing %d VirtualServices, Upstreams and AuthConfigs to %s", n, dir))
	if err := writeResources(dir, n); err != nil {
		return sc, err
	}
	defer os.RemoveAll(base)
	// The machine's speed varies from one start to the next (by a fifth on the VM
	// these figures come from): every start is timed and listed, and the median
	// judged. The last one goes on with the edits.
	var cp *controlplaneProc
	for i := range o.starts {
		st, p, err := timeStart(ctx, bins, procs, dir, filepath.Join(tmp, fmt.Sprintf("controlplane-%d-%d.log", n, i+1)), n, clock, xdsLink{})
		if err != nil {
			return sc, err
		}
		progress(fmt.Sprintf("controlplane: %d services: start %d of %d: first complete state extauth %s, proxy %s (CPU %s, others %.0f%%)",
			n, i+1, o.starts, st.ReadyExtauth.Round(time.Millisecond), st.ReadyProxy.Round(time.Millisecond), st.CPUReady.Round(time.Millisecond), 100*st.OtherReady))
		sc.Starts = append(sc.Starts, st)
		if i < o.starts-1 {
			p.close()
			procs.stop(p.proc)
			continue
		}
		cp = p
	}
	defer procs.stop(cp.proc)
	defer cp.close()
	sc.cpStart = medianStart(sc.Starts)
	pid := cp.proc.cmd.Process.Pid
	ed := &editor{dir: dir, n: n, cp: cp}
	for _, k := range cpKinds {
		s, err := ed.measure(ctx, k, o.edits, clock)
		if err != nil {
			return sc, err
		}
		progress(fmt.Sprintf("controlplane: %d services: %s edits %s (CPU %s, Publish %s per edit, others %.0f%%)",
			n, k, s.Latencies, s.CPU.Round(100*time.Microsecond), s.Publish.Round(10*time.Microsecond), 100*s.OtherCPU))
		sc.Edits = append(sc.Edits, s)
	}
	st, err := readMemStatus(pid)
	if err != nil {
		return sc, err
	}
	sc.RSSEdited, sc.Peak = st.RSS, st.Peak
	if !largest {
		return sc, nil
	}
	if o.churn > 0 {
		progress(fmt.Sprintf("controlplane: %d services: churn of %d edits/s for %s", n, o.churnRate, o.churn))
		if res.Churn, err = ed.churn(ctx, o.churnRate, o.churn); err != nil {
			return sc, err
		}
		if st, err = readMemStatus(pid); err != nil {
			return sc, err
		}
		sc.Peak = st.Peak
	}
	progress(fmt.Sprintf("controlplane: %d services: gatehouse extauth --xds until it serves every AuthConfig", n))
	if res.Extauth, err = runExtauthXDS(ctx, procs, bins, cp, n, filepath.Join(tmp, fmt.Sprintf("extauth-%d.log", n)), o.extauthHeap); err != nil {
		return sc, err
	}
	return sc, nil
}

// timeStart starts the control plane on dir, its clients connecting as link says, and
// measures its start; the process is left running, with its clients.
func timeStart(ctx context.Context, bins binaries, procs *procSet, dir, logPath string, n int, clock cpuClock, link xdsLink) (cpStart, *controlplaneProc, error) {
	var st cpStart
	others, err := startCPUWatch(clock, os.Getpid())
	if err != nil {
		return st, nil, err
	}
	cp, err := startControlplane(ctx, procs, bins.gatehouse, dir, logPath, n, link)
	if err != nil {
		return st, nil, err
	}
	st.ReadyExtauth, st.ReadyProxy = cp.readyExtauth, cp.readyProxy
	err = func() error {
		pid := cp.proc.cmd.Process.Pid
		var err error
		if st.CPUReady, err = clock.used(pid); err != nil {
			return err
		}
		if st.OtherReady, err = others.othersBut(st.CPUReady); err != nil {
			return err
		}
		m, err := readMemStatus(pid)
		st.RSSReady, st.FileReady, st.PeakReady = m.RSS, m.File, m.Peak
		return err
	}()
	if err != nil {
		cp.close()
		procs.stop(cp.proc)
		return st, nil, err
	}
	return st, cp, nil
}
