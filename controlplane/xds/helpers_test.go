package xds_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	discovery "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"

	"gatehouse.dev/gatehouse/controlplane/xds"
)

const wait = 10 * time.Second

type testServer struct {
	*xds.Server
	addr  string
	reg   *prometheus.Registry
	nacks chan xds.Nack
}

func startServer(t *testing.T) *testServer {
	t.Helper()
	ts := &testServer{reg: prometheus.NewRegistry(), nacks: make(chan xds.Nack, 16)}
	ts.Server = xds.NewServer(xds.Options{
		Log: testLog(t), Registerer: ts.reg,
		OnNack: func(n xds.Nack) { ts.nacks <- n },
		// The control plane's books keep what clients acknowledged only when someone
		// is told of it.
		OnAcked: func(string, string) {},
	})
	ts.addr = serve(t, ts.Server)
	return ts
}

// serve serves s's ADS on a loopback port until the test ends, and returns its address.
func serve(t *testing.T, s *xds.Server) string {
	t.Helper()
	g := grpc.NewServer(xds.GRPCServerOptions()...)
	s.Register(g)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return lis.Addr().String()
}

// testLog logs to t until the test ends; the server's stream goroutines may still
// log while they wind down after it.
func testLog(t *testing.T) zerolog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.done = true
	})
	return zerolog.New(w)
}

type testWriter struct {
	mu   sync.Mutex
	t    *testing.T
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

func node(id, role string) *core.Node {
	n := &core.Node{Id: id}
	if role != "" {
		n.Metadata = &structpb.Struct{Fields: map[string]*structpb.Value{xds.RoleKey: structpb.NewStringValue(role)}}
	}
	return n
}

func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// deltaClient is a bare delta ADS stream, answering nothing by itself.
type deltaClient struct {
	t      *testing.T
	stream discovery.AggregatedDiscoveryService_DeltaAggregatedResourcesClient
	resps  chan *discovery.DeltaDiscoveryResponse
	err    chan error
}

func newDelta(t *testing.T, addr string, n *core.Node, known map[string]map[string]string, types ...string) *deltaClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := discovery.NewAggregatedDiscoveryServiceClient(dial(t, addr)).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := &deltaClient{t: t, stream: s, resps: make(chan *discovery.DeltaDiscoveryResponse, 64), err: make(chan error, 1)}
	for _, typ := range types {
		if err := s.Send(&discovery.DeltaDiscoveryRequest{Node: n, TypeUrl: typ, ResourceNamesSubscribe: []string{"*"}, InitialResourceVersions: known[typ]}); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		for {
			r, err := s.Recv()
			if err != nil {
				c.err <- err
				return
			}
			c.resps <- r
		}
	}()
	return c
}

func (c *deltaClient) next() *discovery.DeltaDiscoveryResponse {
	c.t.Helper()
	select {
	case r := <-c.resps:
		return r
	case err := <-c.err:
		c.t.Fatalf("stream ended: %v", err)
	case <-time.After(wait):
		c.t.Fatal("no response")
	}
	return nil
}

// answer ACKs r, or NACKs it with detail.
func (c *deltaClient) answer(r *discovery.DeltaDiscoveryResponse, detail string) {
	c.t.Helper()
	req := &discovery.DeltaDiscoveryRequest{TypeUrl: r.GetTypeUrl(), ResponseNonce: r.GetNonce()}
	if detail != "" {
		req.ErrorDetail = &rpcstatus.Status{Code: 3, Message: detail}
	}
	if err := c.stream.Send(req); err != nil {
		c.t.Fatal(err)
	}
}

// sotwClient is a bare state-of-the-world ADS stream.
type sotwClient struct {
	t      *testing.T
	node   *core.Node
	stream discovery.AggregatedDiscoveryService_StreamAggregatedResourcesClient
	resps  chan *discovery.DiscoveryResponse
	err    chan error
}

func newSotw(t *testing.T, addr string, n *core.Node, types ...string) *sotwClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := discovery.NewAggregatedDiscoveryServiceClient(dial(t, addr)).StreamAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := &sotwClient{t: t, node: n, stream: s, resps: make(chan *discovery.DiscoveryResponse, 64), err: make(chan error, 1)}
	for _, typ := range types {
		if err := s.Send(&discovery.DiscoveryRequest{Node: n, TypeUrl: typ}); err != nil {
			t.Fatal(err)
		}
	}
	go func() {
		for {
			r, err := s.Recv()
			if err != nil {
				c.err <- err
				return
			}
			c.resps <- r
		}
	}()
	return c
}

func (c *sotwClient) next() *discovery.DiscoveryResponse {
	c.t.Helper()
	select {
	case r := <-c.resps:
		return r
	case err := <-c.err:
		c.t.Fatalf("stream ended: %v", err)
	case <-time.After(wait):
		c.t.Fatal("no response")
	}
	return nil
}

func (c *sotwClient) answer(r *discovery.DiscoveryResponse, version, detail string) {
	c.t.Helper()
	req := &discovery.DiscoveryRequest{TypeUrl: r.GetTypeUrl(), ResponseNonce: r.GetNonce(), VersionInfo: version}
	if detail != "" {
		req.ErrorDetail = &rpcstatus.Status{Code: 3, Message: detail}
	}
	if err := c.stream.Send(req); err != nil {
		c.t.Fatal(err)
	}
}

func names(r *discovery.DeltaDiscoveryResponse) []string {
	var out []string
	for _, res := range r.GetResources() {
		out = append(out, res.GetName())
	}
	return out
}
