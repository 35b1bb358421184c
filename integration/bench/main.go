// Command bench is `make bench`: it measures what the plugin chain costs.
//
// It runs the in-process Go benchmarks of server/chain and server, then builds
// gatehouse, the required_header plugin and a bare ext_authz server (bareserver, which
// answers OK without work), starts both servers on 127.0.0.1 and loads them in turn
// with ghz, measuring each server's CPU from /proc around every run. It prints a
// markdown report and, with -write, puts it in BENCHMARKS.md between the
// bench:plugin markers.
//
//	go run ./integration/bench                 # full run, about two minutes
//	go run ./integration/bench -duration 3s    # smoke run
//	go run ./integration/bench -write -profile /tmp/gatehouse.pprof
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// options are the command-line flags.
type options struct {
	duration    time.Duration
	concurrency int
	rounds      int
	write       bool
	file        string
	profile     string
	goBench     bool
}

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 10*time.Second, "length of each ghz run")
	flag.IntVar(&o.concurrency, "concurrency", 50, "ghz concurrency")
	flag.IntVar(&o.rounds, "rounds", 2, "times each server and path is loaded; the report gives medians")
	flag.BoolVar(&o.write, "write", false, "update the bench:plugin section of -file")
	flag.StringVar(&o.file, "file", "", "benchmarks file to update with -write (default BENCHMARKS.md at the module root)")
	flag.StringVar(&o.profile, "profile", "", "after the measured runs, write a CPU profile of gatehouse under allow load to this file")
	flag.BoolVar(&o.goBench, "gobench", true, "run the in-process Go benchmarks")
	flag.Parse()
	if err := o.validate(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(2)
	}

	// Children run in their own process groups (so that they can be stopped as a
	// whole), which means a Ctrl-C reaches only this process: it cancels ctx, and
	// everything started is stopped by pid on the way out.
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

func (o options) validate() error {
	switch {
	case o.duration < time.Second:
		return fmt.Errorf("-duration %s: use at least 1s", o.duration)
	case o.concurrency < 1:
		return fmt.Errorf("-concurrency %d: use at least 1", o.concurrency)
	case o.rounds < 1:
		return fmt.Errorf("-rounds %d: use at least 1", o.rounds)
	}
	return nil
}
