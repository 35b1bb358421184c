package controlplane

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// The generated resources, and every edit of them, must be what the control plane
// accepts and serves, or the benchmark would time rejections.
func TestGeneratedResourcesAreAccepted(t *testing.T) {
	dir := t.TempDir()
	const n = 3
	if err := WriteResources(dir, n); err != nil {
		t.Fatal(err)
	}
	for _, k := range Kinds {
		if err := EditResource(dir, k, 1, 7); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".yaml" {
			t.Errorf("left %s in the resources folder", e.Name())
			continue
		}
		if files[e.Name()], err = os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	in, err := (&source.Static{Name: "generated", Files: files}).Input()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := in.Resources.Len(), 3*n+1; got != want {
		t.Fatalf("%d resources decoded, want %d; problems: %v", got, want, in.Problems)
	}
	srv := xds.NewServer(xds.Options{Log: zerolog.Nop()})
	p := pipeline.New(pipeline.Options{Log: zerolog.Nop(), Publish: srv.Publish})
	p.Apply(in)
	st := p.Stages()
	for _, r := range st.Edge.Resources.All() {
		if r.State() != validate.Accepted {
			t.Errorf("%s: %s %v", r.Key(), r.State(), r.Statuses)
		}
	}
	if len(st.PublishErrors) > 0 {
		t.Errorf("publish errors: %v", st.PublishErrors)
	}
	for _, k := range []Kind{KindAuthConfig, KindUpstream} {
		role, typ, name := xds.RoleExtauth, xds.ExtAuthConfigType, k.id(1)
		if k == KindUpstream {
			role, typ = xds.DefaultProxyRole, xds.EndpointType
		}
		if srv.Version(role, typ, name) == "" {
			t.Errorf("%s of service 1: %s %q not served", k, typ, name)
		}
	}
}
