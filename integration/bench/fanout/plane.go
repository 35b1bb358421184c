package fanout

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdsfleet"
	"gatehouse.dev/gatehouse/integration/bench/benchkit"
	"gatehouse.dev/gatehouse/integration/bench/controlplane"
)

// plane is a `gatehouse controlplane` process pinned to benchkit.ServerCPU, on a
// folder of generated services, and the fleet of clients connected to it.
type plane struct {
	env          *benchkit.Env
	dir, state   string
	n            int
	xds, admin   string
	stallLimit   time.Duration
	stormProfile string // a CPU profile of each restart, when set
	proc         *benchkit.Proc
	started      time.Time
	starts       int
	proxies      []*xdsfleet.Client
	extauths     []*xdsfleet.Client
	routeConfig  string
}

// start starts (or, after a kill, restarts) the control plane process on the same
// addresses and state file.
func (p *plane) start() error {
	p.starts++
	log := filepath.Join(p.env.Tmp, fmt.Sprintf("fanout-%d-%d.log", p.n, p.starts))
	args := []string{"controlplane", "--resources", p.dir, "--state", p.state, "--xds-listen", p.xds, "--admin-listen", p.admin}
	if p.stallLimit > 0 {
		args = append(args, "--xds-stall-timeout", p.stallLimit.String())
	}
	bin, args := benchkit.Pinned(benchkit.ServerCPU, p.env.Bins.Gatehouse, args...)
	p.started = time.Now()
	var err error
	p.proc, err = p.env.Procs.Start("controlplane", log, benchkit.ServerEnv(), bin, args...)
	return err
}

// kill ends the control plane with SIGKILL and waits until it is gone.
func (p *plane) kill() error {
	if err := p.proc.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	for p.proc.Exited() == nil {
		time.Sleep(time.Millisecond)
	}
	return nil
}

// connect adds proxies and extauth clients to the fleet.
func (p *plane) connect(ctx context.Context, proxies, extauths int) error {
	for _, g := range []struct {
		to         *[]*xdsfleet.Client
		n          int
		role, name string
	}{{&p.proxies, proxies, xds.DefaultProxyRole, "proxy"}, {&p.extauths, extauths, xds.RoleExtauth, "extauth"}} {
		for range g.n {
			c, err := xdsfleet.Start(ctx, p.xds, g.role, fmt.Sprintf("%s-%d", g.name, len(*g.to)), nil)
			if err != nil {
				return err
			}
			*g.to = append(*g.to, c)
		}
	}
	return nil
}

// all is every client of the fleet.
func (p *plane) all() []*xdsfleet.Client {
	return append(append([]*xdsfleet.Client(nil), p.proxies...), p.extauths...)
}

// complete says whether c holds the whole state of its role, as served now.
func (p *plane) complete(c *xdsfleet.Client) bool { return controlplane.Complete(c, c.Role, p.n) }

// waitComplete waits until every client holds the whole state and was answered on
// its current stream, and returns when each got there.
func (p *plane) waitComplete(ctx context.Context, limit time.Duration) ([]time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	all := p.all()
	at, err := controlplane.WaitAll(ctx, all, func(_ int, c *xdsfleet.Client) bool { return c.Answered() && p.complete(c) })
	if err != nil {
		if exit := p.proc.Exited(); exit != nil {
			return nil, exit
		}
		return nil, fmt.Errorf("waiting for %d clients' complete state: %w", len(all), err)
	}
	if names := p.proxies[0].Names(xds.RouteType); len(names) == 1 {
		p.routeConfig = names[0]
	}
	return at, nil
}

// waitQuiet waits until no client has received anything for quiet.
func (p *plane) waitQuiet(ctx context.Context, quiet, limit time.Duration) error {
	received := func() (n int64) {
		for _, c := range p.all() {
			n += c.Received()
		}
		return n
	}
	deadline := time.Now().Add(limit)
	last, since := received(), time.Now()
	for time.Since(since) < quiet {
		if time.Now().After(deadline) {
			return fmt.Errorf("clients still receiving %s after the edits", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if n := received(); n != last {
			last, since = n, time.Now()
		}
	}
	return nil
}

// vhds turns Settings spec.virtualHostDiscovery on or off and waits until every
// proxy holds its virtual hosts as they are then served: each VirtualService over
// VHDS, or none (they are back in the route configuration).
func (p *plane) vhds(ctx context.Context, on bool) error {
	file := filepath.Join(p.dir, controlplane.VHDSSettingsFile)
	var err error
	if on {
		err = os.WriteFile(file, []byte(controlplane.VHDSSettings), 0o644)
	} else {
		err = os.Remove(file)
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for _, c := range p.proxies {
		if err := c.WaitFor(ctx, func() bool {
			return (c.Count(xds.VirtualHostType) >= p.n) == on && (on || c.Count(xds.VirtualHostType) == 0)
		}); err != nil {
			return fmt.Errorf("virtualHostDiscovery %t: %w", on, err)
		}
	}
	return nil
}

// close ends the clients.
func (p *plane) close() {
	for _, c := range p.all() {
		c.Close()
	}
	p.proxies, p.extauths = nil, nil
}

// edit rewrites service i's resource of kind with value v, as the controlplane
// section does.
func edit(dir, kind string, i, v int) error {
	if kind == routesUndecoded || kind == routesVHDS {
		kind = "VirtualService"
	}
	return controlplane.EditResource(dir, controlplane.Kind(kind), i, v)
}

// watched is the resource whose new version shows an edit of service i's kind, and
// the clients it reaches.
func (p *plane) watched(kind string, i int) (typ, name string, clients []*xdsfleet.Client) {
	typ, name = controlplane.Kind(kind).Watched(i, p.routeConfig) // routesUndecoded: a VirtualService
	if kind == routesVHDS {
		typ, name = controlplane.WatchedOverVHDS(i, p.routeConfig)
	}
	if kind == "AuthConfig" {
		return typ, name, p.extauths
	}
	return typ, name, p.proxies
}
