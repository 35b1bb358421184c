// Package filesource feeds the extauth server from YAML on disk, for people who run it
// without the control plane. It watches the file or folder and applies every good edit.
package filesource

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/rs/zerolog"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// Debounce is how long the source waits after a change before reading, so an editor's
// or kubelet's burst of writes is read once.
const Debounce = 150 * time.Millisecond

// Source reads resources from Path.
type Source struct {
	Path string
	Log  zerolog.Logger
	// Apply receives every set that decoded without errors.
	Apply func(*apiv1.Set)

	last [sha256.Size]byte
}

// Load reads Path once and applies it. A decode error is returned and nothing is applied.
func (s *Source) Load() error {
	data, set, err := s.read()
	if err != nil {
		return err
	}
	s.last = sha256.Sum256(data)
	s.Apply(set)
	return nil
}

// read returns a digest of the files (to detect real changes) and the set. The digest
// is taken first: a file changing in between then reads as changed next time, where
// the other order would record the new content as applied while the old set serves.
func (s *Source) read() ([]byte, *apiv1.Set, error) {
	h := sha256.New()
	files := []string{s.Path}
	if fi, err := os.Stat(s.Path); err == nil && fi.IsDir() {
		files = files[:0]
		for _, pattern := range []string{"*.yaml", "*.yml"} {
			m, _ := filepath.Glob(filepath.Join(s.Path, pattern))
			for _, f := range m {
				// apiv1.Load skips hidden files and folders.
				if fi, err := os.Stat(f); err == nil && !fi.IsDir() && !strings.HasPrefix(filepath.Base(f), ".") {
					files = append(files, f)
				}
			}
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil && !os.IsNotExist(err) {
			return nil, nil, err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(b))
		h.Write(b)
	}
	set, err := apiv1.Load(s.Path)
	if err != nil {
		return nil, nil, err
	}
	return h.Sum(nil), set, nil
}

// Watch applies every change until ctx ends. A bad edit is logged and the previous good
// config keeps serving. The watch is on the folder (the file's folder for a file), so
// editors that replace files and Kubernetes' symlink swaps are both seen.
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
	if err := w.Add(dir); err != nil {
		return fmt.Errorf("filesource: watch %s: %w", dir, err)
	}
	var timer <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			s.Log.Debug().Str("event", ev.String()).Msg("config change seen")
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

func (s *Source) reload() {
	data, set, err := s.read()
	if err != nil {
		s.Log.Error().Err(err).Str("path", s.Path).Msg("config not reloaded; the previous config keeps serving")
		return
	}
	sum := sha256.Sum256(data)
	if sum == s.last {
		s.Log.Debug().Str("path", s.Path).Msg("config unchanged; not applied again")
		return
	}
	s.last = sum
	s.Log.Info().Str("path", s.Path).Msg("config reloaded")
	s.Apply(set)
}
