package xds_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdstest"
	"gatehouse.dev/gatehouse/integration/testbin"
)

func TestServesEachRoleItsOwnResources(t *testing.T) {
	s := startServer(t)
	if err := s.Publish(xds.DefaultProxyRole, xdstest.Proxy(3)); err != nil {
		t.Fatal(err)
	}
	if err := s.Publish(xds.RoleExtauth, xdstest.Extauth(2)); err != nil {
		t.Fatal(err)
	}
	t.Run("delta", func(t *testing.T) {
		proxy := newDelta(t, s.addr, node("envoy-1", xds.DefaultProxyRole), nil, xds.ProxyTypes...)
		got := map[string][]string{}
		for range xds.ProxyTypes {
			r := proxy.next()
			got[r.GetTypeUrl()] = names(r)
			slices.Sort(got[r.GetTypeUrl()])
			for _, res := range r.GetResources() {
				if v := s.Version(xds.DefaultProxyRole, r.GetTypeUrl(), res.GetName()); v != res.GetVersion() {
					t.Errorf("%s %s: served as version %q, Version says %q", r.GetTypeUrl(), res.GetName(), res.GetVersion(), v)
				}
			}
			proxy.answer(r, "")
		}
		want := map[string][]string{
			xds.ListenerType: {"http"},
			xds.RouteType:    {"http"},
			xds.ClusterType:  {"bench.svc-00000", "bench.svc-00001", "bench.svc-00002", xdstest.ExtauthCluster},
			xds.EndpointType: {"bench.svc-00000", "bench.svc-00001", "bench.svc-00002", xdstest.ExtauthCluster},
			xds.SecretType:   nil,
			// Served, empty: the route configuration has its virtual hosts inline.
			xds.VirtualHostType: nil,
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("proxy resources (-want +got):\n%s", d)
		}
		extauth := newDelta(t, s.addr, node("extauth-1", xds.RoleExtauth), nil, xds.ExtAuthConfigType)
		r := extauth.next()
		if d := cmp.Diff([]string{"bench.svc-00000", "bench.svc-00001"}, slices.Sorted(slices.Values(names(r)))); d != "" {
			t.Errorf("extauth resources (-want +got):\n%s", d)
		}
	})
	t.Run("state of the world", func(t *testing.T) {
		c := newSotw(t, s.addr, node("envoy-2", xds.DefaultProxyRole), xds.ClusterType, xds.ListenerType)
		for range 2 {
			r := c.next()
			want := map[string]int{xds.ClusterType: 4, xds.ListenerType: 1}[r.GetTypeUrl()]
			if len(r.GetResources()) != want || r.GetVersionInfo() == "" {
				t.Errorf("%s: %d resources at version %q, want %d at some version", r.GetTypeUrl(), len(r.GetResources()), r.GetVersionInfo(), want)
			}
		}
	})
	if got := testutil.ToFloat64(mustVec(t, s, "gatehouse_xds_resources", xds.DefaultProxyRole, xds.ClusterType)); got != 4 {
		t.Errorf("gatehouse_xds_resources{cluster} = %v, want 4", got)
	}
}

func TestUnchangedResourcesAreNotSentAgain(t *testing.T) {
	s := startServer(t)
	if err := s.Publish(xds.RoleExtauth, xdstest.Extauth(3)); err != nil {
		t.Fatal(err)
	}
	c := newDelta(t, s.addr, node("extauth-1", xds.RoleExtauth), nil, xds.ExtAuthConfigType)
	first := c.next()
	c.answer(first, "")
	before := s.Version(xds.RoleExtauth, xds.ExtAuthConfigType, xdstest.ID(0))

	// The same content as new messages changes nothing; one edited config is all that
	// is sent next.
	same := xdstest.Extauth(3)
	if err := s.Publish(xds.RoleExtauth, same); err != nil {
		t.Fatal(err)
	}
	same[xds.ExtAuthConfigType] = maps.Clone(same[xds.ExtAuthConfigType]) // a published map is never modified
	same[xds.ExtAuthConfigType][xdstest.ID(1)] = xdstest.ExtAuthConfig(xdstest.ID(1), 1)
	if err := s.Publish(xds.RoleExtauth, same); err != nil {
		t.Fatal(err)
	}
	r := c.next()
	if d := cmp.Diff([]string{xdstest.ID(1)}, names(r)); d != "" {
		t.Errorf("sent after one edit (-want +got):\n%s", d)
	}
	if after := s.Version(xds.RoleExtauth, xds.ExtAuthConfigType, xdstest.ID(0)); after != before {
		t.Errorf("unchanged config's version went from %q to %q", before, after)
	}
	if v := s.Version(xds.RoleExtauth, xds.ExtAuthConfigType, xdstest.ID(1)); v != r.GetResources()[0].GetVersion() {
		t.Errorf("Version %q, served %q", v, r.GetResources()[0].GetVersion())
	}
}

func TestAClientWaitsForItsRolesFirstPublish(t *testing.T) {
	s := startServer(t)
	if err := s.Publish(xds.DefaultProxyRole, xdstest.Proxy(1)); err != nil {
		t.Fatal(err)
	}
	// An extauth that knew ns.a before this control plane (re)started must not be told
	// that everything is gone because nothing is published for its role yet.
	a := xdstest.ExtAuthConfig("ns.a", 0)
	b := xdstest.ExtAuthConfig("ns.b", 0)
	staticV := publishedVersion(t, "ns.a", a)
	c := newDelta(t, s.addr, node("extauth-1", xds.RoleExtauth),
		map[string]map[string]string{xds.ExtAuthConfigType: {"ns.a": staticV}}, xds.ExtAuthConfigType)
	testbin.Eventually(t, wait, func() error {
		if testutil.ToFloat64(mustVec(t, s, "gatehouse_xds_clients", xds.RoleExtauth)) != 1 {
			return errString("extauth client not connected yet")
		}
		return nil
	})
	if err := s.Publish(xds.RoleExtauth, xds.Resources{xds.ExtAuthConfigType: {"ns.a": a, "ns.b": b}}); err != nil {
		t.Fatal(err)
	}
	r := c.next()
	if d := cmp.Diff([]string{"ns.b"}, names(r)); d != "" || len(r.GetRemovedResources()) > 0 {
		t.Errorf("first response: sent %v (-want +got: %s), removed %v", names(r), d, r.GetRemovedResources())
	}
}

// publishedVersion is the version a server gives res.
func publishedVersion(t *testing.T, name string, res *extauthConfig) string {
	t.Helper()
	s := xds.NewServer(xds.Options{})
	if err := s.Publish(xds.RoleExtauth, xds.Resources{xds.ExtAuthConfigType: {name: res}}); err != nil {
		t.Fatal(err)
	}
	return s.Version(xds.RoleExtauth, xds.ExtAuthConfigType, name)
}

func TestClientsWithoutAServedRoleAreRefused(t *testing.T) {
	s := startServer(t)
	if err := s.Publish(xds.RoleExtauth, xdstest.Extauth(1)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, role, typ, want string
	}{
		{"no role", "", xds.ExtAuthConfigType, `node "n" has no "role" in its metadata`},
		{"unknown role", "gateway", xds.ClusterType, `role "gateway" is neither "extauth" nor a gateway proxy "<namespace>~<proxy>"`},
		{"type not of its role", xds.RoleExtauth, xds.ClusterType, `role "extauth" is not served ` + xds.ClusterType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newDelta(t, s.addr, node("n", tc.role), nil, tc.typ)
			select {
			case err := <-c.err:
				if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("stream ended with %v, want InvalidArgument with %q", err, tc.want)
				}
			case r := <-c.resps:
				t.Errorf("served %v", r)
			case <-time.After(wait):
				t.Error("stream neither refused nor served")
			}
		})
	}
}

func TestNacksAreReportedWithWhatWasRejected(t *testing.T) {
	s := startServer(t)
	if err := s.Publish(xds.RoleExtauth, xdstest.Extauth(2)); err != nil {
		t.Fatal(err)
	}
	want := xds.Nack{
		Role: xds.RoleExtauth, NodeID: "extauth-1", TypeURL: xds.ExtAuthConfigType,
		Names:    []string{xdstest.ID(0), xdstest.ID(1)},
		Versions: map[string]string{},
		Detail:   "bench.svc-00001: plugin file missing.so not found",
	}
	for _, n := range want.Names {
		want.Versions[n] = s.Version(xds.RoleExtauth, xds.ExtAuthConfigType, n)
	}
	t.Run("delta", func(t *testing.T) {
		c := newDelta(t, s.addr, node("extauth-1", xds.RoleExtauth), nil, xds.ExtAuthConfigType)
		c.answer(c.next(), want.Detail)
		got := <-s.nacks
		slices.Sort(got.Names)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("Nack (-want +got):\n%s", d)
		}
	})
	t.Run("state of the world", func(t *testing.T) {
		c := newSotw(t, s.addr, node("extauth-2", xds.RoleExtauth), xds.ExtAuthConfigType)
		r := c.next()
		c.answer(r, "", want.Detail)
		got := <-s.nacks
		slices.Sort(got.Names)
		w := want
		w.NodeID = "extauth-2"
		w.Versions = map[string]string{w.Names[0]: r.GetVersionInfo(), w.Names[1]: r.GetVersionInfo()}
		if d := cmp.Diff(w, got); d != "" {
			t.Errorf("Nack (-want +got):\n%s", d)
		}
	})
	if got := testutil.ToFloat64(mustVec(t, s, "gatehouse_xds_nacks_total", xds.RoleExtauth, xds.ExtAuthConfigType)); got != 2 {
		t.Errorf("gatehouse_xds_nacks_total = %v, want 2", got)
	}
}

func TestChangesArriveMakeBeforeBreak(t *testing.T) {
	s := startServer(t)
	state := xdstest.Proxy(2)
	if err := s.Publish(xds.DefaultProxyRole, state); err != nil {
		t.Fatal(err)
	}
	c := newDelta(t, s.addr, node("envoy-1", xds.DefaultProxyRole), nil, xds.ProxyTypes...)
	for range xds.ProxyTypes {
		c.answer(c.next(), "")
	}
	acks := func(n float64) {
		testbin.Eventually(t, wait, func() error {
			var sum float64
			for _, typ := range xds.ProxyTypes {
				sum += testutil.ToFloat64(mustVec(t, s, "gatehouse_xds_acks_total", xds.DefaultProxyRole, typ))
			}
			if sum < n {
				return errString("ACKs not all seen yet")
			}
			return nil
		})
	}
	order := func() []string {
		var got []string
		for range 3 {
			r := c.next()
			got = append(got, r.GetTypeUrl())
			c.answer(r, "")
		}
		return got
	}
	acks(5)
	bigger := xdstest.Proxy(3)
	if err := s.Publish(xds.DefaultProxyRole, bigger); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{xds.ClusterType, xds.EndpointType, xds.RouteType}, order()); d != "" {
		t.Errorf("adding a service (-want +got):\n%s", d)
	}
	acks(8)
	if err := s.Publish(xds.DefaultProxyRole, xdstest.Proxy(2)); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{xds.RouteType, xds.EndpointType, xds.ClusterType}, order()); d != "" {
		t.Errorf("removing a service (-want +got):\n%s", d)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// Regression: go-control-plane numbers state-of-the-world and delta streams apart,
// both from 1, and a NACK on the first state-of-the-world stream was booked to the
// node of the first delta stream while that one was open.
func TestNacksNameTheirNodeWhenStreamsOfBothKindsAreOpen(t *testing.T) {
	s := startServer(t)
	if err := s.Publish(xds.RoleExtauth, xdstest.Extauth(1)); err != nil {
		t.Fatal(err)
	}
	d := newDelta(t, s.addr, node("extauth-delta", xds.RoleExtauth), nil, xds.ExtAuthConfigType)
	d.answer(d.next(), "")
	c := newSotw(t, s.addr, node("extauth-sotw", xds.RoleExtauth), xds.ExtAuthConfigType)
	r := c.next()
	c.answer(r, "", "rejected")
	if got := (<-s.nacks).NodeID; got != "extauth-sotw" {
		t.Errorf("NACK booked to node %q, want extauth-sotw", got)
	}
}

// A NACK larger than gRPC's default message bound (an extauth replica rejecting
// thousands of configs) is received and reported, not refused with a stream reset.
func TestLargeNackIsReported(t *testing.T) {
	s := startServer(t)
	if err := s.Publish(xds.RoleExtauth, xdstest.Extauth(2)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; b.Len() < 6<<20; i++ {
		fmt.Fprintf(&b, "bench.svc-%05d: %s\n", i, strings.Repeat("r", 600))
	}
	detail := strings.TrimSuffix(b.String(), "\n")
	c := newDelta(t, s.addr, node("extauth-1", xds.RoleExtauth), nil, xds.ExtAuthConfigType)
	c.answer(c.next(), detail)
	select {
	case got := <-s.nacks:
		if got.Detail != detail {
			t.Errorf("NACK detail of %d bytes reported as %d bytes", len(detail), len(got.Detail))
		}
	case <-time.After(wait):
		t.Fatal("a NACK of 6 MiB was not reported")
	}
}

// TestOnConnectRunsBeforeAnythingIsSent: a client's first response waits for
// OnConnect (the control plane writes its roster of extauth replicas there), and
// OnDisconnect follows the stream's end.
func TestOnConnectRunsBeforeAnythingIsSent(t *testing.T) {
	release := make(chan struct{})
	joined, left := make(chan string, 1), make(chan string, 1)
	s := xds.NewServer(xds.Options{Log: testLog(t),
		OnConnect:    func(role, node string) { joined <- role + "/" + node; <-release },
		OnDisconnect: func(role, node string) { left <- role + "/" + node },
	})
	if err := s.Publish(xds.RoleExtauth, xdstest.Extauth(2)); err != nil {
		t.Fatal(err)
	}
	c := newDelta(t, serve(t, s), node("extauth-1", xds.RoleExtauth), nil, xds.ExtAuthConfigType)
	if got := <-joined; got != "extauth/extauth-1" {
		t.Fatalf("OnConnect(%s), want extauth/extauth-1", got)
	}
	select {
	case r := <-c.resps:
		t.Fatalf("sent %d configs before OnConnect returned", len(r.GetResources()))
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	if r := c.next(); len(r.GetResources()) != 2 {
		t.Errorf("first response: %d configs, want 2", len(r.GetResources()))
	}
	c.stream.CloseSend()
	select {
	case got := <-left:
		if got != "extauth/extauth-1" {
			t.Errorf("OnDisconnect(%s), want extauth/extauth-1", got)
		}
	case <-time.After(wait):
		t.Error("OnDisconnect was not called once the stream ended")
	}
}
