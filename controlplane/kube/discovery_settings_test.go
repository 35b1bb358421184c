package kube_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/internal/kubetest"
)

// discovered lists the names of the discovered Upstreams of the replica's last Input.
func (pl *plane) discovered() []string {
	var out []string
	if in := pl.src.Last(); in != nil {
		for r := range in.Resources.All() {
			if r.Kind == apiv1.KindUpstream && r.Origin != "" && r.Object.(*apiv1.Upstream).Spec.Kube != nil {
				out = append(out, r.Name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestDiscoverySettings: Settings limit discovery to labelled Services, and turn it off.
func TestDiscoverySettings(t *testing.T) {
	env.InstallCRDs(t)
	const ns = "discovery-settings"
	namespace(t, ns)
	pl := startPlane(t, ns, "only", 3*time.Second)
	c, dyn := env.Clients(t)
	ctx := context.Background()
	for _, s := range []struct {
		name   string
		labels map[string]string
	}{{"public", map[string]string{"expose": "true"}}, {"private", nil}} {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: ns, Labels: s.labels},
			Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "metrics", Port: 9090}}}}
		if _, err := c.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := func(names ...string) {
		t.Helper()
		kubetest.Eventually(t, fmt.Sprintf("discovered %v", names), func() error {
			if got := pl.discovered(); !slices.Equal(got, names) {
				return fmt.Errorf("discovered %v", got)
			}
			return nil
		})
	}
	want(ns+"-private-80", ns+"-private-9090", ns+"-public-80", ns+"-public-9090")

	settings := object(t, fmt.Sprintf(`
apiVersion: core.gatehouse.dev/v1
kind: Settings
metadata: {name: default, namespace: %s}
spec: {discovery: {labels: {expose: "true"}}}`, ns))
	if _, err := dyn.Resource(gvr("Settings")).Namespace(ns).Create(ctx, settings, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	want(ns+"-public-80", ns+"-public-9090")

	update(t, "Settings", ns, "default", func(u *unstructured.Unstructured) error {
		u.Object["spec"] = map[string]any{"discovery": map[string]any{"enabled": false}}
		return nil
	})
	want()
}
