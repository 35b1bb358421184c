package devloop

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Debounce is how long the plugin module's sources must stay quiet before a build
// starts: an editor's save is a burst of events (a write, a chmod, a temporary file
// renamed over the old one, a formatter writing again), and one save is one build.
const Debounce = 50 * time.Millisecond

// Run watches the module's folders and rebuilds after every burst of changes to its
// sources until ctx ends.
func (l *Loop) Run(ctx context.Context) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("dev: watching the plugin module: %w", err)
	}
	defer fw.Close()
	if err := watchTree(fw, l.dir); err != nil {
		return fmt.Errorf("dev: watching the plugin module: %w", err)
	}
	quiet := time.NewTimer(time.Hour)
	quiet.Stop()
	defer quiet.Stop()
	var changed []string
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			name := filepath.Base(ev.Name)
			isDir := false
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() && !skipDir(name) {
					isDir = true
					if err := watchTree(fw, ev.Name); err != nil {
						l.o.Log.Warn().Err(err).Str("dir", ev.Name).Msg("not watching a new folder of the plugin module")
					}
				}
			}
			if !isDir && !isSource(name) {
				continue
			}
			if rel, err := filepath.Rel(l.dir, ev.Name); err == nil && !slices.Contains(changed, rel) {
				changed = append(changed, rel)
			}
			quiet.Reset(Debounce)
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			l.o.Log.Warn().Err(err).Str("module", l.dir).Msg("watching the plugin module")
		case <-quiet.C:
			slices.Sort(changed)
			l.Rebuild(ctx, strings.Join(changed, ", "))
			changed = nil
		}
	}
}

// watchTree watches dir and its folders that can hold packages of the module.
func watchTree(fw *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != dir && skipDir(d.Name()) {
			return filepath.SkipDir
		}
		return fw.Add(p)
	})
}

// skipDir: folders the go command ignores when it looks for packages.
func skipDir(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata"
}

// isSource: a file a build of the plugin reads: .go files (tests too, which the go
// command parses when it lists the package), go.mod and go.sum. Editors' backup, swap
// and lock files do not end in .go.
func isSource(name string) bool {
	if name == "go.mod" || name == "go.sum" {
		return true
	}
	return strings.HasSuffix(name, ".go") && !strings.HasPrefix(name, ".")
}
