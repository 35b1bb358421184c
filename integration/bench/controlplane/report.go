package controlplane

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// Section is where the section's text goes in BENCHMARKS.md.
var Section = benchkit.Section{Name: "controlplane", Heading: "## Control plane: 10k services through `gatehouse controlplane` to real ADS clients\n\n"}

// Targets of issue 8.
const (
	cpReadyTarget    = 2 * time.Second
	cpP50Target      = 30 * time.Millisecond
	cpP99Target      = 100 * time.Millisecond
	cpRSSTarget      = 400 << 20
	extauthRSSTarget = 200 << 20
)

// MB is b in whole megabytes.
func MB(b int64) string { return fmt.Sprintf("%.0f MB", benchkit.MiB(b)) }

// MsShort is d in milliseconds, with a decimal below ten.
func MsShort(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

// opTime is a benchmark's time per operation: in µs below a millisecond (an edit's
// translation takes tens of them), else as MsShort.
func opTime(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	}
	return MsShort(d)
}

// opBytes is a benchmark's memory allocated per operation: in KB below a megabyte,
// else in MB.
func opBytes(b float64) string {
	if b < 1<<20 {
		return fmt.Sprintf("%.0f KB", b/(1<<10))
	}
	return fmt.Sprintf("%.1f MB", b/(1<<20))
}

// markdown is the generated part of the section.
func (c *cpResult) markdown(measured string) string {
	var b strings.Builder
	b.WriteString(measured)
	benchkit.WriteGoals(&b, c.goals())
	pin := "`gatehouse controlplane` under `taskset -c " + benchkit.ServerCPU + "`, the bench's ADS clients and edits on CPU " + benchkit.ClientCPU
	if !c.Pinned {
		pin = "nothing pinned (fewer than two CPUs)"
	}
	fmt.Fprintf(&b, "%d starts per size, %d edits of each kind, %s.\n\n", c.Options.Starts, c.Options.Edits, pin)
	b.WriteString("| services | ready: extauth | ready: proxy | control plane CPU until ready | others | RSS after start (binary's pages) | peak RSS until ready | RSS after the edits |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range c.Scales {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %.0f%% | %s (%s) | %s | %s |\n", s.N, MsShort(s.ReadyExtauth), MsShort(s.ReadyProxy),
			MsShort(s.CPUReady), 100*s.OtherReady, MB(s.RSSReady), MB(s.FileReady), MB(s.PeakReady), MB(s.RSSEdited))
	}
	b.WriteString("\n")
	var st strings.Builder
	st.WriteString("| services | start | ready: extauth | ready: proxy | control plane CPU until ready | others | peak RSS until ready |\n|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range c.Scales {
		for i, one := range s.Starts {
			fmt.Fprintf(&st, "| %d | %d | %s | %s | %s | %.0f%% | %s |\n", s.N, i+1, MsShort(one.ReadyExtauth), MsShort(one.ReadyProxy),
				MsShort(one.CPUReady), 100*one.OtherReady, MB(one.PeakReady))
		}
	}
	benchkit.Fold(&b, "Every start", st.String())
	var e strings.Builder
	e.WriteString("| services | edit | edits | p50 | p99 | max | control plane CPU per edit | Publish per edit | others |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range c.Scales {
		for _, ed := range s.Edits {
			l := ed.Latencies
			fmt.Fprintf(&e, "| %d | %s | %d | %s | %s | %s | %s | %s | %.0f%% |\n", s.N, ed.Kind, len(l),
				MsShort(l.Percentile(50)), MsShort(l.Percentile(99)), MsShort(l.Percentile(100)), MsShort(ed.CPU), MsShort(ed.Publish), 100*ed.OtherCPU)
		}
	}
	benchkit.Fold(&b, "Edits of each kind, per size", e.String())
	if c.Churn != nil {
		c.Churn.writeMarkdown(&b, c.Scales[len(c.Scales)-1].N)
	}
	if ex := c.Extauth; ex != nil {
		fmt.Fprintf(&b, "**extauth.** `gatehouse extauth --xds` (on CPU %s, the `required_header` plugin built by the bench) served all %d ExtAuthConfigs "+
			"(Accepted at its `/auth-configs`) %s after it started; RSS then %s, %s five seconds later, of which Go heap in use %s.\n\n",
			benchkit.ClientCPU, ex.Configs, MsShort(ex.Applied), MB(ex.RSS), MB(ex.RSSSettled), MB(ex.HeapInuse))
	}
	if len(c.GoBench) > 0 {
		writeGoBench(&b, c.GoBench)
	}
	return b.String()
}

// goals check the largest size against issue 8's targets, which are for 10k services.
func (c *cpResult) goals() []benchkit.Goal {
	s := c.Scales[len(c.Scales)-1]
	at := fmt.Sprintf("control plane at %d services", s.N)
	starts := make([]float64, len(s.Starts))
	for i, st := range s.Starts {
		starts[i] = benchkit.Millis(st.Ready())
	}
	gs := []benchkit.Goal{{What: at + ": process start → first complete state of both roles, median of the starts",
		Target: benchkit.Millis(cpReadyTarget), Unit: "ms", Below: true, Rounds: starts}}
	for _, e := range s.Edits {
		gs = append(gs, benchkit.Latency(fmt.Sprintf("%s: %s edit → stream, p50", at, e.Kind), cpP50Target, e.Latencies, 50),
			benchkit.Latency(fmt.Sprintf("%s: %s edit → stream, p99", at, e.Kind), cpP99Target, e.Latencies, 99))
	}
	gs = append(gs, benchkit.Goal{What: at + ": its peak RSS over the whole run (VmHWM: start, edits, churn)",
		Target: benchkit.MiB(cpRSSTarget), Unit: "MB", Below: true, Rounds: []float64{benchkit.MiB(s.Peak)}})
	if c.Extauth != nil {
		gs = append(gs, benchkit.Goal{What: fmt.Sprintf("extauth RSS serving all %d AuthConfigs", c.Extauth.Configs),
			Target: benchkit.MiB(extauthRSSTarget), Unit: "MB", Below: true, Rounds: []float64{benchkit.MiB(max(c.Extauth.RSS, c.Extauth.RSSSettled))}})
	}
	return gs
}

// writeMarkdown writes the churn at n services to b: a paragraph, and its memory
// samples folded.
func (ch *churnResult) writeMarkdown(b *strings.Builder, n int) {
	rs := make([]int64, 0, len(ch.Samples))
	for _, m := range ch.Samples {
		rs = append(rs, m.RSS)
	}
	first, last := ch.Samples[0], ch.Samples[len(ch.Samples)-1]
	fmt.Fprintf(b, "**Churn.** At %d services, %d edits (%d/s for %s, AuthConfig, Upstream and VirtualService in turn, not waiting for each): "+
		"RSS %s before, %s after, between %s and %s (Go heap in use %s before, %s after); the last edit of each kind was on the streams %s after the last write.\n\n",
		n, ch.Edits, ch.Rate, ch.Duration, MB(first.RSS), MB(last.RSS), MB(slices.Min(rs)), MB(slices.Max(rs)), MB(first.Heap), MB(last.Heap), MsShort(ch.CaughtUp))
	var t strings.Builder
	t.WriteString("| s | RSS | heap in use |\n|---:|---:|---:|\n")
	next := time.Duration(0)
	for i, m := range ch.Samples {
		if m.At >= next || i == len(ch.Samples)-1 {
			fmt.Fprintf(&t, "| %.0f | %s | %s |\n", m.At.Seconds(), MB(m.RSS), MB(m.Heap))
			next = m.At.Truncate(10*time.Second) + 10*time.Second
		}
	}
	benchkit.Fold(b, "RSS and Go heap in use, every ten seconds", t.String())
}

// writeGoBench writes the in-process benchmarks' table to b, folded.
func writeGoBench(b *strings.Builder, lines []benchkit.GoBench) {
	var cmds []string
	for _, r := range cpGoBenchRuns {
		cmds = append(cmds, fmt.Sprintf("<code>go test -run '^$' -bench '%s' -benchmem -benchtime %dx %s</code>", r.pattern, r.iterations, strings.Join(cpGoBenchPackages, " ")))
	}
	var t strings.Builder
	t.WriteString("| package | benchmark | time/op | memory/op | allocs/op | other |\n|---|---|---:|---:|---:|---|\n")
	for _, l := range lines {
		var other []string
		for _, unit := range slices.Sorted(maps.Keys(l.Metrics)) {
			if unit != "ns/op" && unit != "B/op" && unit != "allocs/op" {
				other = append(other, fmt.Sprintf("%g %s", l.Metrics[unit], unit))
			}
		}
		fmt.Fprintf(&t, "| %s | %s | %s | %s | %.0f | %s |\n", strings.TrimPrefix(l.Package, "gatehouse.dev/gatehouse/"), l.Name,
			opTime(time.Duration(l.Metrics["ns/op"])), opBytes(l.Metrics["B/op"]), l.Metrics["allocs/op"], strings.Join(other, ", "))
	}
	benchkit.Fold(b, fmt.Sprintf("In process: %s (nothing pinned)", strings.Join(cmds, " and ")), t.String())
}
