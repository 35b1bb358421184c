package loader_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/loader"
)

func TestPluginLoaderOpenRefuses(t *testing.T) {
	dir, private := t.TempDir(), t.TempDir()
	write(t, filepath.Join(dir, "text.so"), []byte("hello world\n"))
	l := loader.NewWithOptions(dir, loader.Options{PrivateDir: private, Trial: loader.TrialRunner{Executable: "/nonexistent/gatehouse"}})
	tests := []struct {
		name, file, want string
	}{
		{name: "a name outside the directory", file: "../x.so", want: `loader: plugin file name "../x.so" must be a plain file name inside ` + dir},
		{name: "a missing file", file: "missing.so", want: "loader: " + dir + "/missing.so: no such plugin file; is the plugin image's init container copying it into " + dir + "?"},
		{name: "not ELF", file: "text.so", want: "loader: " + dir + `/text.so: file: not an ELF file (it starts with "hell"); fix: build the plugin with ` + "`go build -buildmode=plugin` (or `gatehouse plugin build`)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := l.Open(tt.file, "Plugin")
			if p != nil || err == nil {
				t.Fatalf("Open = %v, %v; want an error", p, err)
			}
			if err.Error() != tt.want {
				t.Errorf("error\n%s\nwant\n%s", err, tt.want)
			}
		})
	}
}

func TestPluginLoaderChecksAPrivateCopyNamedByContent(t *testing.T) {
	dir, private := t.TempDir(), t.TempDir()
	content := []byte("not a plugin at all")
	write(t, filepath.Join(dir, "x.so"), content)
	l := loader.NewWithOptions(dir, loader.Options{PrivateDir: private})
	_, err := l.Open("x.so", "Plugin")
	var lerr *loader.Error
	if !errors.As(err, &lerr) || lerr.File != filepath.Join(dir, "x.so") {
		t.Fatalf("Open error %v; want a *loader.Error naming %s", err, filepath.Join(dir, "x.so"))
	}
	sum := sha256.Sum256(content)
	entries, _ := os.ReadDir(private)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	// .lock is held while this process lives, so RemoveStale leaves the folder alone.
	if diff := cmp.Diff([]string{".lock", hex.EncodeToString(sum[:]) + ".so"}, names); diff != "" {
		t.Fatalf("private directory (-want +got):\n%s", diff)
	}
	if st, err := os.Stat(filepath.Join(private, names[1])); err != nil || st.Mode().Perm() != 0o500 {
		t.Errorf("private copy: %v, %v; want mode r-x------", st, err)
	}
	// The same content is refused again with the same reasons.
	if _, err2 := l.Open("x.so", "Plugin"); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second Open error %v; want the same refusal", err2)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(private); !os.IsNotExist(err) {
		t.Errorf("Close left %s: %v", private, err)
	}
}

// Regression: a refusal is remembered by content, and it named the file where the
// bytes were first seen, not the file that was asked for (the one that changed).
func TestRefusalNamesTheFileAskedFor(t *testing.T) {
	dir, private := t.TempDir(), t.TempDir()
	content := []byte("hello world\n")
	write(t, filepath.Join(dir, "first.so"), content)
	write(t, filepath.Join(dir, "changed.so"), content)
	l := loader.NewWithOptions(dir, loader.Options{PrivateDir: private, Trial: loader.TrialRunner{Executable: "/nonexistent/gatehouse"}})
	for _, file := range []string{"first.so", "changed.so", "first.so"} {
		_, err := l.Open(file, "Plugin")
		var lerr *loader.Error
		if !errors.As(err, &lerr) || lerr.File != filepath.Join(dir, file) {
			t.Errorf("Open(%s) error %v; want a *loader.Error naming %s", file, err, filepath.Join(dir, file))
		}
	}
}
