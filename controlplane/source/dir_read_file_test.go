package source

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFileReaderIsReadFile holds fileReader to os.ReadFile: the same bytes for files
// smaller and larger than its buffer and of its sizes exactly, one after the other
// with one buffer, and the same error text for a file that is not there; reading until
// a read returns nothing, and taking a short read as the end where the filesystem
// allows it. A folder named *.yaml is refused as not a regular file.
func TestFileReaderIsReadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sub := filepath.Join(dir, "sub.yaml")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		write("small.yaml", "kind: Upstream\n"),
		write("empty.yaml", ""),
		write("large.yaml", strings.Repeat("# a comment line of forty characters..\n", 3000)),
		write("small-again.yaml", "kind: AuthConfig\n"),
		write("buffer.yaml", strings.Repeat("x", 16<<10)),
		write("buffer-and-one.yaml", strings.Repeat("y", 16<<10+1)),
		write("buffer-less-one.yaml", strings.Repeat("z", 16<<10-1)),
		write("three-buffers.yaml", strings.Repeat("w", 48<<10)),
		write("small-last.yaml", "kind: VirtualService\n"),
		filepath.Join(dir, "missing.yaml"),
	}
	for _, shortIsEnd := range []bool{false, true} {
		var r fileReader
		for _, p := range paths {
			t.Run(fmt.Sprintf("%s/shortIsEnd=%v", filepath.Base(p), shortIsEnd), func(t *testing.T) {
				want, wantErr := os.ReadFile(p)
				got, err := r.read(p, shortIsEnd)
				if diff := cmp.Diff(errText(wantErr), errText(err)); diff != "" {
					t.Errorf("error (-os.ReadFile +fileReader):\n%s", diff)
				}
				if wantErr == nil && string(got) != string(want) {
					t.Errorf("read %d bytes %.40q..., want %d bytes %.40q...", len(got), got, len(want), want)
				}
			})
		}
		if _, err := r.read(sub, shortIsEnd); err == nil || !strings.Contains(err.Error(), "not a regular file (a folder)") {
			t.Errorf("a folder named sub.yaml: %v", err)
		}
	}
}

// TestShortReadIsEndOnlyWhereKnown: a filesystem that is not known to serve reads from
// the page cache (procfs), or a path that cannot be looked at, reads files to the end.
func TestShortReadIsEndOnlyWhereKnown(t *testing.T) {
	for _, dir := range []string{"/proc", filepath.Join(t.TempDir(), "missing")} {
		if shortReadIsEnd(dir) {
			t.Errorf("shortReadIsEnd(%s) = true, want false", dir)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
