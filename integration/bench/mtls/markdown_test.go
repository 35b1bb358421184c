package mtls

import (
	"flag"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds/xdsbench"
	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
	"gatehouse.dev/gatehouse/integration/bench/controlplane"
)

var update = flag.Bool("update", false, "rewrite testdata/*.md")

func TestMarkdownGolden(t *testing.T) {
	ms := time.Millisecond
	m := &mtlsResult{N: 10000, Edits: 10, Rounds: 3, Pinned: true, Rate: 6300,
		Checks: checkload.Fixture([]string{"allow"}, modePlain, modeMTLS, 3), RateChecks: checkload.Fixture([]string{"allow"}, modePlain, modeMTLS, 3)}
	for round := 1; round <= 3; round++ {
		for i, mode := range benchkit.Alternate(modePlain, modeMTLS, round) {
			d := time.Duration(round + 2*i)
			arm := cpArm{Round: round, Mode: mode, StartFigures: controlplane.StartFigures{ReadyExtauth: 900*ms + d*10*ms, ReadyProxy: 1000*ms + d*20*ms,
				CPUReady: 1200*ms + d*ms, OtherReady: float64(d) / 100}}
			for j, k := range mtlsKinds {
				arm.Edits = append(arm.Edits, controlplane.EditSeries{Kind: k, Latencies: xdsbench.Latencies{time.Duration(j+1) * d * ms, 5 * ms, 2 * ms}})
			}
			m.Starts = append(m.Starts, arm)
		}
	}
	o := Options{Options: checkload.Options{Duration: 6 * time.Second, Concurrency: 50, Rounds: 3}, RateRounds: 3, Services: 10000, Edits: 10}
	benchkit.Golden(t, "testdata/mtls.md", m.markdown("Measured then.\n\n", o), *update)
}
