package main

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Goals of the Check path (issue: "Check path at the floor") and of mutual TLS (issue
// 24). Ratios are gatehouse's over the bare server's, or mTLS's over plain text's,
// taken per round and then the median over rounds.
const (
	cpuTarget       = 1.15 // one-step chain, allow and deny: CPU per Check
	p99Target       = 1.2  // p99 at rateShare of the bare server's maximum
	stepTarget      = 1.0  // µs of CPU per Check for each step after the first
	allocsTarget    = 20   // allocations per Check beyond decoding, in process
	cookieTarget    = 1.2  // OIDC step, cookie session: CPU per Check
	redisTarget     = 1.3  // OIDC step, Redis session: CPU per Check, redis-server's included
	mtlsStartTarget = 1.1  // issue 24: control-plane start to both roles complete, mTLS ÷ plain text
	allocsWireBench = "BenchmarkCheck/allow/wire"
	allocsDecode    = "BenchmarkCheck/decode"
	chainOneBench   = "BenchmarkChain/allow"
	chainThreeBench = "BenchmarkChain/chain3"
	chainStepBench  = "BenchmarkChainStep"
)

// goal is one target and what a run measured against it.
type goal struct {
	What   string    // what is compared
	Target float64   // the bound the median must not pass
	Unit   string    // "×", "µs" or "allocs"
	Rounds []float64 // the figure of each round (one figure for in-process goals)
	// Interval judges the goal on the median's confidence interval instead of the
	// median alone: for a figure whose rounds scatter by about the target or more
	// (the per-step cost under load: a difference of two ratios, times ~60 µs, over
	// the further steps), a median of five rounds can fall on either side of it by
	// chance.
	Interval bool
}

// Median is the figure the goal is judged on.
func (g goal) Median() float64 { return median(g.Rounds) }

// Met reports whether the median is within the target.
func (g goal) Met() bool { return len(g.Rounds) > 0 && g.Median() <= g.Target }

// verdict is "met", "**not met**", or for an Interval goal whose median's interval
// holds the target, "undecided" with the interval.
func (g goal) verdict() string {
	if g.Interval && len(g.Rounds) > 1 {
		lo, hi, coverage := medianInterval(g.Rounds)
		switch {
		case hi <= g.Target:
			return "met"
		case lo > g.Target:
			return "**not met**"
		}
		return fmt.Sprintf("**undecided**: the median's %.0f %% interval is %s to %s", 100*coverage, g.format(lo), g.format(hi))
	}
	if g.Met() {
		return "met"
	}
	return "**not met**"
}

// medianInterval is a distribution-free confidence interval of the median of xs: the
// k-th smallest and k-th largest of them, with the largest k whose coverage
// (1 − 2·P(Binomial(n, ½) < k)) is at least 95 %, or k = 1 when none is (five rounds
// or fewer: 94 % for five). It returns the bounds and their coverage.
func medianInterval(xs []float64) (lo, hi, coverage float64) {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	below := func(k int) float64 { // P(Binomial(n, ½) < k)
		p, c := 0.0, 1.0 // c = C(n, i)
		for i := range k {
			p += c
			c = c * float64(n-i) / float64(i+1)
		}
		return p / math.Pow(2, float64(n))
	}
	k := 1
	for k+1 <= (n+1)/2 && 1-2*below(k+1) >= 0.95 {
		k++
	}
	return s[k-1], s[n-k], 1 - 2*below(k)
}

func (g goal) format(v float64) string {
	switch g.Unit {
	case "×":
		return fmt.Sprintf("%.2f×", v)
	case "µs":
		return fmt.Sprintf("%.2f µs", v)
	}
	return fmt.Sprintf("%.0f %s", v, g.Unit)
}

// goals are the targets this run measured, in the order.
func (r *report) goals() []goal {
	var gs []goal
	cpu := func(m measurement) float64 { return float64(m.CPUPerCheck) }
	for _, p := range []string{"allow", "deny"} {
		if rs := roundRatios(r.Runs, p, cpu); len(rs) > 0 {
			gs = append(gs, goal{What: p + ": CPU per Check, gatehouse ÷ bare", Target: cpuTarget, Unit: "×", Rounds: rs})
		}
	}
	if rs := stepCosts(r.Runs); len(rs) > 0 {
		gs = append(gs, goal{What: fmt.Sprintf("under load: CPU of each step after the first, (%s ÷ bare − allow ÷ bare) × bare(allow) ÷ %d",
			longChainPath, longChainSteps-1), Target: stepTarget, Unit: "µs", Rounds: rs, Interval: true})
	}
	if us, unit, ok := inProcessStepCost(r.GoBench); ok {
		gs = append(gs, goal{What: "in process: each step after the first, (" + chainThreeBench + " − " + chainOneBench + ") ÷ 2, " + unit,
			Target: stepTarget, Unit: "µs", Rounds: []float64{us}})
	}
	if n, ok := allocsBeyondDecoding(r.GoBench); ok {
		gs = append(gs, goal{What: "in process: allocations per Check beyond decoding (" + allocsWireBench + " − " + allocsDecode + ")",
			Target: allocsTarget, Unit: "allocs", Rounds: []float64{n}})
	}
	if rs := roundRatios(r.RateRuns, "allow", func(m measurement) float64 { return float64(m.P99) }); len(rs) > 0 {
		gs = append(gs, goal{What: fmt.Sprintf("allow at %d req/s (%.0f%% of the bare maximum): p99, gatehouse ÷ bare", r.Rate, rateShare*100),
			Target: p99Target, Unit: "×", Rounds: rs})
	}
	if r.OIDC != nil {
		withCompanions := func(m measurement) float64 {
			c := m.CPUPerCheck
			for _, x := range m.Companions {
				c += x
			}
			return float64(c)
		}
		for _, m := range []struct {
			mode   string
			target float64
		}{{"cookie", cookieTarget}, {"redis", redisTarget}} {
			if rs := roundRatios(r.OIDC.Runs, m.mode, withCompanions); len(rs) > 0 {
				gs = append(gs, goal{What: "OIDC " + m.mode + " session: CPU per Check with " + strings.Join(r.OIDC.Companions, " and ") + "'s, gatehouse ÷ bare",
					Target: m.target, Unit: "×", Rounds: rs})
			}
		}
	}
	return gs
}

// roundRatios is, for each round that loaded both servers with load, gatehouse's
// figure over the bare server's, in round order.
func roundRatios(runs []measurement, load string, figure func(measurement) float64) []float64 {
	return serverRatios(runs, load, "gatehouse", "bare", figure)
}

// serverRatios is, for each round that loaded both servers with load, the figure of
// server over that of base, in round order.
func serverRatios(runs []measurement, load, server, base string, figure func(measurement) float64) []float64 {
	byRound := ratiosOf(runs, load, server, base, figure)
	out := make([]float64, 0, len(byRound))
	for _, round := range sortedKeys(byRound) {
		out = append(out, byRound[round])
	}
	return out
}

// ratiosByRound is roundRatios by round number.
func ratiosByRound(runs []measurement, load string, figure func(measurement) float64) map[int]float64 {
	return ratiosOf(runs, load, "gatehouse", "bare", figure)
}

// ratiosOf is serverRatios by round number.
func ratiosOf(runs []measurement, load, server, base string, figure func(measurement) float64) map[int]float64 {
	byRound := map[int]map[string]measurement{}
	for _, m := range runs {
		if m.Path != load {
			continue
		}
		if byRound[m.Round] == nil {
			byRound[m.Round] = map[string]measurement{}
		}
		byRound[m.Round][m.Server] = m
	}
	out := map[int]float64{}
	for round, ms := range byRound {
		b, okB := ms[base]
		s, okS := ms[server]
		if okB && okS && figure(b) > 0 {
			out[round] = figure(s) / figure(b)
		}
	}
	return out
}

// stepCosts is, per round, what each step after the first costs under load: the
// slope from the one-step chain to the long one. Taking the difference of gatehouse's
// own figures would carry the drift of the machine between the two runs (it moves
// the figures by more than a step costs); each ratio is against the bare server run
// next to it, so the drift cancels: (long ÷ its bare − allow ÷ its bare) × the bare
// figure of allow, over the number of further steps.
func stepCosts(runs []measurement) []float64 {
	cpu := func(m measurement) float64 { return float64(m.CPUPerCheck) }
	one, long := ratiosByRound(runs, "allow", cpu), ratiosByRound(runs, longChainPath, cpu)
	bare := map[int]time.Duration{}
	for _, m := range runs {
		if m.Server == "bare" && m.Path == "allow" {
			bare[m.Round] = m.CPUPerCheck
		}
	}
	var out []float64
	for _, round := range sortedKeys(long) {
		if r1, ok := one[round]; ok {
			out = append(out, (long[round]-r1)*micros(bare[round])/float64(longChainSteps-1))
		}
	}
	return out
}

// inProcessStepCost is what each step after the first of BenchmarkChain costs, in µs,
// and which figure it is from. Best is BenchmarkChainStep's, which runs the one- and
// three-step chains in alternating batches and takes the median of the pairs: separate
// runs of BenchmarkChain differ by more than a step costs on a machine whose speed
// drifts. Else the process's CPU time per op of BenchmarkChain when it reports it (it
// counts the garbage collection the steps cause, on whatever CPU it runs), else its
// time per op.
func inProcessStepCost(bs []goBench) (float64, string, bool) {
	if st, ok := findGoBench(bs, chainStepBench); ok && st.StepCPUNs > 0 {
		return st.StepCPUNs / 1000, "CPU time, " + chainStepBench + " (alternating batches, median of the pairs)", true
	}
	one, okOne := findGoBench(bs, chainOneBench)
	three, okThree := findGoBench(bs, chainThreeBench)
	if !okOne || !okThree {
		return 0, "", false
	}
	if one.CPUNsPerOp > 0 && three.CPUNsPerOp > 0 {
		return (three.CPUNsPerOp - one.CPUNsPerOp) / 2 / 1000, "CPU time per op", true
	}
	return (three.NsPerOp - one.NsPerOp) / 2 / 1000, "time per op", true
}

func findGoBench(bs []goBench, name string) (goBench, bool) {
	for _, b := range bs {
		if b.Name == name {
			return b, true
		}
	}
	return goBench{}, false
}

// allocsBeyondDecoding is the wire Check's allocations less the decoding's.
func allocsBeyondDecoding(bs []goBench) (float64, bool) {
	wire, okW := findGoBench(bs, allocsWireBench)
	decode, okD := findGoBench(bs, allocsDecode)
	if !okW || !okD {
		return 0, false
	}
	return float64(wire.AllocsPerOp - decode.AllocsPerOp), true
}

func sortedKeys[V any](m map[int]V) []int { return slices.Sorted(maps.Keys(m)) }

// writeGoals renders gs as the table make bench opens with: each goal, every round,
// the median and whether it is met.
func writeGoals(b *strings.Builder, gs []goal) {
	b.WriteString("| goal | target | every round | median | |\n|---|---:|---|---:|---|\n")
	for _, g := range gs {
		rounds := make([]string, len(g.Rounds))
		for i, v := range g.Rounds {
			rounds[i] = g.format(v)
		}
		fmt.Fprintf(b, "| %s | ≤ %s | %s | %s | %s |\n", g.What, g.format(g.Target), strings.Join(rounds, ", "), g.format(g.Median()), g.verdict())
	}
	b.WriteString("\n")
}

// goals are the mTLS section's targets: the control plane's start, mTLS over plain
// text. It is judged on the median's interval: one start differs from the next by
// more than the target, so a median of a few rounds can fall on either side of it by
// chance.
func (m *mtlsResult) goals() []goal {
	var gs []goal
	if rs := armRatios(m.Starts, readyOf); len(rs) > 0 {
		gs = append(gs, goal{What: fmt.Sprintf("control plane at %d services: process start → both roles' first complete state, mTLS ÷ plain", m.N),
			Target: mtlsStartTarget, Unit: "×", Rounds: rs, Interval: true})
	}
	return gs
}
