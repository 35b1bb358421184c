// Package checkload loads ext_authz servers with ghz, two at a time in alternating
// order, and charges each server's CPU from /proc to its Checks. The plugin, OIDC and
// mTLS sections of `make bench` use it.
package checkload

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/internal/mtls"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/protobuf/proto"
)

// Warmup is how long each server is loaded, unmeasured, before the first round.
const Warmup = 2 * time.Second

// EnvoyTimeout is Envoy's default ext_authz timeout, which ghz sends as the deadline.
const EnvoyTimeout = 200 * time.Millisecond

// RateShare is the share of the base server's maximum at which latency is compared:
// a rate both servers sustain, so the p99 is of a server with room, not of a queue.
const RateShare = 0.7

// Options are the flags of a ghz load.
type Options struct {
	Duration    time.Duration // of each run
	Concurrency int
	Rounds      int
}

// Loader runs ghz against servers.
type Loader struct {
	Options
	ghz, dir string
	data     map[string]string // request file by workload name
	unpinned bool              // ghz wherever the kernel puts it
}

// NewLoader returns a Loader whose workloads are the named ones of Paths.
func NewLoader(ctx context.Context, env *benchkit.Env, dir string, o Options, paths ...string) (*Loader, error) {
	ghz, _, err := env.Ghz(ctx)
	if err != nil {
		return nil, err
	}
	l := &Loader{Options: o, ghz: ghz, dir: dir, data: map[string]string{}}
	for _, p := range Paths {
		if slices.Contains(paths, p.Name) {
			if err := l.SetRequest(p.Name, CheckRequest(p.ConfigID, p.Value)); err != nil {
				return nil, err
			}
		}
	}
	return l, nil
}

// SetRequest makes req the request of workload name, written in protobuf binary form,
// which ghz sends as is (-B) instead of converting JSON on every call.
func (l *Loader) SetRequest(name string, req *authv3.CheckRequest) error {
	b, err := proto.Marshal(req)
	if err != nil {
		return err
	}
	p := filepath.Join(l.dir, "check-"+name+".bin")
	l.data[name] = p
	return os.WriteFile(p, b, 0o644)
}

// Phase is what one Measure loads: a base server and the one compared with it, the
// workloads in the order they are loaded, and companion processes that serve the
// compared server (redis-server, the OpenID provider), whose CPU is counted beside its own.
type Phase struct {
	Base, Server *Server
	Loads        []string
	Companions   []Companion
}

// Companion is a process whose CPU a phase reports per Check.
type Companion struct {
	Name string
	Pid  int
}

// Measurement is the outcome of one ghz run against one server.
type Measurement struct {
	Round  int
	Server string
	Path   string // the workload
	Count  int64
	RPS    float64
	P50    time.Duration
	P99    time.Duration
	Errors int64 // calls that did not end with gRPC status OK
	// CPUPerCheck is the server's CPU over the run ÷ Count; Companions, each companion's.
	CPUPerCheck time.Duration
	Companions  []time.Duration
	// Others is the share of the machine that neither the servers, their companions nor
	// ghz used during the run: other processes competing with the measurement.
	Others float64
}

// Measure loads the two servers alternately, Rounds times per workload, at full
// speed after a warm-up (rps 0), or at rps requests per second without one.
func (l *Loader) Measure(ctx context.Context, ph Phase, rps, rounds int) ([]Measurement, error) {
	for _, srv := range []*Server{ph.Base, ph.Server} {
		for _, w := range ph.Loads {
			if rps == 0 {
				benchkit.Progress("warming up %s with %s for %s", srv.Name, w, Warmup)
				if _, _, err := l.ghzRun(ctx, srv, w, Warmup, 0); err != nil {
					return nil, err
				}
			}
		}
	}
	var runs []Measurement
	for round := 1; round <= rounds; round++ {
		for _, w := range ph.Loads {
			for _, srv := range benchkit.Alternate(ph.Base, ph.Server, round) {
				r, err := l.measureOne(ctx, srv, w, ph.Companions, rps)
				if err != nil {
					return nil, err
				}
				r.Round = round
				benchkit.Progress("round %d/%d %-9s %-6s %6.0f req/s  p50 %s  p99 %s  %5.1f CPU-µs/Check  others %2.0f%%",
					round, rounds, srv.Name, w, r.RPS, benchkit.Ms(r.P50), benchkit.Ms(r.P99), benchkit.Micros(r.CPUPerCheck), r.Others*100)
				runs = append(runs, r)
			}
		}
	}
	return runs, nil
}

// AtRate loads ph again, rounds times, at RateShare of the median requests/s its base
// server reached in full (ph's runs at full speed), and returns that rate and the runs.
func (l *Loader) AtRate(ctx context.Context, ph Phase, full []Measurement, rounds int) (int, []Measurement, error) {
	var rps []float64
	for _, m := range full {
		if m.Server == ph.Base.Name && m.Path == ph.Loads[0] {
			rps = append(rps, m.RPS)
		}
	}
	if len(rps) == 0 {
		return 0, nil, fmt.Errorf("no full-speed run of %s on %s to take a rate from", ph.Loads[0], ph.Base.Name)
	}
	rate := int(benchkit.Median(rps) * RateShare)
	benchkit.Progress("latency at %d req/s, %.0f%% of %s's maximum", rate, RateShare*100, ph.Base.Name)
	runs, err := l.Measure(ctx, ph, rate, rounds)
	return rate, runs, err
}

// MeasureUnpinned is Measure with ghz and the servers free to run on every CPU, as a
// machine that pins nothing would; the servers are pinned back afterwards.
func (l *Loader) MeasureUnpinned(ctx context.Context, ph Phase, rounds int) ([]Measurement, error) {
	if !benchkit.CanPin() {
		return nil, nil // every run was unpinned already
	}
	pin := func(cpus string) error {
		pids := []int{ph.Base.Proc.Pid(), ph.Server.Proc.Pid()}
		for _, c := range ph.Companions {
			pids = append(pids, c.Pid)
		}
		for _, pid := range pids {
			if err := benchkit.SetAffinity(ctx, pid, cpus); err != nil {
				return err
			}
		}
		return nil
	}
	if err := pin(benchkit.AllCPUs()); err != nil {
		return nil, err
	}
	l.unpinned = true
	runs, err := l.Measure(ctx, ph, 0, rounds)
	l.unpinned = false
	if perr := pin(benchkit.ServerCPU); err == nil {
		err = perr
	}
	return runs, err
}

// Profile loads gatehouse with the requests of load while fetching a CPU profile from
// its admin server into file, and returns `go tool pprof -top -cum` of it under the
// name what, as a section prints it after its text; "" when file is "".
func (l *Loader) Profile(ctx context.Context, gh *Server, load, what, file string) (string, error) {
	if file == "" {
		return "", nil
	}
	if gh.Admin == "" {
		return "", fmt.Errorf("gatehouse was started without --admin-listen")
	}
	benchkit.Progress("profiling gatehouse under %s load", what)
	seconds := max(int((l.Duration-2*time.Second)/time.Second), 1)
	errc := make(chan error, 1)
	go func() {
		_, _, err := l.ghzRun(ctx, gh, load, l.Duration, 0)
		errc <- err
	}()
	select { // let the load reach its steady state
	case <-ctx.Done():
	case <-time.After(time.Second):
	}
	perr := benchkit.FetchProfile(ctx, "http://"+gh.Admin+"/debug/pprof/profile?seconds="+strconv.Itoa(seconds), file)
	if err := <-errc; err != nil {
		return "", err
	}
	if perr != nil {
		return "", perr
	}
	top, err := benchkit.Output(ctx, "", "go", "tool", "pprof", "-top", "-cum", "-nodecount=45", file)
	return fmt.Sprintf("CPU profile of gatehouse under %s load (%s):\n\n%s", what, file, top), err
}

// measureOne runs ghz once against srv and charges the server's CPU, and each
// companion's, to its Checks.
func (l *Loader) measureOne(ctx context.Context, srv *Server, load string, companions []Companion, rps int) (Measurement, error) {
	pids := []int{srv.Proc.Pid()}
	for _, c := range companions {
		pids = append(pids, c.Pid)
	}
	w, err := benchkit.WatchOthers(pids...)
	if err != nil {
		return Measurement{}, err
	}
	m, ghzCPU, err := l.ghzRun(ctx, srv, load, l.Duration, rps)
	if err != nil {
		return Measurement{}, err
	}
	others, used, err := w.Since(ghzCPU)
	if err != nil {
		return Measurement{}, err
	}
	if m.Count == 0 {
		return Measurement{}, fmt.Errorf("ghz against %s (%s): no successful requests", srv.Name, load)
	}
	m.Server, m.Path, m.Others = srv.Name, load, others
	m.CPUPerCheck = used[0] / time.Duration(m.Count)
	for _, u := range used[1:] {
		m.Companions = append(m.Companions, u/time.Duration(m.Count))
	}
	return m, nil
}

// ghzRun loads srv with the request of load for d, at rps requests per second (0: as
// fast as it can), and returns ghz's figures and the CPU time ghz itself used.
func (l *Loader) ghzRun(ctx context.Context, srv *Server, load string, d time.Duration, rps int) (Measurement, time.Duration, error) {
	out := filepath.Join(l.dir, "ghz.json")
	ctx, cancel := context.WithTimeout(ctx, d+time.Minute)
	defer cancel()
	bin, args := benchkit.Pinned(benchkit.ClientCPU, l.ghz)
	if l.unpinned {
		bin, args = l.ghz, nil
	}
	if rps > 0 {
		args = append(args, "--rps", strconv.Itoa(rps))
	}
	if srv.ClientTLS == "" {
		args = append(args, "--insecure")
	} else {
		args = append(args, "--cacert", filepath.Join(srv.ClientTLS, mtls.CAFile),
			"--cert", filepath.Join(srv.ClientTLS, mtls.CertFile), "--key", filepath.Join(srv.ClientTLS, mtls.KeyFile))
	}
	_, cpu, err := benchkit.OutputCPU(ctx, l.dir, bin, append(args, "--call", "envoy.service.auth.v3.Authorization.Check",
		"-B", l.data[load], "-c", strconv.Itoa(l.Concurrency), "-z", d.String(), "-t", EnvoyTimeout.String(),
		"--duration-stop", "wait", "-O", "json", "-o", out, srv.Addr)...)
	if err != nil {
		return Measurement{}, 0, fmt.Errorf("ghz against %s: %w", srv.Name, err)
	}
	if err := srv.Proc.Exited(); err != nil {
		return Measurement{}, 0, err
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return Measurement{}, 0, err
	}
	m, err := parseGhz(b)
	return m, cpu, err
}

// parseGhz reads ghz -O json output. Durations there are nanoseconds.
func parseGhz(b []byte) (Measurement, error) {
	var doc struct {
		Count        int64            `json:"count"`
		RPS          float64          `json:"rps"`
		Statuses     map[string]int64 `json:"statusCodeDistribution"`
		Distribution []struct {
			Percentage int           `json:"percentage"`
			Latency    time.Duration `json:"latency"`
		} `json:"latencyDistribution"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return Measurement{}, fmt.Errorf("ghz output: %w", err)
	}
	m := Measurement{Count: doc.Count, RPS: doc.RPS}
	for status, n := range doc.Statuses {
		if status != "OK" {
			m.Errors += n
		}
	}
	found := 0
	for _, d := range doc.Distribution {
		switch d.Percentage {
		case 50:
			m.P50, found = d.Latency, found+1
		case 99:
			m.P99, found = d.Latency, found+1
		}
	}
	if found != 2 {
		return Measurement{}, fmt.Errorf("ghz output: no p50 and p99 in latencyDistribution")
	}
	return m, nil
}
