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

// EditWindowsAll are the closed windows of AuthConfig edits, each waiting for every
// replica, out of the gateway's rotation or not (Window.TookAll).
func (r *Run) EditWindowsAll() []time.Duration {
	var out []time.Duration
	for _, w := range r.Verdict.Windows {
		if w.What == "edit" && w.Closed {
			out = append(out, w.TookAll())
		}
	}
	return out
}

// CalmWindows are Windows(what) during which no disturbance was under way.
func (r *Run) CalmWindows(what string) []time.Duration {
	var out []time.Duration
	for _, w := range r.Verdict.Windows {
		if w.What == what && w.Closed && r.calm(w) {
			out = append(out, w.Took())
		}
	}
	return out
}

// calm says whether no disturbance was under way while w was open.
func (r *Run) calm(w Window) bool {
	return !slices.ContainsFunc(r.Events, func(e Event) bool { return !e.Start.After(w.End) && !e.End.Before(w.At) })
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

// Cause names what went on from t to end (end may be t): each disturbance under way
// meanwhile, with when it began relative to t, or else the last one that ended within
// ten seconds before t, or "steady churn".
func (r *Run) Cause(t, end time.Time) string {
	var during []string
	var last *Event
	for i, e := range r.Events {
		switch {
		case !e.Start.After(end) && !e.End.Before(t):
			rel := fmt.Sprintf("%s after it began", ms(t.Sub(e.Start)))
			if e.Start.After(t) {
				rel = fmt.Sprintf("began %s later", ms(e.Start.Sub(t)))
			}
			during = append(during, fmt.Sprintf("during the %s (%s)", e.Name, rel))
		case e.End.Before(t) && (last == nil || e.End.After(last.End)):
			last = &r.Events[i]
		}
	}
	switch {
	case len(during) > 0:
		return strings.Join(during, "; ")
	case last != nil && t.Sub(last.End) < 10*time.Second:
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
	row := func(name string, ds []time.Duration) {
		if len(ds) == 0 {
			fmt.Fprintf(&b, "| %s | 0 | | | |\n", name)
			return
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |\n", name, len(ds), ms(benchkit.Percentile(ds, 50)), ms(benchkit.Percentile(ds, 99)), ms(slices.Max(ds)))
	}
	for _, k := range []struct{ what, name string }{{"new", "new secured route"}, {"edit", "AuthConfig edit (its window)"}, {"delete", "route removal"}} {
		row(k.name, r.Windows(k.what))
		row(k.name+", no disturbance under way", r.CalmWindows(k.what))
		if k.what == "edit" {
			row(k.name+", also waiting for replicas out of the gateway's rotation", r.EditWindowsAll())
		}
	}
	b.WriteString("\nDisturbances: ")
	var evs []string
	for _, e := range r.Events {
		evs = append(evs, fmt.Sprintf("%s at %s, done in %s", e.Name, ms(e.Start.Sub(r.Start)), ms(e.End.Sub(e.Start))))
	}
	b.WriteString(strings.Join(evs, "; ") + ".\n\n")
	b.WriteString("Worst cases (the slowest windows of each kind, and what went on while they were open):\n\n")
	for _, what := range []string{"new", "edit", "delete"} {
		ws := slices.DeleteFunc(slices.Clone(v.Windows), func(w Window) bool { return w.What != what || !w.Closed })
		slices.SortFunc(ws, func(a, b Window) int { return int(b.Took() - a.Took()) })
		for _, w := range ws[:min(3, len(ws))] {
			fmt.Fprintf(&b, "- %s %s, route %d (%s → %s), written at %s: %s\n", what, ms(w.Took()), w.Route, w.From, w.To, ms(w.At.Sub(r.Start)), r.Cause(w.At, w.End))
		}
	}
	b.WriteString("\nWorst cases with no disturbance under way (and what ended last before them):\n\n")
	for _, what := range []string{"new", "edit", "delete"} {
		ws := slices.DeleteFunc(slices.Clone(v.Windows), func(w Window) bool { return w.What != what || !w.Closed || !r.calm(w) })
		slices.SortFunc(ws, func(a, b Window) int { return int(b.Took() - a.Took()) })
		for _, w := range ws[:min(3, len(ws))] {
			fmt.Fprintf(&b, "- %s %s, route %d (%s → %s), written at %s: %s\n", what, ms(w.Took()), w.Route, w.From, w.To, ms(w.At.Sub(r.Start)), r.Cause(w.At, w.End))
		}
	}
	for _, w := range r.Unclosed() {
		fmt.Fprintf(&b, "- never seen to take effect: %s of route %d (%s → %s), written at %s: %s\n", w.What, w.Route, w.From, w.To, ms(w.At.Sub(r.Start)), r.Cause(w.At, r.End))
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
				w.Class, w.Route, w.Req, kind, ms(w.Sent.Sub(r.Start)), ms(w.Recv.Sub(w.Sent)), got, w.Acceptable, r.Cause(w.Sent, w.Recv))
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
