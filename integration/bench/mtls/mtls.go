// Package mtls is the mutual-TLS section of `make bench`: plain text against mTLS,
// for the control plane's start and edits and for Checks under ghz.
package mtls

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds/xdsbench"
	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
	"gatehouse.dev/gatehouse/integration/bench/controlplane"
	"gatehouse.dev/gatehouse/internal/mtls"
)

// Section is where the section's text goes in BENCHMARKS.md.
var Section = benchkit.Section{Name: "mtls", Heading: "## Mutual TLS: plain text against mTLS, control plane and Check\n\n"}

// mtlsStartTarget is issue 24's: control-plane start to both roles complete, mTLS ÷
// plain text.
const mtlsStartTarget = 1.1

// Options are the section's flags.
type Options struct {
	checkload.Options     // of the Checks; Rounds are those of both parts
	RateRounds        int // 0 skips the Checks at a fixed rate
	Services, Edits   int // of the control plane
}

// The modes the mTLS section compares.
const (
	modePlain = "plain"
	modeMTLS  = "mtls"
)

// mtlsKinds are the edits timed in each control-plane round.
var mtlsKinds = []controlplane.Kind{controlplane.KindAuthConfig, controlplane.KindVirtualService}

// mtlsResult is what the mTLS section measured.
type mtlsResult struct {
	N      int // services of the control-plane rounds
	Edits  int // edits of each kind per control-plane round
	Rounds int
	Pinned bool
	Starts []cpArm
	// Checks are ghz runs at full speed, Server modePlain or modeMTLS; RateChecks at
	// Rate requests/s.
	Checks, RateChecks []checkload.Measurement
	Rate               int
}

// cpArm is one start of the control plane in one mode, and its edits.
type cpArm struct {
	Round int
	Mode  string
	controlplane.StartFigures
	Edits []controlplane.EditSeries
}

// Run writes certificates with mtls.Generate and compares plain text with mutual
// TLS: the control plane at o.Services, then Checks under ghz.
func Run(ctx context.Context, env *benchkit.Env, o Options) (benchkit.Result, error) {
	certs := filepath.Join(env.Tmp, "certs")
	if _, err := mtls.Generate(mtls.GenerateOptions{Out: certs, TrustDomain: "cluster.local", Namespace: "gatehouse-system",
		Proxies: []string{"gateway-proxy"}, CALifetime: 24 * time.Hour, Lifetime: 24 * time.Hour}); err != nil {
		return benchkit.Result{}, err
	}
	res := &mtlsResult{N: o.Services, Edits: o.Edits, Rounds: o.Rounds, Pinned: benchkit.CanPin()}
	var err error
	if res.Starts, err = compareControlplane(ctx, o.Edits, o.Rounds, env, certs, o.Services); err != nil {
		return benchkit.Result{}, fmt.Errorf("mtls: controlplane: %w", err)
	}
	if err := compareChecks(ctx, o, env, certs, res); err != nil {
		return benchkit.Result{}, fmt.Errorf("mtls: check: %w", err)
	}
	measured, err := env.MeasuredGhz(ctx, "")
	return env.Result(Section, res.goals(), res.markdown(measured, o)), err
}

// compareControlplane starts the control plane on n services in each mode, in turn
// over rounds, times its start and edits edits of each of mtlsKinds, and stops it.
func compareControlplane(ctx context.Context, edits, rounds int, env *benchkit.Env, certs string, n int) ([]cpArm, error) {
	release, err := benchkit.PinClients(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	base := filepath.Join(env.Tmp, fmt.Sprintf("controlplane-mtls-%d", n))
	dir, err := controlplane.WriteServices("mtls", base, n)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(base)
	links := map[string]controlplane.Link{modePlain: {}, modeMTLS: {Certs: certs}}
	ed := &controlplane.Editor{Dir: dir, N: n}
	var arms []cpArm
	for round := 1; round <= rounds; round++ {
		for _, mode := range benchkit.Alternate(modePlain, modeMTLS, round) {
			arm, err := measureArm(ctx, edits, env, ed, filepath.Join(env.Tmp, fmt.Sprintf("controlplane-%s-%d.log", mode, round)), links[mode])
			if err != nil {
				return nil, fmt.Errorf("%s, round %d: %w", mode, round, err)
			}
			arm.Round, arm.Mode = round, mode
			benchkit.Progress("mtls: round %d/%d %-5s ready extauth %s, proxy %s (CPU %s, others %.0f%%); edit p99 %s %s, %s %s",
				round, rounds, mode, controlplane.MsShort(arm.ReadyExtauth), controlplane.MsShort(arm.ReadyProxy), controlplane.MsShort(arm.CPUReady), 100*arm.OtherReady,
				arm.Edits[0].Kind, controlplane.MsShort(arm.Edits[0].Latencies.Percentile(99)), arm.Edits[1].Kind, controlplane.MsShort(arm.Edits[1].Latencies.Percentile(99)))
			arms = append(arms, arm)
		}
	}
	return arms, nil
}

// compareChecks starts `gatehouse extauth` twice on the plugin section's AuthConfigs,
// in plain text and with --tls-dir (both on benchkit.ServerCPU), and loads them alternately
// with the allowed Check through the one-step chain: at full speed for CPU per Check,
// then at checkload.RateShare of plain text's maximum for latency. ghz presents the gateway
// proxy's certificate to the mTLS server.
func compareChecks(ctx context.Context, o Options, env *benchkit.Env, certs string, res *mtlsResult) error {
	dir := filepath.Join(env.Tmp, "mtls-check")
	servers, stop, err := checkload.StartChains(ctx, env, dir, checkload.Chain{Name: modePlain}, checkload.Chain{Name: modeMTLS,
		Args: []string{"--tls-dir", filepath.Join(certs, mtls.RoleExtauth)}, ClientTLS: filepath.Join(certs, "proxy-gateway-proxy")})
	defer stop()
	if err != nil {
		return err
	}
	l, err := checkload.NewLoader(ctx, env, dir, o.Options, "allow")
	if err != nil {
		return err
	}
	// The plain server stands where the bare one does in the plugin section: first in
	// odd rounds, the denominator of every ratio.
	ph := checkload.Phase{Base: servers[0], Server: servers[1], Loads: []string{"allow"}}
	if res.Checks, err = l.Measure(ctx, ph, 0, o.Rounds); err != nil {
		return err
	}
	if o.RateRounds == 0 {
		return nil
	}
	res.Rate, res.RateChecks, err = l.AtRate(ctx, ph, res.Checks, o.Rounds)
	return err
}

// measureArm is one start as link says, and its edits; the control plane is stopped
// afterwards.
func measureArm(ctx context.Context, edits int, env *benchkit.Env, ed *controlplane.Editor, logPath string, link controlplane.Link) (cpArm, error) {
	st, cp, err := controlplane.TimeStart(ctx, env, ed.Dir, logPath, ed.N, link)
	if err != nil {
		return cpArm{}, err
	}
	defer cp.Stop(env)
	arm := cpArm{StartFigures: st}
	ed.CP = cp
	for _, k := range mtlsKinds {
		s, err := ed.Measure(ctx, k, edits)
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
	key := func(a cpArm) (int, string) { return a.Round, a.Mode }
	return benchkit.InOrder(benchkit.RoundRatios(arms, key, modeMTLS, modePlain, figure))
}

// edit is a's edits of kind k; nil when it made none.
func (a cpArm) edit(k controlplane.Kind) xdsbench.Latencies {
	for _, e := range a.Edits {
		if e.Kind == k {
			return e.Latencies
		}
	}
	return nil
}

// editP99 is the p99 of an arm's edits of kind k.
func editP99(k controlplane.Kind) func(cpArm) float64 {
	return func(a cpArm) float64 { return float64(a.edit(k).Percentile(99)) }
}

// readyOf is a's time to both roles' first complete state.
func readyOf(a cpArm) float64 { return float64(a.Ready()) }
