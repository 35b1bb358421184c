package pipeline_test

import (
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/pipeline/pipelinetest"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/xds"
)

// Run with:
//
//	go test -run '^$' -bench . -benchmem -benchtime 5x ./controlplane/pipeline/
//
// Scales are n VirtualServices (two routes each, one secured), n Upstreams and n
// AuthConfigs.
var scales = []int{1000, 10000}

// BenchmarkFullTranslation is a cold run on a complete input: validation, the
// proxies model, every Envoy resource and ExtAuthConfig. live-MB is the heap still in
// use afterwards (the stages and the translation cache), after a GC.
func BenchmarkFullTranslation(b *testing.B) {
	for _, n := range scales {
		in := pipelinetest.Input(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var p *pipeline.Pipeline
			for b.Loop() {
				p = pipeline.New(pipeline.Options{Log: zerolog.Nop()})
				p.Apply(in)
			}
			b.StopTimer()
			reportLiveHeap(b, in, p)
		})
	}
}

// BenchmarkFullTranslationPublished adds the real xDS server's Publish of every role
// (ValidateAll of every resource, references, caches) to a cold run.
func BenchmarkFullTranslationPublished(b *testing.B) {
	for _, n := range scales {
		in := pipelinetest.Input(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				srv := xds.NewServer(xds.Options{Log: zerolog.Nop()})
				p := pipeline.New(pipeline.Options{Log: zerolog.Nop(), Publish: srv.Publish})
				p.Apply(in)
				if errs := p.Stages().PublishErrors; errs != nil {
					b.Fatal(errs)
				}
			}
		})
	}
}

// BenchmarkEdit is one edited resource on a warm pipeline: each iteration applies an
// Input differing from the previous one in one resource (two inputs alternate). Its
// published variants hand each role to the real xDS server; the others to a
// PublishChanged that does nothing (without one, the pipeline would hand a Publish
// copies of every map, which is not what an edit costs the control plane).
func BenchmarkEdit(b *testing.B) {
	edits := []struct {
		name string
		obj  func(i int, alt bool) any
	}{
		{"virtualservice", func(i int, alt bool) any { return pipelinetest.VirtualService(i, pick(alt, "/public", "/open")) }},
		{"upstream", func(i int, alt bool) any { return pipelinetest.Upstream(i, pick(alt, 8080, 8081)) }},
		{"authconfig", func(i int, alt bool) any { return pipelinetest.AuthConfig(i, pick(alt, "v0", "v1")) }},
	}
	for _, publish := range []bool{false, true} {
		for _, e := range edits {
			for _, n := range scales {
				name := fmt.Sprintf("%s/n=%d", e.name, n)
				if publish {
					name = "published/" + name
				}
				b.Run(name, func(b *testing.B) {
					base := pipelinetest.Input(n)
					edited := pipelinetest.Replace(base, e.obj(n/2, true))
					o := pipeline.Options{Log: zerolog.Nop(), PublishChanged: func(string, xds.Resources, xds.Changed) error { return nil }}
					if publish {
						o.PublishChanged = xds.NewServer(xds.Options{Log: zerolog.Nop()}).PublishChanged
					}
					p := pipeline.New(o)
					p.Apply(base)
					inputs := []*source.Input{edited, base}
					k := 0
					// The set-up's garbage (hundreds of MB at 10k) is collected now,
					// not during the edits, whose few KB each then start no
					// collection: the figure is the edit's own work. What collections
					// cost the process per edit is in the control plane's CPU per edit.
					runtime.GC()
					// The loop carries a profiler label, so that a CPU profile can be
					// narrowed to the edits (-tagfocus loop=edit) without the set-up.
					pprof.Do(context.Background(), pprof.Labels("loop", "edit"), func(context.Context) {
						for b.Loop() {
							p.Apply(inputs[k%2])
							k++
						}
					})
					if errs := p.Stages().PublishErrors; errs != nil {
						b.Fatal(errs)
					}
				})
			}
		}
	}
}

func pick[T any](alt bool, a, b T) T {
	if alt {
		return b
	}
	return a
}

func reportLiveHeap(b *testing.B, in *source.Input, p *pipeline.Pipeline) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(m.HeapAlloc)/(1<<20), "live-MB")
	runtime.KeepAlive(in)
	runtime.KeepAlive(p)
}
