package xds_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	extauthz "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tls "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdstest"
)

// editRoutes replaces the route configuration by a copy changed by edit.
func editRoutes(r xds.Resources, edit func(*route.RouteConfiguration)) {
	rc := proto.Clone(r[xds.RouteType][xdstest.RouteName]).(*route.RouteConfiguration)
	edit(rc)
	r[xds.RouteType][xdstest.RouteName] = rc
}

func editListener(r xds.Resources, edit func(*hcm.HttpConnectionManager)) {
	l := proto.Clone(r[xds.ListenerType][xdstest.ListenerName]).(*listener.Listener)
	f := l.GetFilterChains()[0].GetFilters()[0]
	var m hcm.HttpConnectionManager
	if err := f.GetTypedConfig().UnmarshalTo(&m); err != nil {
		panic(err)
	}
	edit(&m)
	f.ConfigType = &listener.Filter_TypedConfig{TypedConfig: xdstest.Any(&m)}
	r[xds.ListenerType][xdstest.ListenerName] = l
}

func TestPublishRefusesWhatIsInvalidOrInconsistent(t *testing.T) {
	svc1 := xdstest.ID(1)
	for _, tc := range []struct {
		name string
		role string
		edit func(xds.Resources)
		want []string // parts of the error
		// goControlPlane: go-control-plane's Snapshot.Consistent refuses it too
		goControlPlane bool
	}{
		{
			name: "invalid field of a cluster",
			edit: func(r xds.Resources) {
				c := xdstest.Cluster(svc1)
				c.ConnectTimeout = durationpb.New(-time.Second)
				r[xds.ClusterType][svc1] = c
			},
			want: []string{`cluster "bench.svc-00001": invalid Cluster.ConnectTimeout: value must be greater than 0s`},
		},
		{
			name: "invalid field inside a typed config",
			edit: func(r xds.Resources) { editListener(r, func(m *hcm.HttpConnectionManager) { m.StatPrefix = "" }) },
			want: []string{`listener "http": filter_chains[0].filters[0].typed_config (envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager): invalid HttpConnectionManager.StatPrefix`},
		},
		{
			name: "invalid typed config nested in a route",
			edit: func(r xds.Resources) {
				editRoutes(r, func(rc *route.RouteConfiguration) {
					rc.VirtualHosts[1].Routes[1].TypedPerFilterConfig["envoy.filters.http.ext_authz"] = xdstest.Any(&extauthz.ExtAuthzPerRoute{})
				})
			},
			want: []string{`route configuration "http": virtual_hosts[1].routes[1].typed_per_filter_config["envoy.filters.http.ext_authz"] (envoy.extensions.filters.http.ext_authz.v3.ExtAuthzPerRoute): invalid ExtAuthzPerRoute.Override: value is required`},
		},
		{
			name: "typed config of an unknown type",
			edit: func(r xds.Resources) {
				editRoutes(r, func(rc *route.RouteConfiguration) {
					rc.VirtualHosts[0].TypedPerFilterConfig = map[string]*anypb.Any{"acme": {TypeUrl: "type.googleapis.com/acme.Filter"}}
				})
			},
			want: []string{`route configuration "http": virtual_hosts[0].typed_per_filter_config["acme"]: cannot unpack type.googleapis.com/acme.Filter`},
		},
		{
			name: "resource listed under another name",
			edit: func(r xds.Resources) { r[xds.ClusterType]["other"] = xdstest.Cluster("bench.other") },
			want: []string{`cluster "other": is named "bench.other" inside, listed as "other"`},
		},
		{
			name: "resource listed under another type",
			edit: func(r xds.Resources) { r[xds.ClusterType]["x"] = xdstest.Endpoints("x", "127.0.0.1", 1) },
			want: []string{`cluster "x": is a type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment, listed under ` + xds.ClusterType},
		},
		{
			name: "type not served to the role",
			role: xds.RoleExtauth,
			edit: func(r xds.Resources) {},
			want: []string{`role "extauth" is not served type.googleapis.com/envoy.`},
		},
		{
			name: "route to a cluster that does not exist",
			edit: func(r xds.Resources) {
				editRoutes(r, func(rc *route.RouteConfiguration) {
					rc.VirtualHosts[0].Routes[0].GetRoute().ClusterSpecifier = &route.RouteAction_Cluster{Cluster: "bench.nowhere"}
				})
			},
			want: []string{`route configuration "http" references cluster "bench.nowhere", which is not served`},
		},
		{
			name: "cluster removed while a route uses it",
			edit: func(r xds.Resources) {
				delete(r[xds.ClusterType], svc1)
				delete(r[xds.EndpointType], svc1)
			},
			want: []string{`route configuration "http" references cluster "bench.svc-00001", which is removed`},
		},
		{
			name:           "EDS cluster without endpoints",
			edit:           func(r xds.Resources) { delete(r[xds.EndpointType], svc1) },
			want:           []string{`cluster "bench.svc-00001" references cluster load assignment "bench.svc-00001", which is removed`},
			goControlPlane: true,
		},
		{
			name: "endpoints of no cluster",
			edit: func(r xds.Resources) {
				r[xds.EndpointType]["bench.extra"] = xdstest.Endpoints("bench.extra", "127.0.0.1", 1)
			},
			want:           []string{`cluster load assignment "bench.extra" is not referenced by any EDS cluster`},
			goControlPlane: true,
		},
		{
			name: "listener's route configuration missing",
			edit: func(r xds.Resources) {
				editListener(r, func(m *hcm.HttpConnectionManager) { m.GetRds().RouteConfigName = "https" })
			},
			want: []string{
				`listener "http" references route configuration "https", which is not served`,
				`route configuration "http" is not referenced by any listener`,
			},
			goControlPlane: true,
		},
		{
			name: "SDS secret missing",
			edit: func(r xds.Resources) {
				c := xdstest.Cluster(svc1)
				c.TransportSocket = &core.TransportSocket{Name: "envoy.transport_sockets.tls", ConfigType: &core.TransportSocket_TypedConfig{
					TypedConfig: xdstest.Any(&tls.UpstreamTlsContext{CommonTlsContext: &tls.CommonTlsContext{
						TlsCertificateSdsSecretConfigs: []*tls.SdsSecretConfig{{Name: "bench.tls", SdsConfig: xdstest.ADS()}},
					}}),
				}}
				r[xds.ClusterType][svc1] = c
			},
			want: []string{`cluster "bench.svc-00001" references secret "bench.tls", which is not served`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t)
			base := xdstest.Proxy(3)
			if err := s.Publish(xds.DefaultProxyRole, base); err != nil {
				t.Fatal(err)
			}
			if err := consistentForGoControlPlane(base); err != nil {
				t.Fatalf("go-control-plane refuses the base state: %v", err)
			}
			role := tc.role
			if role == "" {
				role = xds.DefaultProxyRole
			}
			next := xdstest.Clone(base)
			tc.edit(next)
			before := versions(s, base, next)
			err := s.Publish(role, next)
			if err == nil {
				t.Fatal("published")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error\n%v\ndoes not say\n%s", err, w)
				}
			}
			if after := versions(s, base, next); after != before {
				t.Errorf("something was published:\nbefore %s\nafter  %s", before, after)
			}
			if tc.goControlPlane {
				if err := consistentForGoControlPlane(next); err == nil {
					t.Error("go-control-plane's Snapshot.Consistent accepts it")
				}
			}
		})
	}
}

// versions lists the served version of everything named in rs.
func versions(s *testServer, rs ...xds.Resources) string {
	var b strings.Builder
	for _, typ := range xds.ProxyTypes {
		for _, r := range rs {
			for name := range r[typ] {
				b.WriteString(typ + "/" + name + "=" + s.Version(xds.DefaultProxyRole, typ, name) + " ")
			}
		}
	}
	out := strings.Fields(b.String())
	sortStrings(out)
	out = slices.Compact(out)
	return strings.Join(out, " ")
}

func consistentForGoControlPlane(r xds.Resources) error {
	byType := map[string][]types.Resource{}
	for typ, byName := range r {
		for _, res := range byName {
			byType[typ] = append(byType[typ], res)
		}
	}
	snap, err := cachev3.NewSnapshot("1", byType)
	if err != nil {
		return err
	}
	return snap.Consistent()
}

func TestPublishAcceptsAConsistentEdit(t *testing.T) {
	s := startServer(t)
	base := xdstest.Proxy(3)
	if err := s.Publish(xds.DefaultProxyRole, base); err != nil {
		t.Fatal(err)
	}
	// A service removed as a whole (route, cluster, endpoints) and one added.
	next := xdstest.Proxy(4)
	delete(next[xds.ClusterType], xdstest.ID(1))
	delete(next[xds.EndpointType], xdstest.ID(1))
	editRoutes(next, func(rc *route.RouteConfiguration) {
		rc.VirtualHosts = append(rc.VirtualHosts[:1], rc.VirtualHosts[2:]...)
	})
	if err := consistentForGoControlPlane(next); err != nil {
		t.Fatalf("go-control-plane refuses the edit: %v", err)
	}
	if err := s.Publish(xds.DefaultProxyRole, next); err != nil {
		t.Fatal(err)
	}
	if s.Version(xds.DefaultProxyRole, xds.ClusterType, xdstest.ID(1)) != "" || s.Version(xds.DefaultProxyRole, xds.ClusterType, xdstest.ID(3)) == "" {
		t.Error("the edit is not what is served")
	}
	// And the cluster may come back once more.
	if err := s.Publish(xds.DefaultProxyRole, base); err != nil {
		t.Fatal(err)
	}
}

// The translation hands a type's map again, as it was published, when nothing in it
// changed, and a new map when something did: the first is skipped without a look, the
// second is compared as always.
func TestPublishSkipsAMapHandedAgain(t *testing.T) {
	s := xds.NewServer(xds.Options{})
	state := xdstest.Proxy(3)
	if err := s.Publish(xds.DefaultProxyRole, state); err != nil {
		t.Fatal(err)
	}
	version := func(typ, name string) string { return s.Version(xds.DefaultProxyRole, typ, name) }
	cluster, endpoints := version(xds.ClusterType, xdstest.ID(1)), version(xds.EndpointType, xdstest.ID(1))

	next := maps.Clone(state) // every type's map the same as published...
	next[xds.EndpointType] = maps.Clone(state[xds.EndpointType])
	next[xds.EndpointType][xdstest.ID(1)] = xdstest.Endpoints(xdstest.ID(1), "127.0.0.2", 7000) // ...but this one
	if err := s.Publish(xds.DefaultProxyRole, next); err != nil {
		t.Fatal(err)
	}
	if got := version(xds.EndpointType, xdstest.ID(1)); got == endpoints || got == "" {
		t.Errorf("edited endpoints: version %q, was %q", got, endpoints)
	}
	if got := version(xds.ClusterType, xdstest.ID(1)); got != cluster {
		t.Errorf("unchanged cluster: version %q, was %q", got, cluster)
	}

	// A new map of the same content, and one missing a cluster, are looked at too.
	next[xds.ClusterType] = maps.Clone(state[xds.ClusterType])
	delete(next[xds.ClusterType], xdstest.ID(2))
	next[xds.EndpointType] = maps.Clone(next[xds.EndpointType])
	delete(next[xds.EndpointType], xdstest.ID(2))
	err := s.Publish(xds.DefaultProxyRole, next)
	if err == nil || !strings.Contains(err.Error(), xdstest.ID(2)) {
		t.Errorf("a route naming a removed cluster: Publish = %v, want an error naming %s", err, xdstest.ID(2))
	}
}

// A role's first Publish at scale compares its resources on every core: what it
// finds must be what one core finds, every problem reported and nothing published
// when there is one, an unchanged content kept at its version.
func TestPublishComparesManyOnEveryCore(t *testing.T) {
	const n = 600 // above the count compared on every core
	s := &testServer{Server: xds.NewServer(xds.Options{})}
	state := xdstest.Proxy(n)

	bad := maps.Clone(state)
	bad[xds.ClusterType] = maps.Clone(state[xds.ClusterType])
	for _, i := range []int{7, 900} {
		c := xdstest.Cluster(xdstest.ID(i))
		c.ConnectTimeout = durationpb.New(-time.Second)
		bad[xds.ClusterType][xdstest.ID(i)] = c
	}
	err := s.Publish(xds.DefaultProxyRole, bad)
	for _, i := range []int{7, 900} {
		if err == nil || !strings.Contains(err.Error(), `cluster "`+xdstest.ID(i)+`": invalid Cluster.ConnectTimeout`) {
			t.Errorf("Publish with clusters %d and 900 invalid = %v, want an error naming each", 7, err)
			break
		}
	}
	if v := s.Version(xds.DefaultProxyRole, xds.ClusterType, xdstest.ID(1)); v != "" {
		t.Fatalf("a refused Publish served cluster 1 at version %q", v)
	}

	if err := s.Publish(xds.DefaultProxyRole, state); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{xds.ClusterType, xds.EndpointType} {
		for name, res := range state[typ] {
			b, err := cachev3.MarshalResource(res)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := s.Version(xds.DefaultProxyRole, typ, name), xds.ContentVersion(b); got != want {
				t.Fatalf("%s %s served at version %q, want its content hash %q", typ, name, got, want)
			}
		}
	}

	// The same content as new messages, but one cluster changed.
	next := maps.Clone(state)
	next[xds.ClusterType] = map[string]types.Resource{}
	for name, res := range state[xds.ClusterType] {
		next[xds.ClusterType][name] = proto.Clone(res)
	}
	changed := xdstest.Cluster(xdstest.ID(500))
	changed.ConnectTimeout = durationpb.New(3 * time.Second)
	next[xds.ClusterType][xdstest.ID(500)] = changed
	before := versions(s, state)
	if err := s.Publish(xds.DefaultProxyRole, next); err != nil {
		t.Fatal(err)
	}
	after := versions(s, state)
	diff := 0
	for i, f := range strings.Fields(before) {
		if g := strings.Fields(after)[i]; g != f {
			diff++
			if !strings.Contains(g, "/"+xdstest.ID(500)+"=") {
				t.Errorf("version changed without a change of content: %s → %s", f, g)
			}
		}
	}
	if diff != 1 {
		t.Errorf("%d versions changed, want 1 (cluster %s)", diff, xdstest.ID(500))
	}
}
