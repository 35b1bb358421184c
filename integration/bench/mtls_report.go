package main

import (
	"fmt"
	"strings"
	"time"
)

// mtlsMarkdown is the generated part of the mTLS section.
func (r *report) mtlsMarkdown() string {
	m := r.MTLS
	var b strings.Builder
	b.WriteString(r.measured(""))
	pin := fmt.Sprintf("The process under test runs under `taskset -c %s` (GOMAXPROCS=1), the bench's ADS clients and ghz on CPU %s", serverCPU, clientCPU)
	if !m.Pinned {
		pin = fmt.Sprintf("**Nothing is pinned: this machine has %d CPU(s), pinning needs two**", r.Machine.CPUs)
	}
	fmt.Fprintf(&b, "**How.** Certificates from `mtls.Generate` (trust domain cluster.local, one gateway proxy). %s. Every round runs both modes, "+
		"plain text first in odd rounds; a ratio is mTLS's figure over plain text's in the same round. The goal is judged on the confidence interval "+
		"of the median of the rounds' ratios (distribution-free, as the plugin section's per-step cost): met when it is within the target, not met "+
		"when it is above, undecided otherwise.\n\n"+
		"- *Control plane*: %d services as in the controlplane section, `gatehouse controlplane` plain or with `--xds-tls-dir`, started and "+
		"timed to both roles' first complete state, then %d edits each of AuthConfig and VirtualService timed to the stream, then stopped. "+
		"The two xdsbench ADS clients dial plain text, or `mtls.ClientCredentials` with the role's own certificate (extauth's for role "+
		"extauth, the proxy's for the proxy role), as extauth and the gateway do. Edit p50/p99 pool the edits of every round.\n"+
		"- *Check*: `gatehouse extauth` with the plugin section's AuthConfigs, plain or with `--tls-dir`, both running throughout; ghz "+
		"(concurrency %d, one HTTP/2 connection, %s per run; `--cacert/--cert/--key` with the gateway proxy's certificate for mTLS) sends the "+
		"allowed Check through the one-step chain, at full speed for CPU per Check (/proc utime+stime of the server ÷ requests), then at %d req/s "+
		"(%.0f%% of plain text's median maximum) for latency.\n\n",
		pin, m.N, m.Edits, r.Concurrency, r.Duration, m.Rate, rateShare*100)
	writeGoals(&b, m.goals())
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
		arms := armsOf(m.Starts, mode)
		var ready, cpu []time.Duration
		for _, a := range arms {
			ready, cpu = append(ready, a.ready()), append(cpu, a.CPUReady)
		}
		if len(arms) == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s (median of rounds) | %s | %s |", mode, msShort(median(ready)), msShort(median(cpu)))
		for _, k := range mtlsKinds {
			l := editLatencies(m.Starts, mode, k)
			fmt.Fprintf(&b, " %s / %s |", msShort(l.Percentile(50)), msShort(l.Percentile(99)))
		}
		b.WriteString("\n")
	}
	cpuOf := func(a cpArm) float64 { return float64(a.CPUReady) }
	fmt.Fprintf(&b, "| mTLS ÷ plain, median of per-round ratios | %s | %s |", ratioCell(armRatios(m.Starts, readyOf)), ratioCell(armRatios(m.Starts, cpuOf)))
	for _, k := range mtlsKinds {
		fmt.Fprintf(&b, " p99 %s |", ratioCell(armRatios(m.Starts, editP99(k))))
	}
	b.WriteString("\n\n<details><summary>Every round</summary>\n\n| round | mode | ready: extauth | ready: proxy | control plane CPU until ready | others | AuthConfig p99 | VirtualService p99 |\n|---:|---|---:|---:|---:|---:|---:|---:|\n")
	for _, a := range m.Starts {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %.0f%% |", a.Round, a.Mode, msShort(a.ReadyExtauth), msShort(a.ReadyProxy), msShort(a.CPUReady), 100*a.OtherReady)
		for _, k := range mtlsKinds {
			fmt.Fprintf(&b, " %s |", msShort(time.Duration(editP99(k)(a))))
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
	writeOthers(&b, append(append([]measurement(nil), m.Checks...), m.RateChecks...))
	b.WriteString("| mode | full speed: requests/s | CPU-µs/Check | p50 | p99 | at rate: p50 | p99 | CPU-µs/Check |\n|---|---:|---:|---:|---:|---:|---:|---:|\n")
	full, rate := summarizeModes(m.Checks), summarizeModes(m.RateChecks)
	for i, f := range full {
		fmt.Fprintf(&b, "| %s (median of rounds) | %.0f | %.1f | %s | %s |", f.Server, f.RPS, micros(f.CPUPerCheck), ms(f.P50), ms(f.P99))
		if len(rate) == 2 {
			x := rate[i]
			fmt.Fprintf(&b, " %s | %s | %.1f |\n", ms(x.P50), ms(x.P99), micros(x.CPUPerCheck))
		} else {
			b.WriteString(" – | – | – |\n")
		}
	}
	ratios := func(runs []measurement, figure func(measurement) float64) string {
		return ratioCell(serverRatios(runs, "allow", modeMTLS, modePlain, figure))
	}
	rps := func(x measurement) float64 { return x.RPS }
	cpu := func(x measurement) float64 { return float64(x.CPUPerCheck) }
	p50 := func(x measurement) float64 { return float64(x.P50) }
	p99 := func(x measurement) float64 { return float64(x.P99) }
	fmt.Fprintf(&b, "| mTLS ÷ plain, median of per-round ratios | %s | %s | %s | %s | %s | %s | %s |\n\n",
		ratios(m.Checks, rps), ratios(m.Checks, cpu), ratios(m.Checks, p50), ratios(m.Checks, p99),
		ratios(m.RateChecks, p50), ratios(m.RateChecks, p99), ratios(m.RateChecks, cpu))
	writeEveryRun(&b, m.Checks, "path", nil)
	if len(m.RateChecks) > 0 {
		fmt.Fprintf(&b, "At %d req/s:\n\n", m.Rate)
		writeEveryRun(&b, m.RateChecks, "path", nil)
	}
	return b.String()
}

// summarizeModes is the medians over rounds of the plain and the mTLS server's runs,
// in that order; nil when runs lack either.
func summarizeModes(runs []measurement) []summary {
	var out []summary
	for _, mode := range []string{modePlain, modeMTLS} {
		var rps []float64
		var p50, p99, cpu []time.Duration
		for _, x := range runs {
			if x.Server == mode {
				rps, p50, p99, cpu = append(rps, x.RPS), append(p50, x.P50), append(p99, x.P99), append(cpu, x.CPUPerCheck)
			}
		}
		if len(rps) == 0 {
			return nil
		}
		out = append(out, summary{Server: mode, Path: "allow", RPS: median(rps), P50: median(p50), P99: median(p99), CPUPerCheck: median(cpu)})
	}
	return out
}

// ratioCell is the median of per-round ratios, with every round's.
func ratioCell(rs []float64) string {
	if len(rs) == 0 {
		return "–"
	}
	each := make([]string, len(rs))
	for i, r := range rs {
		each[i] = fmt.Sprintf("%.2f", r)
	}
	return fmt.Sprintf("**%.2f×** (%s)", median(rs), strings.Join(each, ", "))
}
