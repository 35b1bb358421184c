package helm_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"gatehouse.dev/gatehouse/internal/mtls"
	"gatehouse.dev/gatehouse/internal/mtls/certsecrets"
)

// mtlsFiles are the files `make generate` writes for mutual TLS (cmd/gatehouse envoy
// bootstrap --xds-tls-dir), which the chart reads.
var mtlsFiles = []string{"files/envoy-bootstrap-mtls.yaml", "files/sds-certificate.yaml", "files/sds-validation.yaml"}

// WithMTLSFiles adds stand-ins for the mTLS files the chart lacks: they come from the
// branch that adds `gatehouse envoy bootstrap --xds-tls-dir`, and until it is merged
// these tests check everything but their content (stand-ins are logged).
func withMTLSFiles(t *testing.T, c *chart.Chart) {
	t.Helper()
	have := map[string]bool{}
	for _, f := range c.Files {
		have[f.Name] = true
	}
	for _, name := range mtlsFiles {
		if !have[name] {
			t.Logf("the chart has no %s yet: rendering with a stand-in", name)
			c.Files = append(c.Files, &chart.File{Name: name, Data: []byte("# stand-in for " + name + " (gh-release-namespace~gh-proxy-name)\n")})
		}
	}
}

// renderFiles renders the chart as Helm install would (values.schema.json checked) as
// release "gh" in namespace "auth": every template's output by its name.
func renderFiles(t *testing.T, values string) (map[string]string, error) {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	withMTLSFiles(t, chrt)
	var vals map[string]any
	if err := yaml.Unmarshal([]byte(values), &vals); err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValues(chrt, vals, chartutil.ReleaseOptions{Name: "gh", Namespace: "auth", IsInstall: true}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	return engine.Render(chrt, rv)
}

// renderAll renders the chart (renderFiles) and returns every object by "Kind/name".
func renderAll(t *testing.T, values string) (map[string]*unstructured.Unstructured, error) {
	t.Helper()
	files, err := renderFiles(t, values)
	if err != nil {
		return nil, err
	}
	out := map[string]*unstructured.Unstructured{}
	for name, content := range files {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(content, "\n---") {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			if len(u.Object) > 0 {
				out[u.GetKind()+"/"+u.GetName()] = u
			}
		}
	}
	return out, nil
}

// typed converts the rendered object key into into, failing when there is none.
func typed(t *testing.T, objs map[string]*unstructured.Unstructured, key string, into any) {
	t.Helper()
	u, ok := objs[key]
	if !ok {
		t.Fatalf("no %s rendered; have %v", key, keysOf(objs))
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, into, true); err != nil {
		t.Fatalf("%s: %v", key, err)
	}
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// tlsSecret is the Secret a pod mounts at /etc/gatehouse/tls ("" when none).
func tlsSecret(t *testing.T, s corev1.PodSpec) string {
	t.Helper()
	var vol string
	for _, m := range s.Containers[0].VolumeMounts {
		if m.MountPath == "/etc/gatehouse/tls" {
			vol = m.Name
			if !m.ReadOnly || m.SubPath != "" {
				t.Errorf("the certificate folder is mounted %+v; want read-only and whole (a renewed Secret replaces the files)", m)
			}
		}
	}
	for _, v := range s.Volumes {
		if v.Name == vol && v.Secret != nil {
			return v.Secret.SecretName
		}
	}
	return ""
}

func argAfter(args []string, flag string) (string, bool) {
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		return "", false
	}
	return args[i+1], true
}

const twoProxies = `
gatewayProxies:
  publicGw: {enabled: true, replicas: 1, image: {repository: envoyproxy/envoy, tag: v1.34.1}, service: {type: ClusterIP}}
`

// TestMTLSOnByDefault: every component mounts its own Secret at /etc/gatehouse/tls and is
// told so; the Secrets mounted are the ones the hook Job's `gatehouse certs kube` makes
// (internal/mtls.Components); probes use no gRPC (the kubelet has no certificate); the
// Settings give the translated extauth cluster the proxies' SDS files.
func TestMTLSOnByDefault(t *testing.T) {
	objs, err := renderAll(t, twoProxies)
	if err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	typed(t, objs, "Job/gatehouse-certs-hook", &job)
	args := job.Spec.Template.Spec.Containers[0].Args
	var proxies []string
	for i, a := range args {
		if a == "--proxy" {
			proxies = append(proxies, args[i+1])
		}
	}
	td, _ := argAfter(args, "--trust-domain")
	ns, _ := argAfter(args, "--namespace")
	comps, err := mtls.Components(td, ns, proxies)
	if err != nil {
		t.Fatalf("the Job's arguments %q: %v", args, err)
	}
	made := map[string]mtls.Component{}
	for _, c := range comps {
		made[certsecrets.TLSSecret("gatehouse", c.Name)] = c
	}
	if _, ok := argAfter(args, "--prefix"); !ok || args[0] != "certs" || args[1] != "kube" {
		t.Errorf("Job args %q, want certs kube ... --prefix gatehouse", args)
	}

	want := map[string]struct {
		secret   string
		flags    []string
		identity string
	}{
		"controlplane":  {"gatehouse-controlplane-tls", []string{"--xds-tls-dir"}, "spiffe://cluster.local/ns/auth/role/controlplane"},
		"extauth":       {"gatehouse-extauth-tls", []string{"--tls-dir", "--xds-tls-dir"}, "spiffe://cluster.local/ns/auth/role/extauth"},
		"gateway-proxy": {"gatehouse-proxy-gateway-proxy-tls", nil, "spiffe://cluster.local/ns/auth/role/proxy/gateway-proxy"},
		"public-gw":     {"gatehouse-proxy-public-gw-tls", nil, "spiffe://cluster.local/ns/auth/role/proxy/public-gw"},
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			var d appsv1.Deployment
			typed(t, objs, "Deployment/"+name, &d)
			spec := d.Spec.Template.Spec
			got := tlsSecret(t, spec)
			if got != w.secret {
				t.Errorf("mounts Secret %q at /etc/gatehouse/tls, want %q", got, w.secret)
			}
			comp, ok := made[got]
			if !ok {
				t.Fatalf("Secret %q is not one `gatehouse certs kube %s` makes (%v)", got, strings.Join(args[2:], " "), keysOf(made))
			}
			if id, _ := comp.Identity.ID(); id.String() != w.identity {
				t.Errorf("Secret %s holds %s, want %s", got, id, w.identity)
			}
			c := spec.Containers[0]
			for _, f := range w.flags {
				if v, _ := argAfter(c.Args, f); v != "/etc/gatehouse/tls" {
					t.Errorf("args %q: want %s /etc/gatehouse/tls", c.Args, f)
				}
			}
			for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
				if p != nil && p.GRPC != nil {
					t.Errorf("a gRPC probe on %d: the kubelet presents no client certificate", p.GRPC.Port)
				}
			}
		})
	}
	var cm corev1.ConfigMap
	typed(t, objs, "ConfigMap/public-gw-envoy-config", &cm)
	if diff := cmp.Diff([]string{"envoy.yaml", "sds-certificate.yaml", "sds-validation.yaml"}, keysOf(cm.Data)); diff != "" {
		t.Errorf("bootstrap ConfigMap keys (-want +got):\n%s", diff)
	}
	if strings.Contains(cm.Data["envoy.yaml"], "gh-proxy-name") || strings.Contains(cm.Data["envoy.yaml"], "gh-release-namespace") {
		t.Errorf("envoy.yaml keeps a placeholder:\n%s", cm.Data["envoy.yaml"])
	}
	settings := objs["Settings/default"]
	if got, _, _ := unstructured.NestedString(settings.Object, "spec", "extauth", "tls", "sdsDir"); got != "/etc/envoy" {
		t.Errorf("Settings spec.extauth.tls.sdsDir = %q, want /etc/envoy", got)
	}
	var cron batchv1.CronJob
	typed(t, objs, "CronJob/gatehouse-certs", &cron)
	if diff := cmp.Diff(args, cron.Spec.JobTemplate.Spec.Template.Spec.Containers[0].Args); diff != "" {
		t.Errorf("the CronJob runs other arguments than the hook Job (-job +cronjob):\n%s", diff)
	}
	if job.Annotations["helm.sh/hook"] != "pre-install,pre-upgrade" {
		t.Errorf("Job annotations %v: want a pre-install,pre-upgrade hook", job.Annotations)
	}
}

// TestMTLSOff: with mtls.enabled=false, or without the control plane, nothing of mTLS is
// rendered and the probes are extauth's gRPC health checks as before.
func TestMTLSOff(t *testing.T) {
	for _, values := range []string{"mtls: {enabled: false}", "controlPlane: {enabled: false}"} {
		t.Run(values, func(t *testing.T) {
			objs, err := renderAll(t, values)
			if err != nil {
				t.Fatal(err)
			}
			for key, o := range objs {
				if o.GetLabels()["gatehouse"] == "certs" {
					t.Errorf("%s rendered with mTLS off", key)
				}
				if o.GetKind() == "Deployment" {
					var d appsv1.Deployment
					typed(t, objs, key, &d)
					if s := tlsSecret(t, d.Spec.Template.Spec); s != "" {
						t.Errorf("%s mounts %s", key, s)
					}
					for _, a := range d.Spec.Template.Spec.Containers[0].Args {
						if strings.HasSuffix(a, "tls-dir") {
							t.Errorf("%s: %s", key, a)
						}
					}
				}
			}
			var d appsv1.Deployment
			typed(t, objs, "Deployment/extauth", &d)
			if p := d.Spec.Template.Spec.Containers[0].ReadinessProbe; p.GRPC == nil || p.GRPC.Port != 8083 {
				t.Errorf("extauth readiness probe %+v, want gRPC on 8083", p.ProbeHandler)
			}
			if s, ok := objs["Settings/default"]; ok {
				if _, found, _ := unstructured.NestedMap(s.Object, "spec", "extauth", "tls"); found {
					t.Error("Settings has spec.extauth.tls with mTLS off")
				}
				var cm corev1.ConfigMap
				typed(t, objs, "ConfigMap/gateway-proxy-envoy-config", &cm)
				if diff := cmp.Diff([]string{"envoy.yaml"}, keysOf(cm.Data)); diff != "" {
					t.Errorf("bootstrap ConfigMap keys (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestExtauthProbesOverMTLS: the admin's /ready and /healthz when it is on, else a TCP connect.
func TestExtauthProbesOverMTLS(t *testing.T) {
	tcp := corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstrInt(8083)}}
	admin := func(p string) corev1.ProbeHandler {
		return corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: p, Port: intstrName("http-admin")}}
	}
	tests := []struct {
		values          string
		ready, liveness corev1.ProbeHandler
	}{{"{}", admin("/ready"), admin("/healthz")}, {"global: {extensions: {extAuth: {deployment: {stats: {enabled: false}}}}}", tcp, tcp}}
	for _, tt := range tests {
		t.Run(tt.values, func(t *testing.T) {
			objs, err := renderAll(t, tt.values)
			if err != nil {
				t.Fatal(err)
			}
			var d appsv1.Deployment
			typed(t, objs, "Deployment/extauth", &d)
			c := d.Spec.Template.Spec.Containers[0]
			for what, p := range map[string]struct{ want, got corev1.ProbeHandler }{"readiness": {tt.ready, c.ReadinessProbe.ProbeHandler}, "liveness": {tt.liveness, c.LivenessProbe.ProbeHandler}} {
				if diff := cmp.Diff(p.want, p.got); diff != "" {
					t.Errorf("%s probe (-want +got):\n%s", what, diff)
				}
			}
		})
	}
}

// TestCertManagerCertificates: with provider cert-manager the chart renders Certificates
// for the Secrets `gatehouse certs kube` makes, each naming the SPIFFE ID and hosts
// internal/mtls.Components gives; its own CA chain unless an issuerRef is given. (Render
// only: cert-manager's CRDs are not on the tests' API server.)
func TestCertManagerCertificates(t *testing.T) {
	comps, err := mtls.Components("example.org", "auth", []string{"gateway-proxy", "public-gw"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, values string
		issuer       map[string]any
		issuers      []string
	}{
		{"own CA", "", map[string]any{"name": "gatehouse-ca", "kind": "Issuer", "group": "cert-manager.io"}, []string{"Issuer/gatehouse-ca", "Issuer/gatehouse-selfsigned"}},
		{"issuerRef", "issuerRef: {name: corp-ca, kind: ClusterIssuer}", map[string]any{"name": "corp-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := renderAll(t, twoProxies+"mtls: {trustDomain: example.org, certificates: {provider: cert-manager, lifetime: 720h, "+tt.values+"}}")
			if err != nil {
				t.Fatal(err)
			}
			var issuers []string
			for key, o := range objs {
				if o.GetKind() == "Issuer" {
					issuers = append(issuers, key)
				}
				if o.GetKind() == "Job" || o.GetKind() == "CronJob" {
					t.Errorf("%s rendered with cert-manager", key)
				}
			}
			sort.Strings(issuers)
			if diff := cmp.Diff(tt.issuers, issuers); diff != "" {
				t.Errorf("Issuers (-want +got):\n%s", diff)
			}
			if tt.issuers != nil {
				ca := objs["Certificate/gatehouse-ca"]
				if isCA, _, _ := unstructured.NestedBool(ca.Object, "spec", "isCA"); !isCA {
					t.Error("no CA Certificate gatehouse-ca")
				}
			}
			for _, c := range comps {
				secret := certsecrets.TLSSecret("gatehouse", c.Name)
				key := "Certificate/" + strings.TrimSuffix(secret, "-tls")
				o, ok := objs[key]
				if !ok {
					t.Errorf("no %s", key)
					continue
				}
				spec := o.Object["spec"].(map[string]any)
				id, _ := c.Identity.ID()
				var hosts []any
				for _, f := range []string{"dnsNames", "ipAddresses"} {
					if v, ok := spec[f].([]any); ok {
						hosts = append(hosts, v...)
					}
				}
				got := map[string]any{"secretName": spec["secretName"], "uris": spec["uris"], "issuerRef": spec["issuerRef"], "duration": spec["duration"], "hosts": fmt.Sprint(hosts),
					"encoding": spec["privateKey"].(map[string]any)["encoding"]}
				want := map[string]any{"secretName": secret, "uris": []any{id.String()}, "issuerRef": tt.issuer, "duration": "720h", "hosts": fmt.Sprint(anys(c.Hosts)),
					"encoding": "PKCS8"}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s (-want +got):\n%s", key, diff)
				}
			}
		})
	}
}

func anys(s []string) []any {
	var out []any
	for _, v := range s {
		out = append(out, v)
	}
	return out
}

// TestNoServiceExposesAdminPorts: the admins (9091, the dev admin 10010, Envoy's 19000)
// are in no Service, with every component and devMode on.
func TestNoServiceExposesAdminPorts(t *testing.T) {
	objs, err := renderAll(t, twoProxies+"settings: {devMode: true}\nredis: {enabled: true}")
	if err != nil {
		t.Fatal(err)
	}
	services := 0
	for key, o := range objs {
		if o.GetKind() != "Service" {
			continue
		}
		services++
		var s corev1.Service
		typed(t, objs, key, &s)
		for _, p := range s.Spec.Ports {
			for _, admin := range []int32{9091, 10010, 19000} {
				if p.Port == admin || p.TargetPort.IntVal == admin || p.TargetPort.StrVal == "http-admin" || p.TargetPort.StrVal == "dev-admin" {
					t.Errorf("%s exposes %+v", key, p)
				}
			}
		}
	}
	if services < 4 {
		t.Errorf("only %d Services rendered", services)
	}
}

// TestNetworkPolicySelectsXDSClients: the policy applies to the control plane's pods only
// and admits 9977 from exactly this release's extauth and gateway-proxy pods.
func TestNetworkPolicySelectsXDSClients(t *testing.T) {
	objs, err := renderAll(t, twoProxies+"redis: {enabled: true}")
	if err != nil {
		t.Fatal(err)
	}
	var np networkingv1.NetworkPolicy
	typed(t, objs, "NetworkPolicy/controlplane", &np)
	pods := map[string]labels.Set{}
	for key, o := range objs {
		if o.GetKind() == "Deployment" {
			var d appsv1.Deployment
			typed(t, objs, key, &d)
			pods[d.Name] = d.Spec.Template.Labels
		}
	}
	// A pod of another release in the namespace carries the same component labels.
	pods["other-release-extauth"] = labels.Set{"gatehouse": "extauth", "app.kubernetes.io/instance": "other"}

	selected := matching(t, np.Spec.PodSelector, pods)
	if diff := cmp.Diff([]string{"controlplane"}, selected); diff != "" {
		t.Errorf("pods the policy applies to (-want +got):\n%s", diff)
	}
	var xds []string
	for _, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			if p.Port.IntVal != 9977 {
				continue
			}
			for _, peer := range rule.From {
				if peer.NamespaceSelector != nil || peer.IPBlock != nil || peer.PodSelector == nil {
					t.Errorf("9977 admitted from %+v", peer)
					continue
				}
				xds = append(xds, matching(t, *peer.PodSelector, pods)...)
			}
			if len(rule.From) == 0 {
				t.Error("9977 admitted from anywhere")
			}
		}
	}
	sort.Strings(xds)
	if diff := cmp.Diff([]string{"extauth", "gateway-proxy", "public-gw"}, xds); diff != "" {
		t.Errorf("pods admitted to 9977 (-want +got):\n%s", diff)
	}
}

func matching(t *testing.T, sel metav1.LabelSelector, pods map[string]labels.Set) []string {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(&sel)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for name, l := range pods {
		if s.Matches(l) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// TestNotesWithTheControlPlane: NOTES.txt says who makes the certificates and how to
// reach the control plane's admin, which no Service exposes.
func TestNotesWithTheControlPlane(t *testing.T) {
	tests := []struct {
		values        string
		want, wantNot []string
	}{
		{"{}", []string{"Secrets gatehouse-<component>-tls made by the Job gatehouse-certs-hook", "kubectl -n auth port-forward deployment/controlplane 9091"}, []string{"cert-manager"}},
		{"mtls: {certificates: {provider: cert-manager}}", []string{"gatehouse-<component>-tls made by cert-manager."}, []string{"CronJob"}},
		{"mtls: {enabled: false}", []string{"port-forward deployment/controlplane"}, []string{"Mutual TLS"}},
	}
	for _, tt := range tests {
		t.Run(tt.values, func(t *testing.T) {
			files, err := renderFiles(t, tt.values)
			if err != nil {
				t.Fatal(err)
			}
			notes := files["gatehouse/templates/NOTES.txt"]
			for _, w := range tt.want {
				if !strings.Contains(notes, w) {
					t.Errorf("NOTES.txt does not contain %q:\n%s", w, notes)
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(notes, w) {
					t.Errorf("NOTES.txt contains %q:\n%s", w, notes)
				}
			}
		})
	}
}
