package plugin

import (
	"flag"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
)

var update = flag.Bool("update", false, "rewrite testdata/*.md")

func TestMarkdownGolden(t *testing.T) {
	if !benchkit.CanPin() {
		t.Skip("the text says what was pinned: the golden file is of a machine that pins")
	}
	f := &figures{
		Runs:     checkload.Fixture(checkload.PathNames(), "bare", "gatehouse", 3),
		RateRuns: checkload.Fixture([]string{"allow"}, "bare", "gatehouse", 2),
		Unpinned: checkload.Fixture(checkload.PathNames(), "bare", "gatehouse", 1),
		Rate:     6300,
		GoBench: []benchkit.GoBench{
			bench("BenchmarkChain/allow", 2900, 2500, 0, 16), bench("BenchmarkChain/chain3", 5100),
			bench("BenchmarkChainStep", 8000, 0, 760), bench("BenchmarkCheck/allow/wire", 0, 0, 0, 118), bench("BenchmarkCheck/decode", 0, 0, 0, 98),
		},
	}
	o := Options{Options: checkload.Options{Duration: 6 * time.Second, Concurrency: 50, Rounds: 3}, RateRounds: 2}
	benchkit.Golden(t, "testdata/plugin.md", f.markdown("Measured then.\n\n", o), *update)
}
