package xds_test

import (
	"testing"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdstest"
)

// TestLargeRouteConfigurationArrivesWhole: a route configuration far larger than what
// the server's codec sends without copying (hundreds of KB) reaches delta and
// state-of-the-world clients over gRPC as what was published, before and after an edit
// of one of its virtual hosts.
func TestLargeRouteConfigurationArrivesWhole(t *testing.T) {
	s := startServer(t)
	const n = 2000
	state := xdstest.Proxy(n)
	if err := s.Publish(xds.DefaultProxyRole, state); err != nil {
		t.Fatal(err)
	}
	want := proto.Clone(state[xds.RouteType][xdstest.RouteName]).(*route.RouteConfiguration)
	if size := proto.Size(want); size < 256<<10 {
		t.Fatalf("the route configuration is %d bytes; the test wants one well over the codec's threshold", size)
	}
	check := func(t *testing.T, a *anypb.Any, want *route.RouteConfiguration) {
		t.Helper()
		got := &route.RouteConfiguration{}
		if err := a.UnmarshalTo(got); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(got, want) {
			t.Fatalf("received a route configuration of %d virtual hosts that is not the one published (%d)", len(got.GetVirtualHosts()), len(want.GetVirtualHosts()))
		}
	}
	delta := newDelta(t, s.addr, node("envoy-delta", xds.DefaultProxyRole), nil, xds.RouteType)
	r := delta.next()
	if len(r.GetResources()) != 1 {
		t.Fatalf("delta: %d resources, want the route configuration", len(r.GetResources()))
	}
	check(t, r.GetResources()[0].GetResource(), want)
	delta.answer(r, "")
	sotw := newSotw(t, s.addr, node("envoy-sotw", xds.DefaultProxyRole), xds.RouteType)
	sr := sotw.next()
	if len(sr.GetResources()) != 1 {
		t.Fatalf("state of the world: %d resources, want the route configuration", len(sr.GetResources()))
	}
	check(t, sr.GetResources()[0], want)
	sotw.answer(sr, sr.GetVersionInfo(), "")

	edited := xdstest.Clone(state)
	rc := proto.Clone(want).(*route.RouteConfiguration)
	rc.VirtualHosts[n/2] = xdstest.VirtualHost(n/2, 1)
	edited[xds.RouteType][xdstest.RouteName] = rc
	if err := s.Publish(xds.DefaultProxyRole, edited); err != nil {
		t.Fatal(err)
	}
	want = proto.Clone(rc).(*route.RouteConfiguration)
	check(t, delta.next().GetResources()[0].GetResource(), want)
	check(t, sotw.next().GetResources()[0], want)
}
