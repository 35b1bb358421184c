package testbin

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile writes content to path beside it first (a dot file of the same folder) and
// renames it into place, as editors and kubelets do, so a process watching the folder
// never reads half a file.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}
