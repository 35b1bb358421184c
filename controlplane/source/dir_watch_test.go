package source

import (
	"path/filepath"
	"testing"

	"github.com/fsnotify/fsnotify"
)

// TestDirConcerns pins which events make the directory be read again, and how: a
// resource file alone, or everything. An editor's backup and temporary files (vim's
// 4913 and a.yaml~, a tool's a.yaml.tmp) change nothing while no YAML file is a
// symlink, since only through a symlink can another entry change what is read; with
// one, they (and a Kubernetes ..data swap) mean reading everything.
func TestDirConcerns(t *testing.T) {
	dir := t.TempDir()
	in := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name      string
		linked    bool
		event     fsnotify.Event
		concerns  bool
		wantDirty bool
		wantFull  bool
	}{
		{"resource file", false, fsnotify.Event{Name: in("a.yaml"), Op: fsnotify.Write}, true, true, false},
		{"yml file", false, fsnotify.Event{Name: in("a.yml"), Op: fsnotify.Create}, true, true, false},
		{"hidden file", false, fsnotify.Event{Name: in(".a.yaml.swp"), Op: fsnotify.Write}, false, false, false},
		{"vim's write test", false, fsnotify.Event{Name: in("4913"), Op: fsnotify.Create}, false, false, false},
		{"backup", false, fsnotify.Event{Name: in("a.yaml~"), Op: fsnotify.Remove}, false, false, false},
		{"temporary file", false, fsnotify.Event{Name: in("a.yaml.tmp"), Op: fsnotify.Rename}, false, false, false},
		{"..data without symlinks", false, fsnotify.Event{Name: in("..data"), Op: fsnotify.Create}, false, false, false},
		{"..data with symlinks", true, fsnotify.Event{Name: in("..data"), Op: fsnotify.Create}, true, false, true},
		{"folder with symlinks", true, fsnotify.Event{Name: in("current"), Op: fsnotify.Rename}, true, false, true},
		{"hidden file with symlinks", true, fsnotify.Event{Name: in(".a.yaml.swp"), Op: fsnotify.Write}, false, false, false},
		{"the directory itself", false, fsnotify.Event{Name: dir, Op: fsnotify.Remove}, true, false, true},
		{"a sibling folder", false, fsnotify.Event{Name: filepath.Join(filepath.Dir(dir), "other"), Op: fsnotify.Create}, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &Dir{Path: dir}
			if tt.linked {
				d.setLinked(in("a.yaml"), true)
			}
			dirty, full := map[string]bool{}, false
			got := d.concerns(tt.event, dirty, &full)
			if got != tt.concerns || dirty[tt.event.Name] != tt.wantDirty || full != tt.wantFull {
				t.Errorf("concerns = %v, dirty = %v, full = %v; want %v, %v, %v", got, dirty[tt.event.Name], full, tt.concerns, tt.wantDirty, tt.wantFull)
			}
		})
	}
}
