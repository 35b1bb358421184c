package observe

import (
	"flag"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
)

var update = flag.Bool("update", false, "rewrite testdata/*.md")

func TestMarkdownGolden(t *testing.T) {
	runs := checkload.Fixture([]string{"allow"}, serverBare, serverOff, 3)
	runs = append(runs, checkload.Fixture([]string{"allow"}, serverTraced, serverLogged, 3)...)
	r := &result{Rounds: 3, Pinned: true, Runs: runs, Spans: 130, Checks: 13000, Records: 20000, LoadAvg: [2]string{"0.50 0.40 0.30", "1.00 0.90 0.80"}}
	o := Options{checkload.Options{Duration: 6 * time.Second, Concurrency: 50, Rounds: 3}}
	benchkit.Golden(t, "testdata/observe.md", r.markdown("Measured then.\n\n", o), *update)
}
