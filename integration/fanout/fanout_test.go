package fanout_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdsfleet"
	"gatehouse.dev/gatehouse/integration/testbin"
)

// waitAll waits until check passes for every client.
func waitAll(t *testing.T, clients []*xdsfleet.Client, check func(*xdsfleet.Client) error) {
	t.Helper()
	testbin.Eventually(t, 60*time.Second, func() error {
		var errs []error
		for _, c := range clients {
			errs = append(errs, check(c))
		}
		return errors.Join(errs...)
	})
}

// noLoss says whether c never lost a resource it held nor rejected one.
func noLoss(t *testing.T, clients []*xdsfleet.Client) {
	t.Helper()
	for _, c := range clients {
		if st := c.Stats(); st.Removals != 0 || st.Nacks != 0 {
			t.Errorf("%s: %d resources removed, %d responses rejected; want none", c.Node, st.Removals, st.Nacks)
		}
	}
}

// TestFleetConvergesAfterBurst edits AuthConfigs, Upstreams and VirtualServices in a
// burst with 12 proxies and 12 extauth replicas connected: afterwards every client
// holds exactly what a client that connects then is served, every edited resource's
// version changed, and no client lost or rejected anything on the way.
func TestFleetConvergesAfterBurst(t *testing.T) {
	p := newPlane(t, 12, 12)
	waitAll(t, p.all(), complete)
	before := map[string]map[string]string{}
	for _, typ := range []string{xds.EndpointType, xds.RouteType} {
		before[typ] = p.proxies[0].Versions(typ)
	}
	before[xds.ExtAuthConfigType] = p.extauths[0].Versions(xds.ExtAuthConfigType)
	rng := rand.New(rand.NewPCG(1, 2))
	edited := map[string]map[string]bool{xds.EndpointType: {}, xds.ExtAuthConfigType: {}}
	for v := 1; v <= 45; v++ {
		i := rng.IntN(services)
		switch v % 3 {
		case 0:
			p.edit("AuthConfig", i, v)
			edited[xds.ExtAuthConfigType][fmt.Sprintf("fleet.ac-%03d", i)] = true
		case 1:
			p.edit("Upstream", i, v)
			edited[xds.EndpointType][fmt.Sprintf("fleet.up-%03d", i)] = true
		default:
			p.edit("VirtualService", i, v)
		}
		time.Sleep(time.Duration(rng.IntN(30)) * time.Millisecond)
	}
	refProxy := p.connect(xds.DefaultProxyRole, "reference-proxy")
	refExtauth := p.connect(xds.RoleExtauth, "reference-extauth")
	waitAll(t, []*xdsfleet.Client{refProxy, refExtauth}, complete)
	// The reference clients connect while the last edits may still be on their way;
	// they follow them as the fleet does, so "the same as the reference" settles.
	waitAll(t, p.proxies, func(c *xdsfleet.Client) error { return sameAs(c, refProxy) })
	waitAll(t, p.extauths, func(c *xdsfleet.Client) error { return sameAs(c, refExtauth) })
	for typ, names := range edited {
		ref := refProxy
		if typ == xds.ExtAuthConfigType {
			ref = refExtauth
		}
		for name := range names {
			if ref.Version(typ, name) == before[typ][name] {
				t.Errorf("%s %s: still version %s after its edits", typ, name, before[typ][name])
			}
		}
	}
	if refProxy.Version(xds.RouteType, "http") == before[xds.RouteType]["http"] {
		t.Errorf("route configuration http: unchanged after 15 VirtualService edits")
	}
	noLoss(t, p.all())
}

// TestStalledClientIsDropped connects a proxy that stops reading and answering: the
// control plane drops its stream past --xds-stall-timeout (a log line, a metric),
// every other client gets every edit meanwhile, and the stalled client, once it reads
// again, reconnects and catches up.
func TestStalledClientIsDropped(t *testing.T) {
	p := newPlane(t, 8, 8)
	stalled := p.connect(xds.DefaultProxyRole, "stalled-proxy")
	waitAll(t, append(p.all(), stalled), complete)
	stalled.Stall()
	for v := 1; v <= 6; v++ {
		old := p.proxies[0].Version(xds.RouteType, "http")
		oldAC := p.extauths[0].Version(xds.ExtAuthConfigType, "fleet.ac-001")
		p.edit("VirtualService", v, v)
		p.edit("AuthConfig", 1, v)
		waitAll(t, p.proxies, func(c *xdsfleet.Client) error {
			if c.Version(xds.RouteType, "http") == old {
				return fmt.Errorf("%s: VirtualService edit %d not there yet", c.Node, v)
			}
			return nil
		})
		waitAll(t, p.extauths, func(c *xdsfleet.Client) error {
			if c.Version(xds.ExtAuthConfigType, "fleet.ac-001") == oldAC {
				return fmt.Errorf("%s: AuthConfig edit %d not there yet", c.Node, v)
			}
			return nil
		})
	}
	testbin.Eventually(t, 30*time.Second, func() error {
		n, err := testbin.Metric(p.admin, "gatehouse_xds_dropped_streams_total")
		if err == nil && n < 1 {
			err = errors.New("gatehouse_xds_dropped_streams_total is 0")
		}
		return err
	})
	if out := p.proc.Output(); !strings.Contains(out, "dropping the stream of a stalled xDS client") || !strings.Contains(out, "stalled-proxy") {
		t.Errorf("the control plane's log does not name the stalled client it dropped:\n%s", out)
	}
	stalled.Resume()
	waitAll(t, []*xdsfleet.Client{stalled}, func(c *xdsfleet.Client) error {
		if c.Stats().Streams < 2 {
			return fmt.Errorf("%s has not reconnected", c.Node)
		}
		if err := complete(c); err != nil {
			return err
		}
		return sameAs(c, p.proxies[0])
	})
	noLoss(t, p.all())
}

// TestReconnectStormLeavesNoPartialState kills the control plane (SIGKILL) and starts
// it again, twice, with 30 clients connected: every client reconnects with its own
// backoff and jitter and holds, on its new stream, exactly what it held before; none
// is sent a removal (an empty or partial first state) on the way.
func TestReconnectStormLeavesNoPartialState(t *testing.T) {
	p := newPlane(t, 15, 15)
	waitAll(t, p.all(), complete)
	for round := range 2 {
		held := map[*xdsfleet.Client]map[string]map[string]string{}
		streams := map[*xdsfleet.Client]int{}
		for _, c := range p.all() {
			held[c] = map[string]map[string]string{}
			for _, typ := range []string{xds.ClusterType, xds.EndpointType, xds.ListenerType, xds.RouteType, xds.ExtAuthConfigType} {
				held[c][typ] = c.Versions(typ)
			}
			streams[c] = c.Stats().Streams
		}
		p.proc.Kill()
		p.start()
		waitAll(t, p.all(), func(c *xdsfleet.Client) error {
			if c.Stats().Streams <= streams[c] {
				return fmt.Errorf("round %d: %s has not reconnected", round, c.Node)
			}
			if err := complete(c); err != nil {
				return err
			}
			for typ, versions := range held[c] {
				if got := c.Versions(typ); len(got) != len(versions) {
					return fmt.Errorf("round %d: %s holds %d of %s, held %d", round, c.Node, len(got), typ, len(versions))
				}
			}
			return nil
		})
		noLoss(t, p.all())
	}
}
