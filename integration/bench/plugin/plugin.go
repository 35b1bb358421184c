// Package plugin is the plugin section of `make bench`: gatehouse serving
// required_header chains against a bare ext_authz server, under ghz and in process.
package plugin

import (
	"context"
	"fmt"
	"strings"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
)

// Section is where the section's text goes in BENCHMARKS.md.
var Section = benchkit.Section{Name: "plugin", Heading: "## Plugin chain: gatehouse against a bare ext_authz server\n\n"}

// Options are the section's flags.
type Options struct {
	checkload.Options
	RateRounds, UnpinnedRounds int
	GoBench                    bool
	Profile                    string // a CPU profile of gatehouse under allow load, when set
}

// goBenchPackages hold the in-process benchmarks; goBenchFlags run each five times with
// GOMAXPROCS=1, as the pinned servers run, and the report takes the median.
var goBenchPackages = []string{"./server/chain", "./server"}

const goBenchFlags = "-benchmem -count 5 -cpu 1"

// Run measures the section. It also returns the full-speed runs, which the OIDC
// section sets its own beside.
func Run(ctx context.Context, env *benchkit.Env, o Options) (benchkit.Result, []checkload.Measurement, error) {
	var f figures
	var err error
	if o.GoBench {
		benchkit.Progress("running the Go benchmarks (go test -bench) in server/chain and server")
		if f.GoBench, err = benchkit.RunGoBench(ctx, env.Root, ".", goBenchFlags, goBenchPackages...); err != nil {
			return benchkit.Result{}, nil, err
		}
	}
	servers, stop, err := checkload.StartChains(ctx, env, env.Tmp, checkload.Chain{Bare: true}, checkload.Chain{Name: "gatehouse", Admin: o.Profile != ""})
	defer stop()
	if err != nil {
		return benchkit.Result{}, nil, err
	}
	bare, gh := servers[0], servers[1]
	l, err := checkload.NewLoader(ctx, env, env.Tmp, o.Options, checkload.PathNames()...)
	if err != nil {
		return benchkit.Result{}, nil, err
	}
	if !benchkit.CanPin() {
		benchkit.Progress("this machine has one CPU: the servers and ghz cannot be pinned apart, so ghz's work hides part of the difference")
	}
	ph := checkload.Phase{Base: bare, Server: gh, Loads: checkload.PathNames()}
	if f.Runs, err = l.Measure(ctx, ph, 0, o.Rounds); err != nil {
		return benchkit.Result{}, nil, err
	}
	if o.RateRounds > 0 {
		if f.Rate, f.RateRuns, err = l.AtRate(ctx, checkload.Phase{Base: bare, Server: gh, Loads: []string{"allow"}}, f.Runs, o.RateRounds); err != nil {
			return benchkit.Result{}, nil, err
		}
	}
	if o.UnpinnedRounds > 0 {
		benchkit.Progress("the secondary, unpinned runs")
		if f.Unpinned, err = l.MeasureUnpinned(ctx, ph, o.UnpinnedRounds); err != nil {
			return benchkit.Result{}, nil, err
		}
	}
	profile, err := l.Profile(ctx, gh, "allow", "allow", o.Profile)
	if err != nil {
		return benchkit.Result{}, nil, err
	}
	measured, err := env.MeasuredGhz(ctx, "")
	r := env.Result(Section, f.goals(), f.markdown(measured, o))
	r.Profile = profile
	return r, f.Runs, err
}

func (f *figures) markdown(measured string, o Options) string {
	var b strings.Builder
	b.WriteString(measured)
	if len(f.Runs) > 0 {
		benchkit.WriteGoals(&b, f.goals())
		pin := fmt.Sprintf("servers under `taskset -c %s`, ghz under `taskset -c %s`", benchkit.ServerCPU, benchkit.ClientCPU)
		if !benchkit.CanPin() {
			pin = "**nothing pinned: this machine has one CPU**, so ghz's work hides part of the difference"
		}
		fmt.Fprintf(&b, "**Under load, pinned.** Concurrency %d, %s per run, %d round(s), %s; medians over the rounds. ",
			o.Concurrency, o.Duration, o.Rounds, pin)
		checkload.WriteOthers(&b, f.Runs)
		checkload.WriteSummary(&b, checkload.Summarize(f.Runs, checkload.PathNames(), "bare", "gatehouse"), "path", nil)
		checkload.WriteEveryRun(&b, "Every run at full speed", f.Runs, "path", nil)
	}
	if len(f.RateRuns) > 0 {
		var r strings.Builder
		fmt.Fprintf(&r, "**Latency at a fixed rate.** ghz `--rps %d` (%.0f%% of the bare server's median pinned maximum for allow).\n\n", f.Rate, checkload.RateShare*100)
		checkload.WriteSummary(&r, checkload.Summarize(f.RateRuns, []string{"allow"}, "bare", "gatehouse"), "path", nil)
		benchkit.Fold(&b, "Latency at a fixed rate", r.String())
		checkload.WriteEveryRun(&b, fmt.Sprintf("Every run at %d req/s", f.Rate), f.RateRuns, "path", nil)
	}
	if len(f.Unpinned) > 0 {
		var u strings.Builder
		u.WriteString("**Secondary: unpinned.** The same load with nothing pinned; not what the goals are judged on.\n\n")
		checkload.WriteSummary(&u, checkload.Summarize(f.Unpinned, checkload.PathNames(), "bare", "gatehouse"), "path", nil)
		benchkit.Fold(&b, "Secondary: unpinned", u.String())
	}
	if len(f.GoBench) > 0 {
		fmt.Fprintf(&b, "<details><summary>In process: <code>go test -run '^$' -bench . %s %s</code>, medians of the runs</summary>\n\n", goBenchFlags, strings.Join(goBenchPackages, " "))
		b.WriteString("| package | benchmark | ns/op | CPU/op (ns) | B/op | allocs/op |\n|---|---|---:|---:|---:|---:|\n")
		for _, g := range f.GoBench {
			cpu := "–"
			switch m := g.Metrics; {
			case m["step-cpu-ns"] > 0: // its ns/op is one pair of batches
				cpu = fmt.Sprintf("a further step: %.0f", m["step-cpu-ns"])
			case m["cpu-ns/op"] > 0:
				cpu = fmt.Sprintf("%.0f", m["cpu-ns/op"])
			}
			fmt.Fprintf(&b, "| %s | %s | %.0f | %s | %.0f | %.0f |\n", g.Package, g.Name, g.Metrics["ns/op"], cpu, g.Metrics["B/op"], g.Metrics["allocs/op"])
		}
		b.WriteString("\n</details>\n")
	}
	return b.String()
}
