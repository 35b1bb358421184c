package checkload

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseGhz(t *testing.T) {
	b, err := os.ReadFile("testdata/ghz.json")
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseGhz(b)
	if err != nil {
		t.Fatal(err)
	}
	want := Measurement{Count: 41344, RPS: 20646.16415408565, P50: 1996060, P99: 7736153, Errors: 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseGhz() mismatch (-want +got):\n%s", diff)
	}
}

func TestParseGhzRejects(t *testing.T) {
	for _, tc := range []struct{ name, doc string }{
		{name: "not JSON", doc: "Summary:\n  Count: 3"},
		{name: "no percentiles", doc: `{"count": 3, "rps": 1, "latencyDistribution": []}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseGhz([]byte(tc.doc)); err == nil {
				t.Error("parseGhz() accepted it")
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	m := func(round int, server, path string, rps float64, p99, cpu time.Duration) Measurement {
		return Measurement{Round: round, Server: server, Path: path, RPS: rps, P50: p99 / 2, P99: p99, CPUPerCheck: cpu}
	}
	runs := []Measurement{
		m(1, "bare", "allow", 100, 4*time.Millisecond, 40*time.Microsecond),
		m(1, "gatehouse", "allow", 80, 6*time.Millisecond, 60*time.Microsecond),
		m(2, "gatehouse", "allow", 90, 8*time.Millisecond, 50*time.Microsecond),
		m(2, "bare", "allow", 120, 2*time.Millisecond, 44*time.Microsecond),
		m(3, "bare", "allow", 110, 3*time.Millisecond, 42*time.Microsecond),
	}
	want := []Summary{
		{Server: "bare", Path: "allow", RPS: 110, P50: 1500 * time.Microsecond, P99: 3 * time.Millisecond, CPUPerCheck: 42 * time.Microsecond},
		{Server: "gatehouse", Path: "allow", RPS: 85, P50: 3500 * time.Microsecond, P99: 7 * time.Millisecond, CPUPerCheck: 55 * time.Microsecond},
	}
	if diff := cmp.Diff(want, Summarize(runs, []string{"allow"}, "bare", "gatehouse")); diff != "" {
		t.Errorf("Summarize() mismatch (-want +got):\n%s", diff)
	}
}

func TestSummarizeCompanions(t *testing.T) {
	m := func(round int, cpu, redis time.Duration) Measurement {
		return Measurement{Round: round, Server: "gatehouse", Path: "redis", CPUPerCheck: cpu, Companions: []time.Duration{redis, 0}}
	}
	runs := []Measurement{m(1, 80*time.Microsecond, 12*time.Microsecond), m(2, 90*time.Microsecond, 14*time.Microsecond)}
	want := []Summary{{Server: "gatehouse", Path: "redis", CPUPerCheck: 85 * time.Microsecond, Companions: []time.Duration{13 * time.Microsecond, 0}}}
	if diff := cmp.Diff(want, Summarize(runs, []string{"cookie", "redis"}, "bare", "gatehouse")); diff != "" {
		t.Errorf("Summarize() mismatch (-want +got):\n%s", diff)
	}
}

func TestAtRateNeedsFullSpeedRuns(t *testing.T) {
	ph := Phase{Base: &Server{Name: "bare"}, Server: &Server{Name: "gatehouse"}, Loads: []string{"allow"}}
	full := []Measurement{{Server: "gatehouse", Path: "allow", RPS: 900}, {Server: "bare", Path: "deny", RPS: 1000}}
	if _, _, err := (&Loader{}).AtRate(t.Context(), ph, full, 1); err == nil {
		t.Error("AtRate() without a full-speed run of the base server on the load = nil error")
	}
}
