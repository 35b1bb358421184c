package kube_test

import (
	"context"
	"sync"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"

	"gatehouse.dev/gatehouse/controlplane/xds"
)

// adsClient is a delta ADS client of a gateway proxy role that keeps what it received
// and counts, per resource, how many times it was sent.
type adsClient struct {
	mu        sync.Mutex
	endpoints map[string]*endpointv3.ClusterLoadAssignment
	clusters  map[string]int // name → times received
	err       error
}

func dialADS(t *testing.T, addr string) *adsClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); conn.Close() })
	s, err := discoveryv3.NewAggregatedDiscoveryServiceClient(conn).DeltaAggregatedResources(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node := &corev3.Node{Id: t.Name(), Metadata: &structpb.Struct{Fields: map[string]*structpb.Value{
		xds.RoleKey: structpb.NewStringValue(xds.DefaultProxyRole)}}}
	for _, typ := range []string{resourcev3.ClusterType, resourcev3.EndpointType} {
		if err := s.Send(&discoveryv3.DeltaDiscoveryRequest{Node: node, TypeUrl: typ, ResourceNamesSubscribe: []string{"*"}}); err != nil {
			t.Fatal(err)
		}
	}
	c := &adsClient{endpoints: map[string]*endpointv3.ClusterLoadAssignment{}, clusters: map[string]int{}}
	go func() {
		for {
			resp, err := s.Recv()
			c.mu.Lock()
			if err != nil {
				c.err = err
				c.mu.Unlock()
				return
			}
			for _, r := range resp.GetResources() {
				switch resp.GetTypeUrl() {
				case resourcev3.ClusterType:
					c.clusters[r.GetName()]++
				case resourcev3.EndpointType:
					cla := &endpointv3.ClusterLoadAssignment{}
					if err := r.GetResource().UnmarshalTo(cla); err == nil {
						c.endpoints[r.GetName()] = cla
					}
				}
			}
			c.mu.Unlock()
			_ = s.Send(&discoveryv3.DeltaDiscoveryRequest{TypeUrl: resp.GetTypeUrl(), ResponseNonce: resp.GetNonce()})
		}
	}()
	return c
}

// addresses are "ip:port" of the cluster's endpoints as last received; ok is false
// when no assignment of it was received.
func (c *adsClient) addresses(cluster string) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cla, ok := c.endpoints[cluster]
	if !ok {
		return nil, false
	}
	out := []string{}
	for _, l := range cla.GetEndpoints() {
		for _, e := range l.GetLbEndpoints() {
			sa := e.GetEndpoint().GetAddress().GetSocketAddress()
			out = append(out, sa.GetAddress()+":"+itoa(sa.GetPortValue()))
		}
	}
	return out, true
}

func (c *adsClient) clusterSends(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clusters[name]
}
