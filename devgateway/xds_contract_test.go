package devgateway_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"google.golang.org/protobuf/types/known/anypb"

	"gatehouse.dev/gatehouse/controlplane/pipeline"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/devgateway"
)

// TestProxyTakesWhatTheControlPlaneEmits feeds the gateway the Envoy resources the real
// pipeline translates from the embedded examples and from every pipeline golden input:
// the gateway must take all of them (no NACK) and serve a complete listener. A field
// the translator starts emitting that the gateway does not implement fails here first.
func TestProxyTakesWhatTheControlPlaneEmits(t *testing.T) {
	inputs := map[string][]string{"examples/default": glob(t, "../examples/default/*.yaml")}
	for _, f := range glob(t, "../controlplane/pipeline/testdata/*.yaml") {
		inputs[strings.TrimSuffix(filepath.Base(f), ".yaml")] = []string{f}
	}
	for name, files := range inputs {
		t.Run(name, func(t *testing.T) {
			files = withSDSFiles(t, files)
			published := map[string]xds.Resources{}
			pl := pipeline.New(pipeline.Options{Log: zerolog.Nop(), Publish: func(role string, r xds.Resources) error {
				published[role] = r
				return nil
			}})
			pl.Apply(decode(t, files))
			proxy := published[xds.DefaultProxyRole]
			if proxy == nil {
				t.Fatalf("nothing published for %s (roles: %v)", xds.DefaultProxyRole, keys(published))
			}
			p := devgateway.NewProxy(devgateway.ProxyOptions{Log: newTestLog(t)})
			t.Cleanup(p.Close)
			for _, typ := range devgateway.Types {
				set := map[string]*anypb.Any{}
				for n, r := range proxy[typ] {
					set[n] = mustAny(t, r)
				}
				if err := p.Handle(typ, set); err != nil {
					t.Errorf("Handle(%s) NACKs what the control plane emits:\n%v", typ, err)
				}
			}
			t.Logf("published %d listeners, %d route configs, %d clusters, %d endpoints", len(proxy[xds.ListenerType]), len(proxy[xds.RouteType]), len(proxy[xds.ClusterType]), len(proxy[xds.EndpointType]))
			if name == "examples/default" && len(proxy[xds.ListenerType]) == 0 {
				t.Fatal("the examples publish no listener")
			}
			if len(proxy[xds.ListenerType]) > 0 {
				// A listener with jwt waits for its key sets' first fetch (which fails
				// here: nothing serves them), as Envoy's does.
				eventually(t, "the HTTP listener served with everything the control plane published", func() bool { return p.Ready(devgateway.HTTPPort) })
			}
		})
	}
}

// withSDSFiles is files with every Settings spec.extauth.tls.sdsDir of /etc/envoy
// pointed at a folder of real SDS files (certs), as a proxy would have them; files that
// name none are returned as they are.
func withSDSFiles(t *testing.T, files []string) []string {
	t.Helper()
	const mark = "sdsDir: /etc/envoy"
	var out []string
	var sds string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), mark) {
			out = append(out, f)
			continue
		}
		if sds == "" {
			_, sds = certs(t)
		}
		edited := filepath.Join(t.TempDir(), filepath.Base(f))
		if err := os.WriteFile(edited, []byte(strings.ReplaceAll(string(data), mark, "sdsDir: "+sds)), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, edited)
	}
	return out
}

func glob(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: %v (%d files)", pattern, err, len(files))
	}
	return files
}

// decode reads YAML files into one Input, ordered as the directory source orders it.
func decode(t *testing.T, files []string) *source.Input {
	t.Helper()
	var res []source.Resource
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rs, probs := source.Decode(data, filepath.Base(f))
		if len(probs) > 0 {
			t.Fatalf("%s: %v", f, probs)
		}
		res = append(res, rs...)
	}
	sort.SliceStable(res, func(i, j int) bool { return res[i].Key().Less(res[j].Key()) })
	return source.NewInput("test", res, nil)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
