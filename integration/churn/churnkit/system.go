package churnkit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// Bins are the programs and plugins a run needs.
type Bins struct {
	Gatehouse, Upstream string
	RequiredHeader      string   // required_header.so
	SwapVersions        []string // SwapPlugin .so builds: the first serves from the start, the second replaces it
}

// settle bounds how long a process may take to start or a route to first serve: a
// deadline for a stuck run, not a figure.
const settle = 2 * time.Minute

// System is the processes of a run, each started by this package and stopped by pid:
// the control plane, the extauth replicas, the gateway and the upstream.
type System struct {
	bins                   Bins
	pin                    bool
	Dir, pluginDir, logDir string
	env                    []string
	xds, cpAdmin           string
	gateway, gwAdmin       string
	upstream               string
	extauth, extauthAdmin  []string
	procs                  benchkit.Procs
	mu                     sync.Mutex
	cp                     *benchkit.Proc
	ex                     []*benchkit.Proc
	steady                 []*benchkit.Proc // the gateway and the upstream, never restarted
	starts                 map[string]int
	key                    signingKey
	direct                 *replicas // Checks sent to the replicas straight
}

// Initial is route i's state when a run starts: route 1 is the JWT route, the other
// odd routes are secured, the even ones open.
func Initial(i int) State {
	switch {
	case i == 1:
		return State{Kind: JWT}
	case i%2 == 1:
		return State{Kind: Secured}
	}
	return State{Kind: Open}
}

// StartSystem writes routes routes' resources into a folder of tmp and starts the
// processes on it, pinned to benchkit.ServerCPU when pin, and returns once extauth is
// ready and the gateway serves the first and the last route.
func StartSystem(ctx context.Context, tmp string, bins Bins, routes, replicas int, pin, vhds bool) (_ *System, err error) {
	s := &System{bins: bins, pin: pin, Dir: filepath.Join(tmp, "resources"), pluginDir: filepath.Join(tmp, "plugins"),
		logDir: filepath.Join(tmp, "logs"), starts: map[string]int{}}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	for _, d := range []string{s.Dir, s.pluginDir, s.logDir, filepath.Join(tmp, "state")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	s.env = append(benchkit.ServerEnv(), "XDG_STATE_HOME="+filepath.Join(tmp, "state"))
	if s.key, err = newSigningKey(); err != nil {
		return nil, err
	}
	jwks := filepath.Join(tmp, "jwks.json")
	if err := os.WriteFile(jwks, s.key.jwks, 0o644); err != nil {
		return nil, err
	}
	if err := copyFile(bins.RequiredHeader, filepath.Join(s.pluginDir, "required_header.so")); err != nil {
		return nil, err
	}
	if err := copyFile(bins.SwapVersions[0], filepath.Join(s.pluginDir, SwapPlugin+".so")); err != nil {
		return nil, err
	}
	addrs, err := benchkit.FreeAddrs(5 + 2*replicas)
	if err != nil {
		return nil, err
	}
	s.xds, s.cpAdmin, s.gateway, s.gwAdmin, s.upstream = addrs[0], addrs[1], addrs[2], addrs[3], addrs[4]
	s.extauth, s.extauthAdmin = addrs[5:5+replicas], addrs[5+replicas:]
	files := map[string]string{
		"upstreams.yaml": upstreamYAML(Namespace, "echo", s.upstream) + "---\n" + upstreamYAML("gatehouse-system", "extauth", s.extauth...),
		"settings.yaml":  settingsYAML("2s", vhds),
	}
	for name, content := range files {
		if err := writeFile(filepath.Join(s.Dir, name), content); err != nil {
			return nil, err
		}
	}
	for i := range routes {
		if err := writeRoute(s.Dir, i, Initial(i), true); err != nil {
			return nil, err
		}
	}
	up, err := s.start("upstream", bins.Upstream, "-listen", s.upstream, "-jwks", jwks)
	if err != nil {
		return nil, err
	}
	if err := s.startControlPlane(); err != nil {
		return nil, err
	}
	if s.direct, err = dialReplicas(s.extauth); err != nil {
		return nil, err
	}
	s.ex = make([]*benchkit.Proc, replicas)
	for i := range replicas {
		if err := s.startExtauth(ctx, i); err != nil {
			return nil, err
		}
	}
	gw, err := s.start("gateway", bins.Gatehouse, "gateway", "--xds", s.xds, "--listen", s.gateway, "--https-listen", "", "--admin-listen", s.gwAdmin)
	if err != nil {
		return nil, err
	}
	s.steady = []*benchkit.Proc{up, gw}
	c := newClient(s.gateway, s.key.token)
	for _, i := range []int{0, 1, routes - 1} {
		req := Req{Key: Initial(i).V, Token: true}
		if err := benchkit.Poll(ctx, gw, settle, 50*time.Millisecond, func(ctx context.Context) error {
			r := c.do(ctx, i, req)
			if want := Initial(i).Answer(req); r.Status != want {
				return fmt.Errorf("route %d (%s), %s: %d %s, want %d", i, Initial(i), req, r.Status, r.Err, want)
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// start runs a process, pinned when s.pin, its log named after it and its start.
func (s *System) start(name, bin string, args ...string) (*benchkit.Proc, error) {
	s.mu.Lock()
	s.starts[name]++
	log := filepath.Join(s.logDir, fmt.Sprintf("%s-%d.log", name, s.starts[name]))
	s.mu.Unlock()
	if s.pin {
		bin, args = benchkit.Pinned(benchkit.ServerCPU, bin, args...)
	}
	return s.procs.Start(name, log, s.env, bin, args...)
}

func (s *System) startControlPlane() error {
	p, err := s.start("controlplane", s.bins.Gatehouse, "controlplane", "--resources", s.Dir, "--xds-listen", s.xds, "--admin-listen", s.cpAdmin)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.cp = p
	s.mu.Unlock()
	return nil
}

// startExtauth starts replica i and waits until its /ready says 200.
func (s *System) startExtauth(ctx context.Context, i int) error {
	p, err := s.start(fmt.Sprintf("extauth%d", i), s.bins.Gatehouse, "extauth", "--xds", s.xds, "--plugin-dir", s.pluginDir,
		"--listen", s.extauth[i], "--admin-listen", s.extauthAdmin[i])
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.ex[i] = p
	s.mu.Unlock()
	hc := &http.Client{Timeout: 5 * time.Second}
	return benchkit.Poll(ctx, p, settle, 20*time.Millisecond, func(ctx context.Context) error {
		resp, err := hc.Get("http://" + s.extauthAdmin[i] + "/ready")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("extauth %d: /ready says %d", i, resp.StatusCode)
		}
		return nil
	})
}

// KillControlPlane ends the control plane with SIGKILL, as a crash would, starts it
// again on the same folder and addresses at once, and returns once its first run is
// published.
func (s *System) KillControlPlane(ctx context.Context) error {
	s.mu.Lock()
	p := s.cp
	s.cp = nil // down on purpose: Alive does not count it
	s.mu.Unlock()
	if err := syscall.Kill(p.Pid(), syscall.SIGKILL); err != nil {
		return err
	}
	s.procs.Stop(p) // reaps it (it is gone already)
	if err := s.startControlPlane(); err != nil {
		return err
	}
	s.mu.Lock()
	p = s.cp
	s.mu.Unlock()
	return benchkit.Poll(ctx, p, settle, 20*time.Millisecond, func(context.Context) error {
		runs, err := metric(s.cpAdmin, "gatehouse_controlplane_snapshot_version")
		if err == nil && runs < 1 {
			err = errors.New("control plane: no run published yet")
		}
		return err
	})
}

// RestartExtauth restarts replica i as a rolling update does: SIGTERM, its exit, a new
// process on the same address, its readiness, and its return to the gateway's rotation
// (the gateway sends it Checks), before which a rollout must not stop the next replica:
// the gateway's health check re-admits a replica within its interval, and with panic
// mode off the ext_authz cluster would meanwhile have no healthy replica.
func (s *System) RestartExtauth(ctx context.Context, i int) error {
	s.mu.Lock()
	p := s.ex[i]
	s.ex[i] = nil // down on purpose: Alive does not count it
	s.mu.Unlock()
	s.procs.Stop(p) // SIGTERM, and SIGKILL only past 5 s
	s.direct.out[i].Store(true)
	// Checks answered straight from now on were answered by the new process.
	direct := s.direct.answered[i].Load()
	if err := p.Exited(); err == nil {
		return errors.New("extauth: still running after Stop")
	}
	if err := s.startExtauth(ctx, i); err != nil {
		return err
	}
	s.mu.Lock()
	p = s.ex[i]
	s.mu.Unlock()
	err := benchkit.Poll(ctx, p, settle, 20*time.Millisecond, func(context.Context) error {
		n, err := s.checks(i)
		if err == nil && n <= int(s.direct.answered[i].Load()-direct) {
			err = fmt.Errorf("extauth %d: the gateway sent it no Check yet", i)
		}
		return err
	})
	if err == nil {
		s.direct.out[i].Store(false)
	}
	return err
}

// checks is how many Checks replica i answered, by its metrics.
func (s *System) checks(i int) (int, error) {
	n, err := metric(s.extauthAdmin[i], "gatehouse_extauth_checks_total")
	return int(n), err
}

// metric is the sum of every series of the metric name at admin's /metrics.
func metric(admin, name string) (float64, error) {
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + admin + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err
	}
	n := 0.0
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || rest[0] != ' ' && rest[0] != '{' {
			continue
		}
		f := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return 0, fmt.Errorf("%s/metrics: %q: %w", admin, line, err)
		}
		n += v
	}
	return n, nil
}

// SwapPlugin renames the next build of SwapPlugin over the one serving.
func (s *System) SwapPlugin() error {
	staged := filepath.Join(filepath.Dir(s.pluginDir), "."+SwapPlugin+".so")
	if err := copyFile(s.bins.SwapVersions[1], staged); err != nil {
		return err
	}
	return os.Rename(staged, filepath.Join(s.pluginDir, SwapPlugin+".so"))
}

// Alive is nil while every process runs, else why one stopped.
func (s *System) Alive() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range append(append([]*benchkit.Proc{s.cp}, s.ex...), s.steady...) {
		if p != nil {
			if err := p.Exited(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Pids are the processes that run now, by name.
func (s *System) Pids() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	if s.cp != nil {
		out["controlplane"] = s.cp.Pid()
	}
	for i, p := range s.ex {
		if p != nil {
			out[fmt.Sprintf("extauth%d", i)] = p.Pid()
		}
	}
	return out
}

// Profile writes CPU profiles of the control plane, the gateway and each extauth
// replica, taken at once over d, into dir as NAME.pprof.
func (s *System) Profile(ctx context.Context, dir string, d time.Duration) error {
	admins := map[string]string{"controlplane": s.cpAdmin, "gateway": s.gwAdmin}
	for i, a := range s.extauthAdmin {
		admins[fmt.Sprintf("extauth%d", i)] = a
	}
	var g errgroup.Group
	for name, admin := range admins {
		g.Go(func() error {
			url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", admin, int(d.Seconds()))
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return fmt.Errorf("profile of %s: %w", name, err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("%s: %s", resp.Status, b)
			}
			if err != nil {
				return fmt.Errorf("profile of %s: %w", name, err)
			}
			return os.WriteFile(filepath.Join(dir, name+".pprof"), b, 0o644)
		})
	}
	return g.Wait()
}

// LogDir holds every process's log, one file per start.
func (s *System) LogDir() string { return s.logDir }

// Stop stops every process, by pid.
func (s *System) Stop() {
	s.procs.StopAll()
	if s.direct != nil {
		s.direct.close()
	}
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}
