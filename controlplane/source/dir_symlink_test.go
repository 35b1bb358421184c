package source_test

import (
	"os"
	"path/filepath"
	"testing"

	"gatehouse.dev/gatehouse/controlplane/source"
)

// TestDirConfigMapSwap lays the directory out as the kubelet mounts a ConfigMap
// (resources.yaml -> ..data/resources.yaml, ..data -> ..<timestamp>) and updates it as
// the kubelet does: a new timestamped folder, ..data_tmp pointing at it renamed over
// ..data, the old folder removed. Only the ..data entries change, never the YAML
// symlink itself, so the source must read again on their events.
func TestDirConfigMapSwap(t *testing.T) {
	dir := t.TempDir()
	version := func(name string, port int) {
		t.Helper()
		if err := os.Mkdir(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, name, "resources.yaml"), upstream("one", port))
	}
	link := func(target, name string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	version("..2026_11_23_01", 1)
	link("..2026_11_23_01", "..data")
	link("..data/resources.yaml", "resources.yaml")
	in := run(t, dir)
	first := in.await(t, "one upstream", func(i *source.Input) bool { return i.Resources.Len() == 1 })
	before := hashOf(first, "Upstream ns.one")

	version("..2026_11_23_02", 2)
	link("..2026_11_23_02", "..data_tmp")
	if err := os.Rename(filepath.Join(dir, "..data_tmp"), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "..2026_11_23_01")); err != nil {
		t.Fatal(err)
	}
	in.await(t, "the swapped content", func(i *source.Input) bool {
		h := hashOf(i, "Upstream ns.one")
		return h != "" && h != before && len(i.Problems) == 0
	})
}
