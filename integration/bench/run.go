package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// run does one whole benchmark: Go benchmarks, builds, servers, load, report.
func run(ctx context.Context, o options) error {
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	if o.file == "" {
		o.file = filepath.Join(root, "BENCHMARKS.md")
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
	if o.goBench {
		progress("running the Go benchmarks (go test -bench) in server/chain and server")
		if rep.GoBench, err = runGoBenchmarks(ctx, root); err != nil {
			return err
		}
	}
	ghz, err := findGhz(ctx, tmp)
	if err != nil {
		return err
	}
	if rep.GhzVersion, err = ghzVersion(ctx, ghz); err != nil {
		return err
	}
	progress("building gatehouse, the required_header plugin and bareserver")
	bins, err := buildAll(ctx, root, tmp)
	if err != nil {
		return err
	}

	var procs procSet
	defer procs.stopAll()
	servers, err := startServers(ctx, &procs, bins, tmp, o.profile != "")
	if err != nil {
		return err
	}
	l := &loader{ghz: ghz, dir: tmp, duration: o.duration, concurrency: o.concurrency}
	if rep.Runs, err = l.measure(ctx, servers, o.rounds); err != nil {
		return err
	}
	if o.profile != "" {
		progress("profiling gatehouse under allow load")
		if err := l.profile(ctx, servers.gatehouse, o.profile); err != nil {
			return err
		}
	}
	procs.stopAll()

	text := rep.markdown()
	fmt.Print(text)
	if o.profile != "" {
		top, err := pprofTop(ctx, o.profile)
		if err != nil {
			return err
		}
		fmt.Printf("\nCPU profile of gatehouse under allow load (%s):\n\n%s", o.profile, top)
	}
	if o.write {
		if err := updateSection(o.file, text); err != nil {
			return err
		}
		progress("updated " + o.file)
	}
	return nil
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
