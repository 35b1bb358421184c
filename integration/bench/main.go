// Command bench is `make bench`: it measures gatehouse section by section and, with
// -write, puts each section's text in BENCHMARKS.md between its bench:NAME markers,
// stores its goals in integration/bench/results/NAME.json and rebuilds from those
// files the goal table BENCHMARKS.md opens with. Every process it starts is stopped
// by pid. Sections: plugin, oidc, pluginload, devloop, controlplane, mtls, observe,
// churn, fanout (see BENCHMARKS.md for what each measures).
//
//	go run ./integration/bench                                  # every section
//	go run ./integration/bench -only devloop -devloop-rounds 5  # one section
//	go run ./integration/bench -table -write                    # BENCHMARKS.md from the stored results
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/churn"
)

func main() {
	var o options
	p := &o.plugin
	flag.DurationVar(&p.Duration, "duration", 6*time.Second, "length of each ghz run")
	flag.IntVar(&p.Concurrency, "concurrency", 50, "ghz concurrency")
	flag.IntVar(&p.Rounds, "rounds", 5, "rounds of the plugin and OIDC sections' loads; the report gives medians of per-round ratios")
	flag.IntVar(&p.RateRounds, "rate-rounds", 3, "rounds of allow at a fixed rate (70% of the bare maximum) for latency; 0 skips them")
	flag.IntVar(&p.UnpinnedRounds, "unpinned-rounds", 1, "rounds with nothing pinned, for the secondary table; 0 skips them")
	flag.StringVar(&p.Profile, "profile", "", "write a CPU profile of gatehouse under allow load to this file")
	flag.BoolVar(&p.GoBench, "gobench", true, "run the sections' in-process Go benchmarks")
	flag.BoolVar(&o.pluginSection, "plugin", true, "the plugin section: gatehouse and the bare server under ghz")
	flag.BoolVar(&o.oidc, "oidc", true, "the OIDC section: Checks with a valid session (needs `make deps`)")
	flag.StringVar(&o.oidcProfile, "oidc-profile", "", "write a CPU profile of gatehouse under cookie-session load to this file")
	flag.IntVar(&o.swaps, "swaps", 20, "the pluginload section: plugin versions timed from appearing to serving; 0 skips it")
	flag.IntVar(&o.devRounds, "devloop-rounds", 20, "the devloop section: saves timed per module with gatehouse dev --plugin-module; 0 skips it")
	flag.BoolVar(&o.cp, "controlplane", true, "the controlplane section: gatehouse controlplane with real ADS clients")
	flag.StringVar(&o.cpSizes, "cp-sizes", "1000,10000", "numbers of services, one run each; the largest also gets the churn, extauth and the mtls section")
	flag.IntVar(&o.cpo.Starts, "cp-starts", 3, "starts of the control plane timed per size (the median is judged)")
	flag.IntVar(&o.cpo.Edits, "cp-edits", 100, "edits of each kind timed per size, and per mtls round")
	flag.DurationVar(&o.cpo.Churn, "cp-churn", time.Minute, "how long the churn of edits runs at the largest size; 0 skips it")
	flag.IntVar(&o.cpo.ChurnRate, "cp-churn-rate", 10, "edits per second during the churn")
	flag.StringVar(&o.cpo.ExtauthHeap, "cp-extauth-heap", "", "write the heap profile of `gatehouse extauth --xds` serving every AuthConfig to this file")
	flag.BoolVar(&o.doMTLS, "mtls", true, "the mtls section: plain text against mutual TLS, control plane and Check")
	flag.IntVar(&o.mtlsRounds, "mtls-rounds", 5, "rounds of the mtls section, each running both modes")
	flag.BoolVar(&o.observe, "observe", true, "the observe section: Checks with tracing off, tracing at 1 % and decision logs on")
	flag.IntVar(&o.observeRounds, "observe-rounds", 5, "rounds of the observe section, each loading all four servers")
	o.churn = churn.Defaults()
	c := &o.churn
	flag.BoolVar(&o.doChurn, "churn", true, "the churn section: changes, a plugin swap, a control-plane SIGKILL and extauth restarts under traffic through the gateway, every answer judged")
	flag.IntVar(&c.Routes, "churn-routes", c.Routes, "routes loaded before the churn (half secured)")
	flag.DurationVar(&c.Duration, "churn-duration", c.Duration, "how long the churn runs")
	flag.IntVar(&c.Rate, "churn-rate", c.Rate, "steady requests a second through the gateway")
	flag.IntVar(&c.New, "churn-new", c.New, "new secured routes during the churn")
	flag.IntVar(&c.Edits, "churn-edits", c.Edits, "AuthConfig edits during the churn")
	flag.IntVar(&c.Deletes, "churn-deletes", c.Deletes, "route removals during the churn")
	flag.BoolVar(&c.Pin, "churn-pin", c.Pin, "run the churn's servers on CPU 1 and its load on CPU 0")
	flag.BoolVar(&c.VHDS, "churn-vhds", c.VHDS, "the churn's gateway gets each route's virtual host over VHDS (Settings spec.virtualHostDiscovery)")
	flag.StringVar(&c.ProfileDir, "churn-profile", "", "write CPU profiles of the churn's servers over its calm first fifth into this folder (go tool pprof)")
	flag.BoolVar(&o.fanout, "fanout", true, "the fanout section: one control plane feeding fleets of simulated proxies and extauth replicas")
	flag.StringVar(&o.fanoutClients, "fanout-clients", "10,50,200", "fanout fleet sizes (half proxies, half extauth replicas), ascending")
	flag.IntVar(&o.fo.Resources, "fanout-resources", 10000, "fanout: VirtualServices, Upstreams and AuthConfigs each")
	flag.IntVar(&o.fo.Edits, "fanout-edits", 30, "fanout: AuthConfig and Upstream edits timed per fleet size")
	flag.IntVar(&o.fo.RouteEdits, "fanout-route-edits", 8, "fanout: VirtualService edits timed per fleet size (each sends the whole route configuration to every proxy)")
	flag.DurationVar(&o.fo.Churn, "fanout-churn", time.Minute, "fanout: edits at 10/s with the largest fleet, for memory; 0 skips it")
	flag.IntVar(&o.fo.Storms, "fanout-storms", 3, "fanout: SIGKILL and restart with the largest fleet")
	flag.StringVar(&o.fo.StormProfile, "fanout-storm-profile", "", "fanout: write a CPU profile of the control plane over 10 s of each reconnect storm to this file")
	flag.DurationVar(&o.fo.Stall, "fanout-stall-timeout", time.Minute, "fanout: the control plane's --xds-stall-timeout")
	flag.StringVar(&o.only, "only", "", "run only these sections, comma-separated (plugin,oidc,pluginload,devloop,controlplane,mtls,observe,churn,fanout)")
	flag.BoolVar(&o.write, "write", false, "update the sections this run measured in -file, their results in -results, and the goal table")
	flag.BoolVar(&o.table, "table", false, "measure nothing: print the goal table from the stored results (with -write, rebuild it and every section's text in -file)")
	flag.StringVar(&o.file, "file", "", "benchmarks file (default BENCHMARKS.md at the module root)")
	flag.StringVar(&o.results, "results", "", "folder of the sections' stored results (default integration/bench/results)")
	flag.Parse()
	if err := o.validate(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(2)
	}
	// Children run in their own process groups, so a Ctrl-C reaches only this
	// process: it cancels ctx, and everything started is stopped by pid on the way out.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, o)
	interrupted := ctx.Err() != nil
	stop()
	if err != nil {
		if interrupted {
			err = errors.New("interrupted; every process it started was stopped")
		}
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

func (o *options) validate() error {
	if o.only != "" {
		want := strings.Split(o.only, ",")
		for _, w := range want {
			if !slices.ContainsFunc(sections, func(s benchkit.Section) bool { return s.Name == w }) {
				return fmt.Errorf("-only %q: no section %q", o.only, w)
			}
		}
		on := func(name string) bool { return slices.Contains(want, name) }
		o.pluginSection, o.oidc, o.cp, o.doMTLS, o.doChurn = on("plugin"), on("oidc"), on("controlplane"), on("mtls"), on("churn")
		o.observe = on("observe")
		o.fanout = on("fanout")
		if !on("pluginload") {
			o.swaps = 0
		}
		if !on("devloop") {
			o.devRounds = 0
		}
	}
	p := o.plugin
	switch {
	case p.Duration < time.Second:
		return fmt.Errorf("-duration %s: use at least 1s", p.Duration)
	case p.Concurrency < 1 || p.Rounds < 1 || o.mtlsRounds < 1 || o.cpo.Edits < 1 || o.cpo.Starts < 1:
		return errors.New("-concurrency, -rounds, -mtls-rounds, -cp-edits and -cp-starts: use at least 1")
	case o.observe && o.observeRounds < 1:
		return fmt.Errorf("-observe-rounds %d: use at least 1", o.observeRounds)
	case p.RateRounds < 0 || p.UnpinnedRounds < 0 || o.devRounds < 0 || o.swaps < 0:
		return errors.New("-rate-rounds, -unpinned-rounds, -devloop-rounds and -swaps: use 0 to skip, or more")
	case o.oidcProfile != "" && !o.oidc:
		return errors.New("-oidc-profile profiles the OIDC section's cookie load: it needs -oidc")
	case o.doChurn && (o.churn.Routes < 4 || o.churn.Duration < time.Second || o.churn.Rate < 1 || o.churn.New < 0 || o.churn.Edits < 0 || o.churn.Deletes < 0 ||
		o.churn.Edits+o.churn.Deletes > o.churn.Routes/2 || o.churn.New+o.churn.Edits+o.churn.Deletes < 1):
		return errors.New("-churn-routes at least 4, -churn-duration at least 1s, -churn-rate at least 1, -churn-new, -churn-edits, -churn-deletes 0 or more, at least one change, and edits plus removals at most half the routes")
	case o.cpo.Churn < 0 || o.cpo.ChurnRate < 1:
		return fmt.Errorf("-cp-churn %s -cp-churn-rate %d: use a duration >= 0 and a rate >= 1", o.cpo.Churn, o.cpo.ChurnRate)
	}
	for _, f := range strings.Split(o.cpSizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("-cp-sizes %q: want positive numbers separated by commas", o.cpSizes)
		}
		o.cpo.Sizes = append(o.cpo.Sizes, n)
	}
	slices.Sort(o.cpo.Sizes)
	for _, f := range strings.Split(o.fanoutClients, ",") {
		if !o.fanout {
			break
		}
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2 || o.fo.Resources < 1 || o.fo.Edits < 1 || o.fo.RouteEdits < 1 {
			return fmt.Errorf("-fanout-clients %q -fanout-resources %d -fanout-edits %d: want client counts of 2 or more and positive sizes", o.fanoutClients, o.fo.Resources, o.fo.Edits)
		}
		o.fo.Clients = append(o.fo.Clients, n)
	}
	slices.Sort(o.fo.Clients)
	return nil
}

// run measures the sections asked for and writes what they found.
func run(ctx context.Context, o options) error {
	root, err := benchkit.ModuleRoot(ctx)
	if err != nil {
		return err
	}
	if o.file == "" {
		o.file = filepath.Join(root, "BENCHMARKS.md")
	}
	if o.results == "" {
		o.results = filepath.Join(root, "integration", "bench", "results")
	}
	var rs []benchkit.Result
	if !o.table {
		if rs, err = measure(ctx, o, root); err != nil {
			return err
		}
	}
	for _, r := range rs {
		fmt.Print(r.Markdown + "\n" + r.Profile)
	}
	if !o.write {
		if o.table {
			if rs, err = benchkit.LoadResults(o.results, tableOrder()); err != nil {
				return err
			}
		}
		fmt.Print(benchkit.GoalTable(rs))
		return nil
	}
	rel, err := filepath.Rel(filepath.Dir(o.file), o.results)
	if err != nil {
		return err
	}
	for _, r := range rs {
		// The folded tables of every run go beside the result, linked from the section.
		var details string
		r.Text, details = benchkit.SplitDetails(r.Markdown, filepath.ToSlash(filepath.Join(rel, r.Section+".md")))
		if err := benchkit.SaveResult(o.results, r); err != nil {
			return err
		}
		head := fmt.Sprintf("# %s: every run of %s\n\nWritten by `%s`.\n\n", r.Section, r.Date, r.Command)
		details = strings.NewReplacer("<details><summary>", "## ", "</summary>", "", "</details>\n", "").Replace(details)
		if err := os.WriteFile(filepath.Join(o.results, r.Section+".md"), []byte(head+details), 0o644); err != nil {
			return err
		}
	}
	if err := rewrite(o); err != nil {
		return err
	}
	if o.table {
		benchkit.Progress("rebuilt %s from %s", o.file, o.results)
	} else {
		benchkit.Progress("updated %s and %s", o.file, o.results)
	}
	return nil
}
