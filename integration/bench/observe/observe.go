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
	defer recv.stop()
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
	servers := map[string]*checkload.Server{}
	for _, s := range started {
		servers[s.Name] = s
	}
	l, err := checkload.NewLoader(ctx, env, dir, o.Options, "allow")
	if err != nil {
		return benchkit.Result{}, err
	}
	spansBefore := recv.checkSpans()
	for round := 1; round <= o.Rounds; round++ {
		// Two pairs a round, each loaded in turn; odd rounds run them forwards, even
		// rounds backwards, so no server always goes first.
		pairs := [][2]*checkload.Server{{servers[serverBare], servers[serverOff]}, {servers[serverTraced], servers[serverLogged]}}
		if round%2 == 0 {
			pairs = [][2]*checkload.Server{{servers[serverLogged], servers[serverTraced]}, {servers[serverOff], servers[serverBare]}}
		}
		for _, p := range pairs {
			runs, err := l.Measure(ctx, checkload.Phase{Base: p[0], Server: p[1], Loads: []string{"allow"}}, 0, 1)
			if err != nil {
				return benchkit.Result{}, err
			}
			for i := range runs {
				runs[i].Round = round
				if runs[i].Server == serverTraced {
					res.Checks += runs[i].Count
				}
			}
			res.Runs = append(res.Runs, runs...)
		}
		benchkit.Progress("observe: round %d/%d done", round, o.Rounds)
	}
	res.LoadAvg[1] = benchkit.LoadAverage()
	// Stopping the traced server sends the spans it still holds; the warm-ups' spans
	// count too, as the receiver cannot tell them apart.
	env.Procs.Stop(servers[serverTraced].Proc)
	res.Spans = recv.checkSpans() - spansBefore
	if res.Spans == 0 {
		return benchkit.Result{}, fmt.Errorf("observe: the traced server exported no extauth.Check span in %d Checks", res.Checks)
	}
	if res.Records, err = countRecords(filepath.Join(dir, serverLogged+".log")); err != nil {
		return benchkit.Result{}, err
	}
	if res.Records == 0 {
		return benchkit.Result{}, fmt.Errorf("observe: the logged server wrote no decision record")
	}
	measured, err := env.MeasuredGhz(ctx, "")
	return env.Result(Section, res.goals(), res.markdown(measured, o)), err
}

// countRecords counts the decision records in a log file.
func countRecords(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return int64(strings.Count(string(b), `"decision":"`)), nil
}
