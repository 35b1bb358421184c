package oidc

import (
	"flag"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
)

var update = flag.Bool("update", false, "rewrite testdata/*.md")

func TestMarkdownGolden(t *testing.T) {
	runs := checkload.Fixture(modeNames(), "bare", "gatehouse", 3)
	for i := range runs {
		if runs[i].Server == "gatehouse" {
			runs[i].Companions = []time.Duration{time.Duration(i) * time.Microsecond, 2 * time.Microsecond}
		}
	}
	end := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	res := &result{Runs: runs, Plugin: checkload.Fixture([]string{"allow"}, "bare", "gatehouse", 3),
		Companions: []string{"redis-server", "oidc-provider"}, CookieBytes: map[string]int{"cookie": 1234, "redis": 60},
		Expiry: end.Add(time.Hour), PreExpiry: 30 * time.Second, LoadEnd: end,
		GoBench: []benchkit.GoBench{{Name: "BenchmarkAuthorizeValidSession/cookie", Metrics: map[string]float64{"ns/op": 9100, "B/op": 5400, "allocs/op": 61}}}}
	o := Options{Options: checkload.Options{Duration: 6 * time.Second, Concurrency: 50, Rounds: 3}}
	benchkit.Golden(t, "testdata/oidc.md", res.markdown("Measured then.\n\n", o), *update)
}
