package xds_test

import (
	"context"
	"fmt"
	"maps"
	"net"
	"testing"
	"time"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdsbench"
	"gatehouse.dev/gatehouse/controlplane/xds/xdstest"
)

// benchState is a server with n services published for the default proxy and extauth,
// and the edits the benchmarks make to it.
type benchState struct {
	s       *xds.Server
	n       int
	proxy   xds.Resources
	extauth xds.Resources
}

func newBenchState(b *testing.B, n int) *benchState {
	b.Helper()
	st := &benchState{s: xds.NewServer(xds.Options{Log: zerolog.Nop()}), n: n, proxy: xdstest.Proxy(n), extauth: xdstest.Extauth(n)}
	if err := st.s.Publish(xds.DefaultProxyRole, st.proxy); err != nil {
		b.Fatal(err)
	}
	if err := st.s.Publish(xds.RoleExtauth, st.extauth); err != nil {
		b.Fatal(err)
	}
	return st
}

// edit is one kind of single-resource change, made the i-th time.
type edit struct {
	name  string
	role  string
	typ   string
	apply func(st *benchState, i int) (name string)
}

var edits = []edit{
	{"cluster", xds.DefaultProxyRole, xds.ClusterType, func(st *benchState, i int) string {
		id := xdstest.ID(i % st.n)
		c := xdstest.Cluster(id)
		c.ConnectTimeout = durationpb.New(time.Second + time.Duration(i+1)*time.Microsecond)
		st.proxy[xds.ClusterType] = maps.Clone(st.proxy[xds.ClusterType])
		st.proxy[xds.ClusterType][id] = c
		return id
	}},
	{"endpoints", xds.DefaultProxyRole, xds.EndpointType, func(st *benchState, i int) string {
		id := xdstest.ID(i % st.n)
		st.proxy[xds.EndpointType] = maps.Clone(st.proxy[xds.EndpointType])
		st.proxy[xds.EndpointType][id] = xdstest.Endpoints(id, "127.0.0.2", 10000+i%50000)
		return id
	}},
	{"extauthconfig", xds.RoleExtauth, xds.ExtAuthConfigType, func(st *benchState, i int) string {
		id := xdstest.ID(i % st.n)
		st.extauth[xds.ExtAuthConfigType] = maps.Clone(st.extauth[xds.ExtAuthConfigType])
		st.extauth[xds.ExtAuthConfigType][id] = xdstest.ExtAuthConfig(id, i+1)
		return id
	}},
	{"route", xds.DefaultProxyRole, xds.RouteType, func(st *benchState, i int) string {
		// Every virtual host lives in the one route configuration, so editing one
		// route means a new route configuration (with the other hosts shared).
		old := st.proxy[xds.RouteType][xdstest.RouteName].(*route.RouteConfiguration)
		rc := &route.RouteConfiguration{Name: old.GetName(), VirtualHosts: append([]*route.VirtualHost(nil), old.GetVirtualHosts()...)}
		rc.VirtualHosts[i%st.n] = xdstest.VirtualHost(i%st.n, i+1)
		st.proxy[xds.RouteType] = maps.Clone(st.proxy[xds.RouteType])
		st.proxy[xds.RouteType][xdstest.RouteName] = rc
		return xdstest.RouteName
	}},
}

func (st *benchState) publish(e edit) error {
	return st.publishChanged(e, nil)
}

// publishChanged publishes the role of e, told that changed changed (nil: compared
// in full).
func (st *benchState) publishChanged(e edit, changed xds.Changed) error {
	if e.role == xds.RoleExtauth {
		return st.s.PublishChanged(e.role, st.extauth, changed)
	}
	return st.s.PublishChanged(e.role, st.proxy, changed)
}

var sizes = []int{1000, 10000}

// BenchmarkPublishOneEdit is the cost of Publish when one resource of a role's full
// state changed; "changed/..." is PublishChanged told which one, as the pipeline tells
// it: that should not grow with the number of unrelated resources (only the route
// configuration, which holds every virtual host, grows with them). Publish alone
// compares every name of the edited type.
func BenchmarkPublishOneEdit(b *testing.B) {
	for _, told := range []bool{false, true} {
		for _, e := range edits {
			for _, n := range sizes {
				name := fmt.Sprintf("%s/%d", e.name, n)
				if told {
					name = "changed/" + name
				}
				b.Run(name, func(b *testing.B) {
					st := newBenchState(b, n)
					for i := 0; b.Loop(); i++ {
						b.StopTimer() // the edit is made as the translation hands it: a new map of its type
						var changed xds.Changed
						if id := e.apply(st, i); told {
							changed = xds.Changed{e.typ: {id}}
						}
						b.StartTimer()
						if err := st.publishChanged(e, changed); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkFirstPublish is publishing n services to an empty server: the proxy role
// (listener, routes, n+1 clusters and endpoints) and extauth (n ExtAuthConfigs).
func BenchmarkFirstPublish(b *testing.B) {
	for _, n := range sizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			proxy, extauth := xdstest.Proxy(n), xdstest.Extauth(n)
			for b.Loop() {
				s := xds.NewServer(xds.Options{Log: zerolog.Nop()})
				if err := s.Publish(xds.DefaultProxyRole, proxy); err != nil {
					b.Fatal(err)
				}
				if err := s.Publish(xds.RoleExtauth, extauth); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEditToStream is the time from Publish of one edited resource to its new
// version arriving on an already-connected delta ADS client's stream over loopback
// gRPC, with p50 and p99 reported.
func BenchmarkEditToStream(b *testing.B) {
	for _, e := range edits {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/%d", e.name, n), func(b *testing.B) {
				st := newBenchState(b, n)
				addr := serveBench(b, st.s)
				types := xds.ProxyTypes
				if e.role == xds.RoleExtauth {
					types = []string{xds.ExtAuthConfigType}
				}
				ctx := context.Background()
				w, err := xdsbench.Watch(ctx, addr, e.role, types...)
				if err != nil {
					b.Fatal(err)
				}
				defer w.Close()
				if err := w.WaitCount(ctx, e.typ, 1); err != nil {
					b.Fatal(err)
				}
				var lat xdsbench.Latencies
				edit := xdsbench.Edit{
					Resource: func(i int) (string, string) {
						if e.typ == xds.RouteType {
							return e.typ, xdstest.RouteName
						}
						return e.typ, xdstest.ID(i % n)
					},
					Apply: func(i int) error { e.apply(st, i); return st.publish(e) },
				}
				for i := 0; b.Loop(); i++ {
					l, err := xdsbench.MeasureOne(ctx, w, i, edit, 30*time.Second)
					if err != nil {
						b.Fatal(err)
					}
					lat = append(lat, l)
				}
				b.ReportMetric(float64(lat.Percentile(50).Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat.Percentile(99).Microseconds())/1000, "p99-ms")
			})
		}
	}
}

func serveBench(b *testing.B, s *xds.Server) string {
	b.Helper()
	g := grpc.NewServer(grpc.MaxSendMsgSize(1 << 30))
	s.Register(g)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = g.Serve(lis) }()
	b.Cleanup(g.Stop)
	return lis.Addr().String()
}
