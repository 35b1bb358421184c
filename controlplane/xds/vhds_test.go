package xds_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdstest"
)

// subscribe sends a delta request of VirtualHostType naming names, as Envoy's VHDS does
// for each route configuration with vhds (its name is the namespace of its virtual hosts).
func subscribe(t *testing.T, c *deltaClient, nonce string, names ...string) {
	t.Helper()
	if err := c.stream.Send(&discovery.DeltaDiscoveryRequest{Node: node("envoy-vhds", xds.DefaultProxyRole), TypeUrl: xds.VirtualHostType,
		ResponseNonce: nonce, ResourceNamesSubscribe: names}); err != nil {
		t.Fatal(err)
	}
}

// TestVHDSServesTheNamespaceSubscribedTo: a proxy that subscribes to a route
// configuration's name over VHDS receives every virtual host named
// "<route configuration>/...", then each edit as that one virtual host and each removal
// as a removed name; a namespace with no virtual host is answered empty (Envoy's
// route configuration waits for that answer), and nothing of it reaches a stream
// subscribed to another namespace.
func TestVHDSServesTheNamespaceSubscribedTo(t *testing.T) {
	s := startServer(t)
	state := xdstest.ProxyVHDS(3)
	if err := s.Publish(xds.DefaultProxyRole, state); err != nil {
		t.Fatal(err)
	}
	envoy := newDelta(t, s.addr, nil, nil) // subscribes to nothing yet
	subscribe(t, envoy, "", xdstest.RouteName)
	r := envoy.next()
	want := []string{"http/bench.svc-00000", "http/bench.svc-00001", "http/bench.svc-00002"}
	if d := cmp.Diff(want, slices.Sorted(slices.Values(names(r)))); d != "" {
		t.Fatalf("first answer (-want +got):\n%s", d)
	}
	envoy.answer(r, "")

	other := newDelta(t, s.addr, nil, nil)
	subscribe(t, other, "", "elsewhere")
	if r := other.next(); len(r.GetResources())+len(r.GetRemovedResources()) != 0 {
		t.Fatalf("a namespace without virtual hosts: got %v, removed %v; want an empty answer", names(r), r.GetRemovedResources())
	}

	edit := func(f func(vh map[string]types.Resource)) {
		t.Helper()
		next := maps.Clone(state)
		next[xds.VirtualHostType] = maps.Clone(state[xds.VirtualHostType])
		f(next[xds.VirtualHostType])
		if err := s.Publish(xds.DefaultProxyRole, next); err != nil {
			t.Fatal(err)
		}
		state = next
	}
	edit(func(vh map[string]types.Resource) { vh["http/bench.svc-00001"] = xdstest.VHDSVirtualHost(1, 7) })
	r = envoy.next()
	if d := cmp.Diff([]string{"http/bench.svc-00001"}, names(r)); d != "" || len(r.GetRemovedResources()) > 0 {
		t.Fatalf("an edit of one virtual host (-want +got):\n%s removed %v", d, r.GetRemovedResources())
	}
	envoy.answer(r, "")
	edit(func(vh map[string]types.Resource) { delete(vh, "http/bench.svc-00002") })
	r = envoy.next()
	if d := cmp.Diff([]string{"http/bench.svc-00002"}, r.GetRemovedResources()); d != "" || len(r.GetResources()) > 0 {
		t.Fatalf("a removal (-want +got):\n%s sent %v", d, names(r))
	}
	envoy.answer(r, "")

	// The other stream had no answer since its first: the next one is to its
	// subscription to the namespace, with what is served now.
	subscribe(t, other, "", xdstest.RouteName)
	r = other.next()
	if d := cmp.Diff(want[:2], slices.Sorted(slices.Values(names(r)))); d != "" {
		t.Fatalf("after subscribing to %q (-want +got):\n%s", xdstest.RouteName, d)
	}
	if r.GetResources()[slices.Index(names(r), "http/bench.svc-00001")].GetVersion() != s.Version(xds.DefaultProxyRole, xds.VirtualHostType, "http/bench.svc-00001") {
		t.Error("the edited virtual host is not sent at the version served")
	}
}

// TestVHDSVirtualHostsAreChecked: a VHDS virtual host must be named
// "<route configuration>/<virtual host>", inside as well, after a route configuration
// that is served; Publish refuses it otherwise, naming it.
func TestVHDSVirtualHostsAreChecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		put  func(vh map[string]types.Resource)
		want string
	}{
		{"no namespace", func(vh map[string]types.Resource) { vh["bench.svc-00000"] = xdstest.VirtualHost(0, 0) }, "is not named"},
		// Envoy keeps a VHDS virtual host by its name and removes it by resource name.
		{"its name without the namespace", func(vh map[string]types.Resource) { vh["http/bench.svc-00000"] = xdstest.VirtualHost(0, 0) },
			`is named "bench.svc-00000" inside, listed as "http/bench.svc-00000"`},
		{"no such route configuration", func(vh map[string]types.Resource) {
			vh["nowhere/x"] = &route.VirtualHost{Name: "nowhere/x", Domains: []string{"x.example.com"}}
		}, `references route configuration "nowhere", which is not served`},
		{"invalid", func(vh map[string]types.Resource) {
			vh["http/bench.svc-00000"] = &route.VirtualHost{Name: "http/bench.svc-00000"} // no domains
		}, "Domains"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := xds.NewServer(xds.Options{Log: testLog(t)})
			state := xdstest.ProxyVHDS(2)
			tc.put(state[xds.VirtualHostType])
			err := s.Publish(xds.DefaultProxyRole, state)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Publish: %v; want an error with %q", err, tc.want)
			}
		})
	}
}
