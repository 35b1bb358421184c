package mtls

import (
	"fmt"
	"strings"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds/xdsbench"
	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
	"gatehouse.dev/gatehouse/integration/bench/controlplane"
)

// goals are the section's target: the control plane's start, mTLS over plain text,
// judged on the median's interval (one start differs from the next by more than the
// target, so a median of a few rounds can fall on either side of it by chance).
func (m *mtlsResult) goals() []benchkit.Goal {
	var gs []benchkit.Goal
	if rs := armRatios(m.Starts, readyOf); len(rs) > 0 {
		gs = append(gs, benchkit.Goal{What: fmt.Sprintf("control plane at %d services: process start → both roles' first complete state, mTLS ÷ plain", m.N),
			Target: mtlsStartTarget, Unit: "×", Rounds: rs, Interval: true})
	}
	return gs
}

// markdown is the generated part of the section.
func (m *mtlsResult) markdown(measured string, o Options) string {
	var b strings.Builder
	b.WriteString(measured)
	benchkit.WriteGoals(&b, m.goals())
	pin := fmt.Sprintf("the process under test under `taskset -c %s`, the bench's ADS clients and ghz on CPU %s", benchkit.ServerCPU, benchkit.ClientCPU)
	if !m.Pinned {
		pin = "**nothing pinned: this machine has one CPU**"
	}
	fmt.Fprintf(&b, "%d services and %d edits of each kind per control-plane round; ghz concurrency %d, %s per run, then %d req/s "+
		"(%.0f%% of plain text's median maximum); %s.\n\n", m.N, m.Edits, o.Concurrency, o.Duration, m.Rate, checkload.RateShare*100, pin)
	b.WriteString(m.controlplaneTable())
	b.WriteString(m.checkTable())
	return b.String()
}

// controlplaneTable is the control plane's figures per mode and their ratios, and
// every round folded.
func (m *mtlsResult) controlplaneTable() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Control plane, %d services, %d rounds.**\n\n", m.N, m.Rounds)
	b.WriteString("| mode | ready: both roles | control plane CPU until ready | AuthConfig edit p50 / p99 | VirtualService edit p50 / p99 |\n|---|---:|---:|---:|---:|\n")
	for _, mode := range []string{modePlain, modeMTLS} {
		var ready, cpu []time.Duration
		edits := make([]xdsbench.Latencies, len(mtlsKinds)) // pooled over the rounds
		for _, a := range m.Starts {
			if a.Mode != mode {
				continue
			}
			ready, cpu = append(ready, a.Ready()), append(cpu, a.CPUReady)
			for i, k := range mtlsKinds {
				edits[i] = append(edits[i], a.edit(k)...)
			}
		}
		if len(ready) == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s (median of rounds) | %s | %s |", mode, controlplane.MsShort(benchkit.Median(ready)), controlplane.MsShort(benchkit.Median(cpu)))
		for _, l := range edits {
			fmt.Fprintf(&b, " %s / %s |", controlplane.MsShort(l.Percentile(50)), controlplane.MsShort(l.Percentile(99)))
		}
		b.WriteString("\n")
	}
	cpuOf := func(a cpArm) float64 { return float64(a.CPUReady) }
	fmt.Fprintf(&b, "| mTLS ÷ plain, median of per-round ratios | %s | %s |", checkload.RatioCell(armRatios(m.Starts, readyOf)), checkload.RatioCell(armRatios(m.Starts, cpuOf)))
	for _, k := range mtlsKinds {
		fmt.Fprintf(&b, " p99 %s |", checkload.RatioCell(armRatios(m.Starts, editP99(k))))
	}
	b.WriteString("\n\n<details><summary>Every round</summary>\n\n| round | mode | ready: extauth | ready: proxy | control plane CPU until ready | others | AuthConfig p99 | VirtualService p99 |\n|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, a := range m.Starts {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %.0f%% |", a.Round, a.Mode, controlplane.MsShort(a.ReadyExtauth), controlplane.MsShort(a.ReadyProxy), controlplane.MsShort(a.CPUReady), 100*a.OtherReady)
		for _, k := range mtlsKinds {
			fmt.Fprintf(&b, " %s |", controlplane.MsShort(time.Duration(editP99(k)(a))))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n</details>\n\n")
	return b.String()
}

// checkTable is the Check's figures per mode, their ratios, and every run folded.
func (m *mtlsResult) checkTable() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Check, %d rounds.** ", m.Rounds)
	checkload.WriteOthers(&b, append(append([]checkload.Measurement(nil), m.Checks...), m.RateChecks...))
	b.WriteString("| mode | full speed: requests/s | CPU-µs/Check | p50 | p99 | at rate: p50 | p99 | CPU-µs/Check |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	full := checkload.Summarize(m.Checks, []string{"allow"}, modePlain, modeMTLS)
	rate := checkload.Summarize(m.RateChecks, []string{"allow"}, modePlain, modeMTLS)
	for i, f := range full {
		fmt.Fprintf(&b, "| %s (median of rounds) | %.0f | %.1f | %s | %s |", f.Server, f.RPS, benchkit.Micros(f.CPUPerCheck), benchkit.Ms(f.P50), benchkit.Ms(f.P99))
		if len(rate) == 2 {
			x := rate[i]
			fmt.Fprintf(&b, " %s | %s | %.1f |\n", benchkit.Ms(x.P50), benchkit.Ms(x.P99), benchkit.Micros(x.CPUPerCheck))
		} else {
			b.WriteString(" – | – | – |\n")
		}
	}
	ratios := func(runs []checkload.Measurement, figure func(checkload.Measurement) float64) string {
		return checkload.RatioCell(checkload.Ratios(runs, "allow", modeMTLS, modePlain, figure))
	}
	rps := func(x checkload.Measurement) float64 { return x.RPS }
	cpu := func(x checkload.Measurement) float64 { return float64(x.CPUPerCheck) }
	p50 := func(x checkload.Measurement) float64 { return float64(x.P50) }
	p99 := func(x checkload.Measurement) float64 { return float64(x.P99) }
	fmt.Fprintf(&b, "| mTLS ÷ plain, median of per-round ratios | %s | %s | %s | %s | %s | %s | %s |\n\n",
		ratios(m.Checks, rps), ratios(m.Checks, cpu), ratios(m.Checks, p50), ratios(m.Checks, p99),
		ratios(m.RateChecks, p50), ratios(m.RateChecks, p99), ratios(m.RateChecks, cpu))
	checkload.WriteEveryRun(&b, "Every Check run at full speed", m.Checks, "path", nil)
	if len(m.RateChecks) > 0 {
		checkload.WriteEveryRun(&b, fmt.Sprintf("Every Check run at %d req/s", m.Rate), m.RateChecks, "path", nil)
	}
	return b.String()
}
