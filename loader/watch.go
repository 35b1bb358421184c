package loader

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rs/zerolog"
)

// WatchSettle is how long the plugin directory must stay quiet before files are read,
// so a copy in progress is not read half-written.
const WatchSettle = 100 * time.Millisecond

// Watcher reports plugin files that appear or change in a directory. It follows the
// content, not the events: after every burst of events it hashes the .so files (through
// symlinks, so Kubernetes-style ..data swaps work) and reports the names whose content
// differs from what it saw before.
type Watcher struct {
	Dir string
	Log zerolog.Logger
	// Changed receives the file names (not paths) that appeared or changed.
	Changed func(files []string)

	seen map[string][sha256.Size]byte
}

// Snapshot records the current content so only later changes are reported.
func (w *Watcher) Snapshot() {
	w.seen = w.scan()
}

// Run watches until ctx ends.
func (w *Watcher) Run(ctx context.Context) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("loader: watch %s: %w", w.Dir, err)
	}
	defer fw.Close()
	if err := fw.Add(w.Dir); err != nil {
		return fmt.Errorf("loader: watch %s: %w", w.Dir, err)
	}
	if w.seen == nil {
		w.Snapshot()
	}
	var settle *time.Timer
	var fire <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			w.Log.Debug().Str("event", ev.String()).Msg("plugin directory changed")
			// Restart the quiet period on every event: a copy writes many times.
			if settle == nil {
				settle = time.NewTimer(WatchSettle)
			} else {
				settle.Reset(WatchSettle)
			}
			fire = settle.C
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			w.Log.Error().Err(err).Str("dir", w.Dir).Msg("watching the plugin directory")
		case <-fire:
			fire = nil
			w.compare()
		}
	}
}

func (w *Watcher) compare() {
	now := w.scan()
	var changed []string
	for name, sum := range now {
		if old, ok := w.seen[name]; !ok || old != sum {
			changed = append(changed, name)
		}
	}
	for name := range w.seen {
		if _, ok := now[name]; !ok {
			w.Log.Warn().Str("file", filepath.Join(w.Dir, name)).
				Msg("plugin file removed; chains already using it keep serving the loaded copy until restart")
		}
	}
	w.seen = now
	if len(changed) > 0 {
		sort.Strings(changed)
		w.Log.Info().Strs("files", changed).Msg("plugin files appeared or changed")
		w.Changed(changed)
	}
}

// scan hashes every .so in the directory; unreadable files are left out (and reported
// by the load that follows, if anything uses them).
func (w *Watcher) scan() map[string][sha256.Size]byte {
	out := map[string][sha256.Size]byte{}
	entries, err := os.ReadDir(w.Dir)
	if err != nil {
		w.Log.Error().Err(err).Str("dir", w.Dir).Msg("reading the plugin directory")
		return out
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".so") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		sum, err := hashFile(filepath.Join(w.Dir, e.Name()))
		if err != nil {
			continue
		}
		out[e.Name()] = sum
	}
	return out
}

func hashFile(path string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	f, err := os.Open(path) // follows symlinks
	if err != nil {
		return sum, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return sum, fmt.Errorf("not a regular file")
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, err
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}
