package source_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/controlplane/source"
)

const upstreamYAML = `apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: %s, namespace: ns}
spec: {static: {hosts: [{addr: 127.0.0.1, port: 1}]}}
`

func upstreamDoc(name string) []byte { return []byte(strings.Replace(upstreamYAML, "%s", name, 1)) }

func TestStatic(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string][]byte
		want    []string // keys in order
		wantErr string
	}{
		{name: "ordered by key across files", files: map[string][]byte{"a.yaml": upstreamDoc("zeta"), "b.yaml": upstreamDoc("alpha")},
			want: []string{"Upstream ns.alpha", "Upstream ns.zeta"}},
		{name: "a resource defined twice is an error naming both files", files: map[string][]byte{"a.yaml": upstreamDoc("x"), "b.yaml": upstreamDoc("x")},
			wantErr: "Upstream ns.x is defined in a.yaml and in b.yaml"},
		{name: "a document that does not decode is an error", files: map[string][]byte{"bad.yaml": []byte("kind: Upstream\nspec: [")},
			wantErr: "bad.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := (&source.Static{Name: "test", Files: tt.files}).Input()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for r := range in.Resources.All() {
				got = append(got, r.Key().String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMappedPublishesWhatMapMakes(t *testing.T) {
	src := &source.Mapped{
		Source: &source.Static{Name: "test", Files: map[string][]byte{"a.yaml": upstreamDoc("a")}},
		Map: func(in *source.Input) *source.Input {
			out := *in
			out.Source = "mapped " + in.Source
			return &out
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	var got []string
	err := src.Run(ctx, func(in *source.Input) { got = append(got, in.Source); cancel() })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"mapped test"}, got); diff != "" {
		t.Errorf("published (-want +got):\n%s", diff)
	}
}
