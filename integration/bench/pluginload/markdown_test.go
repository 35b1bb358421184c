package pluginload

import (
	"flag"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

var update = flag.Bool("update", false, "rewrite testdata/*.md")

func TestMarkdownGolden(t *testing.T) {
	ms := time.Millisecond
	var ss []swap
	var alone []time.Duration
	for i := 1; i <= 4; i++ {
		d := time.Duration(i)
		ss = append(ss, swap{Version: i, Appeared: i == 1, Serving: 90*ms + d*7*ms, Checks: 10 + i,
			observed: observed{Detected: 100*ms + d*ms, Accepted: 150*ms + d*3*ms, TrialStart: 110*ms + d*ms, TrialEnd: 140*ms + d*2*ms}})
		alone = append(alone, 30*ms+d*ms)
	}
	goals := []benchkit.Goal{{What: "plugin load: a new .so → serving, p99", Target: 150, Unit: "ms", Below: true, Rounds: []float64{118}}}
	benchkit.Golden(t, "testdata/pluginload.md", markdown("Measured then.\n\n", ss, alone, goals), *update)
}
