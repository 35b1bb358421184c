package loader

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/rs/zerolog"
)

// reported records what a Watcher reports.
type reported struct{ calls [][]string }

func (r *reported) changed(files []string) { r.calls = append(r.calls, files) }

// watchStep writes the file (nil: leaves it as it is), then compares, settled or not.
type watchStep struct {
	content []byte
	settled bool
}

// TestWatcherHoldsBackACopyInProgress: after a quiet period, a plugin file shorter than
// its ELF headers say is not reported until it is complete, or until it has been quiet
// for WatchSettle (settled), when it is reported for the load to refuse as truncated.
func TestWatcherHoldsBackACopyInProgress(t *testing.T) {
	exe, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		steps    []watchStep
		want     [][]string
		wantHeld []bool
	}{
		{
			name:  "half written, then complete",
			steps: []watchStep{{exe[:len(exe)/2], false}, {exe, false}},
			want:  [][]string{{"p.so"}}, wantHeld: []bool{true, false},
		},
		{
			name:  "empty, then complete",
			steps: []watchStep{{[]byte{}, false}, {exe, false}},
			want:  [][]string{{"p.so"}}, wantHeld: []bool{true, false},
		},
		{
			name:  "the first bytes of the magic number only",
			steps: []watchStep{{exe[:2], false}, {exe[:2], true}},
			want:  [][]string{{"p.so"}}, wantHeld: []bool{true, false},
		},
		{
			name:  "half written and settled: reported for the load to refuse",
			steps: []watchStep{{exe[:len(exe)/2], false}, {nil, true}, {exe, false}},
			want:  [][]string{{"p.so"}, {"p.so"}}, wantHeld: []bool{true, false, false},
		},
		{
			name:  "not ELF at all: reported at once, for the load to name it",
			steps: []watchStep{{[]byte("#!/bin/sh\n"), false}},
			want:  [][]string{{"p.so"}}, wantHeld: []bool{false},
		},
		{
			name:  "unchanged content is not reported again",
			steps: []watchStep{{exe, false}, {exe, false}, {nil, true}},
			want:  [][]string{{"p.so"}}, wantHeld: []bool{false, false, false},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var r reported
			w := &Watcher{Dir: dir, Log: zerolog.Nop(), Changed: r.changed}
			w.Snapshot()
			var held []bool
			for _, s := range tt.steps {
				if s.content != nil {
					if err := os.WriteFile(filepath.Join(dir, "p.so"), s.content, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				held = append(held, w.compare(s.settled))
			}
			if diff := cmp.Diff(tt.want, r.calls); diff != "" {
				t.Errorf("reported (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantHeld, held); diff != "" {
				t.Errorf("held back (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWatcherReportsARename: a complete file renamed into the watched directory, the
// way `gatehouse plugin build` and the plugin image's copier publish one, is reported
// once, and files that do not end in .so or start with a dot are not.
func TestWatcherReportsARename(t *testing.T) {
	exe, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	dir, stage := t.TempDir(), t.TempDir()
	got := make(chan []string, 10)
	w := &Watcher{Dir: dir, Log: zerolog.Nop(), Changed: func(files []string) { got <- files }}
	w.Snapshot()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- w.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// Run watches once it has started; until then a rename could be missed, so keep
	// renaming new content in until one is reported.
	var want []string
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; want == nil; i++ {
		if time.Now().After(deadline) {
			t.Fatal("no rename was reported within 30s")
		}
		for _, name := range []string{".p.so.building", "notes.txt", "p.so"} {
			staged := filepath.Join(stage, name)
			if err := os.WriteFile(staged, append(exe[:len(exe):len(exe)], byte(i)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(staged, filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case want = <-got:
		case <-time.After(time.Second):
		}
	}
	if diff := cmp.Diff([]string{"p.so"}, want); diff != "" {
		t.Errorf("reported (-want +got):\n%s", diff)
	}
}

// TestWatcherFilesAreThePluginFilesSeen: Files names, sorted, the .so files of the last
// snapshot, leaving out hidden ones (a copier's staging file) and other files.
func TestWatcherFilesAreThePluginFilesSeen(t *testing.T) {
	exe, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range []string{"b.so", "a.so", ".staged.so", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, name), exe, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := &Watcher{Dir: dir, Log: zerolog.Nop()}
	w.Snapshot()
	if d := cmp.Diff([]string{"a.so", "b.so"}, w.Files()); d != "" {
		t.Errorf("Files (-want +got):\n%s", d)
	}
}
