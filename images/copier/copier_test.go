package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// layout describes a directory tree: regular files by name, with "dir/" for directories
// and "name -> target" for symlinks.
type layout map[string]string

func (l layout) create(t *testing.T, dir string) {
	t.Helper()
	for name, content := range l {
		var err error
		switch {
		case strings.HasSuffix(name, "/"):
			err = os.MkdirAll(filepath.Join(dir, name), 0o755)
		case strings.Contains(name, " -> "):
			link, target, _ := strings.Cut(name, " -> ")
			err = os.Symlink(target, filepath.Join(dir, link))
		default:
			err = os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// contents reads every entry of dir as name -> content, with the mode in front of it.
func contents(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if !info.Mode().IsRegular() {
			got[e.Name()] = info.Mode().String()
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got[e.Name()] = info.Mode().Perm().String() + " " + string(b)
	}
	return got
}

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		from     layout
		to       layout
		args     func(from, to string) []string
		wantCode int
		wantOut  []string // lines, with FROM and TO standing for the directories
		wantErr  string
		wantTo   map[string]string
	}{
		{
			name: "copies only regular .so files",
			from: layout{"a.so": "plugin a", "b.so": "plugin b", "README.md": "docs", "dir.so/": "", "link.so -> a.so": ""},
			wantOut: []string{
				"copied FROM/a.so -> TO/a.so (8 bytes)",
				"copied FROM/b.so -> TO/b.so (8 bytes)",
			},
			wantTo: map[string]string{"a.so": "-rwxr-xr-x plugin a", "b.so": "-rwxr-xr-x plugin b"},
		},
		{
			name:    "replaces an older copy and keeps other files",
			from:    layout{"a.so": "new a"},
			to:      layout{"a.so": "old a", "other.so": "other"},
			wantOut: []string{"copied FROM/a.so -> TO/a.so (5 bytes)"},
			wantTo:  map[string]string{"a.so": "-rwxr-xr-x new a", "other.so": "-rw-r--r-- other"},
		},
		{
			name:     "no plugins in the source",
			from:     layout{"README.md": "docs"},
			wantCode: 1,
			wantErr:  "copier: FROM: no .so files to copy; the image holds no compiled plugins",
			wantTo:   map[string]string{},
		},
		{
			name:     "source missing",
			args:     func(from, to string) []string { return []string{"--from", from + "/missing", "--to", to} },
			wantCode: 1,
			wantErr:  "copier: source: open FROM/missing: no such file or directory",
			wantTo:   map[string]string{},
		},
		{
			name:     "destination missing",
			from:     layout{"a.so": "plugin a"},
			args:     func(from, to string) []string { return []string{"--from", from, "--to", to + "/missing"} },
			wantCode: 1,
			wantErr:  "copier: TO/missing: no such directory; mount the auth-plugins volume there",
			wantTo:   map[string]string{},
		},
		{
			name:     "destination is a file",
			from:     layout{"a.so": "plugin a"},
			to:       layout{"file": "x"},
			args:     func(from, to string) []string { return []string{"--from", from, "--to", to + "/file"} },
			wantCode: 1,
			wantErr:  "copier: TO/file: not a directory",
			wantTo:   map[string]string{"file": "-rw-r--r-- x"},
		},
		{
			// /proc refuses new files even to root, which is who the tests run as in CI.
			name:     "destination not writable",
			from:     layout{"a.so": "plugin a"},
			args:     func(from, _ string) []string { return []string{"--from", from, "--to", "/proc"} },
			wantCode: 1,
			wantErr:  "copier: /proc: not writable: ",
			wantTo:   map[string]string{},
		},
		{
			name:     "stray argument",
			from:     layout{"a.so": "plugin a"},
			args:     func(from, to string) []string { return []string{"--from", from, "--to", to, "extra"} },
			wantCode: 2,
			wantErr:  `copier: unexpected arguments ["extra"]`,
			wantTo:   map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, to := t.TempDir(), t.TempDir()
			tt.from.create(t, from)
			tt.to.create(t, to)
			args := []string{"--from", from, "--to", to}
			if tt.args != nil {
				args = tt.args(from, to)
			}
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			unplace := strings.NewReplacer(from, "FROM", to, "TO")
			if code != tt.wantCode {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, tt.wantCode, stderr.String())
			}
			if got := unplace.Replace(stderr.String()); !strings.HasPrefix(got, tt.wantErr) || (tt.wantErr == "" && got != "") {
				t.Errorf("stderr = %q, want prefix %q", got, tt.wantErr)
			}
			var gotOut []string
			if out := strings.TrimSpace(unplace.Replace(stdout.String())); out != "" {
				gotOut = strings.Split(out, "\n")
			}
			if diff := cmp.Diff(tt.wantOut, gotOut); diff != "" {
				t.Errorf("stdout (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantTo, contents(t, to)); diff != "" {
				t.Errorf("destination (-want +got):\n%s", diff)
			}
		})
	}
}
