package controlplane

import (
	"flag"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds/xdsbench"
	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

var update = flag.Bool("update", false, "rewrite testdata/*.md")

// fixtureScale is a fixed control-plane result for golden tests: starts and edits of n
// services, every figure a function of its position.
func fixtureScale(n int) cpScale {
	ms := time.Millisecond
	sc := cpScale{N: n, Peak: int64(n) << 15, RSSEdited: int64(n) << 14}
	for i := 1; i <= 3; i++ {
		d := time.Duration(i * n / 1000)
		sc.Starts = append(sc.Starts, StartFigures{ReadyExtauth: 300*ms + d*ms, ReadyProxy: 320*ms + 2*d*ms, CPUReady: 400*ms + d*ms,
			OtherReady: float64(i) / 50, RSSReady: int64(n) << 13, FileReady: 20 << 20, PeakReady: int64(n+i) << 13})
	}
	sc.StartFigures = medianStart(sc.Starts)
	for j, k := range Kinds {
		var l xdsbench.Latencies
		for i := range 10 {
			l = append(l, time.Duration(j+1)*ms+time.Duration(i*i)*100*time.Microsecond)
		}
		sc.Edits = append(sc.Edits, EditSeries{Kind: k, Latencies: l, Publish: time.Duration(j+2) * 90 * time.Microsecond,
			CPU: time.Duration(j+3) * ms, OtherCPU: 0.04})
	}
	return sc
}

func TestMarkdownGolden(t *testing.T) {
	var samples []memSample
	for i := range 25 {
		samples = append(samples, memSample{At: time.Duration(i) * 1100 * time.Millisecond, RSS: int64(100+i%7) << 20, Heap: int64(40+i%5) << 20})
	}
	c := &cpResult{Options: Options{Starts: 3, Edits: 10}, Pinned: true, Scales: []cpScale{fixtureScale(1000), fixtureScale(10000)},
		Churn:   &churnResult{Rate: 10, Duration: 25 * time.Second, Edits: 250, Samples: samples, CaughtUp: 42 * time.Millisecond},
		Extauth: &extauthResult{Configs: 10000, Applied: 3100 * time.Millisecond, RSS: 150 << 20, RSSSettled: 140 << 20, HeapInuse: 60 << 20},
		GoBench: []benchkit.GoBench{
			{Package: "gatehouse.dev/gatehouse/controlplane/xds", Name: "BenchmarkFirstPublish/10000", Metrics: map[string]float64{"ns/op": 603e6, "B/op": 4938919, "allocs/op": 51000}},
			{Package: "gatehouse.dev/gatehouse/controlplane/pipeline", Name: "BenchmarkEdit", Metrics: map[string]float64{"ns/op": 31670, "B/op": 21564, "allocs/op": 210, "resources/op": 3}},
		}}
	benchkit.Golden(t, "testdata/controlplane.md", c.markdown("Measured then.\n\n"), *update)
}
