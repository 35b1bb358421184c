package source_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/controlplane/source"
)

// memory is a source.Memory of the resources of an Input.
type memory struct{ in *source.Input }

func (m memory) Origin(k source.Key) (string, bool) {
	r, ok := m.in.Resources.Get(k)
	if !ok {
		return "", false
	}
	return r.Origin, true
}

func (m memory) Get(k source.Key) (*source.Resource, bool) { return m.in.Resources.Get(k) }

func (m memory) Same(r *source.Resource) bool {
	was, ok := m.in.Resources.Get(r.Key())
	return ok && was.Hash == r.Hash
}

func (m memory) From(origin string) []source.Resource {
	var out []source.Resource
	for r := range m.in.Resources.All() {
		if r.Origin == origin {
			out = append(out, *r)
		}
	}
	return out
}

// A restart behaves as a live edit: a file that no longer decodes keeps what it held,
// and a duplicate keeps the definition that served, whatever the file order says.
func TestDirRemembersAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	b, c := filepath.Join(dir, "b.yaml"), filepath.Join(dir, "c.yaml")
	write(t, b, upstream("dup", 1))
	write(t, c, authConfig("kept"))
	before := run(t, dir).await(t, "both", func(i *source.Input) bool { return i.Resources.Len() == 2 })

	// Meanwhile: c.yaml gets a misspelt field, and a.yaml (first in name order) a copy
	// of b.yaml's Upstream.
	write(t, c, authConfig("kept")+"  misspelt: true\n")
	write(t, filepath.Join(dir, "a.yaml"), upstream("dup", 2))

	got := runWith(t, dir, memory{before}).await(t, "the first input", func(*source.Input) bool { return true })
	want := []string{"Upstream ns.dup@b.yaml", "AuthConfig ns.kept@c.yaml"}
	if diff := cmp.Diff(want, ids(got)); diff != "" {
		t.Errorf("resources after the restart (-want +got):\n%s", diff)
	}
	if len(got.Problems) != 2 {
		t.Errorf("problems %v, want the misspelt field and the duplicate", got.Problems)
	}

	// Without a memory, the restart loses the AuthConfig and takes a.yaml's copy.
	bare := run(t, dir).await(t, "the first input", func(*source.Input) bool { return true })
	if diff := cmp.Diff([]string{"Upstream ns.dup@a.yaml"}, ids(bare)); diff != "" {
		t.Errorf("without a memory (-want +got):\n%s", diff)
	}
}
