package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// report is everything one run of the benchmark found.
type report struct {
	Date        string
	Command     string
	Machine     machine
	GhzVersion  string
	Duration    time.Duration
	Concurrency int
	Rounds      int
	GoBench     []goBench
	Runs        []measurement
	// Pinned is true when the servers ran on serverCPU and ghz on clientCPU.
	Pinned bool
	// RateRuns load allow at Rate requests/s (rateShare of the bare maximum).
	RateRuns []measurement
	Rate     int
	// Unpinned are the secondary runs with nothing pinned.
	Unpinned   []measurement
	OIDC       *oidcResult // nil when the OIDC phase did not run
	Swaps      []swap      // the plugin-load phase's, if it ran
	TrialAlone []time.Duration
	// DevLoop is the dev-loop phase's, if it ran; the loads are /proc/loadavg when the
	// dev-loop and plugin-load phases began.
	DevLoop     []devRound
	DevLoopLoad string
	SwapsLoad   string
	// Controlplane is the control-plane section's, if it ran.
	Controlplane *cpResult
	MTLS         *mtlsResult // the mTLS section's, if it ran
}

// summary is the median over rounds for one server and workload.
type summary struct {
	Server, Path string
	RPS          float64
	P50, P99     time.Duration
	CPUPerCheck  time.Duration
	Companions   []time.Duration // medians of measurement.Companions
}

// summarize takes the median of every figure over the rounds, per server and
// workload, for the workloads loads names, bare first.
func summarize(runs []measurement, loads []string) []summary {
	var out []summary
	for _, load := range loads {
		for _, srv := range []string{"bare", "gatehouse"} {
			var rps []float64
			var p50, p99, cpu []time.Duration
			var comp [][]time.Duration
			for _, r := range runs {
				if r.Server != srv || r.Path != load {
					continue
				}
				rps = append(rps, r.RPS)
				p50, p99, cpu = append(p50, r.P50), append(p99, r.P99), append(cpu, r.CPUPerCheck)
				for i, c := range r.Companions {
					if i == len(comp) {
						comp = append(comp, nil)
					}
					comp[i] = append(comp[i], c)
				}
			}
			if len(rps) == 0 {
				continue
			}
			s := summary{Server: srv, Path: load, RPS: median(rps), P50: median(p50), P99: median(p99), CPUPerCheck: median(cpu)}
			for _, c := range comp {
				s.Companions = append(s.Companions, median(c))
			}
			out = append(out, s)
		}
	}
	return out
}

// median of xs; the mean of the middle two when len(xs) is even.
func median[T float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// markdown renders the plugin section of the report: the part of BENCHMARKS.md
// between the bench:plugin markers.
func (r *report) markdown() string {
	var b strings.Builder
	b.WriteString(r.measured(""))
	if len(r.Runs) > 0 {
		r.writeLoad(&b)
	}
	if len(r.GoBench) > 0 {
		r.writeGoBench(&b)
	}
	return b.String()
}

// measured is the line that opens every section: when, where, with what.
func (r *report) measured(more string) string {
	m := r.Machine
	return fmt.Sprintf("Measured %s on %d CPUs (%s), %s, ghz %s%s, with `%s`.\n\n", r.Date, m.CPUs, m.CPUModel, m.GoVersion, r.GhzVersion, more, r.Command)
}

func (r *report) writeLoad(b *strings.Builder) {
	b.WriteString("**Goals.** Each ratio is gatehouse's figure over the bare server's in the same round; a goal is " +
		"judged on the median of the rounds, except the per-step cost under load, a difference of two ratios over the long chain's " +
		"further steps whose rounds scatter by about its 1 µs target: it is judged on the median's confidence interval (distribution-free, from the rounds' " +
		"order), met when the interval is within the target, not met when it is above, undecided otherwise.\n\n")
	writeGoals(b, r.goals())
	pin := fmt.Sprintf("Both servers run under `taskset -c %s` (so Go gives each GOMAXPROCS=1) and ghz under "+
		"`taskset -c %s`, so the load generator never takes the server's CPU", serverCPU, clientCPU)
	if !r.Pinned {
		pin = fmt.Sprintf("**Nothing is pinned: this machine has %d CPU(s), pinning needs two**, so ghz shares the "+
			"server's CPU and its own work hides part of the difference", r.Machine.CPUs)
	}
	fmt.Fprintf(b, "**Under load, pinned.** ghz → 127.0.0.1, one HTTP/2 connection, concurrency %d, %s per run, the bare server "+
		"and gatehouse loaded alternately (bare first in odd rounds), %d round(s); figures are medians over the rounds. "+
		"The request has ten headers and a %s deadline (Envoy's default ext_authz timeout); `x-required: alpha` is allowed, "+
		"`x-required: nope` denied with 403, and `chain3` and `%s` send the allowed request through AuthConfigs with three "+
		"and %d required_header steps (the bare server answers OK to all). %s. CPU-µs/Check counts the server process only "+
		"(/proc utime+stime over the run ÷ requests).\n\n", r.Concurrency, r.Duration, r.Rounds, envoyTimeout,
		longChainPath, longChainSteps, pin)
	writeOthers(b, r.Runs)
	writeSummary(b, summarize(r.Runs, pathNames()))
	writeEveryRun(b, r.Runs, "path", nil)
	if len(r.RateRuns) > 0 {
		fmt.Fprintf(b, "**Latency at a fixed rate.** ghz `--rps %d` (%.0f%% of the bare server's median pinned maximum "+
			"for allow), otherwise as above; latency at saturation is a queue, not a figure.\n\n", r.Rate, rateShare*100)
		writeSummary(b, summarize(r.RateRuns, []string{"allow"}))
		writeEveryRun(b, r.RateRuns, "path", nil)
	}
	if len(r.Unpinned) > 0 {
		b.WriteString("**Secondary: unpinned.** The same load with the servers and ghz free to run on every CPU, as the " +
			"figures before this method were taken. ghz's own CPU use then hides much of the difference between the " +
			"servers; these are not the figures the goals are judged on.\n\n")
		writeSummary(b, summarize(r.Unpinned, pathNames()))
	}
}

// writeSummary is the table of medians per server and workload.
func writeSummary(b *strings.Builder, sums []summary) {
	b.WriteString("| server | path | requests/s | p50 | p99 | CPU-µs/Check |\n|---|---|---:|---:|---:|---:|\n")
	for _, s := range sums {
		fmt.Fprintf(b, "| %s | %s | %.0f | %s | %s | %.1f |\n", s.Server, s.Path, s.RPS, ms(s.P50), ms(s.P99), micros(s.CPUPerCheck))
	}
	b.WriteString("\n")
}

// writeOthers says how busy the rest of the machine was, and how many calls failed.
func writeOthers(b *strings.Builder, runs []measurement) {
	var others []float64
	var failed int64
	for _, x := range runs {
		others = append(others, x.Others)
		failed += x.Errors
	}
	fmt.Fprintf(b, "Other processes used %.0f%% of the machine's CPU during the median run (%.0f%% at most); ",
		median(others)*100, slices.Max(others)*100)
	b.WriteString("they compete with both servers alike, and the ratios come from runs that alternate between them.")
	if failed > 0 {
		fmt.Fprintf(b, " **%d calls failed** (see every run); the figures count successful calls only.", failed)
	}
	b.WriteString("\n\n")
}

// writeEveryRun is the folded table of every run; load names the workload column and
// companions the measurement.Companions columns.
func writeEveryRun(b *strings.Builder, runs []measurement, load string, companions []string) {
	b.WriteString("<details><summary>Every run</summary>\n\n")
	fmt.Fprintf(b, "| round | server | %s | requests | requests/s | p50 | p99 | CPU-µs/Check |", load)
	for _, c := range companions {
		fmt.Fprintf(b, " %s CPU-µs/Check |", c)
	}
	b.WriteString(" failed | other processes' CPU |\n|---:|---|---|---:|---:|---:|---:|---:|")
	b.WriteString(strings.Repeat("---:|", len(companions)))
	b.WriteString("---:|---:|\n")
	for _, x := range runs {
		fmt.Fprintf(b, "| %d | %s | %s | %d | %.0f | %s | %s | %.1f |",
			x.Round, x.Server, x.Path, x.Count, x.RPS, ms(x.P50), ms(x.P99), micros(x.CPUPerCheck))
		for _, c := range x.Companions {
			fmt.Fprintf(b, " %.1f |", micros(c))
		}
		fmt.Fprintf(b, " %d | %.0f%% |\n", x.Errors, x.Others*100)
	}
	b.WriteString("\n</details>\n\n")
}

func (r *report) writeGoBench(b *strings.Builder) {
	fmt.Fprintf(b, "**In process.** `go test -run '^$' -bench . %s %s`, the median of the %d runs of each figure. The step is Go code with the "+
		"required_header plugin's logic (a test binary cannot reliably load a `.so`); `Check` is "+
		"Authorizer.Check with the registry, Prometheus counter and logger of the server, without gRPC. "+
		"*CPU/op* is the process's CPU time per op, garbage collection included (BenchmarkChain reports it); "+
		"BenchmarkChainStep runs the allow and chain3 chains in alternating batches of 2,000 and reports the median over the "+
		"pairs of what a further step costs (its ns/op is one pair).\n\n",
		goBenchFlags, strings.Join(goBenchPackages, " "), goBenchCount)
	b.WriteString("| package | benchmark | ns/op | CPU/op (ns) | B/op | allocs/op |\n|---|---|---:|---:|---:|---:|\n")
	for _, g := range r.GoBench {
		cpu := "–"
		switch {
		case g.StepCPUNs > 0: // its ns/op is one pair of batches
			cpu = fmt.Sprintf("a further step: %.0f", g.StepCPUNs)
		case g.CPUNsPerOp > 0:
			cpu = fmt.Sprintf("%.0f", g.CPUNsPerOp)
		}
		fmt.Fprintf(b, "| %s | %s | %.0f | %s | %d | %d |\n", g.Package, g.Name, g.NsPerOp, cpu, g.BytesPerOp, g.AllocsPerOp)
	}
}

// pair finds the bare and gatehouse summaries of path.
func pair(sums []summary, path string) (bare, gh summary, ok bool) {
	var nb, ng bool
	for _, s := range sums {
		switch {
		case s.Path != path:
		case s.Server == "bare":
			bare, nb = s, true
		case s.Server == "gatehouse":
			gh, ng = s, true
		}
	}
	return bare, gh, nb && ng
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
