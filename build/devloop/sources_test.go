package devloop

import (
	"os"
	"path/filepath"
	"testing"
)

func TestIsSource(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"main.go", true},
		{"main_test.go", true},
		{"go.mod", true},
		{"go.sum", true},
		{".main.go", false},         // an editor's hidden temporary file
		{"main.go~", false},         // a backup
		{".main.go.swp", false},     // vim's swap file
		{"4913", false},             // vim's probe file
		{"step.yaml", false},        // read by dev, not by the build
		{"myplugin.so", false},      // the build's own output
		{"go.work", false},          // the builder writes its own workspace
		{"README.md", false},        // documentation
		{"main.go.building", false}, // the build's temporary output name
	} {
		if got := isSource(tt.name); got != tt.want {
			t.Errorf("isSource(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSkipDir(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"internal", false},
		{"out", false},
		{".git", true},
		{StageDir, true},
		{"_scratch", true},
		{"testdata", true},
	} {
		if got := skipDir(tt.name); got != tt.want {
			t.Errorf("skipDir(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestSourcesSame: which edits make the next build differ from the last one.
func TestSourcesSame(t *testing.T) {
	dir := t.TempDir()
	write := func(t *testing.T, rel, content string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(t, "go.mod", "module example.com/p\n")
	write(t, "main.go", "package main\n")
	write(t, "main_test.go", "package main\n")
	write(t, "internal/x/x.go", "package x\n")
	read := func(t *testing.T) sources {
		t.Helper()
		s, err := readSources(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	for _, tt := range []struct {
		name         string
		rel, content string
		same         bool // after a build that succeeded
		sameFailed   bool // after a build that failed
	}{
		{"the code changes", "main.go", "package main\n\nvar x = 1\n", false, false},
		{"a package below the root changes", "internal/x/x.go", "package x\n\nvar y = 2\n", false, false},
		{"a new .go file", "extra.go", "package main\n", false, false},
		{"go.mod changes", "go.mod", "module example.com/p\n\ngo 1.26.0\n", false, false},
		{"go.sum appears", "go.sum", "example.com/q v1.0.0 h1:x\n", false, false},
		{"only a test changes", "main_test.go", "package main\n\nvar z = 3\n", true, false},
		{"a file the build does not read", "step.yaml", "pluginAuth: {}\n", true, true},
		{"a hidden folder", ".git/main.go", "package main\n", true, true},
		{"testdata", "testdata/main.go", "package main\n", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := read(t)
			write(t, tt.rel, tt.content)
			after := read(t)
			if got := after.same(before, false); got != tt.same {
				t.Errorf("after a good build: same = %v, want %v", got, tt.same)
			}
			if got := after.same(before, true); got != tt.sameFailed {
				t.Errorf("after a failed build: same = %v, want %v", got, tt.sameFailed)
			}
		})
	}
}
