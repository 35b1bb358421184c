package main

import (
	"context"
	"fmt"
)

// The control plane's in-process Go benchmarks: Publish of a first state and of one
// edit (controlplane/xds); a full translation with and without Publish, and one
// edited resource through the warm pipeline (controlplane/pipeline).
var (
	cpGoBenchPattern  = "FirstPublish|PublishOneEdit|FullTranslation|^BenchmarkEdit$"
	cpGoBenchPackages = []string{"./controlplane/xds", "./controlplane/pipeline"}
)

// cpGoBenchIterations is -benchtime: a first publish at 10k services takes a good part
// of a second, so a fixed count keeps the run short.
const cpGoBenchIterations = 10

// runCPGoBenchmarks runs them.
func runCPGoBenchmarks(ctx context.Context, root string) ([]goBenchLine, error) {
	args := append([]string{"test", "-run", "^$", "-bench", cpGoBenchPattern, "-benchmem", "-benchtime", fmt.Sprintf("%dx", cpGoBenchIterations)}, cpGoBenchPackages...)
	out, err := output(ctx, root, "go", args...)
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, tail(out, 40))
	}
	lines := parseGoBenchLines(out)
	if len(lines) == 0 {
		return nil, fmt.Errorf("go test -bench printed no benchmark results:\n%s", tail(out, 40))
	}
	return lines, nil
}
