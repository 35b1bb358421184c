// Package state keeps what the control plane serves across its restarts: after each
// run, the serving version of every resource is written to a state file, and at the
// next start it is the sources' and the validator's Memory. A resource that became
// invalid while the control plane was down then serves its last accepted version and
// is reported Rejected, exactly as after a live edit; a file that no longer decodes
// keeps its resources; a duplicate keeps the definition that served.
//
// The file holds Secrets, so it is written with mode 0600, atomically (a temporary file
// renamed over it), and never logged.
package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"gatehouse.dev/gatehouse/controlplane/source"
)

// format names the layout of a state file; a file of another format is ignored.
const format = "gatehouse.dev/controlplane-state/v1"

// header is a state file's first line.
type header struct {
	Format  string    `json:"format"`
	Source  string    `json:"source"`
	Written time.Time `json:"written"`
	Count   int       `json:"count"`
}

// line is one resource: its key and where it was read from, and the resource as a
// document the decoders read (JSON is YAML).
type line struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// File is the origin's name within File.Root, when it is in it; Origin otherwise.
	File   string          `json:"file,omitempty"`
	Origin string          `json:"origin,omitempty"`
	Object json.RawMessage `json:"object"`
}

// File is a state file.
type File struct {
	Path string
	// Root, when set, is the resources directory: origins in it are kept by file name,
	// so the same directory named another way (relative, absolute) finds them again.
	Root string
	// Source names the source in the file's header (for a reader of the file).
	Source string

	mu    sync.Mutex
	lines map[*source.Resource][]byte // the last Save's lines: a resource is never modified
}

// DefaultPath is where the state of a resources directory is kept when no path is
// given: under $XDG_STATE_HOME (or ~/.local/state), named after the directory's
// absolute path, so two control planes reading two directories never share a file.
func DefaultPath(resources string) (string, error) {
	abs, err := filepath.Abs(resources)
	if err != nil {
		return "", err
	}
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no state directory: %w (set --state)", err)
		}
		base = filepath.Join(home, ".local", "state")
	}
	name := strings.Trim(strings.NewReplacer("/", "_", "\\", "_", ":", "_").Replace(abs), "_")
	return filepath.Join(base, "gatehouse", "controlplane", name+".state"), nil
}

// Load reads the file. A missing file is an empty Memory, not an error; a file that
// cannot be read or parsed is an error naming the file and line (never its content),
// and the caller goes on without a Memory.
func (f *File) Load() (*Memory, error) {
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return newMemory(nil), nil
	}
	if err != nil {
		return nil, fmt.Errorf("state file: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	var h header
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &h) != nil || h.Format != format {
		return nil, fmt.Errorf("state file %s: not a state file of format %s", f.Path, format)
	}
	lines := make([]line, 0, h.Count)
	for n := 2; sc.Scan(); n++ {
		var l line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("state file %s:%d: does not parse", f.Path, n)
		}
		if l.File != "" {
			l.Origin = filepath.Join(f.Root, l.File)
		}
		lines = append(lines, l)
	}
	if len(lines) != h.Count {
		return nil, fmt.Errorf("state file %s: %d resources, its header says %d (cut short?)", f.Path, len(lines), h.Count)
	}
	return newMemory(lines), nil
}

// Save replaces the file with rs, the serving versions in key order. A resource saved
// before (the same pointer) is written as its line of then, not encoded again. The
// lines go to the file as they come, never gathered into one buffer first.
func (f *File) Save(rs []*source.Resource) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	lines := make(map[*source.Resource][]byte, len(rs))
	for _, r := range rs {
		l, ok := f.lines[r]
		if !ok {
			var err error
			if l, err = f.line(r); err != nil {
				return err
			}
		}
		lines[r] = l
	}
	err := writeAtomicWith(f.Path, func(w io.Writer) error {
		if err := json.NewEncoder(w).Encode(header{Format: format, Source: f.Source, Written: time.Now().UTC(), Count: len(rs)}); err != nil {
			return err
		}
		for _, r := range rs {
			if _, err := w.Write(lines[r]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	f.lines = lines
	return nil
}

// line is r's line of the file, newline included.
func (f *File) line(r *source.Resource) ([]byte, error) {
	obj, err := json.Marshal(r.Object)
	if err != nil {
		return nil, fmt.Errorf("state file: %s: %w", r.Key(), err)
	}
	l := line{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Object: obj}
	root := ""
	if f.Root != "" {
		root = filepath.Clean(f.Root) + string(filepath.Separator)
	}
	if rel, ok := strings.CutPrefix(r.Origin, root); ok && root != "" && !strings.ContainsRune(rel, filepath.Separator) {
		l.File = rel
	} else {
		l.Origin = r.Origin
	}
	b, err := json.Marshal(&l)
	if err != nil {
		return nil, fmt.Errorf("state file: %s: %w", r.Key(), err)
	}
	return append(b, '\n'), nil
}

// writeAtomic writes data to path through a temporary file beside it, synced and
// renamed, so a reader (or a crash) sees the old file or the new one, never half.
func writeAtomic(path string, data []byte) error {
	return writeAtomicWith(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeAtomicWith is writeAtomic of what write writes (through a buffer).
func writeAtomicWith(path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("state file: %w", err)
	}
	bw := bufio.NewWriterSize(tmp, 64<<10)
	if err := write(bw); err != nil {
		tmp.Close()
		return fmt.Errorf("state file: %w", err)
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return fmt.Errorf("state file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("state file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("state file: %w", err)
	}
	return nil
}
