package pipeline_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/pipeline/pipelinetest"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// TestPublishChangedServesWhatPublishDoes: told only the names the translation
// changed, the xDS server ends up serving exactly what it serves when it compares
// every name, after edits, additions, removals, a rejection and a Settings change.
func TestPublishChangedServesWhatPublishDoes(t *testing.T) {
	const n = 20
	settings := func(upstream string) *apiv1.Settings {
		return &apiv1.Settings{
			TypeMeta: apiv1.TypeMeta{APIVersion: apiv1.CoreAPIVersion, Kind: apiv1.KindSettings},
			Metadata: apiv1.Metadata{Name: "default", Namespace: "gatehouse-system"},
			Spec:     apiv1.SettingsSpec{Extauth: &apiv1.ExtauthSettings{ExtauthzServerRef: &apiv1.Ref{Name: upstream, Namespace: "ns01"}}},
		}
	}
	res := func(objs ...any) []source.Resource {
		var out []source.Resource
		for _, o := range objs {
			out = append(out, pipelinetest.Resource(o, "generated"))
		}
		return out
	}
	key := func(o any) source.Key {
		r := pipelinetest.Resource(o, "generated")
		return r.Key()
	}
	steps := []struct {
		name   string
		put    []source.Resource
		remove []source.Key
	}{
		{name: "virtual service edited", put: res(pipelinetest.VirtualService(3, "/open"))},
		{name: "upstream edited", put: res(pipelinetest.Upstream(5, 8081))},
		{name: "authconfig edited", put: res(pipelinetest.AuthConfig(7, "v1"))},
		{name: "two kinds at once", put: res(pipelinetest.Upstream(2, 9000), pipelinetest.VirtualService(2, "/two"))},
		{name: "upstream removed (its virtual service rejected)", remove: []source.Key{key(pipelinetest.Upstream(9, 8080))}},
		{name: "upstream back", put: res(pipelinetest.Upstream(9, 8080))},
		{
			name:   "resources added and removed",
			put:    res(pipelinetest.Upstream(100, 8080), pipelinetest.AuthConfig(100, "v0"), pipelinetest.VirtualService(100, "/new")),
			remove: []source.Key{key(pipelinetest.VirtualService(4, "")), key(pipelinetest.AuthConfig(4, "")), key(pipelinetest.Upstream(4, 0))},
		},
		{name: "settings: another extauthz server", put: res(settings("up-00001"))},
		{name: "settings: back", put: res(settings("up-00011"))},
		{name: "nothing changed"},
	}

	full := xds.NewServer(xds.Options{Log: zerolog.Nop()})
	told := xds.NewServer(xds.Options{Log: zerolog.Nop()})
	pFull := pipeline.New(pipeline.Options{Log: zerolog.Nop(), Publish: full.Publish})
	pTold := pipeline.New(pipeline.Options{Log: zerolog.Nop(), PublishChanged: told.PublishChanged})
	in := pipelinetest.Input(n)
	seen := map[string]map[string]map[string]bool{} // role → type → every name ever desired
	apply := func(t *testing.T, in *source.Input) {
		t.Helper()
		pFull.Apply(in)
		pTold.Apply(in)
		for _, p := range []*pipeline.Pipeline{pFull, pTold} {
			if errs := p.Stages().PublishErrors; errs != nil {
				t.Fatalf("publish errors: %v", errs)
			}
		}
		for role, byType := range pTold.Stages().XDS {
			for typ, byName := range byType {
				for name := range byName {
					if seen[role] == nil {
						seen[role] = map[string]map[string]bool{}
					}
					if seen[role][typ] == nil {
						seen[role][typ] = map[string]bool{}
					}
					seen[role][typ][name] = true
				}
			}
		}
		want, got := map[string]string{}, map[string]string{}
		for role, byType := range seen {
			for typ, names := range byType {
				for name := range names {
					k := role + " " + typ + " " + name
					want[k] = full.Version(role, typ, name)
					got[k] = told.Version(role, typ, name)
					_, desired := pTold.Stages().XDS[role][typ][name]
					if desired != (got[k] != "") {
						t.Errorf("%s: desired %t, served version %q", k, desired, got[k])
					}
				}
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("versions served when told what changed (-compared in full +told):\n%s", diff)
		}
	}
	apply(t, in)
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			in = &source.Input{Source: in.Source, Resources: in.Resources.With(s.put, s.remove), Problems: in.Problems}
			apply(t, in)
		})
	}
}
