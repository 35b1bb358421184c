package devloop

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

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
