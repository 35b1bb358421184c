package pipeline_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/pipeline/pipelinetest"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// proxies are fake gateway proxies: what each acknowledged, by type.
type proxies struct {
	mu    sync.Mutex
	acked map[string]map[string]map[string]string // node → type → name → version
}

func (p *proxies) each(typeURL string, f func(string, map[string]string)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for node, byType := range p.acked {
		f(node, byType[typeURL])
	}
}

func (p *proxies) ack(node, typeURL, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.acked[node][typeURL] == nil {
		p.acked[node][typeURL] = map[string]string{}
	}
	p.acked[node][typeURL][name] = "v"
}

// A virtual host whose routes send to a cluster new to the proxies reaches them once
// every proxy has the cluster and, as its endpoints come over EDS, the endpoints.
func TestANewClustersRoutesWaitForItsClusterAndEndpoints(t *testing.T) {
	px := &proxies{acked: map[string]map[string]map[string]string{"envoy-a": {}, "envoy-b": {}}}
	p := pipeline.New(pipeline.Options{Log: zerolog.New(zerolog.NewTestWriter(t)), ProxiesAcked: px.each, AckBound: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Regate(ctx)
	up := fmt.Sprintf("ns%02d.up-%05d", 1%pipelinetest.Namespaces, 1)

	p.Apply(input(1))
	if !served(p, 0) {
		t.Fatal("the first run held a virtual host back")
	}
	p.Apply(input(2))
	if served(p, 1) || !served(p, 0) {
		t.Fatalf("after a new service: served 0 %t, 1 %t; want 0 only", served(p, 0), served(p, 1))
	}
	for _, node := range []string{"envoy-a", "envoy-b"} {
		px.ack(node, xds.ClusterType, up)
	}
	px.ack("envoy-a", xds.EndpointType, up)
	p.Acked()
	time.Sleep(100 * time.Millisecond)
	if served(p, 1) {
		t.Fatal("served before envoy-b acknowledged the cluster's endpoints")
	}
	px.ack("envoy-b", xds.EndpointType, up)
	p.Acked()
	await(t, "the new virtual host once both proxies have its cluster and endpoints", func() bool { return served(p, 1) })
}

// Past the bound the routes are published, and the proxy that lags is named on the
// Upstream and the VirtualService until it has the cluster.
func TestAProxyPastTheBoundIsNamedOnTheUpstream(t *testing.T) {
	px := &proxies{acked: map[string]map[string]map[string]string{"envoy-a": {}}}
	p := pipeline.New(pipeline.Options{Log: zerolog.New(zerolog.NewTestWriter(t)), ProxiesAcked: px.each, AckBound: 100 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Regate(ctx)
	up := fmt.Sprintf("ns%02d.up-%05d", 1%pipelinetest.Namespaces, 1)
	vs := fmt.Sprintf("ns%02d.vs-%05d", 1%pipelinetest.Namespaces, 1)

	p.Apply(input(1))
	p.Apply(input(2))
	await(t, "the routes published at the bound", func() bool { return served(p, 1) })
	want := []string{xds.DefaultProxyRole + "/envoy-a"}
	await(t, "the proxy named on the Upstream and the VirtualService", func() bool {
		return slices.Equal(warnings(p, "Upstream", up), want) && slices.Equal(warnings(p, "VirtualService", vs), want)
	})
	px.ack("envoy-a", xds.ClusterType, up)
	px.ack("envoy-a", xds.EndpointType, up)
	p.Acked()
	await(t, "the Warnings gone once the proxy has the cluster", func() bool {
		return warnings(p, "Upstream", up) == nil && warnings(p, "VirtualService", vs) == nil
	})
}
