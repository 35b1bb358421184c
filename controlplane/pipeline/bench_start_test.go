package pipeline_test

import (
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/pipeline/pipelinetest"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdsbench"
)

// BenchmarkStart is what `gatehouse controlplane --resources DIR` does from its start
// to both roles' first complete state on real delta ADS clients, in process: the
// directory source reads every file (one resource a file, as the bench writes them),
// the pipeline translates, the xDS server publishes, and a delta client of each role,
// connected over loopback gRPC before the read, receives everything. The clients'
// decoding is in the figure too; run it with -cpu 1 for the control plane's
// GOMAXPROCS=1 under `make bench`.
//
//	go test -run '^$' -bench Start -benchtime 5x -cpu 1 ./controlplane/pipeline/
func BenchmarkStart(b *testing.B) {
	for _, n := range scales {
		dir := b.TempDir()
		if err := pipelinetest.WriteDir(dir, n, 1, "127.0.0.1", 8083); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				startOnce(b, dir, n)
			}
		})
	}
}

// startOnce runs one start on dir and waits for both roles' complete state.
func startOnce(b *testing.B, dir string, n int) {
	srv := xds.NewServer(xds.Options{Log: zerolog.Nop()})
	g := grpc.NewServer(xds.GRPCServerOptions()...)
	srv.Register(g)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = g.Serve(lis) }()
	defer g.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	want := map[string]map[string]int{
		xds.RoleExtauth:      {xds.ExtAuthConfigType: n},
		xds.DefaultProxyRole: {xds.ClusterType: n + 1, xds.EndpointType: n + 1, xds.ListenerType: 1, xds.RouteType: 1},
	}
	var clients errgroup.Group
	for role, counts := range want {
		types := xds.ProxyTypes
		if role == xds.RoleExtauth {
			types = []string{xds.ExtAuthConfigType}
		}
		w, err := xdsbench.Watch(ctx, lis.Addr().String(), role, types...)
		if err != nil {
			b.Fatal(err)
		}
		defer w.Close()
		clients.Go(func() error {
			return w.WaitFor(ctx, func() bool {
				for typ, c := range counts {
					if w.Count(typ) < c {
						return false
					}
				}
				return true
			})
		})
	}
	p := pipeline.New(pipeline.Options{Log: zerolog.Nop(), Publish: srv.Publish})
	run := make(chan error, 1)
	go func() {
		run <- (&source.Dir{Path: dir, Log: zerolog.Nop()}).Run(ctx, func(in *source.Input) {
			p.Apply(in)
			if errs := p.Stages().PublishErrors; errs != nil {
				b.Error(errs)
			}
		})
	}()
	if err := clients.Wait(); err != nil {
		b.Fatal(err)
	}
	cancel()
	if err := <-run; err != nil {
		b.Fatal(err)
	}
}
