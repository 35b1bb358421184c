package source_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"gatehouse.dev/gatehouse/controlplane/source"
)

// TestDirReportsFilesThatAreNotRegular: a FIFO named *.yaml blocked the source forever
// in open() (nothing published, SIGTERM ignored), a symlink to /dev/zero ran the process
// out of memory, and a 50 MB file was read whole (117 MB) before its size was checked.
// Each is now a problem of its own file, found without waiting or reading past the
// limit, and the folder's other resources are read.
func TestDirReportsFilesThatAreNotRegular(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "good.yaml"), upstream("good", 1))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.yaml")); err != nil {
		t.Fatal(err)
	}
	big, err := os.Create(filepath.Join(dir, "big.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := big.Truncate(50 << 20); err != nil { // sparse: 50 MB of zeros, nothing on disk
		t.Fatal(err)
	}
	big.Close()

	in := run(t, dir)
	first := in.await(t, "the good file and three problems", func(i *source.Input) bool { return len(i.Problems) == 3 })
	if got := ids(first); len(got) != 1 || got[0] != "Upstream ns.good@good.yaml" {
		t.Errorf("resources %v, want the good file's", got)
	}
	want := map[string]string{
		"fifo.yaml": "not a regular file (a FIFO)",
		"zero.yaml": "not a regular file (a character device)",
		"big.yaml":  "52428800 bytes, more than the 4194304",
	}
	for _, p := range first.Problems {
		base := filepath.Base(p.Origin)
		if w, ok := want[base]; !ok || !strings.Contains(p.Message, w) {
			t.Errorf("problem of %s: %q, want it to say %q", base, p.Message, w)
		}
		delete(want, base)
	}
	if len(want) > 0 {
		t.Errorf("no problem reported for %v", want)
	}
}
