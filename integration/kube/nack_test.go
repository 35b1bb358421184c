package kube_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/internal/kubetest"
)

var authConfigGVR = schema.GroupVersionResource{Group: "enterprise.gateway.gatehouse.dev", Version: "v1", Resource: "authconfigs"}

func guard(plugin string) string {
	return `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: guard, namespace: APPS}
spec:
  configs:
    - pluginAuth:
        name: ` + plugin + `
        exportedSymbolName: Plugin
        config: {RequiredHeader: x-required, AllowedValues: [alpha]}
`
}

// TestNackStatusInCluster: a config extauth (a real `gatehouse extauth --xds` process)
// cannot build is NACKed, and the AuthConfig's status subresource says Rejected,
// reported by that extauth, with its detail; once the resource is fixed it says
// Accepted again, about the new generation.
func TestNackStatusInCluster(t *testing.T) {
	gh := testbin.Gatehouse(t)
	env.InstallCRDs(t)
	ns := newNamespace(t, "gh-nack")
	_, xdsAddr := startControlPlane(t, gh, ns)
	listen := testbin.FreeAddr(t)
	ex := testbin.Start(t, nil, gh, "extauth", "--xds", xdsAddr, "--plugin-dir", testbin.SamplePlugins(t), "--listen", listen)
	testbin.WaitTCP(t, ex, listen, time.Minute)

	apply(t, guard("no_such_plugin"), ns)
	st := waitAuthConfigStatus(t, ns, "Rejected", 1)
	if by, _ := st["reportedBy"].(string); !strings.HasPrefix(by, "extauth/") {
		t.Errorf("reportedBy %q, want the extauth that NACKed (extauth/<node>)", by)
	}
	if reason, _ := st["reason"].(string); !strings.Contains(reason, "no_such_plugin") || !strings.HasPrefix(reason, "extauth/") {
		t.Errorf("reason %q, want the NACK's detail naming no_such_plugin, prefixed by the extauth", reason)
	}

	apply(t, guard("required_header"), ns)
	st = waitAuthConfigStatus(t, ns, "Accepted", 2)
	if st["reportedBy"] != "gatehouse" || st["reason"] != nil {
		t.Errorf("status after the fix %v, want Accepted by gatehouse with no reason", st)
	}
}

func waitAuthConfigStatus(t *testing.T, ns, state string, generation int64) map[string]any {
	t.Helper()
	_, dyn := env.Clients(t)
	var st map[string]any
	kubetest.Eventually(t, fmt.Sprintf("AuthConfig %s/guard %s at generation %d", ns, state, generation), func() error {
		u, err := dyn.Resource(authConfigGVR).Namespace(ns).Get(context.Background(), "guard", metav1.GetOptions{})
		if err != nil {
			return err
		}
		st, _, _ = unstructured.NestedMap(u.Object, "status", "statuses", ns)
		if st["state"] != state || st["observedGeneration"] != generation {
			return fmt.Errorf("status %v", st)
		}
		return nil
	})
	return st
}
