package main

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
	want := []goBench{
		{Package: "gatehouse.dev/gatehouse/server/chain", Name: "BenchmarkChain/allow", NsPerOp: 2345, BytesPerOp: 1736, AllocsPerOp: 16},
		{Package: "gatehouse.dev/gatehouse/server/chain", Name: "BenchmarkChain/deny", NsPerOp: 1523, BytesPerOp: 968, AllocsPerOp: 11},
		{Package: "gatehouse.dev/gatehouse/server", Name: "BenchmarkCheck/allow", NsPerOp: 12025, BytesPerOp: 3568, AllocsPerOp: 75},
		{Package: "gatehouse.dev/gatehouse/server", Name: "BenchmarkCheck/allow+decode", NsPerOp: 19482.5, BytesPerOp: 7072, AllocsPerOp: 166},
	}
	if diff := cmp.Diff(want, parseGoBench(string(out))); diff != "" {
		t.Errorf("parseGoBench() mismatch (-want +got):\n%s", diff)
	}
}

func TestMedianGoBench(t *testing.T) {
	runs := []goBench{
		{Package: "p", Name: "BenchmarkA", NsPerOp: 30, BytesPerOp: 3, AllocsPerOp: 3, CPUNsPerOp: 31},
		{Package: "p", Name: "BenchmarkB", NsPerOp: 7},
		{Package: "p", Name: "BenchmarkA", NsPerOp: 10, BytesPerOp: 1, AllocsPerOp: 1, CPUNsPerOp: 11},
		{Package: "p", Name: "BenchmarkA", NsPerOp: 20, BytesPerOp: 2, AllocsPerOp: 2, CPUNsPerOp: 21},
		{Package: "p", Name: "BenchmarkB", NsPerOp: 5},
	}
	want := []goBench{
		{Package: "p", Name: "BenchmarkA", NsPerOp: 20, BytesPerOp: 2, AllocsPerOp: 2, CPUNsPerOp: 21},
		{Package: "p", Name: "BenchmarkB", NsPerOp: 5}, // two runs: the lower middle one
	}
	if diff := cmp.Diff(want, medianGoBench(runs)); diff != "" {
		t.Errorf("medianGoBench (-want +got):\n%s", diff)
	}
}
