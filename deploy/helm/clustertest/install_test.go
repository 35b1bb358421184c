package clustertest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
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
	withMTLSFiles(t, chrt)
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
	sdsDir := settingsHaveSDSDir(t)
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if _, found, _ := unstructured.NestedMap(o.Object, "spec", "extauth", "tls"); gvk.Kind == "Settings" && found && !sdsDir {
			t.Logf("the Settings CRD has no spec.extauth.tls yet (it comes with the Envoy-to-extauth mTLS branch): creating %s without it", o.GetName())
			o = o.DeepCopy()
			unstructured.RemoveNestedField(o.Object, "spec", "extauth", "tls")
		}
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

// settingsHaveSDSDir says whether the chart's Settings CRD knows spec.extauth.tls.sdsDir.
func settingsHaveSDSDir(t *testing.T) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(kubetest.CRDDir(), "core.gatehouse.dev_settings.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), "sdsDir")
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

// TestChartObjectsAreAccepted renders the chart for the default and the full values, with
// mutual TLS (the default) and without, and creates every object in a real API server.
// With mutual TLS it then runs what the certificate hook Job runs, as the Job's
// ServiceAccount, and checks every Secret the pods mount is there.
func TestChartObjectsAreAccepted(t *testing.T) {
	env.InstallCRDs(t)
	gh := testbin.Gatehouse(t)
	mtlsKinds := map[string]int{"CronJob": 1, "Job": 1, "NetworkPolicy": 1, "Role": 2, "RoleBinding": 2, "ServiceAccount": 2}
	tests := []struct {
		name, namespace, values string
		wantKinds               map[string]int
		components              []string // gatehouse=<component> labels of the Deployments
		secrets                 []string // the Secrets the Deployments mount
	}{{
		name: "default", namespace: "gh-default", values: "{}",
		wantKinds: plus(map[string]int{"ClusterRole": 1, "ClusterRoleBinding": 1, "ConfigMap": 1, "Deployment": 3, "Role": 1,
			"RoleBinding": 1, "Service": 3, "ServiceAccount": 1, "Settings": 1}, mtlsKinds),
		components: []string{"controlplane", "extauth", "gateway-proxy"},
		secrets:    []string{"gatehouse-controlplane-tls", "gatehouse-extauth-tls", "gatehouse-proxy-gateway-proxy-tls"},
	}, {
		name: "full", namespace: "gh-full", values: fullValues,
		wantKinds: plus(map[string]int{"ClusterRole": 1, "ClusterRoleBinding": 1, "ConfigMap": 2, "Deployment": 5, "PodDisruptionBudget": 3,
			"Role": 1, "RoleBinding": 1, "Service": 5, "ServiceAccount": 1, "Settings": 1}, mtlsKinds),
		components: []string{"controlplane", "extauth", "gateway-proxy", "public-gw", "redis"},
		secrets:    []string{"gatehouse-controlplane-tls", "gatehouse-extauth-tls", "gatehouse-proxy-gateway-proxy-tls", "gatehouse-proxy-public-gw-tls"},
	}, {
		name: "mTLS off", namespace: "gh-plain", values: "{mtls: {enabled: false}, networkPolicy: {enabled: false}}",
		wantKinds: map[string]int{"ClusterRole": 1, "ClusterRoleBinding": 1, "ConfigMap": 1, "Deployment": 3, "Role": 1,
			"RoleBinding": 1, "Service": 3, "ServiceAccount": 1, "Settings": 1},
		components: []string{"controlplane", "extauth", "gateway-proxy"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := render(t, tt.namespace, tt.values)
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			kinds := map[string]int{}
			var components, secrets []string
			var job *unstructured.Unstructured
			for _, o := range objs {
				kinds[o.GetKind()]++
				switch o.GetKind() {
				case "Deployment":
					components = append(components, o.GetLabels()["gatehouse"])
					secrets = append(secrets, mountedSecrets(t, o)...)
				case "Job":
					job = o
				}
			}
			if fmt.Sprint(kinds) != fmt.Sprint(tt.wantKinds) {
				t.Errorf("kinds %v, want %v", kinds, tt.wantKinds)
			}
			sort.Strings(components)
			if fmt.Sprint(components) != fmt.Sprint(tt.components) {
				t.Errorf("components %v, want %v", components, tt.components)
			}
			sort.Strings(secrets)
			if fmt.Sprint(secrets) != fmt.Sprint(tt.secrets) {
				t.Errorf("Secrets mounted %v, want %v", secrets, tt.secrets)
			}
			namespace(t, tt.namespace)
			create(t, objs)
			if job == nil {
				return
			}
			runCertsJob(t, gh, job)
			c, _ := env.Clients(t)
			for _, name := range append(secrets, "gatehouse-ca") {
				s, err := c.CoreV1().Secrets(tt.namespace).Get(context.Background(), name, metav1.GetOptions{})
				if err != nil {
					t.Errorf("after the certificate Job: %v", err)
					continue
				}
				if name != "gatehouse-ca" && s.Type != corev1.SecretTypeTLS {
					t.Errorf("Secret %s is of type %s", name, s.Type)
				}
			}
		})
	}
}

// TestCertManagerVariant renders the cert-manager variant and creates everything but the
// cert-manager objects, whose CRDs are not on this API server (their content is checked
// in deploy/helm's TestCertManagerCertificates).
func TestCertManagerVariant(t *testing.T) {
	env.InstallCRDs(t)
	objs, err := render(t, "gh-cert-manager", "mtls: {certificates: {provider: cert-manager}}")
	if err != nil {
		t.Fatal(err)
	}
	var rest []*unstructured.Unstructured
	certManager := map[string]int{}
	for _, o := range objs {
		if strings.HasPrefix(o.GetAPIVersion(), "cert-manager.io/") {
			certManager[o.GetKind()]++
			continue
		}
		if o.GetKind() == "Job" || o.GetKind() == "CronJob" {
			t.Errorf("%s %s rendered with cert-manager", o.GetKind(), o.GetName())
		}
		rest = append(rest, o)
	}
	if want := map[string]int{"Certificate": 4, "Issuer": 2}; fmt.Sprint(certManager) != fmt.Sprint(want) {
		t.Errorf("cert-manager objects %v, want %v", certManager, want)
	}
	namespace(t, "gh-cert-manager")
	create(t, rest)
}

func plus(a, b map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range a {
		out[k] += v
	}
	for k, v := range b {
		out[k] += v
	}
	return out
}

// mountedSecrets are the Secrets a Deployment's pods mount.
func mountedSecrets(t *testing.T, d *unstructured.Unstructured) []string {
	t.Helper()
	vols, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	var out []string
	for _, v := range vols {
		if name, ok, _ := unstructured.NestedString(v.(map[string]any), "secret", "secretName"); ok {
			out = append(out, name)
		}
	}
	return out
}

// runCertsJob runs the Job's `gatehouse certs kube` against the API server as the Job's
// ServiceAccount, as its pod would: the chart's Role must be enough, twice (the second
// run renews nothing).
func runCertsJob(t *testing.T, gh string, job *unstructured.Unstructured) {
	t.Helper()
	containers, _, _ := unstructured.NestedSlice(job.Object, "spec", "template", "spec", "containers")
	args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	sa, _, _ := unstructured.NestedString(job.Object, "spec", "template", "spec", "serviceAccountName")
	kc, err := env.KubeconfigOf(job.GetNamespace(), sa)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"created ", "kept "} {
		out, err := exec.Command(gh, append(args, "--kubeconfig", kc)...).CombinedOutput()
		if err != nil {
			t.Fatalf("run %d of gatehouse %s as %s: %v\n%s", i+1, strings.Join(args, " "), sa, err, out)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if !strings.HasPrefix(line, want) {
				t.Errorf("run %d: %q, want every Secret %s", i+1, line, strings.TrimSpace(want))
			}
		}
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
		{"mtls", "mtls: {enable: false}", "enable"},
		{"certificate provider", "mtls: {certificates: {provider: vault}}", "provider"},
		{"lifetime not a duration", "mtls: {certificates: {lifetime: 90d}}", "lifetime"},
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
