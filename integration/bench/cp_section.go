package main

import (
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
	N            int
	ReadyExtauth time.Duration // process start → first complete state on the stream
	ReadyProxy   time.Duration
	CPUReady     time.Duration // the control plane's CPU time until then
	OtherReady   float64       // the share of the machine other processes used meanwhile
	RSSReady     int64         // after the first complete state
	FileReady    int64         // of RSSReady, mapped files' pages (the binary's)
	PeakReady    int64         // the highest RSS until then (VmHWM)
	Peak         int64         // the highest RSS of the whole run (VmHWM after the edits and the churn)
	RSSEdited    int64         // after the edits
	Edits        []editSeries
}

// runControlplaneSection measures `gatehouse controlplane` at each size.
func runControlplaneSection(ctx context.Context, o cpOptions, bins binaries, procs *procSet, tmp string) (*cpResult, error) {
	res := &cpResult{Options: o, Pinned: canPin()}
	if res.Pinned {
		restore, err := pinSelf(ctx, clientCPU)
		if err != nil {
			return nil, err
		}
		defer func() {
			if err := restore(); err != nil {
				progress("restoring this process's CPU affinity: " + err.Error())
			}
		}()
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
	others, err := startCPUWatch(clock, os.Getpid())
	if err != nil {
		return sc, err
	}
	cp, err := startControlplane(ctx, procs, bins.gatehouse, dir, filepath.Join(tmp, fmt.Sprintf("controlplane-%d.log", n)), n)
	if err != nil {
		return sc, err
	}
	defer procs.stop(cp.proc)
	defer cp.close()
	sc.ReadyExtauth, sc.ReadyProxy = cp.readyExtauth, cp.readyProxy
	pid := cp.proc.cmd.Process.Pid
	if sc.CPUReady, err = clock.used(pid); err != nil {
		return sc, err
	}
	if sc.OtherReady, err = others.othersBut(sc.CPUReady); err != nil {
		return sc, err
	}
	st, err := readMemStatus(pid)
	if err != nil {
		return sc, err
	}
	sc.RSSReady, sc.FileReady, sc.PeakReady = st.RSS, st.File, st.Peak
	progress(fmt.Sprintf("controlplane: %d services: first complete state extauth %s, proxy %s (CPU %s, others %.0f%%)",
		n, sc.ReadyExtauth.Round(time.Millisecond), sc.ReadyProxy.Round(time.Millisecond), sc.CPUReady.Round(time.Millisecond), 100*sc.OtherReady))
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
	st, err = readMemStatus(pid)
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
