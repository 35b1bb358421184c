package benchkit

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseGoBench(t *testing.T) {
	out, err := os.ReadFile("testdata/gotest.txt")
	if err != nil {
		t.Fatal(err)
	}
	m := func(ns, bytes, allocs float64) map[string]float64 {
		return map[string]float64{"ns/op": ns, "B/op": bytes, "allocs/op": allocs}
	}
	want := []GoBench{
		{Package: "gatehouse.dev/gatehouse/server/chain", Name: "BenchmarkChain/allow", Metrics: m(2345, 1736, 16)},
		{Package: "gatehouse.dev/gatehouse/server/chain", Name: "BenchmarkChain/deny", Metrics: m(1523, 968, 11)},
		{Package: "gatehouse.dev/gatehouse/server", Name: "BenchmarkCheck/allow", Metrics: m(12025, 3568, 75)},
		{Package: "gatehouse.dev/gatehouse/server", Name: "BenchmarkCheck/allow+decode", Metrics: m(19482.5, 7072, 166)},
	}
	if diff := cmp.Diff(want, ParseGoBench(string(out))); diff != "" {
		t.Errorf("ParseGoBench() mismatch (-want +got):\n%s", diff)
	}
}

func TestMedianGoBench(t *testing.T) {
	a := func(ns, bytes, allocs, cpu float64) GoBench {
		return GoBench{Package: "p", Name: "BenchmarkA", Metrics: map[string]float64{"ns/op": ns, "B/op": bytes, "allocs/op": allocs, "cpu-ns/op": cpu}}
	}
	b := func(ns float64) GoBench {
		return GoBench{Package: "p", Name: "BenchmarkB", Metrics: map[string]float64{"ns/op": ns}}
	}
	runs := []GoBench{a(30, 3, 3, 31), b(7), a(10, 1, 1, 11), a(20, 2, 2, 21), b(5)}
	want := []GoBench{
		a(20, 2, 2, 21),
		b(5), // two runs: the lower middle one
	}
	if diff := cmp.Diff(want, MedianGoBench(runs)); diff != "" {
		t.Errorf("MedianGoBench (-want +got):\n%s", diff)
	}
}
