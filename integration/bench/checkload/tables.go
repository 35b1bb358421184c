package checkload

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// Summary is the median over rounds of every figure for one server and workload.
type Summary struct {
	Server, Path string
	RPS          float64
	P50, P99     time.Duration
	CPUPerCheck  time.Duration
	Companions   []time.Duration // medians of Measurement.Companions
}

// Summarize takes the median of every figure over the rounds, per workload of loads
// and server of servers, in that order.
func Summarize(runs []Measurement, loads []string, servers ...string) []Summary {
	var out []Summary
	for _, load := range loads {
		for _, srv := range servers {
			var rps []float64
			var p50, p99, cpu []time.Duration
			var comp [][]time.Duration
			for _, r := range runs {
				if r.Server != srv || r.Path != load {
					continue
				}
				rps, p50, p99, cpu = append(rps, r.RPS), append(p50, r.P50), append(p99, r.P99), append(cpu, r.CPUPerCheck)
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
			s := Summary{Server: srv, Path: load, RPS: benchkit.Median(rps), P50: benchkit.Median(p50), P99: benchkit.Median(p99), CPUPerCheck: benchkit.Median(cpu)}
			for _, c := range comp {
				s.Companions = append(s.Companions, benchkit.Median(c))
			}
			out = append(out, s)
		}
	}
	return out
}

// Ratios is, for each round that loaded both servers with load, the figure of server
// over that of base, in round order.
func Ratios(runs []Measurement, load, server, base string, figure func(Measurement) float64) []float64 {
	return benchkit.InOrder(RatiosByRound(runs, load, server, base, figure))
}

// RatiosByRound is Ratios by round number.
func RatiosByRound(runs []Measurement, load, server, base string, figure func(Measurement) float64) map[int]float64 {
	of := slices.DeleteFunc(slices.Clone(runs), func(m Measurement) bool { return m.Path != load })
	return benchkit.RoundRatios(of, func(m Measurement) (int, string) { return m.Round, m.Server }, server, base, figure)
}

// CPU is a Measurement's CPU per Check, as a figure for Ratios.
func CPU(m Measurement) float64 { return float64(m.CPUPerCheck) }

// WriteSummary is the table of medians per server and workload, with the companions'
// CPU when there are any.
func WriteSummary(b *strings.Builder, sums []Summary, load string, companions []string) {
	fmt.Fprintf(b, "| server | %s | requests/s | p50 | p99 | CPU-µs/Check |", load)
	for _, c := range companions {
		fmt.Fprintf(b, " %s CPU-µs/Check |", c)
	}
	b.WriteString("\n|---|---|---:|---:|---:|---:|" + strings.Repeat("---:|", len(companions)) + "\n")
	for _, s := range sums {
		fmt.Fprintf(b, "| %s | %s | %.0f | %s | %s | %.1f |", s.Server, s.Path, s.RPS, benchkit.Ms(s.P50), benchkit.Ms(s.P99), benchkit.Micros(s.CPUPerCheck))
		for _, c := range s.Companions {
			fmt.Fprintf(b, " %.1f |", benchkit.Micros(c))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// WriteOthers says how busy the rest of the machine was, and how many calls failed.
func WriteOthers(b *strings.Builder, runs []Measurement) {
	var others []float64
	var failed int64
	for _, x := range runs {
		others = append(others, x.Others)
		failed += x.Errors
	}
	fmt.Fprintf(b, "Other processes used %.0f%% of the machine's CPU during the median run (%.0f%% at most); "+
		"they compete with both servers alike, and the ratios come from runs that alternate between them.",
		benchkit.Median(others)*100, slices.Max(others)*100)
	if failed > 0 {
		fmt.Fprintf(b, " **%d calls failed** (see every run); the figures count successful calls only.", failed)
	}
	b.WriteString("\n\n")
}

// WriteEveryRun is the folded table of every run, titled title; load names the workload
// column and companions the Measurement.Companions columns.
func WriteEveryRun(b *strings.Builder, title string, runs []Measurement, load string, companions []string) {
	fmt.Fprintf(b, "<details><summary>%s</summary>\n\n| round | server | %s | requests | requests/s | p50 | p99 | CPU-µs/Check |", title, load)
	for _, c := range companions {
		fmt.Fprintf(b, " %s CPU-µs/Check |", c)
	}
	b.WriteString(" failed | other processes' CPU |\n|---:|---|---|---:|---:|---:|---:|---:|" + strings.Repeat("---:|", len(companions)) + "---:|---:|\n")
	for _, x := range runs {
		fmt.Fprintf(b, "| %d | %s | %s | %d | %.0f | %s | %s | %.1f |", x.Round, x.Server, x.Path, x.Count, x.RPS, benchkit.Ms(x.P50), benchkit.Ms(x.P99), benchkit.Micros(x.CPUPerCheck))
		for _, c := range x.Companions {
			fmt.Fprintf(b, " %.1f |", benchkit.Micros(c))
		}
		fmt.Fprintf(b, " %d | %.0f%% |\n", x.Errors, x.Others*100)
	}
	b.WriteString("\n</details>\n\n")
}

// RatioCell is the median of per-round ratios, with every round's.
func RatioCell(rs []float64) string {
	if len(rs) == 0 {
		return "–"
	}
	each := make([]string, len(rs))
	for i, r := range rs {
		each[i] = fmt.Sprintf("%.2f", r)
	}
	return fmt.Sprintf("**%.2f×** (%s)", benchkit.Median(rs), strings.Join(each, ", "))
}
