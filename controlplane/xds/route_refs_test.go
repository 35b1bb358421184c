package xds_test

import (
	"maps"
	"strings"
	"testing"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdstest"
)

// A route configuration's references are checked by the parts that change, as the
// translation hands them: the virtual hosts of unchanged VirtualServices are the same
// pointers from one Publish to the next. Each step is published on the state left by
// the steps before it.
func TestRouteReferencesFollowEditedVirtualHosts(t *testing.T) {
	s := startServer(t)
	state := xdstest.Proxy(4)
	if err := s.Publish(xds.DefaultProxyRole, state); err != nil {
		t.Fatal(err)
	}
	vh := state[xds.RouteType][xdstest.RouteName].(*route.RouteConfiguration).GetVirtualHosts()
	withoutService := func(r xds.Resources, i int) {
		delete(r[xds.ClusterType], xdstest.ID(i))
		delete(r[xds.EndpointType], xdstest.ID(i))
	}
	withService := func(r xds.Resources, i int) {
		r[xds.ClusterType][xdstest.ID(i)] = xdstest.Cluster(xdstest.ID(i))
		r[xds.EndpointType][xdstest.ID(i)] = xdstest.Endpoints(xdstest.ID(i), "127.0.0.1", 9000+i)
	}
	nowhere := xdstest.VirtualHost(0, 1)
	nowhere.Routes[0].GetRoute().ClusterSpecifier = &route.RouteAction_Cluster{Cluster: "bench.nowhere"}
	movedTo0 := xdstest.VirtualHost(3, 2)
	for _, r := range movedTo0.GetRoutes() {
		r.GetRoute().ClusterSpecifier = &route.RouteAction_Cluster{Cluster: xdstest.ID(0)}
	}
	for _, step := range []struct {
		name   string
		vhosts []*route.VirtualHost // the route configuration's, nil to keep it
		edit   func(xds.Resources)
		want   string // part of the error; "" when it must be published
	}{
		{
			name:   "a cluster removed while an unchanged virtual host of an edited route configuration uses it",
			vhosts: []*route.VirtualHost{xdstest.VirtualHost(0, 1), vh[1], vh[2], vh[3]},
			edit:   func(r xds.Resources) { withoutService(r, 2) },
			want:   `route configuration "http" references cluster "bench.svc-00002", which is removed`,
		},
		{
			name:   "an edited virtual host naming a cluster not served",
			vhosts: []*route.VirtualHost{nowhere, vh[1], vh[2], vh[3]},
			want:   `route configuration "http" references cluster "bench.nowhere", which is not served`,
		},
		{
			name:   "a virtual host removed with its cluster",
			vhosts: []*route.VirtualHost{vh[0], vh[2], vh[3]},
			edit:   func(r xds.Resources) { withoutService(r, 1) },
		},
		{
			name: "its cluster back without a route",
			edit: func(r xds.Resources) { withService(r, 1) },
		},
		{
			// The route configuration must no longer count as using it.
			name: "its cluster removed again",
			edit: func(r xds.Resources) { withoutService(r, 1) },
		},
		{
			name:   "the same virtual host twice",
			vhosts: []*route.VirtualHost{vh[0], vh[2], vh[2], vh[3]},
		},
		{
			name:   "one of the two removed",
			vhosts: []*route.VirtualHost{vh[0], vh[2], vh[3]},
		},
		{
			name:   "reordered",
			vhosts: []*route.VirtualHost{vh[3], vh[0], vh[2]},
		},
		{
			name: "a cluster removed that the remaining one uses",
			edit: func(r xds.Resources) { withoutService(r, 2) },
			want: `route configuration "http" references cluster "bench.svc-00002", which is removed`,
		},
		{
			name:   "a virtual host edited to another cluster, the old one removed",
			vhosts: []*route.VirtualHost{vh[0], vh[2], movedTo0},
			edit:   func(r xds.Resources) { withoutService(r, 3) },
		},
	} {
		t.Run(step.name, func(t *testing.T) {
			next := shallowCopy(state)
			if step.vhosts != nil {
				next[xds.RouteType][xdstest.RouteName] = &route.RouteConfiguration{Name: xdstest.RouteName, VirtualHosts: step.vhosts}
			}
			if step.edit != nil {
				step.edit(next)
			}
			err := s.Publish(xds.DefaultProxyRole, next)
			switch {
			case step.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case step.want != "" && err == nil:
				t.Fatalf("published; want an error saying %s", step.want)
			case step.want != "" && !strings.Contains(err.Error(), step.want):
				t.Fatalf("error\n%v\ndoes not say\n%s", err, step.want)
			}
			// go-control-plane checks less (not the clusters routes name), never more.
			if gcp := consistentForGoControlPlane(next); err == nil && gcp != nil {
				t.Errorf("published what go-control-plane's Snapshot.Consistent refuses: %v", gcp)
			}
			if err == nil {
				state = next
			}
			// What is served is the route configuration now in state, virtual hosts in
			// order (with only a name beside them, its serialization is the canonical one).
			rc := state[xds.RouteType][xdstest.RouteName].(*route.RouteConfiguration)
			b, merr := cachev3.MarshalResource(rc)
			if merr != nil {
				t.Fatal(merr)
			}
			if got, want := s.Version(xds.DefaultProxyRole, xds.RouteType, xdstest.RouteName), xds.ContentVersion(b); got != want {
				t.Errorf("served route configuration version %s, want %s (the hash of what is in state)", got, want)
			}
		})
	}
}

// shallowCopy copies the maps of r, sharing every message.
func shallowCopy(r xds.Resources) xds.Resources {
	out := xds.Resources{}
	for typ, byName := range r {
		out[typ] = maps.Clone(byName)
	}
	return out
}
