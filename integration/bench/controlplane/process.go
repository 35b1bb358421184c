package controlplane

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdsbench"
	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/internal/mtls"
)

// Plane is a running `gatehouse controlplane` and the two ADS clients
// watching it, one per role.
type Plane struct {
	Proc        *benchkit.Proc
	xds, admin  string
	extauth     *xdsbench.Watcher
	proxy       *xdsbench.Watcher
	routeConfig string // the name of the one route configuration served
}

// Link is how the measuring ADS clients reach the control plane: plain text (the
// zero value) or, with Certs set, mutual TLS.
type Link struct {
	// Certs is an mtls.Generate output folder: the control plane serves with its
	// controlplane folder, and each client presents its role's folder.
	Certs string
}

// startControlplane starts the control plane on dir (pinned to benchkit.ServerCPU),
// connects a delta ADS client of each role as soon as its port is open, and times the
// process start to each role's first Complete state into st. The clients reach it as
// link says.
func startControlplane(ctx context.Context, env *benchkit.Env, dir, logPath string, n int, link Link, st *StartFigures) (cp *Plane, err error) {
	addrs, err := benchkit.FreeAddrs(2)
	if err != nil {
		return nil, err
	}
	cp = &Plane{xds: addrs[0], admin: addrs[1]}
	args := []string{"controlplane", "--resources", dir, "--xds-listen", cp.xds, "--admin-listen", cp.admin}
	if link.Certs != "" {
		args = append(args, "--xds-tls-dir", filepath.Join(link.Certs, mtls.RoleControlplane))
	}
	bin, args := benchkit.Pinned(benchkit.ServerCPU, env.Bins.Gatehouse, args...)
	start := time.Now()
	if cp.Proc, err = env.Procs.Start("controlplane", logPath, benchkit.ServerEnv(), bin, args...); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			cp.close()
		}
	}()
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := benchkit.WaitPort(wctx, cp.Proc, cp.xds); err != nil {
		return nil, err
	}
	if cp.extauth, err = watch(ctx, cp.xds, link, xds.RoleExtauth, xds.ExtAuthConfigType); err != nil {
		return nil, err
	}
	if cp.proxy, err = watch(ctx, cp.xds, link, xds.DefaultProxyRole, xds.ProxyTypes...); err != nil {
		return nil, err
	}
	roles := []string{xds.RoleExtauth, xds.DefaultProxyRole}
	at, err := WaitAll(wctx, []*xdsbench.Watcher{cp.extauth, cp.proxy}, func(i int, w *xdsbench.Watcher) bool { return Complete(w, roles[i], n) })
	if err != nil {
		if exit := cp.Proc.Exited(); exit != nil {
			return nil, exit
		}
		return nil, fmt.Errorf("controlplane: waiting for the first complete state of %d services: %w (its log: %s)", n, err, logPath)
	}
	st.ReadyExtauth, st.ReadyProxy = at[0].Sub(start), at[1].Sub(start)
	names := cp.proxy.Names(xds.RouteType)
	if len(names) != 1 {
		return nil, fmt.Errorf("controlplane: want one route configuration, got %q", names)
	}
	cp.routeConfig = names[0]
	return cp, nil
}

// WaitAll waits until done holds for every one of ws, each watched by a goroutine of
// its own, and returns when each got there; it returns at the first error.
func WaitAll[W interface {
	WaitFor(context.Context, func() bool) error
}](ctx context.Context, ws []W, done func(i int, w W) bool) ([]time.Time, error) {
	at := make([]time.Time, len(ws))
	errs := make(chan error, len(ws))
	for i, w := range ws {
		go func() {
			errs <- w.WaitFor(ctx, func() bool {
				ok := done(i, w)
				if ok {
					at[i] = time.Now()
				}
				return ok
			})
		}()
	}
	for range ws {
		if err := <-errs; err != nil {
			return nil, err
		}
	}
	return at, nil
}

// Complete reports whether c holds the whole state of role for n services: n
// ExtAuthConfigs for extauth; for a proxy n+1 clusters and endpoints (the services'
// and extauth's), a listener and a route configuration.
func Complete(c interface{ Count(string) int }, role string, n int) bool {
	if role == xds.RoleExtauth {
		return c.Count(xds.ExtAuthConfigType) >= n
	}
	return c.Count(xds.ClusterType) >= n+1 && c.Count(xds.EndpointType) >= n+1 && c.Count(xds.ListenerType) >= 1 && c.Count(xds.RouteType) >= 1
}

// watch connects a watcher of role to the control plane at addr as link says: over
// mutual TLS with its role's certificate, as extauth and the gateway do, or in plain text.
func watch(ctx context.Context, addr string, link Link, role string, types ...string) (*xdsbench.Watcher, error) {
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if link.Certs != "" {
		dir := filepath.Join(link.Certs, mtls.RoleExtauth)
		if role != xds.RoleExtauth {
			dir = filepath.Join(link.Certs, "proxy-"+role[strings.LastIndexByte(role, '~')+1:]) // the name of "<namespace>~<name>"
		}
		f, err := mtls.LoadAs(dir, role, zerolog.Nop())
		if err != nil {
			return nil, err
		}
		creds = mtls.ClientCredentials(f, mtls.RoleControlplane)
	}
	return xdsbench.WatchWith(ctx, addr, creds, role, types...)
}

// metric is the control plane's Prometheus metric name.
func (cp *Plane) metric(ctx context.Context, name string) (float64, error) {
	return benchkit.Metric(ctx, "http://"+cp.admin+"/metrics", name)
}

// close ends cp's clients.
func (cp *Plane) close() {
	if cp.extauth != nil {
		cp.extauth.Close()
	}
	if cp.proxy != nil {
		cp.proxy.Close()
	}
}

// Stop ends cp's clients, then its process.
func (cp *Plane) Stop(env *benchkit.Env) {
	cp.close()
	env.Procs.Stop(cp.Proc)
}
