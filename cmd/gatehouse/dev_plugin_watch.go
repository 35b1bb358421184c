package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// devDebounce is how long the plugin module's sources must stay quiet before a build
// starts: an editor's save is a burst of events (a write, a chmod, a temporary file
// renamed over the old one, a formatter writing again), and one save is one build.
const devDebounce = 50 * time.Millisecond

// run watches the module's folders and rebuilds after every burst of changes to its
// sources until ctx ends.
func (m *pluginModule) run(ctx context.Context) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("dev: watching the plugin module: %w", err)
	}
	defer fw.Close()
	if err := watchTree(fw, m.dir); err != nil {
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
						m.log.Warn().Err(err).Str("dir", ev.Name).Msg("not watching a new folder of the plugin module")
					}
				}
			}
			if !isDir && !isSource(name) {
				continue
			}
			if rel, err := filepath.Rel(m.dir, ev.Name); err == nil && !slices.Contains(changed, rel) {
				changed = append(changed, rel)
			}
			quiet.Reset(devDebounce)
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			m.log.Warn().Err(err).Str("module", m.dir).Msg("watching the plugin module")
		case <-quiet.C:
			slices.Sort(changed)
			m.rebuild(ctx, strings.Join(changed, ", "))
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

// sources fingerprints what a build of the module reads: its code, its tests (which
// only a failed build is retried for: they are not built into the plugin, but a broken
// one stops the go command), and its go.mod and go.sum (which the build itself tidies
// and pins).
type sources struct{ code, tests, mod [sha256.Size]byte }

// same reports whether a build from s would build what a build from b did. After a
// failure, a change to a test counts too.
func (s sources) same(b sources, failed bool) bool {
	return s.code == b.code && s.mod == b.mod && (!failed || s.tests == b.tests)
}

func readSources(dir string) (sources, error) {
	code, tests, mod := sha256.New(), sha256.New(), sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && p != dir && skipDir(d.Name()):
			return filepath.SkipDir
		case d.IsDir() || !isSource(d.Name()):
			return nil
		}
		h := code
		switch {
		case p == filepath.Join(dir, "go.mod") || p == filepath.Join(dir, "go.sum"):
			h = mod
		case strings.HasSuffix(p, "_test.go"):
			h = tests
		}
		return hashSource(h, dir, p)
	})
	var s sources
	copy(s.code[:], code.Sum(nil))
	copy(s.tests[:], tests.Sum(nil))
	copy(s.mod[:], mod.Sum(nil))
	return s, err
}

// hashSource adds a file's name and content to h; a file gone meanwhile (an editor's
// temporary file renamed away) is left out.
func hashSource(h hash.Hash, dir, p string) error {
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	rel, _ := filepath.Rel(dir, p)
	fmt.Fprintf(h, "%s %d\n", rel, len(data))
	h.Write(data)
	return nil
}
