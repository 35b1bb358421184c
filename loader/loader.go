// Package loader finds, checks and opens plugin .so files and turns a step's config
// into a running pluginapi.AuthService.
//
// A plugin file is opened in the serving process only after it passed a pre-flight
// (Preflight: its build information, package hashes and ELF headers against the host
// contract) and a trial load in a child process (TrialRunner), and only from a private
// copy named by its sha256, so a path is never opened twice and a loaded file is never
// overwritten. See docs/plugins.md for every message and its fix.
package loader

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"plugin"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/pluginapi"
)

// Options configure a Loader.
type Options struct {
	// PrivateDir holds the content-addressed copies that are opened. Empty means
	// $TMPDIR/gatehouse-plugins-<pid>.
	PrivateDir string
	// Trial runs the trial loads; its zero value re-executes this binary.
	Trial TrialRunner
	// Contract is what plugins are compared with; nil means HostContract().
	Contract *Contract
	// Warn, if set, is told the warnings of every plugin file that is opened.
	Warn func(file string, warnings []Finding)
	// Opened, if set, is told every plugin content this process opens, and how many
	// it has opened in all (LoadedVersions): none is ever unloaded.
	Opened func(file, sha256 string, versions int)
	// TrialPassed, if set, reports content (by sha256) that this process has already
	// trial-loaded with symbol, in a child of this same binary: its trial load is not
	// run again (the pre-flight still is). `gatehouse dev --plugin-module` checks each
	// build before it publishes it into the folder its extauth loads from.
	TrialPassed func(sha256, symbol string) bool
	// Log reports the life of process-isolated workers (StartWorker).
	Log zerolog.Logger
}

// Loader opens plugins from one directory.
type Loader struct {
	dir   string
	opts  Options
	check Checker

	mu       sync.Mutex
	refused  map[string]error     // by sha256: content that will never load here
	inflight map[string]chan bool // by sha256: checks under way
	trialled map[trialKey]bool    // trial loads that passed ahead of an Open (TrialAhead)
	// failedAhead are trial loads that failed ahead of an Open, each for the next Open.
	failedAhead map[trialKey]trialOutcomeOf

	preparing sync.Mutex // one TrialAheadInBackground batch at a time

	sums sums // content hash by file identity

	lockOnce sync.Once
	lock     *os.File // the private directory's lock, held while the process lives
	lockErr  error
	// dirMu orders the private directory's making with Close, after which it is not
	// made again (a trial ahead of use may still be under way then).
	dirMu  sync.Mutex
	closed bool
}

// opened is a plugin this process opened.
type opened struct {
	p                           *plugin.Plugin
	file, sum, pluginPath, copy string
}

type pkgOwner struct{ hash, file string }

// loaded is what this process has opened, shared by every Loader in it, because the
// runtime's table of plugins is per process: a plugin path, or a package the host lacks,
// is taken for the whole process by the first plugin that brings it.
var loaded = struct {
	mu       sync.Mutex
	open     sync.Mutex          // plugin.Open is one at a time
	byHash   map[string]*opened  // by sha256 of the content
	byPath   map[string]*opened  // by plugin path
	poisoned map[string]error    // by plugin path: a plugin.Open that failed here
	pkgs     map[string]pkgOwner // packages the host lacks, brought by opened plugins
}{byHash: map[string]*opened{}, byPath: map[string]*opened{}, poisoned: map[string]error{}, pkgs: map[string]pkgOwner{}}

// New returns a Loader for the plugin directory dir with default Options.
func New(dir string) *Loader { return NewWithOptions(dir, Options{}) }

// NewWithOptions returns a Loader for the plugin directory dir.
func NewWithOptions(dir string, o Options) *Loader {
	if o.PrivateDir == "" {
		o.PrivateDir = filepath.Join(os.TempDir(), fmt.Sprintf("%s%d", privatePrefix, os.Getpid()))
	}
	if o.Contract == nil {
		// Read once per process, and read now: the package hashes of this binary take
		// tens of milliseconds that the first plugin to appear would otherwise wait for.
		go func() { _, _ = HostContract() }()
	}
	return &Loader{
		dir: dir, opts: o, check: Checker{Contract: o.Contract, Trial: o.Trial},
		refused: map[string]error{}, inflight: map[string]chan bool{}, trialled: map[trialKey]bool{}, failedAhead: map[trialKey]trialOutcomeOf{},
	}
}

// Dir is the plugin directory.
func (l *Loader) Dir() string { return l.dir }

// Path returns the path of file inside the plugin directory, refusing names that
// would leave it.
func (l *Loader) Path(file string) (string, error) {
	if file == "" || file != filepath.Base(file) || file == "." || file == ".." || strings.ContainsRune(file, os.PathSeparator) {
		return "", fmt.Errorf("loader: plugin file name %q must be a plain file name inside %s", file, l.dir)
	}
	return filepath.Join(l.dir, file), nil
}

// Open returns the ExtAuthPlugin that file exports as symbol. The file's current
// content is what counts: content already opened is returned without opening anything;
// new content is checked and opened from its private copy. A refusal is an *Error
// holding every reason. Nothing is ever unloaded: when a file changes into something
// that cannot be loaded beside its old version, Open fails and whatever was built from
// the old version keeps serving.
func (l *Loader) Open(file, symbol string) (pluginapi.ExtAuthPlugin, error) {
	path, err := l.Path(file)
	if err != nil {
		return nil, err
	}
	// Content already opened and known by the file's identity needs no read.
	before, statErr := os.Stat(path)
	id, idOK := fileID{}, false
	if statErr == nil {
		id, idOK = idOf(before)
	}
	if sum, ok := l.sums.get(path, id); idOK && ok {
		if o := openedContent(sum); o != nil {
			return Lookup(o.p, path, symbol)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("loader: %s: no such plugin file; is the plugin image's init container copying it into %s?", path, l.dir)
		}
		return nil, fmt.Errorf("loader: %w", err)
	}
	raw := sha256.Sum256(data)
	sum := hex.EncodeToString(raw[:])
	// Remembered only when the file did not change while it was read.
	if after, err := os.Stat(path); idOK && err == nil {
		if id2, ok := idOf(after); ok && id2 == id {
			l.sums.put(path, id, sum)
		}
	}
	o, err := l.openContent(path, sum, data, symbol)
	if err != nil {
		return nil, err
	}
	return Lookup(o.p, path, symbol)
}

// Close removes the private copies. Plugins stay loaded: a process cannot unload them.
// Content opened from them is still returned by every Loader; content not opened yet
// no longer is, and the private folder is not made again (by a trial ahead of use still
// under way, say).
func (l *Loader) Close() error {
	l.dirMu.Lock()
	defer l.dirMu.Unlock()
	l.closed = true
	return os.RemoveAll(l.opts.PrivateDir)
}

func (l *Loader) openContent(path, sum string, data []byte, symbol string) (*opened, error) {
	for {
		if o := openedContent(sum); o != nil {
			return o, nil
		}
		l.mu.Lock()
		if err := l.refused[sum]; err != nil {
			l.mu.Unlock()
			return nil, forFile(err, path)
		}
		l.mu.Unlock()
		if l.beginContent(sum) {
			break
		}
	}
	defer l.endContent(sum)
	defer l.startSpare()
	return l.checkAndOpen(path, sum, data, symbol)
}

// beginContent takes content sum for checks, or waits until whoever holds it is done
// and returns false (the caller looks again at what is known of it).
func (l *Loader) beginContent(sum string) bool {
	l.mu.Lock()
	wait, busy := l.inflight[sum]
	if !busy {
		l.inflight[sum] = make(chan bool)
		l.mu.Unlock()
		return true
	}
	l.mu.Unlock()
	<-wait
	return false
}

// endContent lets go of content sum.
func (l *Loader) endContent(sum string) {
	l.mu.Lock()
	close(l.inflight[sum])
	delete(l.inflight, sum)
	l.mu.Unlock()
}

// startSpare starts the next spare trial-load child, if the trial runner keeps one,
// once a plugin was checked and opened: not beside the trial and the open, whose CPU
// it would take on a small machine.
func (l *Loader) startSpare() {
	if s := l.opts.Trial.Spare; s != nil {
		go func() {
			if err := s.Refill(l.opts.Trial); err != nil {
				l.opts.Log.Warn().Err(err).Msg("no spare trial-load child: the next plugin change starts its own, which takes longer")
			}
		}()
	}
}

// forFile is a refusal remembered by content, said about path: the file asked for,
// not the file where the same bytes were first seen.
func forFile(err error, path string) error {
	var e *Error
	if errors.As(err, &e) && e.File != path {
		c := *e
		c.File = path
		return &c
	}
	return err
}

// openedContent is the plugin opened from content sum in this process, if any.
func openedContent(sum string) *opened {
	loaded.mu.Lock()
	defer loaded.mu.Unlock()
	return loaded.byHash[sum]
}
