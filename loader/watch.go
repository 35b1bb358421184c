package loader

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rs/zerolog"
)

// WatchQuiet is how long the plugin directory must stay quiet before its files are
// looked at: a rename into place, a Kubernetes ..data swap or a fast copy are bursts of
// events a few microseconds apart, taken as one. It is a wait on the path of every
// swap, so it is short; a look that comes too early is harmless, because what counts
// is the content: a copy still in progress is shorter than its ELF headers say and is
// held back, and a ..data swap not yet renamed still shows the old content.
const WatchQuiet = 2 * time.Millisecond

// WatchSettle is how long a plugin file that is still being written (shorter than its
// own ELF headers say it is) may stay unchanged before it is reported anyway: a copy
// that stalled or died is then loaded, refused as truncated and the refusal shown,
// while the version before keeps serving.
const WatchSettle = 100 * time.Millisecond

// Watcher reports plugin files that appear or change in a directory. It follows the
// content, not the events: after every burst of events it looks at the .so files
// (through symlinks, so Kubernetes-style ..data swaps work), hashes those whose
// identity (inode, size, times) changed, and reports the names whose content differs
// from what it saw before. A file whose ELF headers describe more bytes than it has is
// a copy in progress and is held back until it is complete or has been quiet for
// WatchSettle.
type Watcher struct {
	Dir string
	Log zerolog.Logger
	// Changed receives the file names (not paths) that appeared or changed.
	Changed func(files []string)
	// Watching, if set, is called once the directory is watched: extauth starts its
	// spare trial-load child (TrialSpare) only then, as only a watched folder changes.
	Watching func()

	seen  map[string]dirEntry // what was last reported, by file name
	files map[string]dirEntry // what was last looked at, by file name: hashes to reuse
}

// Snapshot records the current content so only later changes are reported.
func (w *Watcher) Snapshot() {
	w.seen = w.scan()
}

// Files are the plugin files of the last snapshot or report, by name, sorted; not to
// be called while Run runs.
func (w *Watcher) Files() []string { return slices.Sorted(maps.Keys(w.seen)) }

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
	if w.Watching != nil {
		w.Watching()
	}
	quiet, settle := stoppedTimer(), stoppedTimer()
	defer quiet.Stop()
	defer settle.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-fw.Events:
			if !ok {
				return nil
			}
			w.Log.Debug().Str("event", ev.String()).Msg("plugin directory changed")
			// Every event restarts both waits: a copy writes many times.
			quiet.Reset(WatchQuiet)
			settle.Stop()
		case err, ok := <-fw.Errors:
			if !ok {
				return nil
			}
			w.Log.Error().Err(err).Str("dir", w.Dir).Msg("watching the plugin directory")
		case <-quiet.C:
			if w.compare(false) {
				settle.Reset(WatchSettle - WatchQuiet)
			}
		case <-settle.C:
			w.compare(true)
		}
	}
}

func stoppedTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}

// compare reports what changed since the last report. Files still being written are
// held back unless settled; it returns whether any was.
func (w *Watcher) compare(settled bool) (held bool) {
	now := w.scan()
	var changed, writing []string
	next := make(map[string]dirEntry, len(now))
	for name, e := range now {
		old, ok := w.seen[name]
		switch {
		case ok && old.sum == e.sum:
		case e.incomplete != "" && !settled:
			writing = append(writing, name)
			if ok {
				next[name] = old // still to be reported
			}
			continue
		default:
			changed = append(changed, name)
			if e.incomplete != "" {
				w.Log.Warn().Str("file", filepath.Join(w.Dir, name)).Str("detail", e.incomplete).Dur("quiet", WatchSettle).
					Msg("plugin file still looks incomplete after a quiet period; loading it anyway")
			}
		}
		next[name] = e
	}
	for name := range w.seen {
		if _, ok := now[name]; !ok {
			w.Log.Warn().Str("file", filepath.Join(w.Dir, name)).
				Msg("plugin file removed; chains already using it keep serving the loaded copy until restart")
		}
	}
	w.seen = next
	if len(writing) > 0 {
		sort.Strings(writing)
		w.Log.Debug().Strs("files", writing).Msg("plugin files still being written; waiting for the rest")
	}
	if len(changed) > 0 {
		sort.Strings(changed)
		w.Log.Info().Strs("files", changed).Msg("plugin files appeared or changed")
		w.Changed(changed)
	}
	return len(writing) > 0
}
