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
