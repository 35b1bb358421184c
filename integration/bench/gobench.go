package main

import (
	"bufio"
	"context"
	"fmt"
	"regexp"
	"slices"
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
	// StepCPUNs is BenchmarkChainStep's estimate of a further step's CPU time
	// ("step-cpu-ns"); 0 for other benchmarks.
	StepCPUNs float64
}

// goBenchFlags run each benchmark goBenchCount times with GOMAXPROCS=1, as the pinned
// servers run: one run's figures move by a third between runs on this kind of machine,
// so the report takes the median of each.
const (
	goBenchCount = 5
	goBenchFlags = "-benchmem -count 5 -cpu 1"
)

// runGoBenchmarks runs the benchmarks of pkgs that match pattern goBenchCount times and
// returns the median of each figure of each benchmark.
func runGoBenchmarks(ctx context.Context, root, pattern string, pkgs ...string) ([]goBench, error) {
	args := append(append([]string{"test", "-run", "^$", "-bench", pattern}, strings.Fields(goBenchFlags)...), pkgs...)
	out, err := output(ctx, root, "go", args...)
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, tail(out, 40))
	}
	bs := medianGoBench(parseGoBench(out))
	if len(bs) == 0 {
		return nil, fmt.Errorf("go test -bench printed no benchmark results:\n%s", tail(out, 40))
	}
	return bs, nil
}

// medianGoBench folds the runs of each benchmark into one, each figure the median of
// its runs (the lower middle one for an even count), in the order benchmarks first ran.
func medianGoBench(bs []goBench) []goBench {
	type key struct{ pkg, name string }
	runs := map[key][]goBench{}
	var order []key
	for _, b := range bs {
		k := key{b.Package, b.Name}
		if runs[k] == nil {
			order = append(order, k)
		}
		runs[k] = append(runs[k], b)
	}
	out := make([]goBench, 0, len(order))
	for _, k := range order {
		rs := runs[k]
		med := func(f func(goBench) float64) float64 {
			vs := make([]float64, len(rs))
			for i, r := range rs {
				vs[i] = f(r)
			}
			slices.Sort(vs)
			return vs[(len(vs)-1)/2]
		}
		out = append(out, goBench{Package: k.pkg, Name: k.name,
			NsPerOp:     med(func(b goBench) float64 { return b.NsPerOp }),
			BytesPerOp:  int64(med(func(b goBench) float64 { return float64(b.BytesPerOp) })),
			AllocsPerOp: int64(med(func(b goBench) float64 { return float64(b.AllocsPerOp) })),
			CPUNsPerOp:  med(func(b goBench) float64 { return b.CPUNsPerOp }),
			StepCPUNs:   med(func(b goBench) float64 { return b.StepCPUNs }),
		})
	}
	return out
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
				CPUNsPerOp: l.Metrics["cpu-ns/op"], StepCPUNs: l.Metrics["step-cpu-ns"]})
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
