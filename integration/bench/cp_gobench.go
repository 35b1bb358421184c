package main

import (
	"context"
	"fmt"
)

// The control plane's in-process Go benchmarks: Publish of a first state and of one
// edit (controlplane/xds); a full translation with and without Publish, and one
// edited resource through the warm pipeline (controlplane/pipeline).
var cpGoBenchPackages = []string{"./controlplane/xds", "./controlplane/pipeline"}

// cpGoBenchRuns are the runs, each a pattern and its -benchtime: a first publish or a
// full translation at 10k services takes a good part of a second, so a few suffice; an
// edit takes a millisecond or less, and its figure per operation, over a few, would be
// mostly whether a collection fell among them.
var cpGoBenchRuns = []struct {
	pattern    string
	iterations int
}{
	{"FirstPublish|FullTranslation", 10},
	{"PublishOneEdit|^BenchmarkEdit$", 300},
}

// cpGoBenchCommand is the go test command of run r.
func cpGoBenchCommand(pattern string, iterations int) []string {
	return append([]string{"test", "-run", "^$", "-bench", pattern, "-benchmem", "-benchtime", fmt.Sprintf("%dx", iterations)}, cpGoBenchPackages...)
}

// runCPGoBenchmarks runs them.
func runCPGoBenchmarks(ctx context.Context, root string) ([]goBenchLine, error) {
	var lines []goBenchLine
	for _, r := range cpGoBenchRuns {
		out, err := output(ctx, root, "go", cpGoBenchCommand(r.pattern, r.iterations)...)
		if err != nil {
			return nil, fmt.Errorf("%w\n%s", err, tail(out, 40))
		}
		got := parseGoBenchLines(out)
		if len(got) == 0 {
			return nil, fmt.Errorf("go test -bench printed no benchmark results:\n%s", tail(out, 40))
		}
		lines = append(lines, got...)
	}
	return lines, nil
}
