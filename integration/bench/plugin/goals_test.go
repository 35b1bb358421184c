package plugin

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
)

func bench(name string, metrics ...float64) benchkit.GoBench {
	b := benchkit.GoBench{Name: name, Metrics: map[string]float64{}}
	for i, unit := range []string{"ns/op", "cpu-ns/op", "step-cpu-ns", "allocs/op"} {
		if i < len(metrics) {
			b.Metrics[unit] = metrics[i]
		}
	}
	return b
}

func TestGoals(t *testing.T) {
	us := time.Microsecond
	m := func(round int, server, path string, cpu time.Duration, p99 time.Duration) checkload.Measurement {
		return checkload.Measurement{Round: round, Server: server, Path: path, CPUPerCheck: cpu, P99: p99}
	}
	long := checkload.LongChainPath
	f := &figures{
		Runs: []checkload.Measurement{
			// Round 2 is the outlier: the median of per-round ratios ignores it.
			m(1, "bare", "allow", 30*us, 0), m(1, "gatehouse", "allow", 33*us, 0),
			m(2, "gatehouse", "allow", 45*us, 0), m(2, "bare", "allow", 30*us, 0),
			m(3, "bare", "allow", 40*us, 0), m(3, "gatehouse", "allow", 44*us, 0),
			m(1, "bare", "deny", 30*us, 0), m(1, "gatehouse", "deny", 36*us, 0),
			// The three-step chain is a ratio in the tables, not a goal.
			m(1, "bare", "chain3", 30*us, 0), m(1, "gatehouse", "chain3", 99*us, 0),
			// The long chain against its own bare run: the machine was slower in
			// round 3 (bare 40 → 50), which the per-step estimate must not count.
			m(1, "bare", long, 30*us, 0), m(1, "gatehouse", long, 63*us, 0),
			m(3, "bare", long, 50*us, 0), m(3, "gatehouse", long, 75*us, 0),
			// a round without the bare server counts for no ratio
			m(4, "gatehouse", "deny", 99*us, 0),
		},
		RateRuns: []checkload.Measurement{
			m(1, "bare", "allow", 0, 2*time.Millisecond), m(1, "gatehouse", "allow", 0, 3*time.Millisecond),
		},
		Rate: 7000,
		GoBench: []benchkit.GoBench{
			bench("BenchmarkCheck/allow/wire", 0, 0, 0, 118), bench("BenchmarkCheck/decode", 0, 0, 0, 98),
			bench("BenchmarkChain/allow", 2900), bench("BenchmarkChain/chain3", 5100),
		},
	}
	type row struct {
		Rounds []float64
		Met    bool
	}
	further := float64(checkload.LongChainSteps - 1)
	var got []row
	for _, g := range f.goals() {
		got = append(got, row{g.Rounds, g.Met()})
	}
	want := []row{
		{Rounds: []float64{1.1, 1.5, 1.1}, Met: true}, // allow: median 1.10
		{Rounds: []float64{1.2}, Met: false},          // deny
		// per step under load, over the further steps of the long chain: round 1
		// (2.1 - 1.1) × 30 / further, round 3 (1.5 - 1.1) × 40 / further; median
		// 23 µs / further
		{Rounds: []float64{30 / further, 16 / further}, Met: further >= 23},
		{Rounds: []float64{1.1}, Met: false}, // in process: (5100 - 2900) / 2 ns
		{Rounds: []float64{20}, Met: true},   // allocations: exactly the target
		{Rounds: []float64{1.5}, Met: false}, // p99 at the fixed rate
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("goals() mismatch (-want +got):\n%s", diff)
	}
}

func TestInProcessStepCostPrefersCPUTime(t *testing.T) {
	tests := []struct {
		name     string
		bs       []benchkit.GoBench
		want     float64
		wantUnit string
		wantOK   bool
	}{
		{
			name: "the paired estimate first",
			bs:   []benchkit.GoBench{bench("BenchmarkChain/allow", 2900, 2500), bench("BenchmarkChain/chain3", 5100, 4300), bench("BenchmarkChainStep", 0, 0, 760)},
			want: 0.76, wantUnit: "CPU time, BenchmarkChainStep (alternating batches, median of the pairs)", wantOK: true,
		},
		{
			name: "CPU time reported by both",
			bs:   []benchkit.GoBench{bench("BenchmarkChain/allow", 2900, 2500), bench("BenchmarkChain/chain3", 5100, 4300)},
			want: 0.9, wantUnit: "CPU time per op", wantOK: true,
		},
		{
			name: "CPU time missing on one falls back to time per op",
			bs:   []benchkit.GoBench{bench("BenchmarkChain/allow", 2900, 2500), bench("BenchmarkChain/chain3", 5100)},
			want: 1.1, wantUnit: "time per op", wantOK: true,
		},
		{name: "chain3 missing", bs: []benchkit.GoBench{bench("BenchmarkChain/allow", 2900)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, unit, ok := inProcessStepCost(tt.bs)
			if ok != tt.wantOK || unit != tt.wantUnit || math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("inProcessStepCost = %v, %q, %v; want %v, %q, %v", got, unit, ok, tt.want, tt.wantUnit, tt.wantOK)
			}
		})
	}
}
