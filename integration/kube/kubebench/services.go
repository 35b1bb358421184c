package main

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func ptr[T any](v T) *T { return &v }

func serviceName(i int) string { return fmt.Sprintf("svc-%04d", i) }

// ip is the i-th pod IP of Service s (10.s.x.y, unique across the benchmark).
func ip(s, i int) string { return fmt.Sprintf("10.%d.%d.%d", s/250, s%250, i+1) }

// slice is Service s's EndpointSlice with the endpoints of the given IPs, all ready.
func slice(s int, ips []string) *discoveryv1.EndpointSlice {
	eps := make([]discoveryv1.Endpoint, 0, len(ips))
	for _, a := range ips {
		eps = append(eps, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: ptr(true)}})
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: serviceName(s), Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: serviceName(s)}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr("http"), Port: ptr(int32(8080)), Protocol: ptr(corev1.ProtocolTCP)}},
		Endpoints:   eps,
	}
}

// createServices makes n Services with one port; Service 0 (the Deployment rolled
// later) has 50 endpoints and the others share the rest.
func (b *bench) createServices(ctx context.Context, n, endpoints int) error {
	if _, err := b.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	per := (endpoints - 50) / (n - 1)
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for s := range n {
		g.Go(func() error {
			svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: serviceName(s), Namespace: ns},
				Spec: corev1.ServiceSpec{Selector: map[string]string{"app": serviceName(s)}, Ports: []corev1.ServicePort{
					{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}}}
			if _, err := b.client.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
				return err
			}
			count := per
			if s == 0 {
				count = 50
			}
			ips := make([]string, count)
			for i := range ips {
				ips[i] = ip(s, i)
			}
			_, err := b.client.DiscoveryV1().EndpointSlices(ns).Create(ctx, slice(s, ips), metav1.CreateOptions{})
			return err
		})
	}
	return g.Wait()
}
