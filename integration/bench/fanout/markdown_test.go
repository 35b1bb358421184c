package fanout

import (
	"flag"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

var update = flag.Bool("update", false, "rewrite testdata/*.md")

func TestMarkdownGolden(t *testing.T) {
	ms := time.Millisecond
	r := &result{Options: Options{Clients: []int{10, 50, 200}, Resources: 10000}, Pinned: true, Load: "0.50 0.40 0.30"}
	for i, n := range r.Options.Clients {
		f := fleetResult{Clients: n, Load: "1.00 0.90 0.80", Ready: time.Duration(n) * 20 * ms, RSS: int64(200+n) << 20, Heap: int64(100+n/2) << 20}
		for j, kind := range kinds {
			s := editSeries{Kind: kind, CPU: time.Duration(j+1+i) * ms}
			for k := range 5 {
				s.Last = append(s.Last, time.Duration((j+1)*(k+1)*(i+1))*ms)
				s.Bytes = append(s.Bytes, int64(n*(k+1))<<16)
			}
			f.Edits = append(f.Edits, s)
		}
		r.Fleets = append(r.Fleets, f)
	}
	r.Churn = &churnResult{Duration: time.Minute, Edits: 600, RSS: []int64{400 << 20, 450 << 20, 420 << 20}, Heap: [2]int64{150 << 20, 152 << 20}, Load: "1.50 1.00 0.90"}
	r.Stalled = &stallResult{Limit: time.Minute, Others: []time.Duration{40 * ms, 50 * ms, 60 * ms}, Dropped: 61234 * ms,
		RSSBefore: 420 << 20, RSSStalled: 470 << 20, DropsMetric: 1, Load: "1.20 1.10 1.00"}
	for i := 1; i <= 2; i++ {
		s := stormResult{Clients: 200, Partial: i - 1, Load: "2.00 1.50 1.00"}
		for k := range 10 {
			s.Complete = append(s.Complete, time.Duration(i*(k+1)*300)*ms)
		}
		r.Storms = append(r.Storms, s)
	}
	goals := benchkit.GoalTable([]benchkit.Result{{Section: "fanout", Goals: r.goals()}})
	benchkit.Golden(t, "testdata/fanout.md", r.markdown("Measured then.\n\n")+goals, *update)
}
