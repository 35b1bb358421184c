package plugin

import (
	"fmt"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
)

// Goals of issue 13, "Check path at the floor". Ratios are gatehouse's over the bare
// server's, taken per round, judged on the median over rounds.
const (
	cpuTarget       = 1.15 // one-step chain, allow and deny: CPU per Check
	p99Target       = 1.2  // p99 at RateShare of the bare server's maximum
	stepTarget      = 1.0  // µs of CPU per Check for each step after the first
	allocsTarget    = 20   // allocations per Check beyond decoding, in process
	allocsWireBench = "BenchmarkCheck/allow/wire"
	allocsDecode    = "BenchmarkCheck/decode"
	chainOneBench   = "BenchmarkChain/allow"
	chainThreeBench = "BenchmarkChain/chain3"
	chainStepBench  = "BenchmarkChainStep"
)

// figures is what the section measured.
type figures struct {
	Runs, RateRuns, Unpinned []checkload.Measurement
	Rate                     int
	GoBench                  []benchkit.GoBench
}

func ratios(runs []checkload.Measurement, load string, figure func(checkload.Measurement) float64) []float64 {
	return checkload.Ratios(runs, load, "gatehouse", "bare", figure)
}

// goals are the targets this run measured, in the order.
func (f *figures) goals() []benchkit.Goal {
	var gs []benchkit.Goal
	for _, p := range []string{"allow", "deny"} {
		if rs := ratios(f.Runs, p, checkload.CPU); len(rs) > 0 {
			gs = append(gs, benchkit.Goal{What: p + ": CPU per Check, gatehouse ÷ bare", Target: cpuTarget, Unit: "×", Rounds: rs})
		}
	}
	if rs := stepCosts(f.Runs); len(rs) > 0 {
		gs = append(gs, benchkit.Goal{What: fmt.Sprintf("under load: CPU of each step after the first, (%s ÷ bare − allow ÷ bare) × bare(allow) ÷ %d",
			checkload.LongChainPath, checkload.LongChainSteps-1), Target: stepTarget, Unit: "µs", Rounds: rs, Interval: true})
	}
	if us, unit, ok := inProcessStepCost(f.GoBench); ok {
		gs = append(gs, benchkit.Goal{What: "in process: each step after the first, (" + chainThreeBench + " − " + chainOneBench + ") ÷ 2, " + unit,
			Target: stepTarget, Unit: "µs", Rounds: []float64{us}})
	}
	wire, okW := benchkit.Find(f.GoBench, allocsWireBench)
	decode, okD := benchkit.Find(f.GoBench, allocsDecode)
	if okW && okD {
		gs = append(gs, benchkit.Goal{What: "in process: allocations per Check beyond decoding (" + allocsWireBench + " − " + allocsDecode + ")",
			Target: allocsTarget, Unit: "allocs", Rounds: []float64{wire.Metrics["allocs/op"] - decode.Metrics["allocs/op"]}})
	}
	if rs := ratios(f.RateRuns, "allow", func(m checkload.Measurement) float64 { return float64(m.P99) }); len(rs) > 0 {
		gs = append(gs, benchkit.Goal{What: fmt.Sprintf("allow at %d req/s (%.0f%% of the bare maximum): p99, gatehouse ÷ bare", f.Rate, checkload.RateShare*100),
			Target: p99Target, Unit: "×", Rounds: rs})
	}
	return gs
}

// stepCosts is, per round, what each step after the first costs under load: the slope
// from the one-step chain to the long one. Each ratio is against the bare server run
// next to it, so the machine's drift between the two runs cancels: (long ÷ its bare −
// allow ÷ its bare) × the bare figure of allow, over the number of further steps.
func stepCosts(runs []checkload.Measurement) []float64 {
	one := checkload.RatiosByRound(runs, "allow", "gatehouse", "bare", checkload.CPU)
	long := checkload.RatiosByRound(runs, checkload.LongChainPath, "gatehouse", "bare", checkload.CPU)
	bare := map[int]time.Duration{}
	for _, m := range runs {
		if m.Server == "bare" && m.Path == "allow" {
			bare[m.Round] = m.CPUPerCheck
		}
	}
	costs := map[int]float64{}
	for round, rl := range long {
		if r1, ok := one[round]; ok {
			costs[round] = (rl - r1) * benchkit.Micros(bare[round]) / float64(checkload.LongChainSteps-1)
		}
	}
	return benchkit.InOrder(costs)
}

// inProcessStepCost is what each step after the first of BenchmarkChain costs, in µs,
// and which figure it is from: best BenchmarkChainStep's, which alternates the one- and
// three-step chains in batches (separate runs differ by more than a step costs); else
// the process's CPU time per op of BenchmarkChain, garbage collection included; else
// its time per op.
func inProcessStepCost(bs []benchkit.GoBench) (float64, string, bool) {
	if st, ok := benchkit.Find(bs, chainStepBench); ok && st.Metrics["step-cpu-ns"] > 0 {
		return st.Metrics["step-cpu-ns"] / 1000, "CPU time, " + chainStepBench + " (alternating batches, median of the pairs)", true
	}
	one, okOne := benchkit.Find(bs, chainOneBench)
	three, okThree := benchkit.Find(bs, chainThreeBench)
	if !okOne || !okThree {
		return 0, "", false
	}
	if one.Metrics["cpu-ns/op"] > 0 && three.Metrics["cpu-ns/op"] > 0 {
		return (three.Metrics["cpu-ns/op"] - one.Metrics["cpu-ns/op"]) / 2 / 1000, "CPU time per op", true
	}
	return (three.Metrics["ns/op"] - one.Metrics["ns/op"]) / 2 / 1000, "time per op", true
}
