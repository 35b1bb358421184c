package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

var devLoopSection = section{name: "devloop",
	heading: "## Plugin author's live loop: a save until it serves (`make bench`)\n\n"}

// percentile is the p-th percentile of ds (0 < p <= 100), nearest rank.
func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(float64(len(s))*p/100+0.999999) - 1
	return s[max(0, min(rank, len(s)-1))]
}

// writeMedP99Max is a table row: label, median, p99, max.
func writeMedP99Max(b *strings.Builder, label string, ds []time.Duration) {
	fmt.Fprintf(b, "| %s | %s | %s | %s |\n", label, ms(median(ds)), ms(percentile(ds, 99)), ms(slices.Max(ds)))
}

// devLoopMarkdown renders the dev-loop section: the part of BENCHMARKS.md between the
// bench:devloop markers.
func (r *report) devLoopMarkdown() string {
	var b strings.Builder
	b.WriteString(r.measured(", load average " + r.DevLoopLoad))
	n := len(r.DevLoop)
	fmt.Fprintf(&b, "**From a save to serving.** `gatehouse dev --plugin-module` runs on a copy of `%s` made a module of "+
		"its own (the embedded examples use it as `required_header.so`). Each of %d rounds writes the source in place, "+
		"as an editor saves, with the allowed answer's `%s` header set to the round's number, and sends a Check to "+
		"dev's extauth every %s until one answers with it. Dev's log is followed meanwhile: *build started* is `%s` "+
		"(after the %s debounce), *built and checked* is `%s` (compile and link with the server's flags, "+
		"pre-flight and trial load, renamed into the plugin folder), *opened* is extauth's `%s` (its watcher, "+
		"pre-flight and plugin.Open; the trial load dev ran on that content is not run again). Percentiles are nearest rank: with %d rounds, p99 is the "+
		"slowest. The last two rows are durations, not offsets: the two parts of *built and checked* dev's log gives.\n\n", devLoopSource, n, devLoopHeader, checkEvery, msgBuilding, devDebounceNote, msgBuilt, msgOpened, n)
	b.WriteString("| from the save to | median | p99 | max |\n|---|---:|---:|---:|\n")
	rows := []struct {
		label string
		get   func(devRound) time.Duration
	}{
		{"build started", func(d devRound) time.Duration { return d.Building }},
		{"built and checked", func(d devRound) time.Duration { return d.Built }},
		{"opened by extauth", func(d devRound) time.Duration { return d.Opened }},
		{"**serving**: the first Check answered with the new header", func(d devRound) time.Duration { return d.Serving }},
		{"*of which go build* (compile and link)", func(d devRound) time.Duration { return d.GoBuild }},
		{"*of which the check* (pre-flight and trial load)", func(d devRound) time.Duration { return d.Check }},
	}
	for _, row := range rows {
		var ds []time.Duration
		for _, d := range r.DevLoop {
			ds = append(ds, row.get(d))
		}
		writeMedP99Max(&b, row.label, ds)
	}
	var serving []time.Duration
	for _, d := range r.DevLoop {
		serving = append(serving, d.Serving)
	}
	p99 := percentile(serving, 99)
	v := "met"
	if p99 >= devLoopTarget {
		v = fmt.Sprintf("**missed** (%d of %d saves took %s or more)", countAtLeast(serving, devLoopTarget), n, devLoopTarget)
	}
	fmt.Fprintf(&b, "\nTarget (issue 14): a save serves within %s, p99: %s; p99 %s, median %s.\n\n", devLoopTarget, v, ms(p99), ms(median(serving)))
	b.WriteString("<details><summary>Every save</summary>\n\n| round | build started | built and checked | opened | serving | go build | check |\n|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, d := range r.DevLoop {
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s |\n", d.Round, ms(d.Building), ms(d.Built), ms(d.Opened), ms(d.Serving), ms(d.GoBuild), ms(d.Check))
	}
	b.WriteString("\n</details>\n")
	return b.String()
}

// devDebounceNote is cmd/gatehouse's devDebounce, as the report states it.
const devDebounceNote = "50ms"
