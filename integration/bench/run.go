package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// run does one whole benchmark: Go benchmarks, builds, the three phases, report.
func run(ctx context.Context, o options) error {
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	if o.file == "" {
		o.file = filepath.Join(root, "BENCHMARKS.md")
	}
	if o.oidc {
		if err := checkOIDCDeps(root); err != nil {
			return err
		}
	}
	tmp, err := os.MkdirTemp("", "gatehouse-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	rep := &report{
		Date:        time.Now().UTC().Format("2006-01-02"),
		Command:     commandLine(),
		Duration:    o.duration,
		Concurrency: o.concurrency,
		Rounds:      o.rounds,
	}
	if rep.Machine, err = describeMachine(ctx); err != nil {
		return err
	}
	var oidcGo []goBench
	if o.goBench && o.plugin {
		progress("running the Go benchmarks (go test -bench) in server/chain and server")
		if rep.GoBench, err = runGoBenchmarks(ctx, root, ".", goBenchPackages...); err != nil {
			return err
		}
		if o.oidc {
			progress("running the Go benchmark " + oidcGoBench + " in server/oidc")
			if oidcGo, err = runGoBenchmarks(ctx, root, oidcGoBench, oidcGoBenchPackage); err != nil {
				return err
			}
		}
	}
	progress("building gatehouse, the required_header plugin and bareserver")
	bins, err := buildAll(ctx, root, tmp)
	if err != nil {
		return err
	}

	var procs procSet
	defer procs.stopAll()
	if o.plugin {
		ghz, err := findGhz(ctx, tmp)
		if err != nil {
			return err
		}
		if rep.GhzVersion, err = ghzVersion(ctx, ghz); err != nil {
			return err
		}
		if err := measureLoads(ctx, o, root, rep, &procs, bins, ghz, tmp); err != nil {
			return err
		}
	}
	if o.swaps > 0 {
		progress(fmt.Sprintf("building %d versions of the load plugin with gatehouse plugin build", o.swaps))
		versions, err := buildLoadPlugins(ctx, root, tmp, bins.gatehouse, o.swaps)
		if err != nil {
			return err
		}
		rep.SwapsLoad = loadAverage()
		if rep.Swaps, err = runPluginLoad(ctx, tmp, bins, &procs, versions); err != nil {
			return err
		}
		progress("timing the trial load alone on each version")
		if rep.TrialAlone, err = timeTrials(ctx, bins.gatehouse, versions); err != nil {
			return err
		}
	}
	if o.devRounds > 0 {
		progress(fmt.Sprintf("timing %d saves with gatehouse dev --plugin-module", o.devRounds))
		rep.DevLoopLoad = loadAverage()
		if rep.DevLoop, err = runDevLoop(ctx, root, tmp, bins, &procs, o.devRounds); err != nil {
			return err
		}
	}
	if rep.OIDC != nil {
		rep.OIDC.GoBench = oidcGo
	}
	if o.cp {
		if rep.Controlplane, err = runControlplaneSection(ctx, o.cpo, bins, &procs, tmp); err != nil {
			return err
		}
		if o.goBench {
			progress("running the control plane's Go benchmarks (go test -bench) in controlplane/xds and controlplane/pipeline")
			if rep.Controlplane.GoBench, err = runCPGoBenchmarks(ctx, root); err != nil {
				return err
			}
		}
	}
	if o.mtls {
		if rep.MTLS, err = runMTLSSection(ctx, o, bins, &procs, tmp, o.cpo.sizes[len(o.cpo.sizes)-1]); err != nil {
			return err
		}
		if rep.GhzVersion == "" {
			ghz, err := findGhz(ctx, tmp)
			if err != nil {
				return err
			}
			if rep.GhzVersion, err = ghzVersion(ctx, ghz); err != nil {
				return err
			}
		}
	}
	procs.stopAll()
	return rep.output(ctx, o)
}

// measureLoads starts the bare server and gatehouse with the required_header plugin,
// loads them, profiles gatehouse if asked, and then runs the OIDC phase against the
// same bare server.
func measureLoads(ctx context.Context, o options, root string, rep *report, procs *procSet, bins binaries, ghz, tmp string) error {
	servers, err := startServers(ctx, procs, bins, tmp, o.profile != "")
	if err != nil {
		return err
	}
	l, err := newLoader(ctx, ghz, tmp, o.duration, o.concurrency)
	if err != nil {
		return err
	}
	for _, p := range paths {
		if l.data[p.name], err = writeRequest(tmp, p.name, p.configID, p.value); err != nil {
			return err
		}
	}
	ph := phase{servers: servers, loads: pathNames()}
	rep.Pinned = canPin()
	if !rep.Pinned {
		progress("this machine has one CPU: the servers and ghz cannot be pinned apart, so ghz's work hides part of the difference")
	}
	if rep.Runs, err = l.measure(ctx, ph, o.rounds); err != nil {
		return err
	}
	if bare, _, ok := pair(summarize(rep.Runs, []string{"allow"}), "allow"); ok && o.rateRounds > 0 {
		rep.Rate = int(bare.RPS * rateShare)
		progress(fmt.Sprintf("latency at %d req/s, %.0f%% of the bare server's maximum", rep.Rate, rateShare*100))
		if rep.RateRuns, err = l.measureAtRate(ctx, ph, "allow", rep.Rate, o.rateRounds); err != nil {
			return err
		}
	}
	if o.unpinnedRounds > 0 {
		progress("the secondary, unpinned runs")
		if rep.Unpinned, err = l.measureUnpinned(ctx, ph, o.unpinnedRounds); err != nil {
			return err
		}
	}
	if o.profile != "" {
		progress("profiling gatehouse under allow load")
		if err := l.profile(ctx, servers.gatehouse, "allow", o.profile); err != nil {
			return err
		}
	}
	procs.stop(servers.gatehouse.proc)
	if o.oidc {
		if rep.OIDC, err = runOIDC(ctx, root, tmp, bins, procs, l, servers.bare, o.rounds, o.oidcProfile); err != nil {
			return fmt.Errorf("oidc: %w", err)
		}
	}
	procs.stop(servers.bare.proc)
	return nil
}

// sectionText is one section's generated text.
type sectionText struct {
	s    section
	text string
}

// output prints every section that was measured and, with -write, puts each in the
// benchmarks file.
func (r *report) output(ctx context.Context, o options) error {
	var texts []sectionText
	if len(r.Runs) > 0 {
		texts = append(texts, sectionText{pluginSection, r.markdown()})
	}
	if r.OIDC != nil {
		texts = append(texts, sectionText{oidcSection, r.oidcMarkdown()})
	}
	if len(r.Swaps) > 0 {
		texts = append(texts, sectionText{pluginLoadSection, r.pluginLoadMarkdown()})
	}
	if len(r.DevLoop) > 0 {
		texts = append(texts, sectionText{devLoopSection, r.devLoopMarkdown()})
	}
	if r.Controlplane != nil {
		texts = append(texts, sectionText{controlplaneSection, r.controlplaneMarkdown()})
	}
	if r.MTLS != nil {
		texts = append(texts, sectionText{mtlsSection, r.mtlsMarkdown()})
	}
	for _, t := range texts {
		fmt.Print(t.s.heading + t.text + "\n")
	}
	if o.profile != "" {
		top, err := pprofTop(ctx, o.profile)
		if err != nil {
			return err
		}
		fmt.Printf("CPU profile of gatehouse under allow load (%s):\n\n%s", o.profile, top)
	}
	if o.oidcProfile != "" && r.OIDC != nil {
		top, err := pprofTop(ctx, o.oidcProfile)
		if err != nil {
			return err
		}
		fmt.Printf("CPU profile of gatehouse under cookie-session load (%s):\n\n%s", o.oidcProfile, top)
	}
	if !o.write {
		return nil
	}
	for _, t := range texts {
		if err := t.s.update(o.file, t.text); err != nil {
			return err
		}
	}
	progress("updated " + o.file)
	return nil
}

// loadAverage is the machine's 1, 5 and 15 minute load averages, for the report: the
// timings of a shared machine are read with them.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// started is when the benchmark began, for progress lines.
var started = time.Now()

// progress tells the user on stderr what is happening; stdout carries the report.
func progress(msg string) {
	fmt.Fprintf(os.Stderr, "bench: %4s %s\n", time.Since(started).Round(time.Second), msg)
}

// commandLine is how this run was started, for the report.
func commandLine() string {
	args := append([]string{"go", "run", "./integration/bench"}, os.Args[1:]...)
	return strings.Join(args, " ")
}

// moduleRoot is the folder of the main module's go.mod.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := output(ctx, "", "go", "env", "GOMOD")
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(out)
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside the gatehouse module: run from the repository")
	}
	return filepath.Dir(mod), nil
}
