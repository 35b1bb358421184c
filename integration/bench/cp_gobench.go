package main

import (
	"bufio"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
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

// goBenchLine is one benchmark result with every metric it reported.
type goBenchLine struct {
	Package, Name string
	Metrics       map[string]float64 // unit → value: "ns/op", "B/op", "p50-ms", …
}

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

var benchName = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// parseGoBenchLines reads every "value unit" pair of each benchmark line, attributing
// the line to the "pkg:" line before it.
func parseGoBenchLines(out string) []goBenchLine {
	var bs []goBenchLine
	pkg := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		m := benchName.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		f := strings.Fields(m[2])
		b := goBenchLine{Package: pkg, Name: m[1], Metrics: map[string]float64{}}
		for i := 0; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				b.Metrics[f[i+1]] = v
			}
		}
		bs = append(bs, b)
	}
	return bs
}
