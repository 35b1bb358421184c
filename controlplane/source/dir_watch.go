package source

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// maxDelay bounds how long a stream of events can hold back a read (a variable for
// the tests).
var maxDelay = time.Second

// watch reads again after every quiet burst of events until ctx ends. It watches the
// directory and its parent: the directory's own watch ends when it is removed, and the
// parent's event (or the Retry ticker) tells when it is back.
func (d *Dir) watch(ctx context.Context, w *fsnotify.Watcher, publish func(*Input)) error {
	retry := time.NewTicker(d.retry())
	defer retry.Stop()
	var (
		dirty   = map[string]bool{}
		full    bool
		timer   *time.Timer
		fire    <-chan time.Time
		pending time.Time
		// inPlace is set when an event of the burst was not a file moved into place:
		// the burst then waits the debounce.
		inPlace bool
	)
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if !d.concerns(ev, dirty, &full) {
				continue
			}
			inPlace = inPlace || !movedIn(ev)
			now := time.Now()
			if fire == nil {
				pending = now
			}
			delay := d.debounce()
			if !inPlace && !full {
				delay = min(delay, movedDelay)
			}
			if rest := maxDelay - now.Sub(pending); rest < delay {
				delay = max(rest, 0)
			}
			if timer == nil {
				timer = time.NewTimer(delay)
			} else {
				timer.Reset(delay)
			}
			fire = timer.C
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			// An overflow loses events: read everything to be sure.
			d.Log.Warn().Err(err).Str("dir", d.Path).Msg("resources: watch error; reading the whole directory")
			full, fire = true, time.After(0)
		case <-retry.C:
			if d.dirErr == nil && d.watching {
				continue
			}
			full, fire = true, time.After(0)
		case <-fire:
			fire = nil
			if full || d.dirErr != nil || !d.watching {
				dirty = nil
			}
			wasBroken := d.dirErr != nil || !d.watching
			changes, all, err := d.scan(dirty)
			if err == nil && wasBroken {
				d.addWatch(w)
				// Events between the scan and the new watch would be lost: read again.
				_, _, _ = d.scan(nil)
				all = true
			}
			dirty, full, inPlace = map[string]bool{}, false, false
			d.publishIfChanged(changes, all, publish)
		}
	}
}

// movedDelay is how long a burst of nothing but files moved into place waits for more
// of the same (a change written as several files, one rename each) before it is read.
const movedDelay = time.Millisecond

// movedIn says whether ev is a file moved into place by a rename the watcher saw both
// ends of (from a temporary file in the directory or its parent, as atomic writers
// do): its content was whole before it got its name, so it needs no debounce. Every
// other event may be one of several writes of a file written in place, or a removal an
// editor follows with a new file, and waits the debounce. fsnotify pairs a rename's two
// ends by their inotify cookie but names the old path only in the event's String; an
// event that does not read as one of its two forms counts as written in place.
func movedIn(ev fsnotify.Event) bool {
	if ev.Op != fsnotify.Create {
		return false
	}
	plain := fmt.Sprintf("%-13s %q", ev.Op.String(), ev.Name)
	s := ev.String()
	return s != plain && strings.HasPrefix(s, plain+" ← ")
}

// startWatch watches the directory and its parent.
func (d *Dir) startWatch() (*fsnotify.Watcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("source: watch %s: %w", d.Path, err)
	}
	parent := filepath.Dir(d.Path)
	if err := w.Add(parent); err != nil {
		// Not fatal: the directory's own watch and the retry ticker still work.
		d.Log.Warn().Err(err).Str("dir", parent).Msg("resources: cannot watch the parent folder")
	}
	d.addWatch(w)
	return w, nil
}

func (d *Dir) addWatch(w *fsnotify.Watcher) {
	if err := w.Add(d.Path); err != nil {
		d.watching = false
		return
	}
	d.watching = true
}

// concerns says whether ev may change the Input, recording in dirty the file to read
// again, or in full that the whole directory must be read.
func (d *Dir) concerns(ev fsnotify.Event, dirty map[string]bool, full *bool) bool {
	name := filepath.Clean(ev.Name)
	if name == d.Path {
		// The directory itself was removed, renamed, re-created or changed mode.
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			d.watching = false
		}
		*full = true
		return true
	}
	if filepath.Dir(name) != d.Path {
		return false // another entry of the parent folder
	}
	base := filepath.Base(name)
	if isResourceFile(base) {
		if dirty != nil {
			dirty[name] = true
		}
		return true
	}
	// Anything else in the directory (a Kubernetes ..data swap, a symlinked folder)
	// may change what the YAML symlinks point at; with no symlinked YAML file it
	// changes nothing (an editor's backup or temporary file: reading tens of
	// thousands of files again for each would cost more than the edit).
	if len(d.linked) == 0 {
		return false
	}
	if strings.HasPrefix(base, "..") || !strings.HasPrefix(base, ".") {
		*full = true
		return true
	}
	return false
}
