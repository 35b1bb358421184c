package pipeline_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/pipeline/pipelinetest"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// TestStagesKeepTheirXDSStage: the translation edits the maps it hands the xDS server
// in place, so the xds stage Stages returns is a copy: one taken before an edit still
// holds what was published then, and one taken after it holds the edit. Stages and
// Overview may be read while runs go on (go test -race checks it).
func TestStagesKeepTheirXDSStage(t *testing.T) {
	const n = 20
	srv := xds.NewServer(xds.Options{Log: zerolog.Nop()})
	p := pipeline.New(pipeline.Options{Log: zerolog.Nop(), PublishChanged: srv.PublishChanged})
	in := pipelinetest.Input(n)
	p.Apply(in)
	before := p.Stages()
	id := func(i int) string { return fmt.Sprintf("ns%02d.ac-%05d", i%10, i) }
	ext := func(st pipeline.Stages, i int) any { return st.XDS[xds.RoleExtauth][xds.ExtAuthConfigType][id(i)] }
	first := ext(before, 7)
	if first == nil {
		t.Fatalf("no ExtAuthConfig %s in the xds stage", id(7))
	}

	var readers sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				st := p.Stages()
				for _, r := range st.XDS {
					for _, m := range r {
						for range m {
						}
					}
				}
				if p.Overview().XDS != nil {
					t.Error("Overview has an xds stage")
				}
			}
		}()
	}
	for v := range 30 {
		put := []source.Resource{pipelinetest.Resource(pipelinetest.AuthConfig(7, fmt.Sprintf("e%d", v)), "generated")}
		in = &source.Input{Source: in.Source, Resources: in.Resources.With(put, nil), Problems: in.Problems}
		p.Apply(in)
	}
	close(stop)
	readers.Wait()

	after := p.Stages()
	if ext(after, 7) == first {
		t.Error("the xds stage after 30 edits of an AuthConfig holds its first ExtAuthConfig")
	}
	if ext(before, 7) != first {
		t.Error("the xds stage taken before the edits changed")
	}
	if len(after.XDS[xds.RoleExtauth][xds.ExtAuthConfigType]) != n {
		t.Errorf("%d ExtAuthConfigs after the edits, want %d", len(after.XDS[xds.RoleExtauth][xds.ExtAuthConfigType]), n)
	}
}
