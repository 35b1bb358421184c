package filesource

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch applies every change until ctx ends, and after Load any change made since. A bad edit is logged and reported, and
// the previous good config keeps serving. The watch is on the folder (the file's
// folder for a file), so editors that replace files and Kubernetes' symlink swaps are
// both seen, and on that folder's parent, so a folder deleted and created again is
// watched again and read when it is back.
func (s *Source) Watch(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("filesource: %w", err)
	}
	defer w.Close()
	dir := s.Path
	if fi, err := os.Stat(s.Path); err == nil && !fi.IsDir() {
		dir = filepath.Dir(s.Path)
	}
	dir = filepath.Clean(dir)
	if err := w.Add(dir); err != nil {
		return fmt.Errorf("filesource: watch %s: %w", dir, err)
	}
	parent := filepath.Dir(dir)
	if parent == dir {
		parent = ""
	} else if err := w.Add(parent); err != nil {
		s.Log.Warn().Err(err).Str("path", parent).Msg("cannot watch the config folder's parent; if the folder is deleted and created again, restart to read it")
		parent = ""
	}
	var timer <-chan time.Time
	if s.last != ([sha256.Size]byte{}) {
		// A change made between Load and now sent no event: read once (unchanged files
		// are not applied again).
		timer = time.After(0)
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if parent != "" && filepath.Dir(ev.Name) == parent && ev.Name != dir {
				continue // a sibling of the config folder
			}
			s.Log.Debug().Str("event", ev.String()).Msg("config change seen")
			if ev.Name == dir {
				s.folderEvent(w, dir, ev)
			}
			timer = time.After(Debounce)
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			s.Log.Error().Err(err).Msg("watching config")
		case <-timer:
			timer = nil
			s.reload()
		}
	}
}

// folderEvent follows the config folder itself going and coming back.
func (s *Source) folderEvent(w *fsnotify.Watcher, dir string, ev fsnotify.Event) {
	switch {
	case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
		_ = w.Remove(dir) // gone already when the folder was deleted
		s.Log.Warn().Str("path", dir).Msg("config folder removed; the previous config keeps serving until it is back")
	case ev.Has(fsnotify.Create):
		if err := w.Add(dir); err != nil {
			s.Log.Error().Err(err).Str("path", dir).Msg("config folder is back but cannot be watched")
			return
		}
		s.Log.Info().Str("path", dir).Msg("config folder is back; watching it again")
	}
}
