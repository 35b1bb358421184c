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

// The OIDC section's in-process benchmark: Authorize with a valid session.
const (
	oidcGoBench        = "BenchmarkAuthorizeValidSession"
	oidcGoBenchPackage = "./server/oidc"
)

// goBench is one line of `go test -bench -benchmem` output.
type goBench struct {
	Package     string
	Name        string // without the -GOMAXPROCS suffix
	NsPerOp     float64
	BytesPerOp  int64
	AllocsPerOp int64
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

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op\s+(\d+) B/op\s+(\d+) allocs/op`)

// parseGoBench reads benchmark lines, attributing each to the "pkg:" line before it.
func parseGoBench(out string) []goBench {
	var bs []goBench
	pkg := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ns, _ := strconv.ParseFloat(m[2], 64)
		bytes, _ := strconv.ParseInt(m[3], 10, 64)
		allocs, _ := strconv.ParseInt(m[4], 10, 64)
		bs = append(bs, goBench{Package: pkg, Name: m[1], NsPerOp: ns, BytesPerOp: bytes, AllocsPerOp: allocs})
	}
	return bs
}
