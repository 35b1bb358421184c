package v1

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReleasedNodesAreNotKept holds Add to keeping nothing of the nodes it hands back
// to the next parse: every YAML file of the repository is added to one Set, each
// resource's JSON noted right after its own Add, and every resource, once every later
// parse has reused the nodes, must still give the same JSON.
func TestReleasedNodesAreNotKept(t *testing.T) {
	set := &Set{}
	lists := func() [][]any {
		return [][]any{asAny(set.AuthConfigs), asAny(set.VirtualServices), asAny(set.Upstreams), asAny(set.Settings), asAny(set.Secrets)}
	}
	marshal := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	want := make([][]string, len(lists()))
	fast := eachRepositoryYAML(t, func(t *testing.T, data []byte) bool {
		if err := set.Add(data, "file.yaml"); err != nil {
			return false // files with problems are the tests' own cases
		}
		for k, list := range lists() {
			for _, r := range list[len(want[k]):] {
				want[k] = append(want[k], marshal(r))
			}
		}
		return fastDocuments(data) != nil
	})
	if fast == 0 {
		t.Fatal("no file took the fast path")
	}
	got := make([][]string, len(want))
	for k, list := range lists() {
		for _, r := range list {
			got[k] = append(got[k], marshal(r))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resources changed after later parses (-when added +at the end):\n%s", diff)
	}
}

func asAny[T any](list []*T) []any {
	out := make([]any, len(list))
	for i, r := range list {
		out[i] = r
	}
	return out
}
