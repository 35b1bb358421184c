package main

import (
	"context"
	"fmt"
	"os"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/checkload"
	"gatehouse.dev/gatehouse/integration/bench/controlplane"
	"gatehouse.dev/gatehouse/integration/bench/devloop"
	"gatehouse.dev/gatehouse/integration/bench/fanout"
	"gatehouse.dev/gatehouse/integration/bench/mtls"
	"gatehouse.dev/gatehouse/integration/bench/oidc"
	"gatehouse.dev/gatehouse/integration/bench/plugin"
	"gatehouse.dev/gatehouse/integration/bench/pluginload"
)

// sections are every section, in the order they run and the goal table lists them.
var sections = []benchkit.Section{plugin.Section, oidc.Section, pluginload.Section, devloop.Section, controlplane.Section, mtls.Section, fanout.Section}

// options are the command-line flags.
type options struct {
	plugin                          plugin.Options
	pluginSection, oidc, cp, doMTLS bool
	oidcProfile                     string
	swaps, devRounds, mtlsRounds    int
	cpSizes, only, file, results    string
	cpo                             controlplane.Options
	write, table                    bool
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
	var rs []benchkit.Result
	add := func(r benchkit.Result, err error) error {
		if err == nil {
			rs = append(rs, r)
		}
		return err
	}
	var pluginRuns []checkload.Measurement
	if o.pluginSection {
		var r benchkit.Result
		if r, pluginRuns, err = plugin.Run(ctx, env, o.plugin); err != nil {
			return nil, fmt.Errorf("plugin: %w", err)
		}
		rs = append(rs, r)
	}
	if o.oidc {
		r, err := oidc.Run(ctx, env, oidc.Options{Options: o.plugin.Options, GoBench: o.plugin.GoBench, Profile: o.oidcProfile}, pluginRuns)
		if err := add(r, err); err != nil {
			return nil, fmt.Errorf("oidc: %w", err)
		}
	}
	if o.swaps > 0 {
		if err := add(pluginload.Run(ctx, env, o.swaps)); err != nil {
			return nil, fmt.Errorf("pluginload: %w", err)
		}
	}
	if o.devRounds > 0 {
		if err := add(devloop.Run(ctx, env, o.devRounds)); err != nil {
			return nil, fmt.Errorf("devloop: %w", err)
		}
	}
	if o.cp {
		cpo := o.cpo
		cpo.GoBench = o.plugin.GoBench
		if err := add(controlplane.Run(ctx, env, cpo)); err != nil {
			return nil, fmt.Errorf("controlplane: %w", err)
		}
	}
	if o.doMTLS {
		mo := mtls.Options{Options: o.plugin.Options, RateRounds: o.plugin.RateRounds, Services: o.cpo.Sizes[len(o.cpo.Sizes)-1], Edits: o.cpo.Edits}
		mo.Rounds = o.mtlsRounds
		if err := add(mtls.Run(ctx, env, mo)); err != nil {
			return nil, fmt.Errorf("mtls: %w", err)
		}
	}
	if o.fanout {
		if err := add(fanout.Run(ctx, env, o.fo)); err != nil {
			return nil, fmt.Errorf("fanout: %w", err)
		}
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

// writeTable rebuilds the goal table of o.file from the stored results.
func writeTable(o options) error {
	rs, err := benchkit.LoadResults(o.results, tableOrder())
	if err != nil {
		return err
	}
	return goalTable.Update(o.file, benchkit.GoalTable(rs))
}

// printTable prints the goal table of this run, or with -table, of the stored results.
func printTable(o options, rs []benchkit.Result) error {
	if o.table {
		var err error
		if rs, err = benchkit.LoadResults(o.results, tableOrder()); err != nil {
			return err
		}
	}
	fmt.Print(benchkit.GoalTable(rs))
	return nil
}
