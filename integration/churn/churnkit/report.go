package churnkit

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// Windows are the closed windows of the changes of one kind ("new", "edit", "delete").
func (r *Run) Windows(what string) []time.Duration {
	var out []time.Duration
	for _, w := range r.Verdict.Windows {
		if w.What == what && w.Closed {
			out = append(out, w.Took())
		}
	}
	return out
}

// Unclosed are the changes never seen to take effect.
func (r *Run) Unclosed() []Window {
	var out []Window
	for _, w := range r.Verdict.Windows {
		if !w.Closed {
			out = append(out, w)
		}
	}
	return out
}

// Cause names what went on around t: the disturbance under way then, or the last one
// that began before it (with how long before), or "steady churn".
func (r *Run) Cause(t time.Time) string {
	var last *Event
	for i, e := range r.Events {
		if !e.Start.After(t) {
			if !e.End.Before(t) {
				return fmt.Sprintf("during the %s (%s after it began)", e.Name, ms(t.Sub(e.Start)))
			}
			if last == nil || e.Start.After(last.Start) {
				last = &r.Events[i]
			}
		}
	}
	if last != nil && t.Sub(last.End) < 10*time.Second {
		return fmt.Sprintf("%s after the %s was done", ms(t.Sub(last.End)), last.Name)
	}
	return "steady churn"
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", benchkit.Millis(d)) }

// Summary is the run in Markdown: counts, windows, the worst of them and every wrong
// answer (the first maxWrong in full) with what went on around it.
func (r *Run) Summary(maxWrong int) string {
	var b strings.Builder
	v := r.Verdict
	fmt.Fprintf(&b, "%d routes, %s: %d steady requests (%.0f a second; %d not sent, every worker busy) and %d poller requests. "+
		"Changes: %d new secured routes, %d AuthConfig edits, %d removals.\n\n",
		r.Routes, r.End.Sub(r.Start).Round(time.Second), v.Requests, float64(v.Requests)/r.End.Sub(r.Start).Seconds(), r.Unsent, v.Polls,
		count(r.Changes, "new"), count(r.Changes, "edit"), count(r.Changes, "delete"))
	fmt.Fprintf(&b, "| 5xx or no answer | wrongly allowed | wrongly denied | wrong status of a denial | changes never seen to take effect |\n|---:|---:|---:|---:|---:|\n| %d | %d | %d | %d | %d |\n\n",
		v.Failed, v.WronglyAllowed, v.WronglyDenied, v.WrongStatuses, len(r.Unclosed()))
	b.WriteString("| from files written to the first answer of the new state | changes | p50 | p99 | slowest |\n|---|---:|---:|---:|---:|\n")
	for _, k := range []struct{ what, name string }{{"new", "new secured route"}, {"edit", "AuthConfig edit (its window)"}, {"delete", "route removal"}} {
		ds := r.Windows(k.what)
		if len(ds) == 0 {
			fmt.Fprintf(&b, "| %s | 0 | | | |\n", k.name)
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |\n", k.name, len(ds), ms(benchkit.Percentile(ds, 50)), ms(benchkit.Percentile(ds, 99)), ms(slices.Max(ds)))
	}
	b.WriteString("\nDisturbances: ")
	var evs []string
	for _, e := range r.Events {
		evs = append(evs, fmt.Sprintf("%s at %s, done in %s", e.Name, ms(e.Start.Sub(r.Start)), ms(e.End.Sub(e.Start))))
	}
	b.WriteString(strings.Join(evs, "; ") + ".\n\n")
	b.WriteString("Worst cases (the slowest windows of each kind, and what went on when their files were written):\n\n")
	for _, what := range []string{"new", "edit", "delete"} {
		ws := slices.DeleteFunc(slices.Clone(v.Windows), func(w Window) bool { return w.What != what || !w.Closed })
		slices.SortFunc(ws, func(a, b Window) int { return int(b.Took() - a.Took()) })
		for _, w := range ws[:min(3, len(ws))] {
			fmt.Fprintf(&b, "- %s %s, route %d (%s → %s), written at %s: %s\n", what, ms(w.Took()), w.Route, w.From, w.To, ms(w.At.Sub(r.Start)), r.Cause(w.At))
		}
	}
	for _, w := range r.Unclosed() {
		fmt.Fprintf(&b, "- never seen to take effect: %s of route %d (%s → %s), written at %s: %s\n", w.What, w.Route, w.From, w.To, ms(w.At.Sub(r.Start)), r.Cause(w.At))
	}
	if len(v.Wrong) > 0 {
		fmt.Fprintf(&b, "\nWrong answers (%d; the first %d):\n\n", len(v.Wrong), min(maxWrong, len(v.Wrong)))
		for _, w := range v.Wrong[:min(maxWrong, len(v.Wrong))] {
			got := fmt.Sprint(w.Status)
			if w.Err != "" {
				got = "no answer: " + w.Err
			}
			kind := "steady"
			if w.Poll {
				kind = "poller"
			}
			fmt.Fprintf(&b, "- %s: route %d, %s (%s), sent at %s, answered %s after: %s, want one of %v; %s\n",
				w.Class, w.Route, w.Req, kind, ms(w.Sent.Sub(r.Start)), ms(w.Recv.Sub(w.Sent)), got, w.Acceptable, r.Cause(w.Sent))
		}
	}
	return b.String()
}

func count(cs []Change, what string) int {
	n := 0
	for _, c := range cs {
		if c.What == what {
			n++
		}
	}
	return n
}
