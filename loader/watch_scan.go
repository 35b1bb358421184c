package loader

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// dirEntry is what the Watcher knows of one plugin file.
type dirEntry struct {
	id  fileID
	sum [sha256.Size]byte
	// incomplete says why the file looks like a copy in progress; empty when it does not.
	incomplete string
	// reusable: the file's identity is old enough that a later write would change it,
	// so its hash can be reused while the identity stays the same.
	reusable bool
}

// racyWindow is how old a file's change time must be before its hash is reused by
// identity: timestamps are coarse (a clock tick), so a file rewritten with the same
// size within a tick of being hashed would keep its identity. Like git's racily-clean
// entries, younger files are hashed again on every look.
const racyWindow = time.Second

// scan looks at every .so in the directory, hashing those it cannot reuse; unreadable
// files are left out (and reported by the load that follows, if anything uses them).
func (w *Watcher) scan() map[string]dirEntry {
	out := map[string]dirEntry{}
	entries, err := os.ReadDir(w.Dir)
	if err != nil {
		w.Log.Error().Err(err).Str("dir", w.Dir).Msg("reading the plugin directory")
		return out
	}
	start := time.Now()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".so") || strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(w.Dir, name)
		fi, err := os.Stat(path) // follows symlinks
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		id, idOK := idOf(fi)
		if old, ok := w.files[name]; ok && idOK && old.reusable && old.id == id {
			out[name] = old
			continue
		}
		entry, err := readEntry(path)
		if err != nil {
			continue
		}
		if after, err := os.Stat(path); err == nil && idOK {
			id2, ok := idOf(after)
			entry.id = id2
			entry.reusable = ok && id2 == id && start.Sub(time.Unix(0, id.ctime)) > racyWindow
		}
		out[name] = entry
	}
	w.files = out
	return out
}

// readEntry hashes path and tells whether it looks complete.
func readEntry(path string) (dirEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return dirEntry{}, err
	}
	e := dirEntry{sum: sha256.Sum256(data)}
	switch {
	case len(data) == 0:
		e.incomplete = "empty"
	case bytes.HasPrefix([]byte(elf.ELFMAG), data) || bytes.HasPrefix(data, []byte(elf.ELFMAG)):
		// An ELF file (or the start of one) shorter than its headers say is still being
		// written. Anything else is left for the load to name.
		if err := headerExtent(data, int64(len(data))); err != nil {
			e.incomplete = err.Error()
		}
	}
	return e, nil
}
