// Package churn is the churn section of `make bench` (issue 26): routes added, edited
// and removed, a plugin replaced, the control plane killed and extauth restarted under
// steady traffic through the gateway, every answer judged (integration/churn/churnkit)
// and the time each change took to show.
package churn

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/churn/churnkit"
)

// Section is the churn section of BENCHMARKS.md.
var Section = benchkit.Section{Name: "churn", Heading: "## Churn: changes under traffic, every answer judged\n\n" +
	"Issue 26's proof. Separate processes: `gatehouse controlplane` on a folder, two `gatehouse extauth --xds`\n" +
	"replicas, `gatehouse gateway` and an upstream (`integration/churn/upstream`, which also serves the JWT\n" +
	"route's keys). Half the routes are secured (a `required_header` step, an eighth of them followed by a\n" +
	"second plugin, and one JWT route), half open, one VirtualService per route. Steady requests go to routes\n" +
	"that exist, at random; each change has a poller from the moment its files are written. During the run:\n" +
	"new secured routes (VirtualService and AuthConfig written together), AuthConfig edits that change the\n" +
	"allowed key, route removals, a new `.so` of the second plugin, a SIGKILL and restart of the control\n" +
	"plane and a rolling restart of both extauth replicas (the next replica is stopped once the gateway sends\n" +
	"the restarted one Checks again). A response is right when it is the answer of the resources in force\n" +
	"while it was in flight, or, inside a change's window, of the resources before it; a window ends at the\n" +
	"first answer only the new resources give through the gateway, and for an AuthConfig edit, which the\n" +
	"replicas take on one by one, once each replica (asked straight) gives it. ext_authz `requestTimeout` is\n" +
	"2 s, so a loaded machine's stall is not taken for a denial. Servers run on CPU 1, the load on CPU 0.\n\n"}

// Options are the section's flags.
type Options struct {
	churnkit.Options
	Pin bool
	// VHDS turns on Settings spec.virtualHostDiscovery: each route's VirtualService
	// reaches the gateway as a virtual host of its own.
	VHDS bool
}

// Defaults are the run issue 26 asks for.
func Defaults() Options {
	return Options{Pin: true, Options: churnkit.Options{
		Routes: 5000, Duration: 2 * time.Minute, Rate: 500, Workers: 64,
		New: 200, Edits: 200, Deletes: 100,
		SwapPlugin: true, KillControlPlane: true, RestartExtauth: 2,
		PollEvery: 5 * time.Millisecond, PollTail: 100 * time.Millisecond, Seed: 26, Warmup: 2 * time.Second,
	}}
}

// Run builds what the run needs, starts the processes, runs the churn and judges it.
func Run(ctx context.Context, env *benchkit.Env, o Options) (benchkit.Result, error) {
	dir := filepath.Join(env.Tmp, "churn")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return benchkit.Result{}, err
	}
	benchkit.Progress("churn: building the upstream and the plugins")
	bins, err := churnkit.Build(ctx, env.Root, env.Bins.Gatehouse, dir)
	if err != nil {
		return benchkit.Result{}, err
	}
	restore := func() {}
	if o.Pin {
		if restore, err = benchkit.PinClients(ctx); err != nil {
			return benchkit.Result{}, err
		}
	}
	defer restore()
	benchkit.Progress("churn: starting the processes on %d routes", o.Routes)
	started := time.Now()
	s, err := churnkit.StartSystem(ctx, dir, bins, o.Routes, 2, o.Pin, o.VHDS)
	if err != nil {
		return benchkit.Result{}, err
	}
	defer s.Stop()
	benchkit.Progress("churn: every process serves after %s; churning for %s", time.Since(started).Round(time.Millisecond), o.Duration)
	loadBefore := benchkit.LoadAverage()
	run, err := churnkit.Do(ctx, s, o.Options)
	if err != nil {
		return benchkit.Result{}, fmt.Errorf("churn: %w (logs in %s)", err, s.LogDir())
	}
	loadAfter := benchkit.LoadAverage()
	v := run.Verdict
	benchkit.Progress("churn: %d wrong answers of %d", len(v.Wrong), v.Requests+v.Polls)
	if len(v.Wrong) > 0 {
		// The scratch folder goes when the bench ends: the logs of a run with wrong
		// answers are kept for whoever looks into them.
		kept, err := os.MkdirTemp("", "gatehouse-churn-logs-")
		if err == nil {
			err = os.CopyFS(kept, os.DirFS(s.LogDir()))
		}
		if err != nil {
			return benchkit.Result{}, fmt.Errorf("churn: keeping the logs: %w", err)
		}
		benchkit.Progress("churn: the processes' logs are in %s", kept)
	}
	goals := []benchkit.Goal{
		{What: "churn: responses with a 5xx status or none", Target: 0, Unit: "responses", Rounds: []float64{float64(v.Failed)}},
		{What: "churn: responses wrongly allowed", Target: 0, Unit: "responses", Rounds: []float64{float64(v.WronglyAllowed)}},
		{What: "churn: responses wrongly denied", Target: 0, Unit: "responses", Rounds: []float64{float64(v.WronglyDenied)}},
	}
	if ds := run.Windows("new"); len(ds) > 0 {
		goals = append(goals,
			benchkit.Latency("churn: new route, files written → first right answer, p50", 50*time.Millisecond, ds, 50),
			benchkit.Latency("churn: new route, files written → first right answer, p99", 150*time.Millisecond, ds, 99))
	}
	if ds := run.Windows("edit"); len(ds) > 0 {
		goals = append(goals, benchkit.Latency("churn: AuthConfig edit, propagation window, p99", 150*time.Millisecond, ds, 99))
	}
	var b strings.Builder
	b.WriteString(env.Measured(fmt.Sprintf(", load average %s before the churn and %s after (1, 5, 15 min)", loadBefore, loadAfter)))
	benchkit.WriteGoals(&b, goals)
	summary, worst, _ := strings.Cut(run.Summary(30), "Worst cases (")
	b.WriteString(summary)
	benchkit.Fold(&b, "Worst cases", "Worst cases ("+worst)
	return env.Result(Section, goals, b.String()), nil
}
