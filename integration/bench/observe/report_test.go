package observe

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/integration/bench/checkload"
)

// TestGoalAndCosts: the goal is off ÷ bare per round; tracing's and decision logs'
// costs are per-round ratios to off and differences from it, in the report.
func TestGoalAndCosts(t *testing.T) {
	run := func(round int, server string, us int) checkload.Measurement {
		return checkload.Measurement{Round: round, Server: server, Path: "allow", Count: 1000, RPS: 1000,
			CPUPerCheck: time.Duration(us) * time.Microsecond}
	}
	r := &result{Rounds: 2, Pinned: true, Spans: 20, Checks: 2000, Records: 2000, Runs: []checkload.Measurement{
		run(1, serverBare, 10), run(1, serverOff, 11), run(1, serverTraced, 12), run(1, serverLogged, 22),
		run(2, serverLogged, 24), run(2, serverTraced, 13), run(2, serverOff, 12), run(2, serverBare, 10),
	}}
	gs := r.goals()
	if len(gs) != 1 || !cmp.Equal(gs[0].Rounds, []float64{1.1, 1.2}, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })) {
		t.Fatalf("goals = %+v, want off ÷ bare 1.1 and 1.2", gs)
	}
	if got := extraMicros(r.Runs, serverLogged); !cmp.Equal(got, []float64{11, 12}) {
		t.Errorf("decision logs beyond off = %v, want [11 12]", got)
	}
	md := r.markdown("Measured.\n\n", Options{checkload.Options{Duration: time.Second, Concurrency: 1, Rounds: 2}})
	for _, want := range []string{"**2.00×** (2.00, 2.00)", "| 11.50 |", "20 extauth.Check spans (1.00 %"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
