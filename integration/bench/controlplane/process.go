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

// startControlplane starts the control plane on dir (pinned to benchkit.ServerCPU), connects a
// delta ADS client of each role as soon as its port is open, and times the process
// start to each role's first complete state: n ExtAuthConfigs for extauth; for the
// proxy, n+1 clusters and endpoints (the services' and extauth's), a listener and a
// route configuration. The clients reach it as link says.
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
	complete := map[*xdsbench.Watcher]map[string]int{
		cp.extauth: {xds.ExtAuthConfigType: n},
		cp.proxy:   {xds.ClusterType: n + 1, xds.EndpointType: n + 1, xds.ListenerType: 1, xds.RouteType: 1},
	}
	ready := map[*xdsbench.Watcher]*time.Duration{cp.extauth: &cp.readyExtauth, cp.proxy: &cp.readyProxy}
	errs := make(chan error, 2)
	for w, want := range complete {
		go func() {
			errs <- w.WaitFor(wctx, func() bool {
				for typ, count := range want {
					if w.Count(typ) < count {
						return false
					}
				}
				*ready[w] = time.Since(start)
				return true
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
