package translate_test

import (
	"strings"
	"testing"

	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/rs/zerolog"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/pipeline/pipelinetest"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// tracedSet is a VirtualService secured by extauth, and Settings with tracing when
// tracing is not empty.
func tracedSet(t *testing.T, tracing string) *source.Input {
	t.Helper()
	doc := `apiVersion: core.gatehouse.dev/v1
kind: Settings
metadata: {name: default, namespace: gatehouse-system}
spec:
  extauth: {requestTimeout: 1s}
` + tracing + `---
apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: extauth, namespace: gatehouse-system}
spec: {static: {hosts: [{addr: 10.0.0.1, port: 8083}]}}
---
apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: echo, namespace: gatehouse-system}
spec: {static: {hosts: [{addr: echo.example.internal, port: 8090}]}}
---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: web, namespace: gatehouse-system}
spec:
  configs: [{pluginAuth: {name: required_header, exportedSymbolName: Plugin}}]
---
apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: web, namespace: gatehouse-system}
spec:
  virtualHost:
    domains: [web.example.com]
    routes:
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: echo, namespace: gatehouse-system}}}
        options: {extauth: {configRef: {name: web, namespace: gatehouse-system}}}
`
	res, probs := source.Decode([]byte(doc), "tracing.yaml")
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	return source.NewInput("test", res, nil)
}

// TestTracingReachesEveryListener: Settings spec.tracing gives the gateway proxy's
// HTTP connection manager Envoy's OpenTelemetry tracer, exporting to a collector cluster
// of its own; every resource of the role passes ValidateAll (typed configs unpacked) and
// the snapshot consistency check; Settings without tracing take both away again.
func TestTracingReachesEveryListener(t *testing.T) {
	srv := xds.NewServer(xds.Options{Log: zerolog.Nop()})
	p := pipeline.New(pipeline.Options{Publish: srv.Publish})
	for _, tc := range []struct {
		name, tracing string
		want          bool
	}{
		{name: "on", tracing: "  tracing: {otlpCollector: otel-collector.monitoring:4317, samplePercent: 2.5}\n", want: true},
		{name: "off again", tracing: "", want: false},
		{name: "on again, defaults", tracing: "  tracing: {otlpCollector: 127.0.0.1:4317}\n", want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.Apply(tracedSet(t, tc.tracing))
			st := p.Stages()
			for role, e := range st.PublishErrors {
				t.Fatalf("publish %s: %s", role, e)
			}
			res := st.XDS[xds.DefaultProxyRole]
			if err := pipelinetest.Valid(res); err != nil {
				t.Fatal(err)
			}
			_, hasCluster := res[resourcev3.ClusterType][translate.CollectorCluster]
			if hasCluster != tc.want {
				t.Errorf("collector cluster served = %v, want %v", hasCluster, tc.want)
			}
			hcm := httpConnectionManager(t, res)
			tr := hcm.GetTracing()
			if (tr != nil) != tc.want {
				t.Fatalf("HCM tracing = %v, want set %v", tr, tc.want)
			}
			if !tc.want {
				return
			}
			if got := tr.GetProvider().GetName(); got != translate.OpenTelemetryTracer {
				t.Errorf("tracer %q, want %q", got, translate.OpenTelemetryTracer)
			}
			if !strings.Contains(tr.GetProvider().GetTypedConfig().String(), translate.CollectorCluster) {
				t.Errorf("tracer config does not export to %s: %v", translate.CollectorCluster, tr.GetProvider().GetTypedConfig())
			}
		})
	}
}

// httpConnectionManager is the HCM of the role's HTTP listener.
func httpConnectionManager(t *testing.T, res xds.Resources) *hcmv3.HttpConnectionManager {
	t.Helper()
	m, err := xds.Expand(res[resourcev3.ListenerType][translate.HTTPListenerName])
	if err != nil {
		t.Fatal(err)
	}
	l, ok := m.(*listenerv3.Listener)
	if !ok || len(l.GetFilterChains()) == 0 || len(l.GetFilterChains()[0].GetFilters()) == 0 {
		t.Fatalf("HTTP listener %v has no filter", m)
	}
	var hcm hcmv3.HttpConnectionManager
	if err := l.GetFilterChains()[0].GetFilters()[0].GetTypedConfig().UnmarshalTo(&hcm); err != nil {
		t.Fatal(err)
	}
	return &hcm
}

// TestTracingSettingsChecked: spec.tracing's problems are reported with field paths.
func TestTracingSettingsChecked(t *testing.T) {
	pct := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name    string
		tracing apiv1.TracingSettings
		want    string // "" for none
	}{
		{name: "host and port", tracing: apiv1.TracingSettings{OTLPCollector: "collector:4317"}},
		{name: "no collector", tracing: apiv1.TracingSettings{}, want: "spec.tracing.otlpCollector: is required"},
		{name: "no port", tracing: apiv1.TracingSettings{OTLPCollector: "collector"}, want: "spec.tracing.otlpCollector: \"collector\" is not host:port"},
		{name: "url", tracing: apiv1.TracingSettings{OTLPCollector: "http://collector:4317"}, want: "is not host:port"},
		{name: "percent above", tracing: apiv1.TracingSettings{OTLPCollector: "c:1", SamplePercent: pct(101)}, want: "spec.tracing.samplePercent: 101 is not a percentage"},
		{name: "percent below", tracing: apiv1.TracingSettings{OTLPCollector: "c:1", SamplePercent: pct(-1)}, want: "spec.tracing.samplePercent: -1 is not a percentage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &apiv1.Settings{Metadata: apiv1.Metadata{Name: "default", Namespace: "gatehouse-system"}, Spec: apiv1.SettingsSpec{Tracing: &tc.tracing}}
			got, err := translate.SettingsOf(s)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("SettingsOf: %v", err)
			case tc.want == "" && (got.Tracing == nil || got.Tracing.SamplePercent != translate.DefaultTraceSamplePercent):
				t.Fatalf("tracing = %+v, want the collector with the default share", got.Tracing)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("SettingsOf error = %v, want %q", err, tc.want)
			}
		})
	}
}
