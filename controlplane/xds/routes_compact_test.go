package xds_test

import (
	"maps"
	"strings"
	"testing"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdstest"
)

// compact is m as the translation hands it: its field 1 (a name), and the rest of
// its serialization as unknown fields.
func compact[M proto.Message](t *testing.T, m M) M {
	t.Helper()
	rest := proto.Clone(m)
	fd := rest.ProtoReflect().Descriptor().Fields().ByNumber(1)
	rest.ProtoReflect().Clear(fd)
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(rest)
	if err != nil {
		t.Fatal(err)
	}
	out := m.ProtoReflect().New()
	out.Set(fd, m.ProtoReflect().Get(fd))
	out.SetUnknown(b)
	return out.Interface().(M)
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
// are checked as the full ones are, and read back whole through Expand.
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
	expanded, err := xds.Expand(compacted[xds.RouteType][xdstest.RouteName])
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(state[xds.RouteType][xdstest.RouteName], expanded, protocmp.Transform()); diff != "" {
		t.Errorf("Expand (-want +got):\n%s", diff)
	}
	if vh := compacted[xds.RouteType][xdstest.RouteName].(*route.RouteConfiguration).GetVirtualHosts()[0]; len(vh.GetDomains()) != 0 {
		t.Error("Expand modified the compact virtual host it was given")
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

// A compact ClusterLoadAssignment is served as the same bytes as the full one, and
// checked as the full one is.
func TestCompactEndpoints(t *testing.T) {
	state := xdstest.Proxy(2)
	full := xds.NewServer(xds.Options{})
	if err := full.Publish(xds.DefaultProxyRole, state); err != nil {
		t.Fatal(err)
	}
	withCompact := func(edit func(*endpoint.ClusterLoadAssignment)) xds.Resources {
		out := maps.Clone(state)
		out[xds.EndpointType] = map[string]types.Resource{}
		for name, r := range state[xds.EndpointType] {
			cla := proto.Clone(r).(*endpoint.ClusterLoadAssignment)
			if edit != nil {
				edit(cla)
			}
			out[xds.EndpointType][name] = compact(t, cla)
		}
		return out
	}
	s := xds.NewServer(xds.Options{})
	compacted := withCompact(nil)
	if err := s.Publish(xds.DefaultProxyRole, compacted); err != nil {
		t.Fatal(err)
	}
	for name := range state[xds.EndpointType] {
		want := full.Version(xds.DefaultProxyRole, xds.EndpointType, name)
		if got := s.Version(xds.DefaultProxyRole, xds.EndpointType, name); got != want || want == "" {
			t.Errorf("%s: version %q compact, %q full", name, got, want)
		}
		expanded, err := xds.Expand(compacted[xds.EndpointType][name])
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(state[xds.EndpointType][name], expanded, protocmp.Transform()); diff != "" {
			t.Errorf("%s: Expand (-want +got):\n%s", name, diff)
		}
	}
	bad := withCompact(func(cla *endpoint.ClusterLoadAssignment) {
		cla.Endpoints[0].LbEndpoints[0].GetEndpoint().GetAddress().GetSocketAddress().PortSpecifier = &core.SocketAddress_PortValue{PortValue: 70000}
	})
	if err := xds.NewServer(xds.Options{}).Publish(xds.DefaultProxyRole, bad); err == nil || !strings.Contains(err.Error(), "PortValue") {
		t.Errorf("Publish: %v, want the port 70000 refused", err)
	}
}
