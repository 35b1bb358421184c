package clustertest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/internal/kubetest"
)

var env *kubetest.Env

func TestMain(m *testing.M) {
	os.Exit(testbin.Wrap(func() int { return kubetest.Main(m, &env) }))
}

func chartDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "gatehouse")
}

// render renders the chart as Helm install would (values.schema.json included) and
// returns every object, sorted by kind and name.
func render(t *testing.T, namespace, values string) ([]*unstructured.Unstructured, error) {
	t.Helper()
	chrt, err := loader.Load(chartDir())
	if err != nil {
		t.Fatal(err)
	}
	var vals map[string]any
	if err := yaml.Unmarshal([]byte(values), &vals); err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValues(chrt, vals, chartutil.ReleaseOptions{Name: "gatehouse", Namespace: namespace, IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(chrt, rv)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for name, content := range files {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(content, "\n---") {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if len(u.Object) > 0 {
				out = append(out, u)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].GetKind()+"/"+out[i].GetName() < out[j].GetKind()+"/"+out[j].GetName()
	})
	return out, nil
}

// create creates every object in the API server, which validates each against the real
// schemas (core kinds, RBAC, PDBs, and our CRDs for Settings).
func create(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	c, dyn := env.Clients(t)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Discovery()))
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s %s: %v", gvk, o.GetName(), err)
		}
		ri := dyn.Resource(m.Resource)
		var created *unstructured.Unstructured
		if o.GetNamespace() != "" {
			created, err = ri.Namespace(o.GetNamespace()).Create(context.Background(), o, metav1.CreateOptions{FieldValidation: "Strict"})
		} else {
			created, err = ri.Create(context.Background(), o, metav1.CreateOptions{FieldValidation: "Strict"})
		}
		if err != nil {
			t.Errorf("the API server refused %s %s: %v", gvk.Kind, o.GetName(), err)
			continue
		}
		if created.GetUID() == "" {
			t.Errorf("%s %s: created without a uid", gvk.Kind, o.GetName())
		}
	}
}

func namespace(t *testing.T, name string) {
	t.Helper()
	c, _ := env.Clients(t)
	if _, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

const fullValues = `
controlPlane: {replicas: 2, logLevel: debug, watchNamespaces: [apps, full]}
settings: {devMode: true, requestTimeout: 1s, discovery: {namespaces: [apps, full], labels: {expose: "true"}}}
global:
  extensions:
    extAuth:
      deployment: {replicas: 3, logLevel: warn}
      plugins:
        headers: {image: {repository: my-org/plugins}}
gatewayProxies:
  gatewayProxy: {replicas: 2, envoyLogLevel: debug}
  publicGw: {enabled: true, replicas: 1, image: {repository: envoyproxy/envoy, tag: v1.34.1}, envoyLogLevel: warning, service: {type: ClusterIP, httpPort: 8080, httpsPort: 8443}}
redis: {enabled: true}
podDisruptionBudget: {maxUnavailable: 1}
`

// TestChartObjectsAreAccepted renders the chart for the default and the full values and
// creates every object in a real API server.
func TestChartObjectsAreAccepted(t *testing.T) {
	env.InstallCRDs(t)
	tests := []struct {
		name, namespace, values string
		wantKinds               map[string]int
		components              []string // gatehouse=<component> labels of the Deployments
	}{{
		name: "default", namespace: "gh-default", values: "{}",
		wantKinds: map[string]int{"ClusterRole": 1, "ClusterRoleBinding": 1, "ConfigMap": 1, "Deployment": 3, "Role": 1,
			"RoleBinding": 1, "Service": 3, "ServiceAccount": 1, "Settings": 1},
		components: []string{"controlplane", "extauth", "gateway-proxy"},
	}, {
		name: "full", namespace: "gh-full", values: fullValues,
		wantKinds: map[string]int{"ClusterRole": 1, "ClusterRoleBinding": 1, "ConfigMap": 2, "Deployment": 5, "PodDisruptionBudget": 3,
			"Role": 1, "RoleBinding": 1, "Service": 5, "ServiceAccount": 1, "Settings": 1},
		components: []string{"controlplane", "extauth", "gateway-proxy", "public-gw", "redis"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := render(t, tt.namespace, tt.values)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			kinds := map[string]int{}
			var components []string
			for _, o := range objs {
				kinds[o.GetKind()]++
				if o.GetKind() == "Deployment" {
					components = append(components, o.GetLabels()["gatehouse"])
				}
			}
			if fmt.Sprint(kinds) != fmt.Sprint(tt.wantKinds) {
				t.Errorf("kinds %v, want %v", kinds, tt.wantKinds)
			}
			sort.Strings(components)
			if fmt.Sprint(components) != fmt.Sprint(tt.components) {
				t.Errorf("components %v, want %v", components, tt.components)
			}
			namespace(t, tt.namespace)
			create(t, objs)
		})
	}
}

// TestValuesSchemaRejectsTypos: a misspelt value fails the install instead of being
// ignored.
func TestValuesSchemaRejectsTypos(t *testing.T) {
	tests := []struct{ name, values, want string }{
		{"top level", "controlplane: {enabled: false}", "controlplane"},
		{"nested", "controlPlane: {replica: 2}", "replica"},
		{"gateway proxy", "gatewayProxies: {gatewayProxy: {envoyLoglevel: debug}}", "envoyLoglevel"},
		{"wrong type", "controlPlane: {replicas: two}", "replicas"},
		{"bad enum", "gatewayProxies: {gatewayProxy: {envoyLogLevel: loud}}", "envoyLogLevel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(t, "typos", tt.values)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("render(%s): err %v, want one naming %q", tt.values, err, tt.want)
			}
		})
	}
}
