package source

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFileReaderIsReadFile holds fileReader to os.ReadFile: the same bytes for files
// smaller and larger than its buffer, one after the other with one buffer, and the
// same error text for what cannot be read.
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
		filepath.Join(dir, "missing.yaml"),
		sub,
	}
	var r fileReader
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			want, wantErr := os.ReadFile(p)
			got, err := r.read(p)
			if diff := cmp.Diff(errText(wantErr), errText(err)); diff != "" {
				t.Errorf("error (-os.ReadFile +fileReader):\n%s", diff)
			}
			if wantErr == nil && string(got) != string(want) {
				t.Errorf("read %d bytes %.40q..., want %d bytes %.40q...", len(got), got, len(want), want)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
