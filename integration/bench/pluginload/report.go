package pluginload

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// Section is where the section's text goes in BENCHMARKS.md.
var Section = benchkit.Section{Name: "pluginload", Heading: "## Plugin load time: a new .so until it serves\n\n"}

// Targets: a new .so serves within a second, trial load included (issue 3); p99
// under 150ms (issue 14).
const (
	loadTarget    = time.Second
	loadP99Target = 150 * time.Millisecond
)

// Run builds swaps versions of the load plugin, times each from its rename into the
// plugin folder to serving, then times the trial load of each alone.
func Run(ctx context.Context, env *benchkit.Env, swaps int) (benchkit.Result, error) {
	benchkit.Progress("building %d versions of the load plugin with gatehouse plugin build", swaps)
	versions, err := buildLoadPlugins(ctx, env.Root, env.Tmp, env.Bins.Gatehouse, swaps)
	if err != nil {
		return benchkit.Result{}, err
	}
	load := benchkit.LoadAverage()
	ss, err := runSwaps(ctx, env, versions)
	if err != nil {
		return benchkit.Result{}, err
	}
	benchkit.Progress("timing the trial load alone on each version")
	alone, err := timeTrials(ctx, env.Bins.Gatehouse, versions)
	if err != nil {
		return benchkit.Result{}, err
	}
	serving := benchkit.Column(ss, func(s swap) time.Duration { return s.Serving })
	goals := []benchkit.Goal{benchkit.Latency("plugin load: a new .so → serving, slowest", loadTarget, serving, 100),
		benchkit.Latency("plugin load: a new .so → serving, p99", loadP99Target, serving, 99)}
	return env.Result(Section, goals, markdown(env.Measured(", load average "+load), ss, alone, goals)), nil
}

func markdown(measured string, ss []swap, alone []time.Duration, goals []benchkit.Goal) string {
	var b strings.Builder
	b.WriteString(measured)
	benchkit.WriteGoals(&b, goals)
	of := func(get func(swap) time.Duration) []time.Duration { return benchkit.Column(ss, get) }
	benchkit.WriteDurations(&b, fmt.Sprintf("%d swaps, from the rename to", len(ss)), []benchkit.Row{
		{Label: "`" + msgChanged + "` logged", Of: of(func(s swap) time.Duration { return s.Detected })},
		{Label: "trial-load child started (or the spare handed the file)", Of: of(func(s swap) time.Duration { return s.TrialStart })},
		{Label: "trial-load child gone", Of: of(func(s swap) time.Duration { return s.TrialEnd })},
		{Label: "`" + msgAccepted + "` logged", Of: of(func(s swap) time.Duration { return s.Accepted })},
		{Label: "**serving**: the first Check allowed with the new header", Of: of(func(s swap) time.Duration { return s.Serving })},
		{Label: "*(trial-load child's life)*", Of: of(swap.trial)},
		{Label: "*(changed → accepted: pre-flight, trial load, open, build)*", Of: of(func(s swap) time.Duration { return s.Accepted - s.Detected })},
		{Label: "*(the trial load alone: `gatehouse plugin __trial` on each version, afterwards)*", Of: alone},
	})
	fmt.Fprintf(&b, "Resolution: %s for serving, %s for the log and /proc columns.\n\n", checkEvery, observeEvery)
	b.WriteString("<details><summary>Every swap</summary>\n\n| version | folder had | changed | trial-load child | accepted | serving | Checks sent |\n|---:|---|---:|---:|---:|---:|---:|\n")
	for _, s := range ss {
		before := "version " + fmt.Sprint(s.Version-1)
		if s.Appeared {
			before = "no plugin"
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s – %s | %s | %s | %d |\n", s.Version, before, benchkit.Ms(s.Detected),
			benchkit.Ms(s.TrialStart), benchkit.Ms(s.TrialEnd), benchkit.Ms(s.Accepted), benchkit.Ms(s.Serving), s.Checks)
	}
	b.WriteString("\n</details>\n")
	return b.String()
}
