// Package controlplane is the control-plane section of `make bench`: `gatehouse
// controlplane` on generated files of 1k and 10k services, timed to real ADS clients
// through its start, edits and a churn, and extauth fed every AuthConfig. The mtls
// section uses its generator, editor and starts.
package controlplane

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// Options are the control-plane section's flags.
type Options struct {
	Sizes     []int         // numbers of services; the largest also gets churn and extauth
	Starts    int           // starts timed per size
	Edits     int           // edits of each kind per size
	Churn     time.Duration // 0 skips the churn
	ChurnRate int
	// ExtauthHeap is where to write extauth's heap profile; "" writes none.
	ExtauthHeap string
	GoBench     bool
}

// cpResult is what the control-plane section measured.
type cpResult struct {
	Options Options
	Pinned  bool
	Scales  []cpScale
	Churn   *churnResult   // at the largest size
	Extauth *extauthResult // at the largest size
	GoBench []benchkit.GoBench
}

// cpScale is one size's figures.
type cpScale struct {
	N int
	StartFigures
	Starts    []StartFigures // every start, in the order they ran; the embedded one is their median
	Peak      int64          // the highest RSS of the last start's whole run (VmHWM after the edits and the churn)
	RSSEdited int64          // after the edits
	Edits     []EditSeries
}

// StartFigures is one start's figures.
type StartFigures struct {
	ReadyExtauth time.Duration // process start → first complete state on the stream
	ReadyProxy   time.Duration
	CPUReady     time.Duration // the control plane's CPU time until then
	OtherReady   float64       // the share of the machine other processes used meanwhile
	RSSReady     int64         // after the first complete state
	FileReady    int64         // of RSSReady, mapped files' pages (the binary's)
	PeakReady    int64         // the highest RSS until then (VmHWM)
}

// Ready is the start's time to the first complete state of both roles.
func (s StartFigures) Ready() time.Duration { return max(s.ReadyExtauth, s.ReadyProxy) }

// medianStart is the start whose ready time is the median of starts' (the lower of
// the two middle ones for an even number).
func medianStart(starts []StartFigures) StartFigures {
	sorted := slices.SortedFunc(slices.Values(starts), func(a, b StartFigures) int { return cmp.Compare(a.Ready(), b.Ready()) })
	return sorted[(len(sorted)-1)/2]
}

// cpGoBenchPackages hold the control plane's in-process Go benchmarks: Publish of a
// first state and of one edit (controlplane/xds); a full translation with and without
// Publish, and one edited resource through the warm pipeline (controlplane/pipeline).
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

// Run measures `gatehouse controlplane` at each size, then its in-process benchmarks.
func Run(ctx context.Context, env *benchkit.Env, o Options) (benchkit.Result, error) {
	res := &cpResult{Options: o, Pinned: benchkit.CanPin()}
	release, err := benchkit.PinClients(ctx)
	if err != nil {
		return benchkit.Result{}, err
	}
	defer release()
	for idx, n := range o.Sizes {
		sc, err := measureScale(ctx, o, env, n, idx == len(o.Sizes)-1, res)
		if err != nil {
			return benchkit.Result{}, fmt.Errorf("controlplane at %d services: %w", n, err)
		}
		res.Scales = append(res.Scales, sc)
	}
	release()
	if o.GoBench {
		benchkit.Progress("running the control plane's Go benchmarks (go test -bench) in controlplane/xds and controlplane/pipeline")
		for _, r := range cpGoBenchRuns {
			got, err := benchkit.RunGoBench(ctx, env.Root, r.pattern, fmt.Sprintf("-benchmem -benchtime %dx", r.iterations), cpGoBenchPackages...)
			if err != nil {
				return benchkit.Result{}, err
			}
			res.GoBench = append(res.GoBench, got...)
		}
	}
	return env.Result(Section, res.goals(), res.markdown(env.Measured(""))), nil
}

func measureScale(ctx context.Context, o Options, env *benchkit.Env, n int, largest bool, res *cpResult) (cpScale, error) {
	sc := cpScale{N: n}
	base := filepath.Join(env.Tmp, fmt.Sprintf("controlplane-%d", n))
	dir, err := WriteServices("controlplane", base, n)
	if err != nil {
		return sc, err
	}
	defer os.RemoveAll(base)
	// Starts vary with the machine: each is listed and the median judged. The last
	// one goes on with the edits.
	var cp *Plane
	for i := range o.Starts {
		st, p, err := TimeStart(ctx, env, dir, filepath.Join(env.Tmp, fmt.Sprintf("controlplane-%d-%d.log", n, i+1)), n, Link{})
		if err != nil {
			return sc, err
		}
		benchkit.Progress("controlplane: %d services: start %d of %d: first complete state extauth %s, proxy %s (CPU %s, others %.0f%%)",
			n, i+1, o.Starts, st.ReadyExtauth.Round(time.Millisecond), st.ReadyProxy.Round(time.Millisecond), st.CPUReady.Round(time.Millisecond), 100*st.OtherReady)
		sc.Starts = append(sc.Starts, st)
		if i < o.Starts-1 {
			p.Stop(env)
			continue
		}
		cp = p
	}
	defer cp.Stop(env)
	sc.StartFigures = medianStart(sc.Starts)
	pid := cp.Proc.Pid()
	ed := &Editor{Dir: dir, N: n, CP: cp}
	for _, k := range Kinds {
		s, err := ed.Measure(ctx, k, o.Edits)
		if err != nil {
			return sc, err
		}
		benchkit.Progress("controlplane: %d services: %s edits %s (CPU %s, Publish %s per edit, others %.0f%%)",
			n, k, s.Latencies, s.CPU.Round(100*time.Microsecond), s.Publish.Round(10*time.Microsecond), 100*s.OtherCPU)
		sc.Edits = append(sc.Edits, s)
	}
	st, err := benchkit.ReadMem(pid)
	if err != nil {
		return sc, err
	}
	sc.RSSEdited, sc.Peak = st.RSS, st.Peak
	if !largest {
		return sc, nil
	}
	if o.Churn > 0 {
		benchkit.Progress("controlplane: %d services: churn of %d edits/s for %s", n, o.ChurnRate, o.Churn)
		if res.Churn, err = ed.churn(ctx, o.ChurnRate, o.Churn); err != nil {
			return sc, err
		}
		if st, err = benchkit.ReadMem(pid); err != nil {
			return sc, err
		}
		sc.Peak = st.Peak
	}
	benchkit.Progress("controlplane: %d services: gatehouse extauth --xds until it serves every AuthConfig", n)
	if res.Extauth, err = runExtauthXDS(ctx, env, cp, n, filepath.Join(env.Tmp, fmt.Sprintf("extauth-%d.log", n)), o.ExtauthHeap); err != nil {
		return sc, err
	}
	return sc, nil
}

// TimeStart starts the control plane on dir, its clients connecting as link says, and
// measures its start; the process is left running, with its clients.
func TimeStart(ctx context.Context, env *benchkit.Env, dir, logPath string, n int, link Link) (StartFigures, *Plane, error) {
	var st StartFigures
	others, err := benchkit.WatchOthers(os.Getpid())
	if err != nil {
		return st, nil, err
	}
	cp, err := startControlplane(ctx, env, dir, logPath, n, link, &st)
	if err != nil {
		return st, nil, err
	}
	if err := st.measure(cp.Proc.Pid(), others); err != nil {
		cp.Stop(env)
		return st, nil, err
	}
	return st, cp, nil
}

// measure reads, at the first complete state, the CPU time process pid used, the
// share of the machine the others did, and pid's memory.
func (st *StartFigures) measure(pid int, others *benchkit.CPUWatch) error {
	var err error
	if st.CPUReady, err = benchkit.CPUUsed(pid); err != nil {
		return err
	}
	if st.OtherReady, _, err = others.Since(st.CPUReady); err != nil {
		return err
	}
	m, err := benchkit.ReadMem(pid)
	st.RSSReady, st.FileReady, st.PeakReady = m.RSS, m.File, m.Peak
	return err
}
