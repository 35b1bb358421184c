package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds/xdsbench"
	"gatehouse.dev/gatehouse/internal/mtls"
)

var mtlsSection = section{name: "mtls",
	heading: "## Mutual TLS: plain text against mTLS, control plane and Check (`make bench`)\n\n"}

// The modes the mTLS section compares.
const (
	modePlain = "plain"
	modeMTLS  = "mtls"
)

// mtlsKinds are the edits timed in each control-plane round.
var mtlsKinds = []cpKind{kindAuthConfig, kindVirtualService}

// mtlsResult is what the mTLS section measured.
type mtlsResult struct {
	N      int // services of the control-plane rounds
	Edits  int // edits of each kind per control-plane round
	Rounds int
	Pinned bool
	Starts []cpArm
	// Checks are ghz runs at full speed, Server modePlain or modeMTLS; RateChecks at
	// Rate requests/s.
	Checks, RateChecks []measurement
	Rate               int
}

// cpArm is one start of the control plane in one mode, and its edits.
type cpArm struct {
	Round int
	Mode  string
	cpStart
	Edits []editSeries
}

// mtlsOrder is the order of the modes in a round: plain first in odd rounds.
func mtlsOrder(round int) []string {
	if round%2 == 0 {
		return []string{modeMTLS, modePlain}
	}
	return []string{modePlain, modeMTLS}
}

// runMTLSSection writes certificates with mtls.Generate and compares plain text with
// mutual TLS: the control plane at n services, then Checks under ghz.
func runMTLSSection(ctx context.Context, o options, bins binaries, procs *procSet, tmp string, n int) (*mtlsResult, error) {
	certs := filepath.Join(tmp, "certs")
	if _, err := mtls.Generate(mtls.GenerateOptions{Out: certs, TrustDomain: "cluster.local", Namespace: "gatehouse-system",
		Proxies: []string{"gateway-proxy"}, CALifetime: 24 * time.Hour, Lifetime: 24 * time.Hour}); err != nil {
		return nil, err
	}
	res := &mtlsResult{N: n, Edits: o.cpo.edits, Rounds: o.mtlsRounds, Pinned: canPin()}
	clock, err := newCPUClock(ctx)
	if err != nil {
		return nil, err
	}
	if res.Starts, err = compareControlplane(ctx, o.cpo.edits, o.mtlsRounds, bins, procs, tmp, certs, n, clock); err != nil {
		return nil, fmt.Errorf("mtls: controlplane: %w", err)
	}
	if err := compareChecks(ctx, o, bins, procs, tmp, certs, res); err != nil {
		return nil, fmt.Errorf("mtls: check: %w", err)
	}
	return res, nil
}

// compareControlplane starts the control plane on n services in each mode, in turn
// over rounds, times its start and edits edits of each of mtlsKinds, and stops it.
func compareControlplane(ctx context.Context, edits, rounds int, bins binaries, procs *procSet, tmp, certs string, n int, clock cpuClock) ([]cpArm, error) {
	if canPin() {
		release, err := pinClients(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	base := filepath.Join(tmp, fmt.Sprintf("controlplane-mtls-%d", n))
	dir := filepath.Join(base, "resources")
	progress(fmt.Sprintf("mtls: writing %d VirtualServices, Upstreams and AuthConfigs to %s", n, dir))
	if err := writeResources(dir, n); err != nil {
		return nil, err
	}
	defer os.RemoveAll(base)
	links := map[string]xdsLink{modePlain: {}, modeMTLS: {certs: certs}}
	ed := &editor{dir: dir, n: n}
	var arms []cpArm
	for round := 1; round <= rounds; round++ {
		for _, mode := range mtlsOrder(round) {
			arm, err := measureArm(ctx, edits, bins, procs, ed, filepath.Join(tmp, fmt.Sprintf("controlplane-%s-%d.log", mode, round)), links[mode], clock)
			if err != nil {
				return nil, fmt.Errorf("%s, round %d: %w", mode, round, err)
			}
			arm.Round, arm.Mode = round, mode
			progress(fmt.Sprintf("mtls: round %d/%d %-5s ready extauth %s, proxy %s (CPU %s, others %.0f%%); edit p99 %s %s, %s %s",
				round, rounds, mode, msShort(arm.ReadyExtauth), msShort(arm.ReadyProxy), msShort(arm.CPUReady), 100*arm.OtherReady,
				arm.Edits[0].Kind, msShort(arm.Edits[0].Latencies.Percentile(99)), arm.Edits[1].Kind, msShort(arm.Edits[1].Latencies.Percentile(99))))
			arms = append(arms, arm)
		}
	}
	return arms, nil
}

// measureArm is one start as link says, and its edits; the control plane is stopped
// afterwards.
func measureArm(ctx context.Context, edits int, bins binaries, procs *procSet, ed *editor, logPath string, link xdsLink, clock cpuClock) (cpArm, error) {
	st, cp, err := timeStart(ctx, bins, procs, ed.dir, logPath, ed.n, clock, link)
	if err != nil {
		return cpArm{}, err
	}
	defer procs.stop(cp.proc)
	defer cp.close()
	arm := cpArm{cpStart: st}
	ed.cp = cp
	for _, k := range mtlsKinds {
		s, err := ed.measure(ctx, k, edits, clock)
		if err != nil {
			return arm, err
		}
		arm.Edits = append(arm.Edits, s)
	}
	return arm, nil
}

// armRatios is, per round with both modes, figure(mTLS) ÷ figure(plain), in round
// order.
func armRatios(arms []cpArm, figure func(cpArm) float64) []float64 {
	byRound := map[int]map[string]cpArm{}
	for _, a := range arms {
		if byRound[a.Round] == nil {
			byRound[a.Round] = map[string]cpArm{}
		}
		byRound[a.Round][a.Mode] = a
	}
	var out []float64
	for _, round := range sortedKeys(byRound) {
		p, okP := byRound[round][modePlain]
		m, okM := byRound[round][modeMTLS]
		if okP && okM && figure(p) > 0 {
			out = append(out, figure(m)/figure(p))
		}
	}
	return out
}

// editLatencies pools the latencies of kind k over every round of mode.
func editLatencies(arms []cpArm, mode string, k cpKind) xdsbench.Latencies {
	var out xdsbench.Latencies
	for _, a := range arms {
		for _, e := range a.Edits {
			if a.Mode == mode && e.Kind == k {
				out = append(out, e.Latencies...)
			}
		}
	}
	return out
}

// editP99 is the p99 of a's edits of kind k.
func editP99(k cpKind) func(cpArm) float64 {
	return func(a cpArm) float64 {
		for _, e := range a.Edits {
			if e.Kind == k {
				return float64(e.Latencies.Percentile(99))
			}
		}
		return 0
	}
}

// readyOf is a's time to both roles' first complete state.
func readyOf(a cpArm) float64 { return float64(a.ready()) }

// armsOf are the arms of mode, in round order.
func armsOf(arms []cpArm, mode string) []cpArm {
	return slices.DeleteFunc(slices.Clone(arms), func(a cpArm) bool { return a.Mode != mode })
}
