package main

import (
	"context"
	"fmt"
	"time"

	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/controlplane/xds/xdsbench"
	"gatehouse.dev/gatehouse/integration/bench/benchkit"
)

// rollingUpdate replaces Service 0's 50 endpoints one at a time, as a rolling update of
// its Deployment does (a new pod IP ready, the old one gone), and times each
// EndpointSlice write to the new ClusterLoadAssignment on a connected delta ADS client.
func (b *bench) rollingUpdate(ctx context.Context, services int) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	w, err := xdsbench.Watch(ctx, b.xdsAddr, xds.DefaultProxyRole, resourcev3.EndpointType, resourcev3.ClusterType)
	if err != nil {
		return err
	}
	defer w.Close()
	if err := w.WaitCount(ctx, resourcev3.EndpointType, services); err != nil {
		return err
	}
	if err := w.WaitCount(ctx, resourcev3.ClusterType, services); err != nil {
		return err
	}
	cluster := clusterOf(0)
	clusterVersion := w.Version(resourcev3.ClusterType, cluster)
	ips := make([]string, 50)
	for i := range ips {
		ips[i] = ip(0, i)
	}
	var lat xdsbench.Latencies
	for i := range 50 {
		ips[i] = ip(0, 100+i)
		cur, err := b.client.DiscoveryV1().EndpointSlices(ns).Get(ctx, serviceName(0), metav1.GetOptions{})
		if err != nil {
			return err
		}
		next := slice(0, ips)
		next.ResourceVersion = cur.ResourceVersion
		old := w.Version(resourcev3.EndpointType, cluster)
		t0 := time.Now()
		if _, err := b.client.DiscoveryV1().EndpointSlices(ns).Update(ctx, next, metav1.UpdateOptions{}); err != nil {
			return err
		}
		at, err := w.WaitNew(ctx, resourcev3.EndpointType, cluster, old)
		if err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
		lat = append(lat, at.Sub(t0))
	}
	fmt.Printf("rolling update of 50 endpoints (%d Services loaded): EndpointSlice write → new EDS on the client: %s\n", services, lat)
	b.goals = append(b.goals, benchkit.Goal{What: fmt.Sprintf("kube: rolling update of 50 endpoints (%d Services) → new EDS on a client, p99", services),
		Target: 1000, Unit: "ms", Below: true, Rounds: []float64{benchkit.Millis(lat.Percentile(99))}})
	if got := w.Version(resourcev3.ClusterType, cluster); got != clusterVersion {
		fmt.Printf("WARNING: the cluster was sent again (version %s → %s)\n", clusterVersion, got)
	} else {
		fmt.Println("the cluster (CDS) was not sent again during the rolling update")
	}
	return nil
}
