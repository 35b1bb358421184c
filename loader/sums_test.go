package loader

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSumsFollowTheFile: a remembered content hash is used only while the file is the
// one it was taken from; rewriting it in place, or renaming another file over it,
// makes it unknown again, so a changed plugin is always read.
func TestSumsFollowTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.so")
	write := func(content string) fileID {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		id, ok := idOf(fi)
		if !ok {
			t.Fatal("no file identity on this system")
		}
		return id
	}
	var s sums
	first := write("one")
	s.put(path, first, "sum-one")
	if got, ok := s.get(path, first); !ok || got != "sum-one" {
		t.Fatalf("get after put = %q, %t", got, ok)
	}
	time.Sleep(10 * time.Millisecond) // a later modification time than the first write
	rewritten := write("two")
	if _, ok := s.get(path, rewritten); ok {
		t.Error("a file rewritten in place still has the old content's hash")
	}
	other := filepath.Join(dir, ".p.so.tmp")
	if err := os.WriteFile(other, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	renamed, _ := idOf(fi)
	if _, ok := s.get(path, renamed); ok {
		t.Error("a file renamed over the path has the hash of the one it replaced")
	}
	if _, ok := s.get(filepath.Join(dir, "q.so"), first); ok {
		t.Error("another path has the hash")
	}
}
