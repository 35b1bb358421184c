package fanout

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// goals are the section's targets, judged with the largest fleet.
func (r *result) goals() []benchkit.Goal {
	if len(r.Fleets) == 0 {
		return nil
	}
	big := r.Fleets[len(r.Fleets)-1]
	n := big.Clients
	var gs []benchkit.Goal
	for _, s := range big.Edits {
		switch s.Kind {
		case "AuthConfig":
			gs = append(gs, benchkit.Latency(fmt.Sprintf("an AuthConfig edit to all %d extauth replicas, p99", n-n/2), 100*time.Millisecond, s.Last, 99))
		case "Upstream":
			gs = append(gs, benchkit.Latency(fmt.Sprintf("an Upstream edit to all %d proxies, p99", n/2), 100*time.Millisecond, s.Last, 99))
		case "VirtualService":
			gs = append(gs, benchkit.Latency(fmt.Sprintf("a VirtualService edit to all %d proxies, p99", n/2), 500*time.Millisecond, s.Last, 99))
		case routesUndecoded:
			gs = append(gs, benchkit.Latency(fmt.Sprintf("a VirtualService edit to all %d proxies not decoding it, p99", n/2), 500*time.Millisecond, s.Last, 99))
		case routesVHDS:
			gs = append(gs, benchkit.Latency(fmt.Sprintf("a VirtualService edit over VHDS to all %d proxies, p99", n/2), 500*time.Millisecond, s.Last, 99))
		}
	}
	if len(r.Storms) > 0 {
		var all []time.Duration
		partial := 0
		for _, s := range r.Storms {
			all = append(all, s.Complete...)
			partial += s.Partial
		}
		gs = append(gs,
			benchkit.Latency(fmt.Sprintf("reconnect storm: restart → each of %d clients complete, p99", n), 5000*time.Millisecond, all, 99),
			benchkit.Goal{What: "reconnect storm: clients with an empty or partial first state", Target: 0, Unit: "clients", Rounds: []float64{float64(partial)}})
	}
	gs = append(gs, benchkit.Goal{What: fmt.Sprintf("control-plane RSS with %d clients", n), Target: 600, Unit: "MB", Below: true, Rounds: []float64{benchkit.MiB(big.RSS)}})
	if slope, ok := r.slope(func(f fleetResult) int64 { return f.Heap }); ok {
		gs = append(gs, benchkit.Goal{What: "live heap per further client (slope from 50 clients up)", Target: 200, Unit: "KB", Below: true, Rounds: []float64{slope / 1024}})
	}
	if c := r.Churn; c != nil && c.Heap[0] > 0 {
		growth := 100 * float64(c.Heap[1]-c.Heap[0]) / float64(c.Heap[0])
		gs = append(gs, benchkit.Goal{What: fmt.Sprintf("live heap growth over %s of 10 edits/s", c.Duration), Target: 10, Unit: "%", Below: true, Rounds: []float64{growth}})
	}
	if r.Stalled != nil {
		gs = append(gs, benchkit.Goal{What: "a client that stops reading: streams dropped", Target: 1, Unit: "streams", Rounds: []float64{r.Stalled.DropsMetric}})
	}
	return gs
}

// slope is the control plane's memory (of says which) per client between the fleet of 50
// (or the smallest above it) and the largest.
func (r *result) slope(of func(fleetResult) int64) (float64, bool) {
	i := slices.IndexFunc(r.Fleets, func(f fleetResult) bool { return f.Clients >= 50 })
	last := len(r.Fleets) - 1
	if i < 0 || i == last {
		return 0, false
	}
	a, b := r.Fleets[i], r.Fleets[last]
	return float64(of(b)-of(a)) / float64(b.Clients-a.Clients), true
}

func (r *result) markdown(measured string) string {
	var b strings.Builder
	b.WriteString(measured)
	o := r.Options
	fmt.Fprintf(&b, "`gatehouse controlplane` on %d VirtualServices, Upstreams and AuthConfigs (one file each), pinned to CPU %s; the clients run in the bench process on CPU %s (pinned: %t), so they share one core: every time below includes %d clients decoding what they receive. Half the clients are gateway proxies (clusters and listeners by wildcard, endpoints and route configurations by name, as Envoy subscribes over ADS), half extauth replicas (every ExtAuthConfig); each is its own delta ADS stream and connection over loopback, decodes every resource into its message, acknowledges it, and reconnects with its real client's backoff and jitter. Load average at the start: %s.\n\n",
		o.Resources, benchkit.ServerCPU, benchkit.ClientCPU, r.Pinned, o.Clients[len(o.Clients)-1], r.Load)
	benchkit.WriteGoals(&b, r.goals())
	b.WriteString("How each figure grows with the fleet (edit: from writing the file to the last client of the role holding the new version; bytes: resource bytes all clients received per edit; CPU: the control plane's per edit):\n\n")
	b.WriteString("| clients | ready | RSS | live heap | AuthConfig p50 / p99 | Upstream p50 / p99 | VirtualService p50 / p99 | the same, proxies not decoding | the same over VHDS | VirtualService bytes / edit (VHDS) | CPU / edit (AC, Up, VS, VS, VHDS) | load average |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, f := range r.Fleets {
		cells := map[string]string{}
		var cpu []string
		var vsBytes int64
		vhdsBytes := ""
		for _, s := range f.Edits {
			cells[s.Kind] = fmt.Sprintf("%s / %s", benchkit.Ms(benchkit.Percentile(s.Last, 50)), benchkit.Ms(benchkit.Percentile(s.Last, 99)))
			cpu = append(cpu, fmt.Sprintf("%.0f", benchkit.Millis(s.CPU)))
			switch s.Kind {
			case "VirtualService":
				vsBytes = benchkit.Median(s.Bytes)
			case routesVHDS:
				vhdsBytes = fmt.Sprintf(" (%.0f KB)", float64(benchkit.Median(s.Bytes))/1024)
			}
		}
		fmt.Fprintf(&b, "| %d | %s | %.0f MB | %.0f MB | %s | %s | %s | %s | %s | %.1f MB%s | %s ms | %s |\n", f.Clients, f.Ready.Round(time.Millisecond), benchkit.MiB(f.RSS), benchkit.MiB(f.Heap),
			cells["AuthConfig"], cells["Upstream"], cells["VirtualService"], cells[routesUndecoded], cells[routesVHDS], benchkit.MiB(vsBytes), vhdsBytes, strings.Join(cpu, ", "), f.Load)
	}
	b.WriteString("\n")
	if h, ok := r.slope(func(f fleetResult) int64 { return f.Heap }); ok {
		rss, _ := r.slope(func(f fleetResult) int64 { return f.RSS })
		fmt.Fprintf(&b, "Each further client, from %d clients up: %.0f KB of live heap, %.0f KB of RSS (RSS also holds garbage a connecting client leaves, not yet returned to the system).\n\n", r.Fleets[slices.IndexFunc(r.Fleets, func(f fleetResult) bool { return f.Clients >= 50 })].Clients, h/1024, rss/1024)
	}
	var memory strings.Builder
	if c := r.Churn; c != nil && len(c.RSS) > 0 {
		fmt.Fprintf(&memory, "Memory under %d edits in %s (10 a second, kinds in turn, %d clients): live heap %.0f MB before, %.0f MB after; RSS first %.0f MB, highest %.0f MB, last %.0f MB (load average %s).\n\n",
			c.Edits, c.Duration, r.Fleets[len(r.Fleets)-1].Clients, benchkit.MiB(c.Heap[0]), benchkit.MiB(c.Heap[1]), benchkit.MiB(c.RSS[0]), benchkit.MiB(slices.Max(c.RSS)), benchkit.MiB(c.RSS[len(c.RSS)-1]), c.Load)
	}
	if s := r.Stalled; s != nil {
		fmt.Fprintf(&memory, "A proxy that stops reading (`--xds-stall-timeout %s`): 5 VirtualService edits reached every other proxy in p50 %s, max %s while it stalled; RSS %.0f MB before, %.0f MB after those edits; its stream was dropped %s after it stalled; `gatehouse_xds_dropped_streams_total` %.0f (load average %s).\n\n",
			s.Limit, benchkit.Ms(benchkit.Percentile(s.Others, 50)), benchkit.Ms(benchkit.Percentile(s.Others, 100)), benchkit.MiB(s.RSSBefore), benchkit.MiB(s.RSSStalled), s.Dropped.Round(100*time.Millisecond), s.DropsMetric, s.Load)
	}
	if memory.Len() > 0 {
		benchkit.Fold(&b, "Memory under edits, and a proxy that stops reading", memory.String())
	}
	var storms strings.Builder
	for i, s := range r.Storms {
		fmt.Fprintf(&storms, "Reconnect storm %d: SIGKILL, restart at once, %d clients back to their complete state: first %s (the control plane's start to its first publish, about), p50 %s, p99 %s, max %s; %d with an empty or partial first state (load average %s).\n\n",
			i+1, s.Clients, benchkit.Ms(slices.Min(s.Complete)), benchkit.Ms(benchkit.Percentile(s.Complete, 50)), benchkit.Ms(benchkit.Percentile(s.Complete, 99)), benchkit.Ms(benchkit.Percentile(s.Complete, 100)), s.Partial, s.Load)
	}
	if len(r.Storms) > 0 {
		benchkit.Fold(&b, "Every reconnect storm", storms.String())
	}
	return b.String()
}
