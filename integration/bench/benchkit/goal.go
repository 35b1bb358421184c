package benchkit

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Goal is one target and what a run measured against it.
type Goal struct {
	What   string
	Target float64
	Unit   string    // "×", "µs", "ms", "MB" or a count such as "allocs"
	Rounds []float64 // the figure of each round, or the one figure of the goal
	// Interval judges the goal on the median's confidence interval instead of the
	// median alone, for a figure whose rounds scatter by about the target or more.
	Interval bool `json:",omitempty"`
	// Below means the figure must be under the target; otherwise at most the target.
	Below bool `json:",omitempty"`
}

// Latency is the goal that the p-th percentile of ds is under target.
func Latency(what string, target time.Duration, ds []time.Duration, p float64) Goal {
	return Goal{What: what, Target: Millis(target), Unit: "ms", Below: true, Rounds: []float64{Millis(Percentile(ds, p))}}
}

// Median is the figure the goal is judged on.
func (g Goal) Median() float64 { return Median(g.Rounds) }

// Met reports whether the median is within the target.
func (g Goal) Met() bool {
	if len(g.Rounds) == 0 {
		return false
	}
	return g.within(g.Median())
}

func (g Goal) within(v float64) bool { return v < g.Target || !g.Below && v == g.Target }

// Verdict is "met", "**not met**", or for an Interval goal whose median's interval
// holds the target, "undecided" with the interval.
func (g Goal) Verdict() string {
	if g.Interval && len(g.Rounds) > 1 {
		lo, hi, coverage := MedianInterval(g.Rounds)
		switch {
		case g.within(hi):
			return "met"
		case !g.within(lo):
			return "**not met**"
		}
		return fmt.Sprintf("**undecided**: the median's %.0f %% interval is %s to %s", 100*coverage, g.Format(lo), g.Format(hi))
	}
	if g.Met() {
		return "met"
	}
	return "**not met**"
}

// Format writes v in the goal's unit.
func (g Goal) Format(v float64) string {
	switch {
	case g.Unit == "×":
		return fmt.Sprintf("%.2f×", v)
	case g.Unit == "µs":
		return fmt.Sprintf("%.2f µs", v)
	case g.Unit == "ms" && v < 10:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f %s", v, g.Unit)
}

// TargetText is the target with its bound, such as "≤ 1.15×" or "< 100 ms".
func (g Goal) TargetText() string {
	if g.Below {
		return "< " + g.Format(g.Target)
	}
	return "≤ " + g.Format(g.Target)
}

// WriteGoals renders gs as a section's table of goals: each goal, every round, the
// median and the verdict. When every goal has one round it writes nothing: the goal
// table BENCHMARKS.md opens with says all of it then.
func WriteGoals(b *strings.Builder, gs []Goal) {
	if !slices.ContainsFunc(gs, func(g Goal) bool { return len(g.Rounds) > 1 }) {
		return
	}
	b.WriteString("| goal | target | every round | median | |\n|---|---:|---|---:|---|\n")
	for _, g := range gs {
		rounds := make([]string, len(g.Rounds))
		for i, v := range g.Rounds {
			rounds[i] = g.Format(v)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", g.What, g.TargetText(), strings.Join(rounds, ", "), g.Format(g.Median()), g.Verdict())
	}
	b.WriteString("\n")
}
