package xds_test

import (
	"strings"
	"testing"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdstest"
)

// compact is vh as the translation hands it: its name, and the rest of its
// serialization as unknown fields.
func compact(t *testing.T, vh *route.VirtualHost) *route.VirtualHost {
	t.Helper()
	rest := proto.Clone(vh).(*route.VirtualHost)
	rest.Name = ""
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(rest)
	if err != nil {
		t.Fatal(err)
	}
	out := &route.VirtualHost{Name: vh.GetName()}
	out.ProtoReflect().SetUnknown(b)
	return out
}

// withCompactVirtualHosts is state with its route configuration's virtual hosts
// compact; edit, when not nil, changes each full virtual host first.
func withCompactVirtualHosts(t *testing.T, state xds.Resources, edit func(*route.VirtualHost)) xds.Resources {
	t.Helper()
	out := xds.Resources{}
	for typ, m := range state {
		out[typ] = m
	}
	rc := proto.Clone(state[xds.RouteType][xdstest.RouteName]).(*route.RouteConfiguration)
	for i, vh := range rc.GetVirtualHosts() {
		if edit != nil {
			edit(vh)
		}
		rc.VirtualHosts[i] = compact(t, vh)
	}
	out[xds.RouteType] = map[string]types.Resource{xdstest.RouteName: rc}
	return out
}

// Compact virtual hosts are served as the same bytes as the full ones (same version),
// are checked as the full ones are, and read back whole through ExpandRoutes.
func TestCompactVirtualHosts(t *testing.T) {
	state := xdstest.Proxy(3)
	full := xds.NewServer(xds.Options{})
	if err := full.Publish(xds.DefaultProxyRole, state); err != nil {
		t.Fatal(err)
	}
	s := xds.NewServer(xds.Options{})
	compacted := withCompactVirtualHosts(t, state, nil)
	if err := s.Publish(xds.DefaultProxyRole, compacted); err != nil {
		t.Fatal(err)
	}
	want := full.Version(xds.DefaultProxyRole, xds.RouteType, xdstest.RouteName)
	if got := s.Version(xds.DefaultProxyRole, xds.RouteType, xdstest.RouteName); got != want || want == "" {
		t.Errorf("route configuration version %q with compact virtual hosts, %q with full ones", got, want)
	}
	expanded, err := xds.ExpandRoutes(compacted[xds.RouteType][xdstest.RouteName])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(state[xds.RouteType][xdstest.RouteName], expanded, protocmp.Transform()); diff != "" {
		t.Errorf("ExpandRoutes (-want +got):\n%s", diff)
	}
	if vh := compacted[xds.RouteType][xdstest.RouteName].(*route.RouteConfiguration).GetVirtualHosts()[0]; len(vh.GetDomains()) != 0 {
		t.Error("ExpandRoutes modified the compact virtual host it was given")
	}

	t.Run("an invalid one is refused", func(t *testing.T) {
		bad := withCompactVirtualHosts(t, state, func(vh *route.VirtualHost) { vh.Domains = nil })
		err := xds.NewServer(xds.Options{}).Publish(xds.DefaultProxyRole, bad)
		if err == nil || !strings.Contains(err.Error(), "Domains") {
			t.Errorf("Publish: %v, want the virtual hosts without domains refused", err)
		}
	})
	t.Run("a reference to a cluster not served is refused", func(t *testing.T) {
		bad := withCompactVirtualHosts(t, state, func(vh *route.VirtualHost) {
			vh.Routes[0].GetRoute().ClusterSpecifier = &route.RouteAction_Cluster{Cluster: "nowhere"}
		})
		err := xds.NewServer(xds.Options{}).Publish(xds.DefaultProxyRole, bad)
		if err == nil || !strings.Contains(err.Error(), `"nowhere"`) {
			t.Errorf("Publish: %v, want the reference to cluster nowhere refused", err)
		}
	})
}
