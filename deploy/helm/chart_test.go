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

	"gatehouse.dev/gatehouse/internal/version"
)

const chartDir = "gatehouse"

// rendered is what one install of the chart produces.
type rendered struct {
	deployment appsv1.Deployment
	service    corev1.Service
	notes      string
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
			default:
				t.Fatalf("%s: unexpected kind %q", name, meta.Kind)
			}
			if err := yaml.UnmarshalStrict([]byte(doc), target); err != nil {
				t.Fatalf("%s: strict decoding a %s: %v\n%s", name, meta.Kind, err, doc)
			}
		}
	}
	if diff := cmp.Diff(map[string]int{"Deployment": 1, "Service": 1}, kinds); diff != "" {
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
