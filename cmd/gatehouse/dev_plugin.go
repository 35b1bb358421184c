package main

import (
	"bytes"
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
)

// devStageDir is where `gatehouse dev --plugin-module` builds, inside the plugin folder
// so that publishing a build is a rename on one file system. The extauth watcher skips
// names that start with a dot.
const devStageDir = ".gatehouse-dev-build"

// pluginModule is `gatehouse dev --plugin-module`: it builds the plugin module with the
// code of `gatehouse plugin build` (the server's flags, pinned modules, a plugin path
// of its own for every build), checks the result as the server will (pre-flight, trial
// load in a child process), and only then renames it into the plugin folder that dev's
// extauth watches, which loads it beside the versions before. A build or check that
// fails is shown once and publishes nothing, so the last good version keeps serving.
type pluginModule struct {
	log       zerolog.Logger
	dir       string // the module, absolute
	pluginDir string
	symbol    string
	rb        *build.Rebuilder

	built     sources // what the last build started from
	shown     string  // the failure shown last, so the same one is not shown again
	published string  // the plugin file last published, if any

	mu      sync.Mutex
	checked map[string]bool // sha256 + " " + symbol of every build that passed its trial load
}

// trialPassed reports a build this dev published after its trial load passed, so that
// extauth (the same binary, in this process) need not trial-load it again: about 60 ms
// of every save (loader.Options.TrialPassed).
func (m *pluginModule) trialPassed(sha256, symbol string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.checked[sha256+" "+symbol]
}

// newPluginModule prepares to build the module dir into pluginDir.
func newPluginModule(log zerolog.Logger, dir, pluginDir, gatehouseSrc, symbol string) (*pluginModule, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("--plugin-module: %w", err)
	}
	if _, err := os.Stat(filepath.Join(abs, "go.mod")); err != nil {
		return nil, fmt.Errorf("--plugin-module %s: no go.mod there; pass the plugin module's folder (create one with `gatehouse plugin new NAME`)", dir)
	}
	stage := filepath.Join(pluginDir, devStageDir)
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return nil, fmt.Errorf("--plugin-module builds into the plugin folder: %w; pass --plugin-dir with a folder you can write", err)
	}
	return &pluginModule{
		log: log, dir: abs, pluginDir: pluginDir, symbol: symbol,
		rb: &build.Rebuilder{Options: build.Options{Module: abs, Out: stage, GatehouseSrc: gatehouseSrc, OmitDWARF: true}},
	}, nil
}

// close removes the build folder and the builder's temporary files.
func (m *pluginModule) close() {
	_ = m.rb.Close()
	_ = os.RemoveAll(filepath.Join(m.pluginDir, devStageDir))
}

// rebuild builds, checks and publishes the module unless its sources are those of the
// last build. why says what changed, for the log.
func (m *pluginModule) rebuild(ctx context.Context, why string) {
	before, err := readSources(m.dir)
	if err != nil {
		m.fail("reading the plugin module", err.Error())
		return
	}
	if before.same(m.built, m.shown != "") {
		return
	}
	start := time.Now()
	ev := m.log.Info().Str("module", m.dir)
	if why != "" {
		ev = ev.Str("changed", why)
	}
	ev.Msg("building the plugin module")
	var took buildTimes
	res, d, err := buildPlugin(ctx, m.rb, m.symbol, &took)
	// The build tidies and pins go.mod and go.sum: what it left there is what it built,
	// so its own edits do not start another build. Code is taken from before the build:
	// a save during the build is built next.
	after, _ := readSources(m.dir)
	m.built = sources{code: before.code, tests: before.tests, mod: after.mod}
	if ctx.Err() != nil {
		return
	}
	switch {
	case err != nil:
		m.fail("plugin build failed", buildOutput(err))
	case !d.OK:
		var b bytes.Buffer
		_ = printDiagnosis(&b, d, false)
		m.fail("plugin built but would not load", strings.TrimSpace(b.String()))
	default:
		m.publish(res.Path, d.Trial != nil, time.Since(start), took)
	}
}

// publish renames the checked build into the plugin folder, where extauth's watcher
// sees it appear whole.
func (m *pluginModule) publish(built string, trialPassed bool, took time.Duration, parts buildTimes) {
	dst := filepath.Join(m.pluginDir, filepath.Base(built))
	if trialPassed {
		data, err := os.ReadFile(built)
		if err != nil {
			m.fail("publishing the plugin", err.Error())
			return
		}
		sum := sha256.Sum256(data)
		m.mu.Lock()
		if m.checked == nil {
			m.checked = map[string]bool{}
		}
		m.checked[hex.EncodeToString(sum[:])+" "+m.symbol] = true
		m.mu.Unlock()
	}
	if err := os.Rename(built, dst); err != nil {
		m.fail("publishing the plugin", err.Error())
		return
	}
	m.shown, m.published = "", dst
	m.log.Info().Str("module", m.dir).Str("file", dst).Str("took", took.Round(time.Millisecond).String()).
		Str("build", parts.build.Round(time.Millisecond).String()).Str("check", parts.check.Round(time.Millisecond).String()).
		Msg("plugin built and checked; extauth loads it now")
}

// fail shows a failure once: the same failure again (another save that does not fix
// it) is one short line.
func (m *pluginModule) fail(what, detail string) {
	keeps := "nothing is published until a build succeeds"
	if m.published != "" {
		keeps = "the last good build keeps serving"
	}
	if what+detail == m.shown {
		m.log.Error().Str("module", m.dir).Msg(what + " again, as shown above; " + keeps)
		return
	}
	m.shown = what + detail
	m.log.Error().Str("module", m.dir).Str("error", detail).Msg(what + "; " + keeps)
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
