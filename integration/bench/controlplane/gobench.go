package controlplane

import (
	"context"
	"fmt"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// The control plane's in-process Go benchmarks: Publish of a first state and of one
// edit (controlplane/xds); a full translation with and without Publish, and one
// edited resource through the warm pipeline (controlplane/pipeline).
var cpGoBenchPackages = []string{"./controlplane/xds", "./controlplane/pipeline"}

// cpGoBenchRuns are the runs, each a pattern and its -benchtime: few for a full state,
// many for an edit, whose figure over a few would be whether a collection fell in them.
var cpGoBenchRuns = []struct {
	pattern    string
	iterations int
}{
	{"FirstPublish|FullTranslation", 10},
	{"PublishOneEdit|^BenchmarkEdit$", 300},
}

// runGoBenchmarks runs them.
func runGoBenchmarks(ctx context.Context, root string) ([]benchkit.GoBench, error) {
	var out []benchkit.GoBench
	for _, r := range cpGoBenchRuns {
		got, err := benchkit.RunGoBench(ctx, root, r.pattern, fmt.Sprintf("-benchmem -benchtime %dx", r.iterations), cpGoBenchPackages...)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}
