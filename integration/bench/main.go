// Command bench is `make bench`: it measures what a Check costs through a plugin chain
// and through the OIDC login step, and how long a new plugin file takes to serve.
//
// It runs the in-process Go benchmarks of server/chain, server and server/oidc, then
// builds gatehouse, the required_header plugin and a bare ext_authz server (bareserver,
// which answers OK without work), and:
//   - plugin: loads gatehouse serving required_header and the bare server in turn with
//     ghz, measuring each server's CPU from /proc around every run;
//   - oidc: starts the OpenID provider and redis-server (integration/harness), logs in
//     once per session mode (cookie, Redis) and loads a second gatehouse with Checks
//     carrying the session cookie, alternating with the bare server as above;
//   - pluginload: builds versions of a plugin with `gatehouse plugin build` and times,
//     for each, the rename into the plugin folder until a Check is served by it;
//   - devloop: runs `gatehouse dev --plugin-module` on a copy of the sample plugin and
//     times saves of its source until a Check answers with the saved behaviour;
//   - controlplane: writes 1k and 10k services (VirtualService, Upstream, AuthConfig,
//     one file each), starts `gatehouse controlplane` pinned to one CPU, and times with
//     delta ADS clients (xdsbench) on the other CPU the first complete state of both
//     roles and edited files to their new versions on the stream; at the largest size,
//     RSS under a churn of edits, and `gatehouse extauth --xds` serving every config;
//   - mtls: certificates from mtls.Generate; the control plane at the largest size in
//     plain text and with --xds-tls-dir, its ADS clients presenting their roles'
//     certificates, and `gatehouse extauth` plain and with --tls-dir under ghz, the
//     modes alternating over rounds.
//
// It prints a markdown report and, with -write, puts each part in BENCHMARKS.md
// between its bench:NAME markers. Every process it starts is stopped by pid.
//
//	go run ./integration/bench                                  # full run, about four minutes
//	go run ./integration/bench -duration 3s -rounds 1 -swaps 3  # smoke run
//	go run ./integration/bench -write -profile /tmp/gatehouse.pprof
//	go run ./integration/bench -plugin=false -oidc=false -swaps 0 -gobench=false \
//	    -cp-sizes 1000 -cp-edits 10 -cp-churn 5s               # control-plane smoke run
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
	// rateRounds are the rounds at a fixed rate, for latency; unpinnedRounds those
	// with nothing pinned (secondary figures).
	rateRounds, unpinnedRounds int
	write                      bool
	file                       string
	profile                    string
	oidcProfile                string // a CPU profile under cookie-session load
	goBench                    bool
	oidc                       bool
	swaps                      int // plugin versions the plugin-load phase swaps in; 0 skips it
	devRounds                  int // saves the dev-loop phase times; 0 skips it
	plugin                     bool
	cp                         bool
	cpSizes                    string
	cpo                        cpOptions
	mtls                       bool
	mtlsRounds                 int
}

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 6*time.Second, "length of each ghz run")
	flag.IntVar(&o.concurrency, "concurrency", 50, "ghz concurrency")
	flag.IntVar(&o.rounds, "rounds", 5, "times each server and path is loaded; the report gives medians of per-round ratios")
	flag.IntVar(&o.rateRounds, "rate-rounds", 3, "rounds of allow at a fixed rate (70% of the bare maximum) for latency; 0 skips them")
	flag.IntVar(&o.unpinnedRounds, "unpinned-rounds", 1, "rounds with nothing pinned, for the secondary table; 0 skips them")
	flag.BoolVar(&o.write, "write", false, "update the bench sections of -file that this run measured")
	flag.StringVar(&o.file, "file", "", "benchmarks file to update with -write (default BENCHMARKS.md at the module root)")
	flag.StringVar(&o.profile, "profile", "", "after the measured runs, write a CPU profile of gatehouse under allow load to this file")
	flag.StringVar(&o.oidcProfile, "oidc-profile", "", "after the OIDC section's runs, write a CPU profile of gatehouse under cookie-session load to this file")
	flag.BoolVar(&o.goBench, "gobench", true, "run the in-process Go benchmarks")
	flag.BoolVar(&o.oidc, "oidc", true, "measure Checks with a valid OIDC session (needs `make deps`)")
	flag.IntVar(&o.devRounds, "devloop-rounds", 20, "saves of the sample plugin to time with gatehouse dev --plugin-module; 0 skips it")
	flag.IntVar(&o.swaps, "swaps", 20, "plugin versions to time from appearing to serving; 0 skips it")
	flag.BoolVar(&o.plugin, "plugin", true, "load gatehouse and the bare server with ghz (the plugin section; -oidc needs it)")
	flag.BoolVar(&o.cp, "controlplane", true, "measure gatehouse controlplane with real ADS clients (the controlplane section)")
	flag.StringVar(&o.cpSizes, "cp-sizes", "1000,10000", "numbers of services the controlplane section generates, one run each; the largest also gets the churn and extauth")
	flag.IntVar(&o.cpo.starts, "cp-starts", 3, "starts of the control plane timed per size (the median is judged; the last start goes on with the edits)")
	flag.IntVar(&o.cpo.edits, "cp-edits", 100, "edits of each kind (AuthConfig, Upstream, VirtualService) timed per size")
	flag.DurationVar(&o.cpo.churn, "cp-churn", time.Minute, "how long the churn of edits runs at the largest size; 0 skips it")
	flag.IntVar(&o.cpo.churnRate, "cp-churn-rate", 10, "edits per second during the churn")
	flag.StringVar(&o.cpo.extauthHeap, "cp-extauth-heap", "", "write the heap profile of `gatehouse extauth --xds` serving every AuthConfig to this file")
	flag.BoolVar(&o.mtls, "mtls", true, "compare plain text with mutual TLS: the control plane at the largest -cp-sizes with -cp-edits, and Checks under ghz (the mtls section)")
	flag.IntVar(&o.mtlsRounds, "mtls-rounds", 5, "rounds of the mtls section, each running both modes; the report gives medians of per-round ratios")
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

func (o *options) validate() error {
	switch {
	case o.duration < time.Second:
		return fmt.Errorf("-duration %s: use at least 1s", o.duration)
	case o.concurrency < 1:
		return fmt.Errorf("-concurrency %d: use at least 1", o.concurrency)
	case o.rounds < 1:
		return fmt.Errorf("-rounds %d: use at least 1", o.rounds)
	case o.rateRounds < 0 || o.unpinnedRounds < 0:
		return fmt.Errorf("-rate-rounds %d -unpinned-rounds %d: use 0 to skip, or more", o.rateRounds, o.unpinnedRounds)
	case o.devRounds < 0:
		return fmt.Errorf("-devloop-rounds %d: use 0 to skip, or more", o.devRounds)
	case o.swaps < 0:
		return fmt.Errorf("-swaps %d: use 0 to skip, or more", o.swaps)
	case o.oidc && !o.plugin:
		return errors.New("-oidc needs the load of -plugin (it compares with the same bare server): add -oidc=false")
	case o.oidcProfile != "" && !o.oidc:
		return errors.New("-oidc-profile profiles the OIDC section's cookie load: it needs -oidc")
	case o.cpo.edits < 1:
		return fmt.Errorf("-cp-edits %d: use at least 1", o.cpo.edits)
	case o.cpo.starts < 1:
		return fmt.Errorf("-cp-starts %d: use at least 1", o.cpo.starts)
	case o.mtlsRounds < 1:
		return fmt.Errorf("-mtls-rounds %d: use at least 1", o.mtlsRounds)
	case o.cpo.churn < 0 || o.cpo.churnRate < 1:
		return fmt.Errorf("-cp-churn %s -cp-churn-rate %d: use a duration >= 0 and a rate >= 1", o.cpo.churn, o.cpo.churnRate)
	}
	if o.cp || o.mtls {
		sizes, err := parseSizes(o.cpSizes)
		if err != nil {
			return err
		}
		o.cpo.sizes = sizes
	}
	return nil
}
