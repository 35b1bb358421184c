package observe

import (
	"fmt"
	"strings"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
)

// checkCPUTarget is the plugin section's Check path goal (issue 13), which tracing off
// must keep: CPU per allowed Check through the one-step chain, gatehouse ÷ bare.
const checkCPUTarget = 1.15

// goals are the section's targets: tracing off within the Check path goal. The cost
// of tracing and of decision logs is reported, not judged.
func (r *result) goals() []benchkit.Goal {
	var gs []benchkit.Goal
	if rs := checkload.Ratios(r.Runs, "allow", serverOff, serverBare, checkload.CPU); len(rs) > 0 {
		gs = append(gs, benchkit.Goal{What: "tracing and decision logs off: allow, CPU per Check, gatehouse ÷ bare",
			Target: checkCPUTarget, Unit: "×", Rounds: rs})
	}
	return gs
}

// extraMicros is, per round, the CPU-µs per Check server costs beyond the off server.
func extraMicros(runs []checkload.Measurement, server string) []float64 {
	off := map[int]float64{}
	for _, m := range runs {
		if m.Server == serverOff {
			off[m.Round] = benchkit.Micros(m.CPUPerCheck)
		}
	}
	var out []float64
	for _, m := range runs {
		if base, ok := off[m.Round]; ok && m.Server == server {
			out = append(out, benchkit.Micros(m.CPUPerCheck)-base)
		}
	}
	return out
}

// markdown is the generated part of the section.
func (r *result) markdown(measured string, o Options) string {
	var b strings.Builder
	b.WriteString(measured)
	benchkit.WriteGoals(&b, r.goals())
	pin := fmt.Sprintf("the servers under `taskset -c %s`, ghz and the OTLP receiver on CPU %s", benchkit.ServerCPU, benchkit.ClientCPU)
	if !r.Pinned {
		pin = "**nothing pinned: this machine has one CPU**"
	}
	fmt.Fprintf(&b, "%d rounds, each loading bare, off, traced and logged in turn (the order reversed in even rounds); ghz concurrency %d, "+
		"%s per run; %s. Load average (1, 5, 15 min) %s at the start, %s at the end. ", r.Rounds, o.Concurrency, o.Duration, pin, r.LoadAvg[0], r.LoadAvg[1])
	checkload.WriteOthers(&b, r.Runs)
	sums := checkload.Summarize(r.Runs, []string{"allow"}, serverBare, serverOff, serverTraced, serverLogged)
	var servers strings.Builder
	checkload.WriteSummary(&servers, sums, "load", nil)
	benchkit.Fold(&b, "Each server, medians of the rounds", servers.String())
	b.WriteString("| configuration | CPU per Check ÷ off, median of per-round ratios | CPU-µs per Check beyond off, median of rounds |\n|---|---:|---:|\n")
	fmt.Fprintf(&b, "| off ÷ bare (the goal above) | %s | – |\n", checkload.RatioCell(checkload.Ratios(r.Runs, "allow", serverOff, serverBare, checkload.CPU)))
	for _, s := range []struct{ name, what string }{
		{serverTraced, fmt.Sprintf("tracing on, %.0f %% of Checks exported over OTLP", traceRatio*100)},
		{serverLogged, "decision logs on, every Check written"},
	} {
		cell := "–"
		if extra := extraMicros(r.Runs, s.name); len(extra) > 0 {
			cell = fmt.Sprintf("%.2f", benchkit.Median(extra))
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", s.what, checkload.RatioCell(checkload.Ratios(r.Runs, "allow", s.name, serverOff, checkload.CPU)), cell)
	}
	fmt.Fprintf(&b, "\nThe receiver got %d extauth.Check spans (%.2f %% of the traced server's %d measured Checks; its warm-ups count too); "+
		"the logged server wrote %d decision records.\n\n", r.Spans, 100*float64(r.Spans)/float64(max(r.Checks, 1)), r.Checks, r.Records)
	checkload.WriteEveryRun(&b, "Every run", r.Runs, "load", nil)
	return b.String()
}
