package main

import (
	"bufio"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// goBenchPackages hold the in-process benchmarks of the plugin section.
var goBenchPackages = []string{"./server/chain", "./server"}

// The OIDC section's in-process benchmarks: Authorize with a valid session, and the
// session stores' Load alone (cookie; Redis without and with the client-side cache).
const (
	oidcGoBench        = "BenchmarkAuthorizeValidSession|BenchmarkSessionLoad"
	oidcGoBenchPackage = "./server/oidc"
)

// goBench is one line of `go test -bench -benchmem` output.
type goBench struct {
	Package     string
	Name        string // without the -GOMAXPROCS suffix
	NsPerOp     float64
	BytesPerOp  int64
	AllocsPerOp int64
	// CPUNsPerOp is the process's CPU time per op, GC included, when the benchmark
	// reports it ("cpu-ns/op"); 0 when it does not.
	CPUNsPerOp float64
}

// runGoBenchmarks runs the benchmarks of pkgs that match pattern once and parses the
// result.
func runGoBenchmarks(ctx context.Context, root, pattern string, pkgs ...string) ([]goBench, error) {
	args := append([]string{"test", "-run", "^$", "-bench", pattern, "-benchmem"}, pkgs...)
	out, err := output(ctx, root, "go", args...)
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, tail(out, 40))
	}
	bs := parseGoBench(out)
	if len(bs) == 0 {
		return nil, fmt.Errorf("go test -bench printed no benchmark results:\n%s", tail(out, 40))
	}
	return bs, nil
}

// parseGoBench reads the -benchmem lines (ns/op, B/op and allocs/op all reported).
func parseGoBench(out string) []goBench {
	var bs []goBench
	for _, l := range parseGoBenchLines(out) {
		ns, okNs := l.Metrics["ns/op"]
		bytes, okB := l.Metrics["B/op"]
		allocs, okA := l.Metrics["allocs/op"]
		if okNs && okB && okA {
			bs = append(bs, goBench{Package: l.Package, Name: l.Name, NsPerOp: ns, BytesPerOp: int64(bytes), AllocsPerOp: int64(allocs),
				CPUNsPerOp: l.Metrics["cpu-ns/op"]})
		}
	}
	return bs
}

// goBenchLine is one benchmark result with every metric it reported.
type goBenchLine struct {
	Package, Name string
	Metrics       map[string]float64 // unit → value: "ns/op", "B/op", "p50-ms", …
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
