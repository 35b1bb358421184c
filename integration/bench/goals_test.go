package main

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestGoals(t *testing.T) {
	us := time.Microsecond
	m := func(round int, server, path string, cpu time.Duration, p99 time.Duration) measurement {
		return measurement{Round: round, Server: server, Path: path, CPUPerCheck: cpu, ghzResult: ghzResult{P99: p99}}
	}
	r := &report{
		Runs: []measurement{
			// Round 2 is the outlier: the median of per-round ratios ignores it.
			m(1, "bare", "allow", 30*us, 0), m(1, "gatehouse", "allow", 33*us, 0),
			m(2, "gatehouse", "allow", 45*us, 0), m(2, "bare", "allow", 30*us, 0),
			m(3, "bare", "allow", 40*us, 0), m(3, "gatehouse", "allow", 44*us, 0),
			m(1, "bare", "deny", 30*us, 0), m(1, "gatehouse", "deny", 36*us, 0),
			// chain3 against its own bare run: the machine was slower in round 3
			// (bare 40 → 50), which the per-step estimate must not count.
			m(1, "bare", "chain3", 30*us, 0), m(1, "gatehouse", "chain3", 36*us, 0),
			m(3, "bare", "chain3", 50*us, 0), m(3, "gatehouse", "chain3", 57.5*1000*time.Nanosecond, 0),
			// a round without the bare server counts for no ratio
			m(4, "gatehouse", "deny", 99*us, 0),
		},
		RateRuns: []measurement{
			m(1, "bare", "allow", 0, 2*time.Millisecond), m(1, "gatehouse", "allow", 0, 3*time.Millisecond),
		},
		Rate: 7000,
		GoBench: []goBench{
			{Name: "BenchmarkCheck/allow/wire", AllocsPerOp: 118}, {Name: "BenchmarkCheck/decode", AllocsPerOp: 98},
			{Name: "BenchmarkChain/allow", NsPerOp: 2900}, {Name: "BenchmarkChain/chain3", NsPerOp: 5100},
		},
	}
	type row struct {
		Rounds []float64
		Met    bool
	}
	var got []row
	for _, g := range r.goals() {
		got = append(got, row{g.Rounds, g.Met()})
	}
	want := []row{
		{Rounds: []float64{1.1, 1.5, 1.1}, Met: true}, // allow: median 1.10
		{Rounds: []float64{1.2}, Met: false},          // deny
		// per step under load: round 1 (1.2 - 1.1) × 30 / 2, round 3 (1.15 - 1.1) × 40 / 2
		{Rounds: []float64{1.5, 1.0}, Met: false}, // median 1.25 µs
		{Rounds: []float64{1.1}, Met: false},      // in process: (5100 - 2900) / 2 ns
		{Rounds: []float64{20}, Met: true},        // allocations: exactly the target
		{Rounds: []float64{1.5}, Met: false},      // p99 at the fixed rate
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("goals() mismatch (-want +got):\n%s", diff)
	}
}

func TestWriteGoals(t *testing.T) {
	var b strings.Builder
	writeGoals(&b, []goal{
		{What: "allow", Target: 1.15, Unit: "×", Rounds: []float64{1.2, 1.1, 1.12}},
		{What: "deny", Target: 1.15, Unit: "×", Rounds: []float64{1.3}},
	})
	for _, want := range []string{
		"| allow | ≤ 1.15× | 1.20×, 1.10×, 1.12× | 1.12× | met |",
		"| deny | ≤ 1.15× | 1.30× | 1.30× | **not met** |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("writeGoals() has no line %q:\n%s", want, b.String())
		}
	}
}

func TestInProcessStepCostPrefersCPUTime(t *testing.T) {
	tests := []struct {
		name     string
		bs       []goBench
		want     float64
		wantUnit string
		wantOK   bool
	}{
		{
			name: "the paired estimate first",
			bs: []goBench{{Name: "BenchmarkChain/allow", NsPerOp: 2900, CPUNsPerOp: 2500},
				{Name: "BenchmarkChain/chain3", NsPerOp: 5100, CPUNsPerOp: 4300}, {Name: "BenchmarkChainStep", StepCPUNs: 760}},
			want: 0.76, wantUnit: "CPU time, BenchmarkChainStep (alternating batches, median of the pairs)", wantOK: true,
		},
		{
			name: "CPU time reported by both",
			bs: []goBench{{Name: "BenchmarkChain/allow", NsPerOp: 2900, CPUNsPerOp: 2500},
				{Name: "BenchmarkChain/chain3", NsPerOp: 5100, CPUNsPerOp: 4300}},
			want: 0.9, wantUnit: "CPU time per op", wantOK: true,
		},
		{
			name: "CPU time missing on one falls back to time per op",
			bs: []goBench{{Name: "BenchmarkChain/allow", NsPerOp: 2900, CPUNsPerOp: 2500},
				{Name: "BenchmarkChain/chain3", NsPerOp: 5100}},
			want: 1.1, wantUnit: "time per op", wantOK: true,
		},
		{name: "chain3 missing", bs: []goBench{{Name: "BenchmarkChain/allow", NsPerOp: 2900}}},
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
