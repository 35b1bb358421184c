package build

import (
	"context"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Rebuilder builds one plugin module again and again: `gatehouse plugin build` builds
// once with it, `gatehouse dev --plugin-module` on every save. Preparing the module
// (go mod tidy and pinning it to the host's module versions, most of a build's time
// when only code changed) is done again only when go.mod or go.sum differ from what
// the last preparation left; otherwise a build lists the root package's files and
// compiles them, with the same flags and checks as the first.
type Rebuilder struct {
	Options

	b        *builder
	module   string            // the module path, from the last preparation
	prepared [sha256.Size]byte // go.mod and go.sum as the last preparation left them
}

// Build builds the module into r.Out. Result.Pins are the go.mod edits of this build's
// preparation; none when it did not prepare.
func (r *Rebuilder) Build(ctx context.Context) (*Result, error) {
	if r.b == nil {
		b, err := newBuilder(r.Options)
		if err != nil {
			return nil, err
		}
		r.b = b
	}
	var pins []Pin
	if sum, err := r.b.modSum(); err != nil || r.module == "" || sum != r.prepared {
		r.b.rp.close() // the module changed: what the last build captured may not hold
		r.b.rp = nil
		module, p, err := r.b.prepare(ctx)
		if err != nil {
			r.module = ""
			return nil, err
		}
		if r.prepared, err = r.b.modSum(); err != nil {
			return nil, err
		}
		r.module, pins = module, p
	}
	name := r.Name
	if name == "" {
		name = nameRE.ReplaceAllString(path.Base(r.module), "_")
	}
	out, err := r.b.compile(ctx, name)
	if err != nil {
		return nil, err
	}
	return &Result{Path: out, Pins: pins, Replayed: r.b.didReplay}, nil
}

// Close removes the Rebuilder's temporary files.
func (r *Rebuilder) Close() error {
	if r.b == nil {
		return nil
	}
	r.b.rp.close()
	r.b.rp = nil
	return os.RemoveAll(r.b.tmp)
}

// modSum hashes go.mod and go.sum (missing: empty).
func (b *builder) modSum() ([sha256.Size]byte, error) {
	h := sha256.New()
	for _, name := range []string{"go.mod", "go.sum"} {
		data, err := os.ReadFile(filepath.Join(b.dir, name))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return [sha256.Size]byte{}, err
		}
		h.Write(data)
		h.Write([]byte{0})
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum, nil
}
