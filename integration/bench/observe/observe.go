// Package observe is the observability section of `make bench`: what tracing and
// decision logs cost a Check. `gatehouse extauth` runs three times on the plugin
// section's one-step chain — tracing off, tracing on at 1 % with spans exported over
// OTLP to a receiver in the bench, and decision logs on — beside the bare server, all
// under ghz, the four alternated within each round.
package observe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
)

// Section is where the section's text goes in BENCHMARKS.md.
var Section = benchkit.Section{Name: "observe", Heading: "## Observability: what tracing and decision logs cost a Check\n\n"}

// Options are the section's flags.
type Options struct {
	checkload.Options
}

// The servers the section loads.
const (
	serverBare   = "bare"
	serverOff    = "off"
	serverTraced = "traced"
	serverLogged = "logged"
)

// traceRatio is the share of Checks the traced server records and exports.
const traceRatio = 0.01

// result is what the section measured.
type result struct {
	Rounds  int
	Pinned  bool
	Runs    []checkload.Measurement
	Spans   int64 // extauth.Check spans the receiver got from the traced server
	Checks  int64 // Checks the traced server answered in measured runs
	Records int64 // decision records the logged server wrote, warm-ups included
	LoadAvg [2]string
}

// Run starts the four servers and loads them, alternated, o.Rounds times.
func Run(ctx context.Context, env *benchkit.Env, o Options) (benchkit.Result, error) {
	dir := filepath.Join(env.Tmp, "observe")
	res := &result{Rounds: o.Rounds, Pinned: benchkit.CanPin(), LoadAvg: [2]string{benchkit.LoadAverage(), ""}}
	release, err := benchkit.PinClients(ctx)
	if err != nil {
		return benchkit.Result{}, err
	}
	defer release()
	recv, err := startReceiver()
	if err != nil {
		return benchkit.Result{}, err
	}
	defer recv.srv.Stop()
	off := []string{"OTEL_TRACES_EXPORTER=none"}
	started, stop, err := checkload.StartChains(ctx, env, dir, checkload.Chain{Bare: true},
		checkload.Chain{Name: serverOff, Env: off, Args: []string{"--trace-sample-ratio", "0"}},
		checkload.Chain{Name: serverTraced, Env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + recv.addr, "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_TRACES_SAMPLER="},
			Args: []string{"--trace-sample-ratio", fmt.Sprint(traceRatio)}},
		checkload.Chain{Name: serverLogged, Env: off, Args: []string{"--trace-sample-ratio", "0", "--decision-log", "stdout", "--decision-log-rate", "0"}})
	defer stop()
	if err != nil {
		return benchkit.Result{}, err
	}
	l, err := checkload.NewLoader(ctx, env, dir, o.Options, "allow")
	if err != nil {
		return benchkit.Result{}, err
	}
	spansBefore := recv.checks.Load()
	for round := 1; round <= o.Rounds; round++ {
		// Two pairs a round, each loaded in turn: bare, off, traced, logged in odd
		// rounds, backwards in even ones, so no server always goes first.
		order := slices.Clone(started)
		if round%2 == 0 {
			slices.Reverse(order)
		}
		for i := 0; i < len(order); i += 2 {
			runs, err := l.Measure(ctx, checkload.Phase{Base: order[i], Server: order[i+1], Loads: []string{"allow"}}, 0, 1)
			if err != nil {
				return benchkit.Result{}, err
			}
			for j := range runs {
				runs[j].Round = round
				if runs[j].Server == serverTraced {
					res.Checks += runs[j].Count
				}
			}
			res.Runs = append(res.Runs, runs...)
		}
		benchkit.Progress("observe: round %d/%d done", round, o.Rounds)
	}
	res.LoadAvg[1] = benchkit.LoadAverage()
	// Stopping the traced server sends the spans it still holds; the warm-ups' spans
	// count too, as the receiver cannot tell them apart.
	env.Procs.Stop(started[2].Proc) // the traced server
	res.Spans = recv.checks.Load() - spansBefore
	if res.Spans == 0 {
		return benchkit.Result{}, fmt.Errorf("observe: the traced server exported no extauth.Check span in %d Checks", res.Checks)
	}
	decisions, err := os.ReadFile(filepath.Join(dir, serverLogged+".log"))
	if err != nil {
		return benchkit.Result{}, err
	}
	if res.Records = int64(strings.Count(string(decisions), `"decision":"`)); res.Records == 0 {
		return benchkit.Result{}, fmt.Errorf("observe: the logged server wrote no decision record")
	}
	measured, err := env.MeasuredGhz(ctx, "")
	return env.Result(Section, res.goals(), res.markdown(measured, o)), err
}
