package pipelinetest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/pipeline/pipelinetest"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// TestWriteDirReadsBackAsInput: the files WriteDir writes are what Input builds, and
// every generated resource is Accepted and served.
func TestWriteDirReadsBackAsInput(t *testing.T) {
	const n = 50
	dir := t.TempDir()
	if err := pipelinetest.WriteDir(dir, n, 7, "127.0.0.1", 8083); err != nil {
		t.Fatal(err)
	}
	var got *source.Input
	ctx, cancel := context.WithCancel(context.Background())
	d := &source.Dir{Path: dir, Log: zerolog.Nop()}
	go func() { _ = d.Run(ctx, func(in *source.Input) { got = in; cancel() }) }()
	<-ctx.Done()
	want := pipelinetest.Input(n)
	if len(got.Problems) > 0 {
		t.Fatalf("problems: %v", got.Problems)
	}
	if got.Resources.Len() != want.Resources.Len() {
		t.Fatalf("%d resources read, want %d", got.Resources.Len(), want.Resources.Len())
	}
	read := got.Resources.Slice()
	for i, w := range want.Resources.Slice() {
		if g := read[i]; g.Key() != w.Key() || g.Hash != w.Hash {
			t.Errorf("resource %d: read %s %s, generated %s %s", i, g.Key(), g.Hash, w.Key(), w.Hash)
		}
	}

	p := pipeline.New(pipeline.Options{})
	p.Apply(got)
	st := p.Stages()
	for _, r := range st.Edge.Resources.All() {
		if r.State() != validate.Accepted {
			t.Errorf("%s: %+v", r.Key(), r.Statuses)
		}
	}
	if c := len(st.XDS[xds.RoleExtauth][xds.ExtAuthConfigType]); c != n {
		t.Errorf("%d ExtAuthConfigs, want %d", c, n)
	}
	for role, res := range st.XDS {
		if err := pipelinetest.Valid(res); err != nil {
			t.Errorf("role %s: %v", role, err)
		}
	}
}

// BenchmarkStartFromDir is process start to the first complete translation: the
// directory source reading and decoding every file of a generated set (n of each
// kind, 100 resources a file), then the pipeline's cold run.
//
//	go test -run '^$' -bench StartFromDir -benchtime 3x ./controlplane/pipeline/pipelinetest/
func BenchmarkStartFromDir(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		dir := b.TempDir()
		if err := pipelinetest.WriteDir(dir, n, 100, "127.0.0.1", 8083); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				ctx, cancel := context.WithCancel(context.Background())
				p := pipeline.New(pipeline.Options{Log: zerolog.Nop()})
				done := make(chan error, 1)
				go func() {
					done <- (&source.Dir{Path: dir, Log: zerolog.Nop()}).Run(ctx, func(in *source.Input) {
						p.Apply(in)
						cancel()
					})
				}()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				if got := len(p.Stages().XDS[xds.RoleExtauth][xds.ExtAuthConfigType]); got != n {
					b.Fatalf("%d ExtAuthConfigs, want %d", got, n)
				}
			}
		})
	}
}
