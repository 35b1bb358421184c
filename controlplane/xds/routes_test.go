package xds_test

import (
	"maps"
	"testing"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdstest"
)

// The route configuration reaches the cache with its virtual hosts pre-serialized:
// clients must still decode exactly what was published, and its version must be a
// content hash (equal content, equal version, whoever publishes it).
func TestRouteConfigurationsArriveAsPublished(t *testing.T) {
	s := startServer(t)
	state := xdstest.Proxy(3)
	if err := s.Publish(xds.DefaultProxyRole, state); err != nil {
		t.Fatal(err)
	}
	c := newDelta(t, s.addr, node("proxy-1", xds.DefaultProxyRole), nil, xds.RouteType)
	received := func() (*route.RouteConfiguration, string) {
		t.Helper()
		r := c.next()
		c.answer(r, "")
		if len(r.GetResources()) != 1 {
			t.Fatalf("%d route configurations sent, want 1", len(r.GetResources()))
		}
		got := &route.RouteConfiguration{}
		if err := r.GetResources()[0].GetResource().UnmarshalTo(got); err != nil {
			t.Fatal(err)
		}
		if len(got.ProtoReflect().GetUnknown()) > 0 {
			t.Errorf("decoded route configuration has unknown fields")
		}
		return got, r.GetResources()[0].GetVersion()
	}
	check := func(step string, want *route.RouteConfiguration) string {
		t.Helper()
		got, v := received()
		if d := cmp.Diff(want, got, protocmp.Transform()); d != "" {
			t.Errorf("%s: received route configuration differs from the published one (-want +got):\n%s", step, d)
		}
		if sv := s.Version(xds.DefaultProxyRole, xds.RouteType, xdstest.RouteName); sv != v {
			t.Errorf("%s: Version %q, sent %q", step, sv, v)
		}
		if other := publishedRouteVersion(t, want); other != v {
			t.Errorf("%s: another server gives the same content version %q, this one %q", step, other, v)
		}
		return v
	}
	first := check("first publish", state[xds.RouteType][xdstest.RouteName].(*route.RouteConfiguration))

	// One virtual host edited, the others shared by pointer, as the translation does.
	old := state[xds.RouteType][xdstest.RouteName].(*route.RouteConfiguration)
	edited := &route.RouteConfiguration{Name: old.GetName(), VirtualHosts: append([]*route.VirtualHost(nil), old.GetVirtualHosts()...)}
	edited.VirtualHosts[1] = xdstest.VirtualHost(1, 7)
	state[xds.RouteType] = maps.Clone(state[xds.RouteType]) // a published map is never modified
	state[xds.RouteType][xdstest.RouteName] = edited
	if err := s.Publish(xds.DefaultProxyRole, state); err != nil {
		t.Fatal(err)
	}
	second := check("one virtual host edited", edited)
	if second == first {
		t.Errorf("version %q unchanged by an edit", second)
	}

	// The first content again, as new messages: the first version again.
	state[xds.RouteType] = maps.Clone(state[xds.RouteType]) // a published map is never modified
	state[xds.RouteType][xdstest.RouteName] = xdstest.Proxy(3)[xds.RouteType][xdstest.RouteName]
	if err := s.Publish(xds.DefaultProxyRole, state); err != nil {
		t.Fatal(err)
	}
	if third := check("first content again", old); third != first {
		t.Errorf("version %q, want the first content's %q", third, first)
	}
}

// publishedRouteVersion is the version a fresh server gives rc, built anew.
func publishedRouteVersion(t *testing.T, rc *route.RouteConfiguration) string {
	t.Helper()
	state := xdstest.Proxy(len(rc.GetVirtualHosts()))
	state[xds.RouteType] = maps.Clone(state[xds.RouteType]) // a published map is never modified
	state[xds.RouteType][xdstest.RouteName] = proto.Clone(rc).(*route.RouteConfiguration)
	s := xds.NewServer(xds.Options{})
	if err := s.Publish(xds.DefaultProxyRole, state); err != nil {
		t.Fatal(err)
	}
	return s.Version(xds.DefaultProxyRole, xds.RouteType, rc.GetName())
}
