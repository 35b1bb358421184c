package helm_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/translate"
)

// observed renders the whole chart (control plane included) with values and returns
// its documents by kind and name.
func observed(t *testing.T, values string) map[string]map[string]string {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	var vals map[string]any
	if err := yaml.Unmarshal([]byte(values), &vals); err != nil {
		t.Fatal(err)
	}
	rv, err := chartutil.ToRenderValues(chrt, vals, chartutil.ReleaseOptions{Name: "gh", Namespace: "auth", IsInstall: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(chrt, rv)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]map[string]string{}
	for name, content := range files {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(content, "\n---") {
			var meta struct {
				Kind     string
				Metadata struct{ Name string }
			}
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			if meta.Kind == "" {
				continue
			}
			if docs[meta.Kind] == nil {
				docs[meta.Kind] = map[string]string{}
			}
			docs[meta.Kind][meta.Metadata.Name] = doc
		}
	}
	return docs
}

const monitoringOn = `
observability:
  otlp: {endpoint: "http://collector.monitoring:4317", env: {OTEL_TRACES_SAMPLER: parentbased_traceidratio, OTEL_TRACES_SAMPLER_ARG: "0.05"}}
  decisionLog: {to: stdout, sample: 0.5, rate: 50, headers: [x-user, x-tenant]}
  serviceMonitor: {enabled: true, labels: {release: prometheus}}
  prometheusRule: {enabled: true, labels: {release: prometheus}}
  grafanaDashboard: {enabled: true}
`

// TestObservabilityOffRendersNothingNew: by default the chart has no monitoring
// objects and passes no OTEL variable.
func TestObservabilityOffRendersNothingNew(t *testing.T) {
	docs := observed(t, "")
	for _, kind := range []string{"ServiceMonitor", "PrometheusRule"} {
		if len(docs[kind]) != 0 {
			t.Errorf("%d %s rendered by default, want none", len(docs[kind]), kind)
		}
	}
	if _, ok := docs["ConfigMap"]["gatehouse-dashboard"]; ok {
		t.Error("dashboard ConfigMap rendered by default")
	}
	for _, name := range []string{"extauth", "controlplane"} {
		if env := containerEnv(t, docs["Deployment"][name]); slices.ContainsFunc(env, func(e corev1.EnvVar) bool { return strings.HasPrefix(e.Name, "OTEL_") }) {
			t.Errorf("%s has OTEL variables by default: %v", name, env)
		}
	}
}

// TestObservabilityRendering: with monitoring on, each component's /metrics gets a
// Service and a ServiceMonitor, the OTLP values reach every component, extauth gets
// its decision log flags, and the PrometheusRule and dashboard render.
func TestObservabilityRendering(t *testing.T) {
	docs := observed(t, monitoringOn)
	for _, c := range []string{"extauth", "controlplane"} {
		var svc corev1.Service
		if err := yaml.UnmarshalStrict([]byte(docs["Service"][c+"-metrics"]), &svc); err != nil {
			t.Fatalf("Service %s-metrics: %v", c, err)
		}
		if svc.Spec.Selector["gatehouse"] != c || svc.Spec.Ports[0].TargetPort.StrVal != "http-admin" {
			t.Errorf("Service %s-metrics = %+v", c, svc.Spec)
		}
		var sm struct {
			Metadata struct{ Labels map[string]string }
			Spec     struct {
				Selector  struct{ MatchLabels map[string]string }
				Endpoints []struct{ Port, Path, Interval string }
			}
		}
		if err := yaml.Unmarshal([]byte(docs["ServiceMonitor"]["gatehouse-"+c]), &sm); err != nil {
			t.Fatalf("ServiceMonitor gatehouse-%s: %v", c, err)
		}
		for k, v := range sm.Spec.Selector.MatchLabels {
			if svc.Labels[k] != v {
				t.Errorf("ServiceMonitor gatehouse-%s selects %s=%s, which Service %s-metrics does not carry", c, k, v, c)
			}
		}
		if sm.Metadata.Labels["release"] != "prometheus" || len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Port != "http-admin" ||
			sm.Spec.Endpoints[0].Path != "/metrics" {
			t.Errorf("ServiceMonitor gatehouse-%s = %+v", c, sm)
		}
		env := map[string]string{}
		for _, e := range containerEnv(t, docs["Deployment"][c]) {
			env[e.Name] = e.Value
		}
		want := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector.monitoring:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
			"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.05"}
		for k, v := range want {
			if env[k] != v {
				t.Errorf("%s env %s = %q, want %q", c, k, env[k], v)
			}
		}
	}
	var dep appsv1.Deployment
	if err := yaml.UnmarshalStrict([]byte(docs["Deployment"]["extauth"]), &dep); err != nil {
		t.Fatal(err)
	}
	args := strings.Join(dep.Spec.Template.Spec.Containers[0].Args, " ")
	if want := "--decision-log stdout --decision-log-sample 0.5 --decision-log-rate 50 --decision-log-headers x-user,x-tenant"; !strings.Contains(args, want) {
		t.Errorf("extauth args %q, want them to hold %q", args, want)
	}

	var rule struct {
		Metadata struct{ Labels map[string]string }
		Spec     json.RawMessage
	}
	if err := yaml.Unmarshal([]byte(docs["PrometheusRule"]["gatehouse"]), &rule); err != nil {
		t.Fatal(err)
	}
	groups, errs := rulefmt.Parse(rule.Spec, false, model.UTF8Validation, parser.NewParser(parser.Options{}), slog.New(slog.DiscardHandler))
	if len(errs) != 0 {
		t.Fatalf("PrometheusRule does not parse as Prometheus rules: %v", errs)
	}
	var alerts []string
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
		}
	}
	want := []string{"GatehouseDenialsHigh", "GatehouseXDSNacks", "GatehouseReplicaBehind", "GatehouseCheckLatencyHigh", "GatehouseSessionStoreUnreachable",
		"GatehouseCertificateExpiresSoon"}
	if diff := cmp.Diff(want, alerts); diff != "" {
		t.Errorf("alerts (-want +got):\n%s", diff)
	}

	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict([]byte(docs["ConfigMap"]["gatehouse-dashboard"]), &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Labels["grafana_dashboard"] != "1" {
		t.Errorf("dashboard ConfigMap labels = %v, want the sidecar's grafana_dashboard: \"1\"", cm.Labels)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal([]byte(cm.Data["gatehouse.json"]), &dash); err != nil {
		t.Fatalf("dashboard is not JSON: %v", err)
	}
	exprs := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			if !regexp.MustCompile(`gatehouse_[a-z_]+`).MatchString(tg.Expr) {
				t.Errorf("panel %q queries %q, which names no gatehouse metric", p.Title, tg.Expr)
			}
			exprs++
		}
	}
	if exprs < 8 {
		t.Errorf("dashboard has %d queries", exprs)
	}
}

// TestDecisionLogValueChecked: a decision log destination the binary does not know
// fails the render, naming the value.
func TestDecisionLogValueChecked(t *testing.T) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{"observability": map[string]any{"decisionLog": map[string]any{"to": "file"}}}
	_, err = chartutil.ToRenderValues(chrt, vals, chartutil.ReleaseOptions{Name: "gh", Namespace: "auth", IsInstall: true}, nil)
	if err == nil {
		t.Fatal("decisionLog.to: file was accepted")
	}
}

func containerEnv(t *testing.T, doc string) []corev1.EnvVar {
	t.Helper()
	var dep appsv1.Deployment
	if err := yaml.UnmarshalStrict([]byte(doc), &dep); err != nil {
		t.Fatal(err)
	}
	return dep.Spec.Template.Spec.Containers[0].Env
}

// TestProxyTracingFromOTLP: the chart's Settings turn on the gateway proxies' tracing
// (spec.tracing, which the control plane accepts) toward the OTLP/gRPC collector of
// observability.otlp, taken from its endpoint or given on its own, and leave it off
// when there is no collector the proxies can reach over gRPC.
func TestProxyTracingFromOTLP(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		want         string  // spec.tracing.otlpCollector, "" for no tracing
		percent      float64 // of a traced proxy
	}{
		{name: "no endpoint"},
		{name: "grpc endpoint", values: "observability: {otlp: {endpoint: \"http://collector.monitoring:4317\"}}", want: "collector.monitoring:4317", percent: 1},
		{name: "http/protobuf endpoint", values: "observability: {otlp: {endpoint: \"http://collector.monitoring:4318\", protocol: http/protobuf}}"},
		{name: "own collector and share", values: "observability: {otlp: {endpoint: \"https://vendor.example:443\", proxyCollector: \"agent.monitoring:4317\", proxySamplePercent: 10}}",
			want: "agent.monitoring:4317", percent: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := renderedSettings(t, tc.values)
			switch {
			case tc.want == "" && s.Tracing != nil:
				t.Errorf("tracing %+v, want none", s.Tracing)
			case tc.want == "":
			case s.Tracing == nil:
				t.Errorf("no tracing, want to %s", tc.want)
			case fmt.Sprintf("%s:%d", s.Tracing.Collector.Addr, s.Tracing.Collector.Port) != tc.want || s.Tracing.SamplePercent != tc.percent:
				t.Errorf("tracing %+v, want to %s at %g %%", s.Tracing, tc.want, tc.percent)
			}
		})
	}
}

// renderedSettings is what the control plane makes of the chart's Settings "default"
// rendered with values; the test fails when they do not load or are rejected.
func renderedSettings(t *testing.T, values string) translate.Settings {
	t.Helper()
	doc, ok := observed(t, values)["Settings"]["default"]
	if !ok {
		t.Fatal("no Settings default rendered")
	}
	path := filepath.Join(t.TempDir(), "settings.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	set, err := apiv1.Load(path)
	if err != nil || len(set.Settings) != 1 {
		t.Fatalf("the rendered Settings do not load: %v\n%s", err, doc)
	}
	s, err := translate.SettingsOf(set.Settings[0])
	if err != nil {
		t.Fatalf("the control plane rejects the rendered Settings: %v\n%s", err, doc)
	}
	return s
}
