package benchkit

import (
	"bufio"
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// GoBench is one benchmark of `go test -bench -benchmem` with every metric it reported.
type GoBench struct {
	Package, Name string             // Name without the -GOMAXPROCS suffix
	Metrics       map[string]float64 // unit → value: "ns/op", "B/op", "allocs/op", "cpu-ns/op", …
}

// RunGoBench runs `go test -run ^$ -bench pattern` with flags in pkgs and returns the
// results, the median of each metric over the runs of each benchmark (-count) when
// there are several, in the order benchmarks first ran.
func RunGoBench(ctx context.Context, root, pattern, flags string, pkgs ...string) ([]GoBench, error) {
	args := append(append([]string{"test", "-run", "^$", "-bench", pattern}, strings.Fields(flags)...), pkgs...)
	out, err := Output(ctx, root, "go", args...)
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, Tail(out, 40))
	}
	bs := MedianGoBench(ParseGoBench(out))
	if len(bs) == 0 {
		return nil, fmt.Errorf("go test -bench printed no benchmark results:\n%s", Tail(out, 40))
	}
	return bs, nil
}

var benchName = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// ParseGoBench reads every "value unit" pair of each benchmark line, attributing the
// line to the "pkg:" line before it.
func ParseGoBench(out string) []GoBench {
	var bs []GoBench
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
		b := GoBench{Package: pkg, Name: m[1], Metrics: map[string]float64{}}
		for i := 0; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				b.Metrics[f[i+1]] = v
			}
		}
		bs = append(bs, b)
	}
	return bs
}

// MedianGoBench folds the runs of each benchmark into one, each metric the median of
// its runs (the lower middle one for an even count), in the order benchmarks first ran.
func MedianGoBench(bs []GoBench) []GoBench {
	var out []GoBench
	for i, b := range bs {
		same := func(r GoBench) bool { return r.Package == b.Package && r.Name == b.Name }
		if slices.ContainsFunc(bs[:i], same) {
			continue // folded into its first run
		}
		med := GoBench{Package: b.Package, Name: b.Name, Metrics: map[string]float64{}}
		for unit := range b.Metrics {
			var vs []float64
			for _, r := range bs[i:] {
				if same(r) {
					vs = append(vs, r.Metrics[unit])
				}
			}
			slices.Sort(vs)
			med.Metrics[unit] = vs[(len(vs)-1)/2]
		}
		out = append(out, med)
	}
	return out
}

// Find is the benchmark named name in bs.
func Find(bs []GoBench, name string) (GoBench, bool) {
	i := slices.IndexFunc(bs, func(b GoBench) bool { return b.Name == name })
	if i < 0 {
		return GoBench{}, false
	}
	return bs[i], true
}
