package pipeline_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// TestListenerFollowsRouteOptions: the listener's option filters (early stage,
// jwt_authn, rbac) are kept from the virtual hosts each run adds and removes; after
// every step the listener is the one a fresh pipeline builds from the same input.
func TestListenerFollowsRouteOptions(t *testing.T) {
	options := filepath.Join("testdata", "route_options.yaml")
	basic := filepath.Join("testdata", "basic.yaml")
	steps := []struct {
		name string
		in   func(t *testing.T) *source.Input
	}{
		{"without options", func(t *testing.T) *source.Input { return decodeFile(t, basic) }},
		{"with jwt, rbac and an early stage", func(t *testing.T) *source.Input { return decodeFile(t, options) }},
		{"jwt provider edited", func(t *testing.T) *source.Input {
			return decodeEdited(t, options, "issuer: https://idp.example", "issuer: https://idp2.example")
		}},
		{"virtual service with jwt renamed", func(t *testing.T) *source.Input {
			return decodeEdited(t, options, "metadata: {name: app}", "metadata: {name: app2}")
		}},
		{"back to the first", func(t *testing.T) *source.Input { return decodeFile(t, options) }},
		{"virtual service with options removed", func(t *testing.T) *source.Input {
			in := decodeFile(t, options)
			for r := range in.Resources.All() {
				if r.Kind == "VirtualService" && r.Name == "app" {
					return &source.Input{Source: in.Source, Resources: in.Resources.With(nil, []source.Key{r.Key()}), Problems: in.Problems}
				}
			}
			t.Fatal("no VirtualService app")
			return nil
		}},
		{"back to the first again", func(t *testing.T) *source.Input { return decodeFile(t, options) }},
		{"without options again", func(t *testing.T) *source.Input { return decodeFile(t, basic) }},
	}
	p := pipeline.New(pipeline.Options{})
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			in := st.in(t)
			p.Apply(in)
			fresh := pipeline.New(pipeline.Options{})
			fresh.Apply(in)
			got := p.Stages().XDS[xds.DefaultProxyRole][xds.ListenerType][translate.HTTPListenerName]
			want := fresh.Stages().XDS[xds.DefaultProxyRole][xds.ListenerType][translate.HTTPListenerName]
			if got == nil || want == nil {
				t.Fatalf("no listener %q (incremental %v, fresh %v)", translate.HTTPListenerName, got, want)
			}
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("listener (-fresh +incremental):\n%s", diff)
			}
		})
	}
}
