package xdsbench

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Edit is a series of changes, each shown by a new version of one resource.
type Edit struct {
	// Resource names the resource whose new version shows the i-th change.
	Resource func(i int) (typeURL, name string)
	// Apply makes the i-th change (publishes it, or writes it where the control plane
	// reads it).
	Apply func(i int) error
}

// Latencies are the times from edits to their new versions arriving on the stream.
type Latencies []time.Duration

// Measure makes n edits one after the other and times each from just before the edit
// to its new version arriving on w's stream.
func Measure(ctx context.Context, w *Watcher, n int, edit Edit, timeout time.Duration) (Latencies, error) {
	out := make(Latencies, 0, n)
	for i := range n {
		l, err := MeasureOne(ctx, w, i, edit, timeout)
		if err != nil {
			return out, err
		}
		out = append(out, l)
	}
	return out, nil
}

// MeasureOne makes the i-th edit and times it.
func MeasureOne(ctx context.Context, w *Watcher, i int, edit Edit, timeout time.Duration) (time.Duration, error) {
	typ, name := edit.Resource(i)
	old := w.Version(typ, name)
	start := time.Now()
	if err := edit.Apply(i); err != nil {
		return 0, fmt.Errorf("xdsbench: edit %d: %w", i, err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	at, err := w.WaitNew(ctx, typ, name, old)
	if err != nil {
		return 0, fmt.Errorf("xdsbench: edit %d of %s %s: %w", i, typ, name, err)
	}
	return at.Sub(start), nil
}

// Percentile is the p-th percentile (0 < p <= 100), nearest rank.
func (l Latencies) Percentile(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	rank := int(float64(len(s))*p/100+0.999999) - 1
	return s[max(0, min(rank, len(s)-1))]
}

// String is "n=… p50=… p99=… max=…".
func (l Latencies) String() string {
	return fmt.Sprintf("n=%d p50=%s p99=%s max=%s", len(l), l.Percentile(50), l.Percentile(99), l.Percentile(100))
}
