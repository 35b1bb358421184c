package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

var controlplaneSection = section{name: "controlplane",
	heading: "## Control plane: 10k services through `gatehouse controlplane` to real ADS clients (`make bench`)\n\n"}

// Targets of issue 8.
const (
	cpReadyTarget      = 2 * time.Second
	cpP50Target        = 30 * time.Millisecond
	cpP99Target        = 100 * time.Millisecond
	cpRSSTarget        = 400 << 20
	extauthRSSTarget   = 200 << 20
	cpTargetScaleFloor = 10000 // the targets are for this many services
)

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func mb(b int64) string { return fmt.Sprintf("%.0f MB", float64(b)/(1<<20)) }

func msShort(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

// opTime is a benchmark's time per operation: in µs below a millisecond (an edit's
// translation takes tens of them), else as msShort.
func opTime(d time.Duration) string {
	if d < time.Millisecond {
		return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond))
	}
	return msShort(d)
}

// opBytes is a benchmark's memory allocated per operation: in KB below a megabyte,
// else in MB.
func opBytes(b float64) string {
	if b < 1<<20 {
		return fmt.Sprintf("%.0f KB", b/(1<<10))
	}
	return fmt.Sprintf("%.1f MB", b/(1<<20))
}

// controlplaneMarkdown is the generated part of the control-plane section.
func (r *report) controlplaneMarkdown() string {
	c := r.Controlplane
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %d CPUs (%s), %s, with `%s`.\n\n", r.Date, r.Machine.CPUs, r.Machine.CPUModel, r.Machine.GoVersion, r.Command)
	pin := "`gatehouse controlplane` runs under `taskset -c " + serverCPU + "` (so Go runs it with GOMAXPROCS=1) and this process, with its ADS clients and file edits, on CPU " + clientCPU
	if !c.Pinned {
		pin = "nothing is pinned (fewer than two CPUs)"
	}
	fmt.Fprintf(&b, "**How.** For each size n the bench writes n VirtualServices (two routes each: `/open-…` open, `/` secured by its AuthConfig), "+
		"n Upstreams and n AuthConfigs (one `required_header` step) as one YAML file each, plus the extauth Upstream, and starts "+
		"`gatehouse controlplane --resources DIR`; %s. As soon as its xDS port accepts, two delta ADS clients "+
		"(`controlplane/xds/xdsbench`) subscribe to everything, as role `extauth` and as `gatehouse-system~gateway-proxy`. "+
		"*Ready* is process start → the last resource of that role's first complete state received (n ExtAuthConfigs; n+1 clusters "+
		"and endpoints, the listener and the route configuration). The control plane is started %d times at each size, one after the other "+
		"(each stopped before the next): the first table gives the start whose time to both roles' first complete state is the median, "+
		"the second every start. The last start goes on: %d edits of each kind, one after the other: the file is rewritten "+
		"(temporary file renamed over it) and timed until the resource's new version arrives on the already-connected stream (AuthConfig → "+
		"its ExtAuthConfig, Upstream → its ClusterLoadAssignment, VirtualService → the route configuration). *Publish* is the "+
		"control plane's own mean time in `xds.Server.Publish` per edit (both roles, from its `gatehouse_xds_publish_seconds`); "+
		"*CPU* is the control plane's own CPU time (utime+stime from /proc) until ready or per edit, which does not depend on how busy "+
		"the machine is (a 10 ms clock tick: per edit, an average over the edits); *others* is the share of the machine used by processes "+
		"other than the control plane and the bench meanwhile, which stretches the wall-clock figures. RSS is "+
		"VmRSS from /proc; *binary's pages* is the part of it that maps files (RssFile: the 180 MB executable's pages the process "+
		"touched, shared with every process running it and dropped by the kernel first), *peak* the highest RSS until ready (VmHWM). Latencies are percentiles over the edits (nearest rank).\n\n", pin, c.Options.starts, c.Options.edits)

	b.WriteString("| services | ready: extauth | ready: proxy | control plane CPU until ready | others | RSS after start (binary's pages) | peak RSS until ready | RSS after the edits |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range c.Scales {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %.0f%% | %s (%s) | %s | %s |\n", s.N, msShort(s.ReadyExtauth), msShort(s.ReadyProxy),
			msShort(s.CPUReady), 100*s.OtherReady, mb(s.RSSReady), mb(s.FileReady), mb(s.PeakReady), mb(s.RSSEdited))
	}
	b.WriteString("\n<details><summary>Every start</summary>\n\n| services | start | ready: extauth | ready: proxy | control plane CPU until ready | others | peak RSS until ready |\n|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range c.Scales {
		for i, st := range s.Starts {
			fmt.Fprintf(&b, "| %d | %d | %s | %s | %s | %.0f%% | %s |\n", s.N, i+1, msShort(st.ReadyExtauth), msShort(st.ReadyProxy),
				msShort(st.CPUReady), 100*st.OtherReady, mb(st.PeakReady))
		}
	}
	b.WriteString("\n</details>\n")
	b.WriteString("\n| services | edit | edits | p50 | p99 | max | control plane CPU per edit | Publish per edit | others |\n|---:|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range c.Scales {
		for _, e := range s.Edits {
			l := e.Latencies
			fmt.Fprintf(&b, "| %d | %s | %d | %s | %s | %s | %s | %s | %.0f%% |\n", s.N, e.Kind, len(l),
				msShort(l.Percentile(50)), msShort(l.Percentile(99)), msShort(l.Percentile(100)), msShort(e.CPU), msShort(e.Publish), 100*e.OtherCPU)
		}
	}
	b.WriteString("\n")
	b.WriteString(c.targetsMarkdown())
	if ch := c.Churn; ch != nil {
		b.WriteString(ch.markdown(c.Scales[len(c.Scales)-1].N))
	}
	if ex := c.Extauth; ex != nil {
		fmt.Fprintf(&b, "**extauth.** `gatehouse extauth --xds` (on CPU %s, the `required_header` plugin built by the bench) served all %d ExtAuthConfigs "+
			"(Accepted at its `/auth-configs`) %s after it started; RSS then %s, %s five seconds later, of which Go heap in use %s.\n\n",
			clientCPU, ex.Configs, msShort(ex.Applied), mb(ex.RSS), mb(ex.RSSSettled), mb(ex.HeapInuse))
	}
	if len(c.GoBench) > 0 {
		b.WriteString(goBenchLinesMarkdown(c.GoBench))
	}
	return b.String()
}

// targetsMarkdown checks the largest size against the targets.
func (c *cpResult) targetsMarkdown() string {
	s := c.Scales[len(c.Scales)-1]
	var b strings.Builder
	note := ""
	if s.N < cpTargetScaleFloor {
		note = fmt.Sprintf(" (the targets are for %d services; this run's largest size is %d)", cpTargetScaleFloor, s.N)
	}
	fmt.Fprintf(&b, "Targets at %d services%s:\n\n", s.N, note)
	starts := make([]string, len(s.Starts))
	for i, st := range s.Starts {
		starts[i] = msShort(st.ready())
	}
	fmt.Fprintf(&b, "- process start → first complete state of both roles < 2 s: %s, the median of %d starts (%s) (%s)\n", msShort(s.ready()),
		len(s.Starts), strings.Join(starts, ", "), met(s.ready() < cpReadyTarget))
	for _, e := range s.Edits {
		p50, p99 := e.Latencies.Percentile(50), e.Latencies.Percentile(99)
		fmt.Fprintf(&b, "- %s edit → stream p50 < 30 ms: %s (%s); p99 < 100 ms: %s (%s)\n", e.Kind, msShort(p50), met(p50 < cpP50Target), msShort(p99), met(p99 < cpP99Target))
	}
	peak := s.Peak
	fmt.Fprintf(&b, "- control-plane RSS < 400 MB: peak %s over the whole run (VmHWM: start, edits, churn) (%s)\n", mb(peak), met(peak < cpRSSTarget))
	if c.Extauth != nil {
		ex := max(c.Extauth.RSS, c.Extauth.RSSSettled)
		fmt.Fprintf(&b, "- extauth RSS with every AuthConfig < 200 MB: %s (%s)\n", mb(ex), met(ex < extauthRSSTarget))
	}
	b.WriteString("\n")
	return b.String()
}

func (ch *churnResult) markdown(n int) string {
	var b strings.Builder
	rs := make([]int64, 0, len(ch.Samples))
	for _, m := range ch.Samples {
		rs = append(rs, m.RSS)
	}
	first, last := ch.Samples[0], ch.Samples[len(ch.Samples)-1]
	fmt.Fprintf(&b, "**Churn.** At %d services, %d edits (%d/s for %s, AuthConfig, Upstream and VirtualService in turn, not waiting for each): "+
		"RSS %s before, %s after, between %s and %s (Go heap in use %s before, %s after); the last edit of each kind was on the streams %s after the last write.\n\n",
		n, ch.Edits, ch.Rate, ch.Duration, mb(first.RSS), mb(last.RSS), mb(slices.Min(rs)), mb(slices.Max(rs)), mb(first.Heap), mb(last.Heap), msShort(ch.CaughtUp))
	b.WriteString("<details><summary>RSS and Go heap in use, every ten seconds</summary>\n\n| s | RSS | heap in use |\n|---:|---:|---:|\n")
	next := time.Duration(0)
	for i, m := range ch.Samples {
		if m.At >= next || i == len(ch.Samples)-1 {
			fmt.Fprintf(&b, "| %.0f | %s | %s |\n", m.At.Seconds(), mb(m.RSS), mb(m.Heap))
			next = m.At.Truncate(10*time.Second) + 10*time.Second
		}
	}
	b.WriteString("\n</details>\n\n")
	return b.String()
}

func goBenchLinesMarkdown(lines []goBenchLine) string {
	var b strings.Builder
	var cmds []string
	for _, r := range cpGoBenchRuns {
		cmds = append(cmds, fmt.Sprintf("`go test -run '^$' -bench '%s' -benchmem -benchtime %dx %s`", r.pattern, r.iterations, strings.Join(cpGoBenchPackages, " ")))
	}
	fmt.Fprintf(&b, "**In process.** %s (nothing pinned).\n\n", strings.Join(cmds, " and "))
	b.WriteString("| package | benchmark | time/op | memory/op | allocs/op | other |\n|---|---|---:|---:|---:|---|\n")
	for _, l := range lines {
		var other []string
		for _, unit := range slices.Sorted(maps.Keys(l.Metrics)) {
			if unit != "ns/op" && unit != "B/op" && unit != "allocs/op" {
				other = append(other, fmt.Sprintf("%g %s", l.Metrics[unit], unit))
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.0f | %s |\n", strings.TrimPrefix(l.Package, "gatehouse.dev/gatehouse/"), l.Name,
			opTime(time.Duration(l.Metrics["ns/op"])), opBytes(l.Metrics["B/op"]), l.Metrics["allocs/op"], strings.Join(other, ", "))
	}
	b.WriteString("\n")
	return b.String()
}
