package benchkit

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWriteGoals(t *testing.T) {
	var b strings.Builder
	WriteGoals(&b, []Goal{
		{What: "allow", Target: 1.15, Unit: "×", Rounds: []float64{1.2, 1.1, 1.12}},
		{What: "deny", Target: 1.15, Unit: "×", Rounds: []float64{1.3}},
	})
	for _, want := range []string{
		"| allow | ≤ 1.15× | 1.20×, 1.10×, 1.12× | 1.12× | met |",
		"| deny | ≤ 1.15× | 1.30× | 1.30× | **not met** |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteGoals() has no line %q:\n%s", want, b.String())
		}
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
		lo, hi, cover := MedianInterval(c.xs)
		if lo != c.lo || hi != c.hi || math.Abs(cover-c.cover) > 1e-9 {
			t.Errorf("MedianInterval(%v) = %v, %v, %.4f; want %v, %v, %.4f", c.xs, lo, hi, cover, c.lo, c.hi, c.cover)
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
		g := Goal{What: "step", Target: 1, Unit: "µs", Rounds: c.rounds, Interval: true}
		if got := g.Verdict(); got != c.want {
			t.Errorf("verdict of %v = %q, want %q", c.rounds, got, c.want)
		}
	}
	// Without Interval, the median decides, as for the ratio goals.
	if got := (Goal{Target: 1.15, Unit: "×", Rounds: []float64{1.0, 1.3, 1.1}}).Verdict(); got != "met" {
		t.Errorf("median goal verdict = %q, want met", got)
	}
}

func TestBelowGoalIsNotMetAtTheTarget(t *testing.T) {
	for _, c := range []struct {
		g    Goal
		want bool
	}{
		{Goal{Target: 1000, Unit: "ms", Rounds: []float64{1000}, Below: true}, false},
		{Goal{Target: 1000, Unit: "ms", Rounds: []float64{999}, Below: true}, true},
		{Goal{Target: 20, Unit: "allocs", Rounds: []float64{20}}, true},
	} {
		if got := c.g.Met(); got != c.want {
			t.Errorf("%s of %v: Met() = %v, want %v", c.g.TargetText(), c.g.Rounds, got, c.want)
		}
	}
}

func TestGoalTableFromStoredResults(t *testing.T) {
	dir := t.TempDir()
	for _, r := range []Result{
		{Section: "devloop", Date: "2026-11-27", Command: "go run ./integration/bench -only devloop",
			Goals: []Goal{{What: "save → serving, p99", Target: 1000, Unit: "ms", Rounds: []float64{1480}, Below: true}}},
		{Section: "plugin", Date: "2026-11-26", Command: "go run ./integration/bench",
			Goals: []Goal{{What: "allow", Target: 1.15, Unit: "×", Rounds: []float64{1.1, 1.2, 1.0}}, {What: "deny", Target: 1.15, Unit: "×", Rounds: []float64{1.3}}}},
	} {
		if err := SaveResult(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := LoadResults(dir, []string{"plugin", "oidc", "devloop"})
	if err != nil {
		t.Fatal(err)
	}
	want := "| section | goal | target | latest | verdict | date | command |\n|---|---|---:|---:|---|---|---|\n" +
		"| plugin | allow | ≤ 1.15× | 1.10× | met | 2026-11-26 | `go run ./integration/bench` |\n" +
		"| plugin | deny | ≤ 1.15× | 1.30× | **not met** | 2026-11-26 | 〃 |\n" +
		"| devloop | save → serving, p99 | < 1000 ms | 1480 ms | **not met** | 2026-11-27 | `go run ./integration/bench -only devloop` |\n"
	if got := GoalTable(rs); got != want {
		t.Errorf("GoalTable() =\n%s\nwant\n%s", got, want)
	}
}

func TestLatencyGoal(t *testing.T) {
	ds := []time.Duration{30 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond}
	got := Latency("p99", 150*time.Millisecond, ds, 99)
	want := Goal{What: "p99", Target: 150, Unit: "ms", Below: true, Rounds: []float64{30}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Latency() mismatch (-want +got):\n%s", diff)
	}
}
