package oidc

import (
	"slices"
	"testing"

	"gatehouse.dev/gatehouse/integration/testbin"
)

func TestHarnessTB(t *testing.T) {
	tb := &harnessTB{dir: t.TempDir()}
	var order []string
	tb.Cleanup(func() { order = append(order, "first") })
	reached := false
	err := tb.do(func() {
		tb.Cleanup(func() { order = append(order, "second") })
		tb.Fatalf("harness: %s is missing", "redis-server")
		reached = true
	})
	if err == nil || err.Error() != "harness: redis-server is missing" || reached {
		t.Errorf("do() = %v, reached after Fatalf: %v; want the Fatalf message and nothing after it", err, reached)
	}
	if err := tb.do(func() {}); err != nil {
		t.Errorf("do() of a function that does not fail = %v", err)
	}
	tb.cleanup()
	tb.cleanup()
	if want := []string{"second", "first"}; !slices.Equal(order, want) {
		t.Errorf("cleanups ran %v, want %v once each", order, want)
	}
}

// The harness runs redis-server and the provider with testbin, whose cleanup asks
// Failed: with the nil testing.TB that harnessTB embeds, the section panicked after
// its measurement, when it stopped them.
func TestHarnessTBStopsTestbinProcesses(t *testing.T) {
	tb := &harnessTB{dir: t.TempDir()}
	var p *testbin.Process
	if err := tb.do(func() { p = testbin.Start(tb, nil, "sleep", "30") }); err != nil {
		t.Fatal(err)
	}
	tb.cleanup()
	if !p.Exited() {
		t.Error("sleep still runs after cleanup")
	}
}
