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
			// The three-step chain is a ratio in the tables, not a goal.
			m(1, "bare", "chain3", 30*us, 0), m(1, "gatehouse", "chain3", 99*us, 0),
			// The long chain against its own bare run: the machine was slower in
			// round 3 (bare 40 → 50), which the per-step estimate must not count.
			m(1, "bare", longChainPath, 30*us, 0), m(1, "gatehouse", longChainPath, 63*us, 0),
			m(3, "bare", longChainPath, 50*us, 0), m(3, "gatehouse", longChainPath, 75*us, 0),
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
	further := float64(longChainSteps - 1)
	var got []row
	for _, g := range r.goals() {
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

func TestMedianInterval(t *testing.T) {
	for _, c := range []struct {
		xs            []float64
		lo, hi, cover float64
	}{
		// Five rounds: no interval reaches 95 %; the widest, min to max, covers 1 − 2/32.
		{[]float64{3, -7, 9, 4, 6}, -7, 9, 1 - 2.0/32},
		// Fifteen: the 4th smallest to the 4th largest, 1 − 2·P(B(15, ½) ≤ 3) = 96.5 %.
		{[]float64{3.08, -1.80, 1.00, 5.15, 0.57, -0.64, 4.03, 10.36, 2.23, -6.84, 0.51, -2.27, 2.74, 6.58, -8.06}, -1.80, 4.03, 1 - 2*(1+15+105+455)/32768.0},
	} {
		lo, hi, cover := medianInterval(c.xs)
		if lo != c.lo || hi != c.hi || math.Abs(cover-c.cover) > 1e-9 {
			t.Errorf("medianInterval(%v) = %v, %v, %.4f; want %v, %v, %.4f", c.xs, lo, hi, cover, c.lo, c.hi, c.cover)
		}
	}
}

func TestIntervalGoalVerdicts(t *testing.T) {
	for _, c := range []struct {
		rounds []float64
		want   string
	}{
		{[]float64{0.2, 0.9, 0.5, 0.7, 0.1}, "met"},
		{[]float64{1.2, 3, 2, 1.5, 4}, "**not met**"},
		{[]float64{-6.87, 9.07, 4.36, 6.15, 2.33}, "**undecided**: the median's 94 % interval is -6.87 µs to 9.07 µs"},
	} {
		g := goal{What: "step", Target: 1, Unit: "µs", Rounds: c.rounds, Interval: true}
		if got := g.verdict(); got != c.want {
			t.Errorf("verdict of %v = %q, want %q", c.rounds, got, c.want)
		}
	}
	// Without Interval, the median decides, as for the ratio goals.
	if got := (goal{Target: 1.15, Unit: "×", Rounds: []float64{1.0, 1.3, 1.1}}).verdict(); got != "met" {
		t.Errorf("median goal verdict = %q, want met", got)
	}
}
