package controlplane

import (
	"context"
	"fmt"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdsbench"
	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// Plane is a running `gatehouse controlplane` and the two ADS clients
// watching it, one per role.
type Plane struct {
	Proc         *benchkit.Proc
	xds, admin   string
	extauth      *xdsbench.Watcher
	proxy        *xdsbench.Watcher
	routeConfig  string // the name of the one route configuration served
	readyExtauth time.Duration
	readyProxy   time.Duration
}

// startControlplane starts the control plane on dir (pinned to benchkit.ServerCPU),
// connects a delta ADS client of each role as soon as its port is open, and times the
// process start to each role's first Complete state. The clients reach it as link says.
func startControlplane(ctx context.Context, env *benchkit.Env, dir, logPath string, n int, link Link) (*Plane, error) {
	addrs, err := benchkit.FreeAddrs(2)
	if err != nil {
		return nil, err
	}
	cp := &Plane{xds: addrs[0], admin: addrs[1]}
	bin, args := benchkit.Pinned(benchkit.ServerCPU, env.Bins.Gatehouse, append([]string{"controlplane", "--resources", dir, "--xds-listen", cp.xds, "--admin-listen", cp.admin}, link.serverArgs()...)...)
	start := time.Now()
	if cp.Proc, err = env.Procs.Start("controlplane", logPath, benchkit.ServerEnv(), bin, args...); err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := benchkit.WaitPort(wctx, cp.Proc, cp.xds); err != nil {
		return nil, err
	}
	if cp.extauth, err = cp.watch(ctx, link, xds.RoleExtauth, xds.ExtAuthConfigType); err != nil {
		cp.Close()
		return nil, err
	}
	if cp.proxy, err = cp.watch(ctx, link, xds.DefaultProxyRole, xds.ProxyTypes...); err != nil {
		cp.Close()
		return nil, err
	}
	errs := make(chan error, 2)
	for _, r := range []struct {
		w     *xdsbench.Watcher
		role  string
		ready *time.Duration
	}{{cp.extauth, xds.RoleExtauth, &cp.readyExtauth}, {cp.proxy, xds.DefaultProxyRole, &cp.readyProxy}} {
		go func() {
			errs <- r.w.WaitFor(wctx, func() bool {
				ok := Complete(r.w, r.role, n)
				if ok {
					*r.ready = time.Since(start)
				}
				return ok
			})
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			cp.Close()
			if exit := cp.Proc.Exited(); exit != nil {
				return nil, exit
			}
			return nil, fmt.Errorf("controlplane: waiting for the first complete state of %d services: %w (its log: %s)", n, err, logPath)
		}
	}
	if names := cp.proxy.Names(xds.RouteType); len(names) == 1 {
		cp.routeConfig = names[0]
	} else {
		cp.Close()
		return nil, fmt.Errorf("controlplane: want one route configuration, got %q", names)
	}
	return cp, nil
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

// watch connects a watcher of role to cp as link says.
func (cp *Plane) watch(ctx context.Context, link Link, role string, types ...string) (*xdsbench.Watcher, error) {
	creds, err := link.credentials(role)
	if err != nil {
		return nil, err
	}
	return xdsbench.WatchWith(ctx, cp.xds, creds, role, types...)
}

func (cp *Plane) Close() {
	if cp.extauth != nil {
		cp.extauth.Close()
	}
	if cp.proxy != nil {
		cp.proxy.Close()
	}
}
