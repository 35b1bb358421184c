// Package devloop is the plugin author's live loop behind `gatehouse dev --plugin-module`:
// it watches a plugin module's sources, builds the module on every save as `gatehouse
// plugin build` does, checks each build as the server will, and publishes the builds
// that pass into the plugin folder a server watches. A build or check that fails is
// shown once and publishes nothing, so the last good build keeps serving.
package devloop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/build"
	"gatehouse.dev/gatehouse/loader"
)

// StageDir is where a Loop builds, inside the plugin folder so that publishing a build
// is a rename on one file system. The extauth watcher skips names that start with a dot.
const StageDir = ".gatehouse-dev-build"

// Options say which module to build into which plugin folder.
type Options struct {
	Log zerolog.Logger
	// Module is the plugin module's folder (holding go.mod).
	Module string
	// PluginDir is the folder the server loads plugins from.
	PluginDir string
	// GatehouseSrc is the gatehouse checkout to build against (build.Options.GatehouseSrc).
	GatehouseSrc string
	// Symbol is the exported symbol the trial load looks up.
	Symbol string
	// Describe renders the diagnosis of a build the server would refuse, for the log.
	Describe func(*loader.Diagnosis) string
	// Contract is the server's the module is built and checked for; nil means this
	// binary's (loader.HostContract).
	Contract *loader.Contract
	// Trial runs the trial loads; its zero value re-executes this binary. A spare child
	// is started for each build unless Trial.Spare is set.
	Trial loader.TrialRunner
}

// Loop builds one plugin module, checks each build (pre-flight, trial load in a child
// process) and renames the builds that pass into the plugin folder, where the server
// loads each beside the versions before.
type Loop struct {
	o     Options
	dir   string // the module, absolute
	rb    *build.Rebuilder
	check *checker

	built     sources // what the last build started from
	shown     string  // the failure shown last, so the same one is not shown again
	published string  // the plugin file last published, if any

	mu      sync.Mutex
	checked map[string]bool // sha256 + " " + symbol of every build that passed its trial load
}

// New prepares to build o.Module into o.PluginDir; nothing is built until Rebuild or Run.
func New(o Options) (*Loop, error) {
	abs, err := filepath.Abs(o.Module)
	if err != nil {
		return nil, fmt.Errorf("--plugin-module: %w", err)
	}
	if _, err := os.Stat(filepath.Join(abs, "go.mod")); err != nil {
		return nil, fmt.Errorf("--plugin-module %s: no go.mod there; pass the plugin module's folder (create one with `gatehouse plugin new NAME`)", o.Module)
	}
	stage := filepath.Join(o.PluginDir, StageDir)
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return nil, fmt.Errorf("--plugin-module builds into the plugin folder: %w; pass --plugin-dir with a folder you can write", err)
	}
	if o.Describe == nil {
		o.Describe = func(d *loader.Diagnosis) string { return d.Err().Error() }
	}
	// A save serves sooner with no DWARF, a faster external linker, and the last
	// build's compile and link replayed when only code changed; none changes what the
	// server checks.
	linker := build.FastLinker(context.Background(), "")
	o.Log.Info().Str("linker", orDefault(linker, "the C compiler's default")).Msg("plugin builds link without debug information")
	return &Loop{
		o: o, dir: abs,
		rb: &build.Rebuilder{Options: build.Options{Module: abs, Out: stage, GatehouseSrc: o.GatehouseSrc,
			Contract: o.Contract, OmitDWARF: true, Linker: linker, Replay: true, Log: notes{o.Log}}},
		check: newChecker(o.Contract, o.Trial, o.Symbol),
	}, nil
}

// TrialPassed reports a build this Loop published after its trial load passed, so that
// a server in the same binary need not trial-load it again (loader.Options.TrialPassed).
func (l *Loop) TrialPassed(sha256, symbol string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checked[sha256+" "+symbol]
}

// Close ends the waiting trial child and removes the build folder and the builder's
// temporary files.
func (l *Loop) Close() {
	l.check.close()
	_ = l.rb.Close()
	_ = os.RemoveAll(filepath.Join(l.o.PluginDir, StageDir))
}

// Rebuild builds, checks and publishes the module unless its sources are those of the
// last build. why says what changed, for the log.
func (l *Loop) Rebuild(ctx context.Context, why string) {
	before, err := readSources(l.dir)
	if err != nil {
		l.fail("reading the plugin module", err.Error())
		return
	}
	if before.same(l.built, l.shown != "") {
		return
	}
	start := time.Now()
	ev := l.o.Log.Info().Str("module", l.dir)
	if why != "" {
		ev = ev.Str("changed", why)
	}
	ev.Msg("building the plugin module")
	if err := l.check.prepare(); err != nil {
		l.o.Log.Warn().Err(err).Msg("no trial child started ahead; the check starts one")
	}
	res, err := l.rb.Build(ctx)
	built := time.Now()
	// The build tidies and pins go.mod and go.sum: what it left there is what it built,
	// so its own edits do not start another build. Code is taken from before the build:
	// a save during the build is built next.
	after, _ := readSources(l.dir)
	l.built = sources{code: before.code, tests: before.tests, mod: after.mod}
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		l.fail("plugin build failed", buildOutput(err))
		return
	}
	d, preflight := l.check.check(ctx, res.Path, after.mod)
	if ctx.Err() != nil {
		return
	}
	if !d.OK {
		l.fail("plugin built but would not load", strings.TrimSpace(l.o.Describe(d)))
		return
	}
	l.publish(res.Path, d.Trial != nil, preflight, times{build: built.Sub(start), check: time.Since(built), all: time.Since(start), replayed: res.Replayed})
}

// times is how long a build, its check and both took.
type times struct {
	build, check, all time.Duration
	replayed          bool // the build replayed the last compile and link
}

// publish renames the checked build into the plugin folder, where the server's watcher
// sees it appear whole.
func (l *Loop) publish(built string, trialPassed, preflight bool, took times) {
	dst := filepath.Join(l.o.PluginDir, filepath.Base(built))
	if trialPassed {
		data, err := os.ReadFile(built)
		if err != nil {
			l.fail("publishing the plugin", err.Error())
			return
		}
		sum := sha256.Sum256(data)
		l.mu.Lock()
		if l.checked == nil {
			l.checked = map[string]bool{}
		}
		l.checked[hex.EncodeToString(sum[:])+" "+l.o.Symbol] = true
		l.mu.Unlock()
	}
	if err := os.Rename(built, dst); err != nil {
		l.fail("publishing the plugin", err.Error())
		return
	}
	l.shown, l.published = "", dst
	pre := "kept: go.mod, go.sum and the toolchain are those of the last build that passed"
	if preflight {
		pre = "ran"
	}
	compiled := "go build"
	if took.replayed {
		compiled = "replayed: only code changed since the last go build"
	}
	l.o.Log.Info().Str("module", l.dir).Str("file", dst).Str("took", took.all.Round(time.Millisecond).String()).
		Str("build", took.build.Round(time.Millisecond).String()).Str("check", took.check.Round(time.Millisecond).String()).
		Str("preflight", pre).Str("compiled", compiled).Msg("plugin built and checked; extauth loads it now")
}

// fail shows a failure once: the same failure again (another save that does not fix
// it) is one short line.
func (l *Loop) fail(what, detail string) {
	keeps := "nothing is published until a build succeeds"
	if l.published != "" {
		keeps = "the last good build keeps serving"
	}
	if what+detail == l.shown {
		l.o.Log.Error().Str("module", l.dir).Msg(what + " again, as shown above; " + keeps)
		return
	}
	l.shown = what + detail
	l.o.Log.Error().Str("module", l.dir).Str("error", detail).Msg(what + "; " + keeps)
}

// buildOutput is what a failed build says, without the go command line around it:
// the compiler's messages, relative to the module.
func buildOutput(err error) string {
	var ce *build.CommandError
	if !errors.As(err, &ce) || ce.Stderr == "" {
		return err.Error()
	}
	var lines []string
	for _, l := range strings.Split(ce.Stderr, "\n") {
		if !strings.HasPrefix(l, "# ") { // "# command-line-arguments": the package heading
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

func orDefault(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

// notes shows the build's notes (a pin tidy undid, a linker given up) in the log and
// drops the go commands it lists.
type notes struct{ log zerolog.Logger }

func (n notes) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSpace(string(p)), "\n") {
		if msg, ok := strings.CutPrefix(line, "note: "); ok {
			n.log.Warn().Msg(msg)
		}
	}
	return len(p), nil
}
