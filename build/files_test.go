package build

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/loader"
)

// files replaced a `go list` per build; it must pick what the host's build picks and
// refuse what cannot be built from a list of files.
func TestFiles(t *testing.T) {
	tests := []struct {
		name     string
		settings map[string]string
		files    map[string]string // name -> content
		want     []string
		wantErr  string
	}{
		{
			name: "go files of package main, without tests and files for other builds",
			files: map[string]string{
				"main.go": "package main\n", "extra.go": "package main\n", "main_test.go": "package main\n",
				"other_os.go": "//go:build windows\n\npackage main\n", "tagged.go": "//go:build special\n\npackage main\n",
				"_skip.go": "package main\n", "notes.txt": "",
			},
			want: []string{"extra.go", "main.go"},
		},
		{
			name:     "the host's build tags select files",
			settings: map[string]string{"-tags": "other,special"},
			files:    map[string]string{"main.go": "package main\n", "tagged.go": "//go:build special\n\npackage main\n"},
			want:     []string{"main.go", "tagged.go"},
		},
		{
			name:  "cgo files with cgo on",
			files: map[string]string{"main.go": "package main\n", "c.go": "package main\n\nimport \"C\"\n"},
			want:  []string{"main.go", "c.go"},
		},
		{
			name:     "cgo files are left out with cgo off",
			settings: map[string]string{"CGO_ENABLED": "0"},
			files:    map[string]string{"main.go": "package main\n", "c.go": "package main\n\nimport \"C\"\n"},
			want:     []string{"main.go"},
		},
		{
			name:    "not package main",
			files:   map[string]string{"lib.go": "package lib\n"},
			wantErr: `is "lib", not main`,
		},
		{
			name:    "assembly",
			files:   map[string]string{"main.go": "package main\n", "fast_amd64.s": "\n"},
			wantErr: "has assembly or C files",
		},
		{
			name:    "no go files",
			files:   map[string]string{"README.md": ""},
			wantErr: "has no Go files the host's build would select",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			settings := tt.settings
			if settings == nil {
				settings = map[string]string{}
			}
			b := &builder{dir: dir, c: &loader.Contract{GOOS: "linux", GOARCH: "amd64", Settings: settings}}
			got, err := b.files()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("files() = %v, %v; want an error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}
