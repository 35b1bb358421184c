package benchkit

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// Median of xs; the mean of the middle two when len(xs) is even.
func Median[T float64 | time.Duration | int64](xs []T) T {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Percentile is the p-th percentile of ds (0 < p <= 100), nearest rank.
func Percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	rank := int(float64(len(s))*p/100+0.999999) - 1
	return s[max(0, min(rank, len(s)-1))]
}

// MedianInterval is a distribution-free confidence interval of the median of xs: the
// k-th smallest and k-th largest of them, with the largest k whose coverage
// (1 − 2·P(Binomial(n, ½) < k)) is at least 95 %, or k = 1 when none is (five rounds
// or fewer: 94 % for five). It returns the bounds and their coverage.
func MedianInterval(xs []float64) (lo, hi, coverage float64) {
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

// RoundRatios is, for each round in which both arms ran, figure(arm) ÷ figure(base),
// by round number. Rounds alternate which arm goes first, so a drift of the machine's
// speed favours neither; a ratio within a round cancels it.
func RoundRatios[M any](runs []M, key func(M) (round int, arm string), arm, base string, figure func(M) float64) map[int]float64 {
	byRound := map[int]map[string]M{}
	for _, m := range runs {
		round, a := key(m)
		if byRound[round] == nil {
			byRound[round] = map[string]M{}
		}
		byRound[round][a] = m
	}
	out := map[int]float64{}
	for round, ms := range byRound {
		b, okB := ms[base]
		x, okX := ms[arm]
		if okB && okX && figure(b) > 0 {
			out[round] = figure(x) / figure(b)
		}
	}
	return out
}

// InOrder is the values of m in the order of its keys.
func InOrder[V any](m map[int]V) []V {
	out := make([]V, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[k])
	}
	return out
}

// Alternate is the order of two arms in a round: a first in odd rounds, b in even ones.
func Alternate[T any](a, b T, round int) []T {
	if round%2 == 0 {
		return []T{b, a}
	}
	return []T{a, b}
}

// Row is one line of a table of durations: a label and its samples.
type Row struct {
	Label string
	Of    []time.Duration
}

// WriteDurations is a table of rows, each with the min, median, p99 (nearest rank) and
// max of its samples; first names the label column.
func WriteDurations(b *strings.Builder, first string, rows []Row) {
	fmt.Fprintf(b, "| %s | min | median | p99 | max |\n|---|---:|---:|---:|---:|\n", first)
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", r.Label, Ms(slices.Min(r.Of)), Ms(Median(r.Of)), Ms(Percentile(r.Of, 99)), Ms(slices.Max(r.Of)))
	}
	b.WriteString("\n")
}

// Column is get of each of xs, in order: one row of a table of durations.
func Column[T any](xs []T, get func(T) time.Duration) []time.Duration {
	out := make([]time.Duration, len(xs))
	for i, x := range xs {
		out[i] = get(x)
	}
	return out
}

// MiB is b in mebibytes, a goal's figure.
func MiB(b int64) float64 { return float64(b) / (1 << 20) }

// Millis is d in milliseconds, a goal's figure.
func Millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Ms is d in milliseconds with two decimals.
func Ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", Millis(d)) }

// Micros is d in microseconds.
func Micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
