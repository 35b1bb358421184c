// Package filesource feeds the extauth server from YAML on disk, for people who run it
// without the control plane. It watches the file or folder and applies every good edit.
package filesource

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

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
	// Problem, when set, is told why the files cannot be applied (a bad document,
	// the folder gone) each time a read fails, and nil each time one succeeds, so
	// the server can show that a reload is blocked and not only log it.
	Problem func(error)

	last       [sha256.Size]byte
	subfolders []string // the ignored subfolders last warned about
}

// Load reads Path once and applies it. A decode error is returned and nothing is applied.
func (s *Source) Load() error {
	data, set, err := s.read()
	if err != nil {
		s.report(err)
		return err
	}
	s.last = sha256.Sum256(data)
	s.Apply(set)
	s.report(nil)
	return nil
}

func (s *Source) report(err error) {
	if s.Problem != nil {
		s.Problem(err)
	}
}

// read returns a digest of the files (to detect real changes) and the set. The digest
// is taken first: a file changing in between then reads as changed next time, where
// the other order would record the new content as applied while the old set serves.
func (s *Source) read() ([]byte, *apiv1.Set, error) {
	fi, err := os.Stat(s.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("resources: %w", err)
	}
	h := sha256.New()
	files := []string{s.Path}
	if fi.IsDir() {
		files = files[:0]
		entries, err := os.ReadDir(s.Path)
		if err != nil {
			return nil, nil, fmt.Errorf("resources: %w", err)
		}
		var subfolders []string
		for _, e := range entries {
			f := filepath.Join(s.Path, e.Name())
			// apiv1.Load skips hidden files and folders, and reads no subfolder.
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			fi, err := os.Stat(f)
			switch {
			case err != nil:
			case fi.IsDir():
				subfolders = append(subfolders, e.Name())
			case filepath.Ext(f) == ".yaml" || filepath.Ext(f) == ".yml":
				files = append(files, f)
			}
		}
		s.warnSubfolders(subfolders)
	}
	for _, f := range files {
		b, err := apiv1.ReadFile(f, nil)
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

// warnSubfolders says, once per change, that subfolders are not read: resources put
// there would otherwise be ignored without a word.
func (s *Source) warnSubfolders(names []string) {
	if slices.Equal(names, s.subfolders) {
		return
	}
	s.subfolders = names
	if len(names) > 0 {
		s.Log.Warn().Str("path", s.Path).Strs("subfolders", names).
			Msg("subfolders of the config folder are not read; put resource files in the folder itself")
	}
}

func (s *Source) reload() {
	data, set, err := s.read()
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(s.Path); errors.Is(serr, os.ErrNotExist) {
			err = fmt.Errorf("%s is gone; the previous config keeps serving until it is back", s.Path)
		}
	}
	if err != nil {
		s.Log.Error().Err(err).Str("path", s.Path).Msg("config not reloaded; the previous config keeps serving")
		s.report(err)
		return
	}
	sum := sha256.Sum256(data)
	if sum == s.last {
		s.Log.Debug().Str("path", s.Path).Msg("config unchanged; not applied again")
		s.report(nil)
		return
	}
	s.last = sum
	s.Log.Info().Str("path", s.Path).Msg("config reloaded")
	s.Apply(set)
	s.report(nil)
}
