// Package helm_test renders the gatehouse chart with Helm's Go SDK and decodes what it
// renders strictly into Kubernetes API types.
package helm_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"

	"gatehouse.dev/gatehouse/internal/logging"
	"gatehouse.dev/gatehouse/internal/version"
)

const chartDir = "gatehouse"

// rendered is what one install of the chart produces.
type rendered struct {
	deployment appsv1.Deployment
	service    corev1.Service
	// configMap is extauth-config, nil when config.configMap names the user's own.
	configMap *corev1.ConfigMap
	notes     string
}

// render renders the chart with values (YAML) as release "gh" in namespace "auth", and
// decodes every manifest strictly: an unknown field is an error.
func render(t *testing.T, values string) (*rendered, error) {
	t.Helper()
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("loading chart: %v", err)
	}
	var vals map[string]any
	if err := yaml.Unmarshal([]byte(values), &vals); err != nil {
		t.Fatalf("values: %v", err)
	}
	// These tests are about extauth alone, as installed without the control plane and
	// the gateway proxy (the full install is tested in install_test.go).
	if vals == nil {
		vals = map[string]any{}
	}
	if _, ok := vals["controlPlane"]; !ok {
		vals["controlPlane"] = map[string]any{"enabled": false}
	}
	if _, ok := vals["gatewayProxies"]; !ok {
		vals["gatewayProxies"] = map[string]any{"gatewayProxy": map[string]any{"enabled": false}}
	}
	rv, err := chartutil.ToRenderValues(chrt, vals, chartutil.ReleaseOptions{Name: "gh", Namespace: "auth", IsInstall: true}, nil)
	if err != nil {
		t.Fatalf("render values: %v", err)
	}
	files, err := engine.Render(chrt, rv)
	if err != nil {
		return nil, err
	}
	var r rendered
	kinds := map[string]int{}
	for name, content := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			r.notes = content
			continue
		}
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(content, "\n---") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			var meta struct{ Kind string }
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			kinds[meta.Kind]++
			var target any
			switch meta.Kind {
			case "Deployment":
				target = &r.deployment
			case "Service":
				target = &r.service
			case "ConfigMap":
				r.configMap = &corev1.ConfigMap{}
				target = r.configMap
			default:
				t.Fatalf("%s: unexpected kind %q", name, meta.Kind)
			}
			if err := yaml.UnmarshalStrict([]byte(doc), target); err != nil {
				t.Fatalf("%s: strict decoding a %s: %v\n%s", name, meta.Kind, err, doc)
			}
		}
	}
	wantKinds := map[string]int{"Deployment": 1, "Service": 1}
	if r.configMap != nil {
		wantKinds["ConfigMap"] = 1
	}
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Fatalf("rendered kinds (-want +got):\n%s", diff)
	}
	return &r, nil
}

func TestChartAppVersionIsGatehouseVersion(t *testing.T) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	if chrt.Metadata.AppVersion != version.Version {
		t.Errorf("Chart.yaml appVersion = %q, internal/version.Version = %q; plugin image tags default to appVersion and must equal the server's version",
			chrt.Metadata.AppVersion, version.Version)
	}
}

func TestServiceRendering(t *testing.T) {
	r, err := render(t, "")
	if err != nil {
		t.Fatal(err)
	}
	want := corev1.ServiceSpec{
		Selector: map[string]string{"gatehouse": "extauth"},
		Ports: []corev1.ServicePort{{
			Name: "grpc", Port: 8083, TargetPort: intstrName("grpc"), Protocol: corev1.ProtocolTCP, AppProtocol: ptr("grpc"),
		}},
	}
	if diff := cmp.Diff(want, r.service.Spec); diff != "" {
		t.Errorf("service spec (-want +got):\n%s", diff)
	}
	if r.service.Name != "extauth" || r.service.Namespace != "auth" || r.service.Labels["gatehouse"] != "extauth" {
		t.Errorf("service metadata = %+v", r.service.ObjectMeta)
	}
}

func TestChartRenderErrors(t *testing.T) {
	tests := []struct {
		name   string
		values string
		want   string
	}{
		{
			name:   "plugin without repository",
			values: "global: {extensions: {extAuth: {plugins: {mine: {image: {registry: r.example, tag: 1.0.0}}}}}}",
			want:   "global.extensions.extAuth.plugins.mine.image.repository: required",
		},
		{
			name:   "plugin without image",
			values: "global: {extensions: {extAuth: {plugins: {mine: {}}}}}",
			want:   "global.extensions.extAuth.plugins.mine.image: required, with at least image.repository",
		},
		{
			name:   "plugin that is not a map",
			values: "global: {extensions: {extAuth: {plugins: {mine: my-org/plugins}}}}",
			want:   "global.extensions.extAuth.plugins.mine: must be a map with an image",
		},
		{
			name:   "key not a DNS label",
			values: "global: {extensions: {extAuth: {plugins: {My_Plugin: {image: {repository: my-org/plugins}}}}}}",
			want:   "global.extensions.extAuth.plugins.My_Plugin: key must be a DNS label of at most 56 characters",
		},
		{
			name:   "key too long for a container name",
			values: "global: {extensions: {extAuth: {plugins: {" + strings.Repeat("a", 57) + ": {image: {repository: my-org/plugins}}}}}}",
			want:   "key must be a DNS label of at most 56 characters",
		},
		{
			name:   "unknown log level",
			values: "global: {extensions: {extAuth: {deployment: {logLevel: verbose}}}}",
			want:   `global.extensions.extAuth.deployment.logLevel: "verbose" is not one of debug, info, warn, error, panic, fatal`,
		},
		{
			// extauth reads AuthConfigs from a control plane or from a file, never both.
			name:   "xDS address, which this release cannot use",
			values: "global: {extensions: {extAuth: {xdsAddress: gatehouse.auth.svc:9977, config: {authConfigs: x}}}}",
			want:   "global.extensions.extAuth: set xdsAddress (AuthConfigs from a control plane) or config.authConfigs/config.configMap (from a file), not both",
		},
		{
			name:   "both authConfigs and an own ConfigMap",
			values: "global: {extensions: {extAuth: {config: {configMap: mine, authConfigs: 'kind: AuthConfig'}}}}",
			want:   "global.extensions.extAuth.config: set authConfigs or configMap, not both",
		},
		{
			name:   "authConfigs as YAML instead of a string",
			values: "global: {extensions: {extAuth: {config: {authConfigs: {kind: AuthConfig}}}}}",
			want:   "global.extensions.extAuth.config.authConfigs: must be a string of YAML documents",
		},
		{
			name:   "relative config path",
			values: "global: {extensions: {extAuth: {config: {path: etc/config}}}}",
			want:   `global.extensions.extAuth.config.path: "etc/config" must be an absolute path`,
		},
		{
			name:   "config path on another volume",
			values: "global: {extensions: {extAuth: {config: {path: /tmp/}}}}",
			want:   `global.extensions.extAuth.config.path: "/tmp/" must be an absolute path other than /, /tmp and /auth-plugins`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(t, tt.values)
			if err == nil {
				t.Fatal("rendering succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

// TestLogLevelsAreTheServers checks the chart takes every level the server takes, and
// passes it unchanged as LOG_LEVEL (TestChartRenderErrors checks it refuses others).
func TestLogLevelsAreTheServers(t *testing.T) {
	for _, level := range logging.Levels {
		t.Run(level, func(t *testing.T) {
			r, err := render(t, "global: {extensions: {extAuth: {deployment: {logLevel: "+level+"}}}}")
			if err != nil {
				t.Fatalf("render: %v", err)
			}
			env := r.deployment.Spec.Template.Spec.Containers[0].Env
			if len(env) == 0 || env[0] != (corev1.EnvVar{Name: "LOG_LEVEL", Value: level}) {
				t.Errorf("env = %v, want LOG_LEVEL=%s first", env, level)
			}
		})
	}
}
