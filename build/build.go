// Package build is the plugin author's toolchain behind `gatehouse plugin build`: it
// pins a plugin module to the host's module versions (from the host contract), builds
// it with the host's flags and a plugin path unique to the build, and leaves checking
// the result to loader.Checker.
package build

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"gatehouse.dev/gatehouse/loader"
)

// Options say what to build and against which host.
type Options struct {
	// Module is the plugin module's directory (holding go.mod); its root package is the
	// plugin's main package.
	Module string
	// Out is the directory the .so is written to.
	Out string
	// Name is the file name without ".so"; empty means the last element of the module
	// path.
	Name string
	// GatehouseSrc, if set, is a Gatehouse source tree the plugin is built against: a
	// replace directive is added to the plugin's go.mod, and the build runs in a
	// workspace holding both modules, so that Gatehouse's packages compile exactly as
	// they did for the host (with -trimpath, a replaced module's files get other paths
	// than a main module's, which changes their hashes).
	GatehouseSrc string
	// Contract is the host's; nil means loader.HostContract().
	Contract *loader.Contract
	// OmitDWARF links without DWARF debug information (-ldflags=-w -compressdwarf=false),
	// which shortens the link. Nothing the loader compares depends on it (package hashes
	// and the plugin path come from compiling); `gatehouse dev --plugin-module` sets it so
	// a save serves sooner.
	OmitDWARF bool
	// Linker names the external linker the Go linker hands the plugin to
	// (-extldflags=-fuse-ld=NAME); empty leaves the C compiler's default. Like OmitDWARF
	// it changes nothing the loader compares; FastLinker picks one that links sooner.
	Linker string
	// Replay repeats the last build's compile and link when only the root package's
	// code changed since (see replayer), instead of a go build: what the go command
	// does besides them would come out the same. `gatehouse dev --plugin-module` sets
	// it.
	Replay bool
	// Go is the go command; empty means "go".
	Go string
	// Log receives each command as it runs; nil discards them.
	Log io.Writer
}

// Result is a finished build.
type Result struct {
	// Path is the plugin file written.
	Path string
	// Pins are the go.mod edits made.
	Pins []Pin
	// Replayed says the last build's compile and link were replayed (Options.Replay)
	// instead of a go build.
	Replayed bool
}

var nameRE = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// Build builds the plugin module o.Module for the host and writes it to o.Out.
func Build(ctx context.Context, o Options) (*Result, error) {
	r := &Rebuilder{Options: o}
	defer r.Close()
	return r.Build(ctx)
}

// prepare reads the module's go.mod, points it at the Gatehouse source tree if asked,
// tidies it and pins the modules it shares with the host. It returns the module path.
func (b *builder) prepare(ctx context.Context) (string, []Pin, error) {
	mod, err := b.goMod(ctx)
	if err != nil {
		return "", nil, err
	}
	if b.src != "" {
		if err := b.replaceGatehouse(ctx); err != nil {
			return "", nil, err
		}
		if b.work, err = b.workFile(); err != nil {
			return "", nil, err
		}
	}
	if err := b.gomod(ctx, "mod", "tidy"); err != nil {
		return "", nil, b.hint(err)
	}
	pins, err := b.pin(ctx)
	if err != nil {
		return "", nil, err
	}
	return mod.Module.Path, pins, nil
}

type builder struct {
	o        Options
	c        *loader.Contract
	dir, src string
	tmp      string
	work     string // go.work file, when building with a Gatehouse source tree
	log      io.Writer
	rp       *replayer // the last build's compile and link, with Options.Replay
	// didReplay says whether the last compile replayed rp.
	didReplay bool
}

func newBuilder(o Options) (*builder, error) {
	b := &builder{o: o, c: o.Contract, log: o.Log}
	if b.c == nil {
		c, err := loader.HostContract()
		if err != nil {
			return nil, err
		}
		b.c = c
	}
	if b.log == nil {
		b.log = io.Discard
	}
	if b.o.Go == "" {
		b.o.Go = "go"
	}
	var err error
	if b.dir, err = filepath.Abs(o.Module); err != nil {
		return nil, fmt.Errorf("plugin build: %w", err)
	}
	if _, err := os.Stat(filepath.Join(b.dir, "go.mod")); err != nil {
		return nil, fmt.Errorf("plugin build: %s has no go.mod; --module must be the plugin module's directory (create one with `go mod init example.com/myplugin`)", b.dir)
	}
	if o.GatehouseSrc != "" {
		if b.src, err = filepath.Abs(o.GatehouseSrc); err != nil {
			return nil, fmt.Errorf("plugin build: %w", err)
		}
	}
	if o.Out == "" {
		return nil, errors.New("plugin build: no output directory; pass --out DIR")
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("plugin build: %w", err)
	}
	if b.tmp, err = os.MkdirTemp("", "gatehouse-plugin-build-"); err != nil {
		return nil, fmt.Errorf("plugin build: %w", err)
	}
	return b, nil
}

// goModJSON is the part of `go mod edit -json` used here.
type goModJSON struct {
	Module struct{ Path string }
	Go     string
}

func (b *builder) goMod(ctx context.Context) (*goModJSON, error) {
	out, err := b.output(ctx, b.dir, b.env(false), "mod", "edit", "-json")
	if err != nil {
		return nil, err
	}
	var m goModJSON
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("plugin build: reading go.mod: %w", err)
	}
	return &m, nil
}
