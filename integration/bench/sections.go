package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
	"gatehouse.dev/gatehouse/integration/bench/churn"
	"gatehouse.dev/gatehouse/integration/bench/controlplane"
	"gatehouse.dev/gatehouse/integration/bench/devloop"
	"gatehouse.dev/gatehouse/integration/bench/fanout"
	"gatehouse.dev/gatehouse/integration/bench/mtls"
	"gatehouse.dev/gatehouse/integration/bench/observe"
	"gatehouse.dev/gatehouse/integration/bench/oidc"
	"gatehouse.dev/gatehouse/integration/bench/plugin"
	"gatehouse.dev/gatehouse/integration/bench/pluginload"
)

// sections are every section, in the order they run and the goal table lists them.
var sections = []benchkit.Section{plugin.Section, oidc.Section, pluginload.Section, devloop.Section, controlplane.Section, mtls.Section, observe.Section, churn.Section, fanout.Section}

// options are the command-line flags.
type options struct {
	plugin                          plugin.Options
	pluginSection, oidc, cp, doMTLS bool
	oidcProfile                     string
	swaps, devRounds, mtlsRounds    int
	cpSizes, only, file, results    string
	cpo                             controlplane.Options
	doChurn                         bool
	churn                           churn.Options
	write, table                    bool
	observe                         bool
	observeRounds                   int
	fanout                          bool
	fanoutClients                   string
	fo                              fanout.Options
}

// goalTable is the table BENCHMARKS.md opens with.
var goalTable = benchkit.Section{Name: "goals", Heading: "## Goals\n\n"}

// measure builds the binaries and runs each section asked for, in order.
func measure(ctx context.Context, o options, root string) ([]benchkit.Result, error) {
	if o.oidc {
		if err := oidc.CheckDeps(root); err != nil {
			return nil, err
		}
	}
	tmp, err := os.MkdirTemp("", "gatehouse-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	env, err := benchkit.NewEnv(ctx, tmp)
	if err != nil {
		return nil, err
	}
	defer env.Procs.StopAll()
	var pluginRuns []checkload.Measurement
	runs := []struct {
		name string
		on   bool
		run  func() (benchkit.Result, error)
	}{
		{"plugin", o.pluginSection, func() (r benchkit.Result, err error) {
			r, pluginRuns, err = plugin.Run(ctx, env, o.plugin)
			return r, err
		}},
		{"oidc", o.oidc, func() (benchkit.Result, error) {
			return oidc.Run(ctx, env, oidc.Options{Options: o.plugin.Options, GoBench: o.plugin.GoBench, Profile: o.oidcProfile}, pluginRuns)
		}},
		{"pluginload", o.swaps > 0, func() (benchkit.Result, error) { return pluginload.Run(ctx, env, o.swaps) }},
		{"devloop", o.devRounds > 0, func() (benchkit.Result, error) { return devloop.Run(ctx, env, o.devRounds) }},
		{"controlplane", o.cp, func() (benchkit.Result, error) {
			cpo := o.cpo
			cpo.GoBench = o.plugin.GoBench
			return controlplane.Run(ctx, env, cpo)
		}},
		{"mtls", o.doMTLS, func() (benchkit.Result, error) {
			mo := mtls.Options{Options: o.plugin.Options, RateRounds: o.plugin.RateRounds, Services: o.cpo.Sizes[len(o.cpo.Sizes)-1], Edits: o.cpo.Edits}
			mo.Rounds = o.mtlsRounds
			return mtls.Run(ctx, env, mo)
		}},
		{"observe", o.observe, func() (benchkit.Result, error) {
			oo := observe.Options{Options: o.plugin.Options}
			oo.Rounds = o.observeRounds
			return observe.Run(ctx, env, oo)
		}},
		{"churn", o.doChurn, func() (benchkit.Result, error) { return churn.Run(ctx, env, o.churn) }},
		{"fanout", o.fanout, func() (benchkit.Result, error) { return fanout.Run(ctx, env, o.fo) }},
	}
	var rs []benchkit.Result
	for _, s := range runs {
		if !s.on {
			continue
		}
		r, err := s.run()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		rs = append(rs, r)
	}
	return rs, nil
}

// tableOrder is the order of the goal table: the sections, then kubebench's result
// (integration/kube/kubebench -write).
func tableOrder() []string {
	names := make([]string, 0, len(sections)+1)
	for _, s := range sections {
		names = append(names, s.Name)
	}
	return append(names, "kube")
}

// rewrite rebuilds the goal table and every section's text in o.file from the stored results.
func rewrite(o options) error {
	rs, err := benchkit.LoadResults(o.results, tableOrder())
	if err != nil {
		return err
	}
	old, err := os.ReadFile(o.file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	doc, err := render(string(old), rs)
	if err != nil {
		return fmt.Errorf("%s: %w", o.file, err)
	}
	return os.WriteFile(o.file, []byte(doc), 0o644)
}

// render returns doc with the goal table and the text of every section of rs in place.
func render(doc string, rs []benchkit.Result) (string, error) {
	var err error
	for _, r := range rs {
		i := slices.IndexFunc(sections, func(s benchkit.Section) bool { return s.Name == r.Section })
		if i < 0 || r.Text == "" { // kubebench stores goals only
			continue
		}
		if doc, err = sections[i].Replace(doc, r.Text); err != nil {
			return "", err
		}
	}
	return goalTable.Replace(doc, benchkit.GoalTable(rs))
}
