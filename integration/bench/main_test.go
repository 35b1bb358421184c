package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

func defaults() options {
	var o options
	o.plugin.Duration, o.plugin.Concurrency, o.plugin.Rounds = 6*time.Second, 50, 5
	o.pluginSection, o.oidc, o.cp, o.doMTLS = true, true, true, true
	o.swaps, o.devRounds, o.mtlsRounds, o.cpSizes = 20, 20, 5, "10000,1000"
	o.cpo.Starts, o.cpo.Edits, o.cpo.ChurnRate = 3, 100, 10
	return o
}

func TestOnlySelectsSections(t *testing.T) {
	for _, tc := range []struct {
		only                string
		plugin, oidc, cp, m bool
		swaps, devRounds    int
		wantErr             bool
	}{
		{only: "", plugin: true, oidc: true, cp: true, m: true, swaps: 20, devRounds: 20},
		{only: "devloop", devRounds: 20},
		{only: "plugin,pluginload", plugin: true, swaps: 20},
		{only: "oidc,mtls", oidc: true, m: true},
		{only: "dev-loop", wantErr: true},
	} {
		t.Run(tc.only, func(t *testing.T) {
			o := defaults()
			o.only = tc.only
			err := o.validate()
			if (err != nil) != tc.wantErr {
				t.Fatalf("validate() = %v, wantErr %v", err, tc.wantErr)
			}
			if err != nil {
				return
			}
			if o.pluginSection != tc.plugin || o.oidc != tc.oidc || o.cp != tc.cp || o.doMTLS != tc.m || o.swaps != tc.swaps || o.devRounds != tc.devRounds {
				t.Errorf("plugin %v oidc %v controlplane %v mtls %v swaps %d devloop %d; want %v %v %v %v %d %d", o.pluginSection, o.oidc, o.cp, o.doMTLS,
					o.swaps, o.devRounds, tc.plugin, tc.oidc, tc.cp, tc.m, tc.swaps, tc.devRounds)
			}
			if want := []int{1000, 10000}; len(o.cpo.Sizes) != 2 || o.cpo.Sizes[0] != want[0] || o.cpo.Sizes[1] != want[1] {
				t.Errorf("-cp-sizes %q read as %v, want %v", o.cpSizes, o.cpo.Sizes, want)
			}
		})
	}
}

// TestBenchmarksFileIsGenerated checks that BENCHMARKS.md opens with the goal table and
// that its generated text is what -table -write writes from the stored results.
func TestBenchmarksFileIsGenerated(t *testing.T) {
	b, err := os.ReadFile("../../BENCHMARKS.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	if first, goals := strings.Index(doc, "\n## "), strings.Index(doc, "\n## Goals\n\n<!-- bench:goals:start -->"); first < 0 || first != goals {
		t.Errorf("BENCHMARKS.md does not open with its goal table: its first section should be \"## Goals\" and the table's markers")
	}
	rs, err := benchkit.LoadResults("results", tableOrder())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		var goals strings.Builder
		benchkit.WriteGoals(&goals, r.Goals)
		if r.Text != "" && !strings.Contains(r.Text, goals.String()) {
			t.Errorf("results/%s.json: its text does not hold the table of its goals", r.Section)
		}
	}
	want, err := render(doc, rs)
	if err != nil {
		t.Fatal(err)
	}
	if doc != want {
		t.Errorf("BENCHMARKS.md differs from what `go run ./integration/bench -table -write` writes from results/*.json; run it, or fix the text outside the markers:\n%s", cmp.Diff(want, doc))
	}
}
