// Package fanout is the fan-out section of `make bench`: one `gatehouse controlplane`
// on 10,000 services feeding growing fleets of simulated gateway proxies and extauth
// replicas (real delta ADS streams that decode and acknowledge what they receive),
// timed from an edit to the last client holding it, through a reconnect storm after
// SIGKILL, with a client that stops reading, and measured for memory.
package fanout

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/controlplane"
)

// Section is the fanout section of BENCHMARKS.md.
var Section = benchkit.Section{Name: "fanout", Heading: "## Fan-out: one control plane, hundreds of clients\n\n"}

// Options are the section's flags.
type Options struct {
	Clients    []int         // fleet sizes, ascending; half proxies, half extauth replicas
	Resources  int           // VirtualServices, Upstreams and AuthConfigs each
	Edits      int           // AuthConfig and Upstream edits timed per fleet size
	RouteEdits int           // VirtualService edits timed per fleet size
	Churn      time.Duration // edits at 10/s with the largest fleet; 0 skips it
	Storms     int           // SIGKILL and restart with the largest fleet
	Stall      time.Duration // the control plane's --xds-stall-timeout; 0 skips the stalled client
	// StormProfile, when set, is where a CPU profile of the control plane over 10 s of
	// each reconnect storm is written (the last one's stays).
	StormProfile string `json:"-"`
}

// result is what the section measured.
type result struct {
	Options Options
	Pinned  bool
	Load    string // load average at the start
	Fleets  []fleetResult
	Churn   *churnResult
	Stalled *stallResult
	Storms  []stormResult
}

// Run measures the section.
func Run(ctx context.Context, env *benchkit.Env, o Options) (benchkit.Result, error) {
	res := &result{Options: o, Pinned: benchkit.CanPin(), Load: benchkit.LoadAverage()}
	release, err := benchkit.PinClients(ctx)
	if err != nil {
		return benchkit.Result{}, err
	}
	defer release()
	base := filepath.Join(env.Tmp, "fanout")
	defer os.RemoveAll(base)
	dir, err := controlplane.WriteServices("fanout", base, o.Resources)
	if err != nil {
		return benchkit.Result{}, err
	}
	addrs, err := benchkit.FreeAddrs(2)
	if err != nil {
		return benchkit.Result{}, err
	}
	p := &plane{env: env, dir: dir, state: filepath.Join(base, "state"), n: o.Resources, xds: addrs[0], admin: addrs[1], stallLimit: o.Stall, stormProfile: o.StormProfile}
	if err := p.start(); err != nil {
		return benchkit.Result{}, err
	}
	defer p.close()
	if err := benchkit.WaitPort(ctx, p.proc, p.xds); err != nil {
		return benchkit.Result{}, err
	}
	version := 0
	for _, n := range o.Clients {
		benchkit.Progress("fanout: %d clients", n)
		f, err := measureFleet(ctx, p, n, o, &version)
		if err != nil {
			return benchkit.Result{}, fmt.Errorf("fanout with %d clients: %w", n, err)
		}
		res.Fleets = append(res.Fleets, f)
		for _, e := range f.Edits {
			benchkit.Progress("fanout: %d clients: %s p50 %s p99 %s, %.1f MB/edit, CPU %s/edit; RSS %.0f MB; ready %s; load %s", n, e.Kind,
				benchkit.Percentile(e.Last, 50), benchkit.Percentile(e.Last, 99), benchkit.MiB(benchkit.Median(e.Bytes)), e.CPU, benchkit.MiB(f.RSS), f.Ready, f.Load)
		}
	}
	if o.Churn > 0 {
		benchkit.Progress("fanout: churn of 10 edits/s for %s", o.Churn)
		if res.Churn, err = churn(ctx, p, o.Churn, &version); err != nil {
			return benchkit.Result{}, fmt.Errorf("fanout churn: %w", err)
		}
	}
	for i := range o.Storms {
		benchkit.Progress("fanout: reconnect storm %d of %d", i+1, o.Storms)
		s, err := storm(ctx, p)
		if err != nil {
			return benchkit.Result{}, fmt.Errorf("fanout reconnect storm: %w", err)
		}
		res.Storms = append(res.Storms, s)
	}
	if o.Stall > 0 {
		benchkit.Progress("fanout: a client that stops reading")
		if res.Stalled, err = stalled(ctx, p, o.Stall, &version); err != nil {
			return benchkit.Result{}, fmt.Errorf("fanout stalled client: %w", err)
		}
	}
	return env.Result(Section, res.goals(), res.markdown(env.Measured(""))), nil
}
