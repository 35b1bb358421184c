package devloop

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// Section is where the section's text goes in BENCHMARKS.md.
var Section = benchkit.Section{Name: "devloop", Heading: "## Plugin author's live loop: a save until it serves\n\n"}

// Run times rounds saves of a module made by `gatehouse plugin new` outside the
// repository, then of a copy of the sample plugin, each under its own `gatehouse dev`.
func Run(ctx context.Context, env *benchkit.Env, rounds int) (benchkit.Result, error) {
	load := benchkit.LoadAverage()
	author, err := scaffold(ctx, env)
	if err != nil {
		return benchkit.Result{}, err
	}
	inRepo, err := sample(env)
	if err != nil {
		return benchkit.Result{}, err
	}
	var goals []benchkit.Goal
	var b strings.Builder
	for _, m := range []module{author, inRepo} {
		benchkit.Progress("timing %d saves of the %s with gatehouse dev --plugin-module", rounds, m.name)
		saves, err := loop(ctx, env, m, rounds)
		if err != nil {
			return benchkit.Result{}, fmt.Errorf("%s: %w", m.name, err)
		}
		serving := benchkit.Column(saves, func(s save) time.Duration { return s.Serving })
		goals = append(goals, benchkit.Latency("dev loop, "+m.name+": save → serving, p99", target, serving, 99))
		writeModule(&b, m, saves)
	}
	var md strings.Builder
	md.WriteString(env.Measured(", load average " + load))
	benchkit.WriteGoals(&md, goals)
	return env.Result(Section, goals, md.String()+b.String()), nil
}

// writeModule is one module's table: offsets from the save, then the two parts of
// *built and checked* dev's log gives, and every save folded.
func writeModule(b *strings.Builder, m module, saves []save) {
	of := func(get func(save) time.Duration) []time.Duration { return benchkit.Column(saves, get) }
	serving := benchkit.Median(of(func(s save) time.Duration { return s.Serving }))
	build := benchkit.Median(of(func(s save) time.Duration { return s.GoBuild }))
	check := benchkit.Median(of(func(s save) time.Duration { return s.Check }))
	replayed := 0
	for _, s := range saves {
		if s.Replayed {
			replayed++
		}
	}
	fmt.Fprintf(b, "**%s**, %d saves of `%s` (%d built by replaying the last go build's compile and link): of the median save → serving (%s), the build is %.0f %% (%s) and the check %.0f %% (%s).\n\n",
		m.name, len(saves), m.file, replayed, benchkit.Ms(serving), 100*float64(build)/float64(serving), benchkit.Ms(build),
		100*float64(check)/float64(serving), benchkit.Ms(check))
	var t strings.Builder
	benchkit.WriteDurations(&t, "from the save to", []benchkit.Row{
		{Label: "build started", Of: of(func(s save) time.Duration { return s.Building })},
		{Label: "built and checked", Of: of(func(s save) time.Duration { return s.Built })},
		{Label: "opened by extauth", Of: of(func(s save) time.Duration { return s.Opened })},
		{Label: "**serving**: the first Check answered with the new header", Of: of(func(s save) time.Duration { return s.Serving })},
		{Label: "*of which the build* (compile and link)", Of: of(func(s save) time.Duration { return s.GoBuild })},
		{Label: "*of which the check* (pre-flight and trial load)", Of: of(func(s save) time.Duration { return s.Check })},
	})
	benchkit.Fold(b, "From the save to serving, the "+m.name, t.String())
	fmt.Fprintf(b, "<details><summary>Every save of the %s</summary>\n\n", m.name)
	b.WriteString("| save | build started | built and checked | opened | serving | build | check |\n|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, s := range saves {
		how := "go build"
		if s.Replayed {
			how = "replayed"
		}
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %s (%s) | %s |\n", i+1, benchkit.Ms(s.Building), benchkit.Ms(s.Built),
			benchkit.Ms(s.Opened), benchkit.Ms(s.Serving), benchkit.Ms(s.GoBuild), how, benchkit.Ms(s.Check))
	}
	b.WriteString("\n</details>\n\n")
}
