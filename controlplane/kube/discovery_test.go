package kube_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/internal/kubetest"
)

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

func ptr[T any](v T) *T { return &v }

// TestDiscoveryToEDS: a Service and its EndpointSlice become the Upstream
// <namespace>-<service>-<port> (what routeAction.single.kube.ref routes to) and an EDS
// cluster on a connected ADS client; an endpoint going not ready leaves EDS, and the
// cluster itself is not sent again.
func TestDiscoveryToEDS(t *testing.T) {
	env.InstallCRDs(t)
	const ns = "discovery"
	namespace(t, ns)
	pl := startPlane(t, ns, "only", 3*time.Second)
	ads := dialADS(t, pl.addr)
	c, dyn := env.Clients(t)
	ctx := context.Background()

	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "echo"}, Ports: []corev1.ServicePort{
			{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}}}
	if _, err := c.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "echo-1", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: "echo"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080)), Protocol: ptr(corev1.ProtocolTCP)}},
		Endpoints: []discoveryv1.Endpoint{
			{Addresses: []string{"10.1.0.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}},
			{Addresses: []string{"10.1.0.2"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}},
			{Addresses: []string{"10.1.0.3"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(false), Terminating: ptr(true)}},
		},
	}
	created, err := c.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vs := object(t, fmt.Sprintf(`
apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: echo, namespace: %s}
spec:
  virtualHost:
    domains: [echo.example]
    routes:
    - matchers: [{prefix: /}]
      routeAction: {single: {kube: {ref: {name: echo, port: 80}}}}`, ns))
	if _, err := dyn.Resource(gvr("VirtualService")).Namespace(ns).Create(ctx, vs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	cluster := ns + "." + apiv1.KubeUpstreamName(ns, "echo", 80)
	wantAddrs := func(want ...string) {
		t.Helper()
		kubetest.Eventually(t, "EDS of "+cluster, func() error {
			got, ok := ads.addresses(cluster)
			if !ok {
				return fmt.Errorf("no ClusterLoadAssignment yet")
			}
			if diff := cmp.Diff(want, got); diff != "" {
				return fmt.Errorf("endpoints (-want +got):\n%s", diff)
			}
			return nil
		})
	}
	wantAddrs("10.1.0.1:8080", "10.1.0.2:8080") // the terminating endpoint is drained
	waitStatus(t, "VirtualService", ns, "echo", "Accepted", 1, "")
	if n := ads.clusterSends(cluster); n != 1 {
		t.Fatalf("cluster %s sent %d times, want 1", cluster, n)
	}

	created.Endpoints[1].Conditions.Ready = ptr(false)
	if _, err := c.DiscoveryV1().EndpointSlices(ns).Update(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantAddrs("10.1.0.1:8080")
	if n := ads.clusterSends(cluster); n != 1 {
		t.Errorf("an endpoint change sent cluster %s again (%d sends): it must touch EDS only", cluster, n)
	}

	in := pl.src.Last()
	var found bool
	for r := range in.Resources.All() {
		if r.Kind == apiv1.KindUpstream && r.Name == apiv1.KubeUpstreamName(ns, "echo", 80) {
			found = true
			k := r.Object.(*apiv1.Upstream).Spec.Kube
			if k.ServiceName != "echo" || k.ServiceNamespace != ns || k.ServicePort != 80 || k.Selector["app"] != "echo" {
				t.Errorf("discovered upstream spec.kube %+v", k)
			}
		}
	}
	if !found {
		t.Errorf("no discovered Upstream in the input")
	}
}
