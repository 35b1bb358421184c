// Package testbin builds and runs the real gatehouse binary and real plugins for
// end-to-end tests: same toolchain, same flags as `make build` and `make plugins`.
// It is also the one home of what those tests share around them: free loopback ports
// (ports.go), processes kept with their output, waits and polls (process.go), the
// admin endpoints and metrics (admin.go), gRPC connections (dial.go), resource files
// (resources.go) and the documents' console blocks (docs.go). Package harness starts
// the third-party parts (an OpenID provider, Redis) on top of it.
package testbin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Root is the repository root (the folder holding go.mod).
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("testbin: go.mod not found above the working directory")
		}
		dir = parent
	}
}

// Main runs a package's tests and then removes the folders this package built the
// gatehouse binary and plugins into. Every test package that uses testbin calls it:
//
//	func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }
//
// Without it each test process would leave the binary and plugins it built behind in
// the temporary folder.
func Main(m *testing.M) int { return Wrap(m.Run) }

// Wrap is Main for a package whose TestMain already has a runner of its own (an API
// server, say): it calls run and then removes the folders.
//
// It also points XDG_STATE_HOME, which every process started inherits, at a folder of
// its own, so a control plane's state file (written by default) never lands in the
// home folder of whoever runs the tests.
func Wrap(run func() int) int {
	temps.mu.Lock()
	temps.wrapped = true
	temps.mu.Unlock()
	defer removeTemps()
	if dir, err := tempDir("gatehouse-state-"); err == nil {
		_ = os.Setenv("XDG_STATE_HOME", dir)
	}
	return run()
}

// temps are the folders made by TempDir, removed when Main returns.
var temps struct {
	mu      sync.Mutex
	wrapped bool
	dirs    []string
}

// TempDir makes a folder that lives as long as the test process: for artifacts built
// once and shared by its tests. It fails the test when the package has no TestMain
// calling Main, since the folder would then never be removed.
func TempDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := tempDir(prefix)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func tempDir(prefix string) (string, error) {
	temps.mu.Lock()
	defer temps.mu.Unlock()
	if !temps.wrapped {
		return "", errors.New("testbin: this test package needs func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) } " +
			"so that what it builds is removed afterwards")
	}
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	temps.dirs = append(temps.dirs, dir)
	return dir, nil
}

func removeTemps() {
	temps.mu.Lock()
	defer temps.mu.Unlock()
	for _, dir := range temps.dirs {
		_ = os.RemoveAll(dir)
	}
	temps.dirs = nil
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Gatehouse builds the gatehouse binary once per test process and returns its path.
func Gatehouse(t testing.TB) string {
	t.Helper()
	root := Root(t)
	buildOnce.Do(func() {
		dir, err := tempDir("gatehouse-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "gatehouse")
		buildErr = goBuild(root, "-o", binPath, "./cmd/gatehouse")
	})
	if buildErr != nil {
		t.Fatalf("testbin: build gatehouse: %v", buildErr)
	}
	return binPath
}

// Plugin builds the plugin package pkg (a path relative to the repository root, such
// as "./plugins/required_header") into dir/name.
func Plugin(t testing.TB, pkg, dir, name string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	if err := goBuild(Root(t), "-buildmode=plugin", "-o", out, pkg); err != nil {
		t.Fatalf("testbin: build plugin %s: %v", pkg, err)
	}
	return out
}

// pluginDirs are the folders PluginDir built, by the packages built into them ("" for
// a build that failed).
var pluginDirs = struct {
	mu   sync.Mutex
	dirs map[string]string
}{dirs: map[string]string{}}

// PluginDir builds the plugin packages pkgs (paths relative to the repository root)
// once per test process into a folder of their own, each as <its last path
// element>.so, and returns that folder.
func PluginDir(t testing.TB, pkgs ...string) string {
	t.Helper()
	key := strings.Join(pkgs, " ")
	pluginDirs.mu.Lock()
	defer pluginDirs.mu.Unlock()
	if dir, ok := pluginDirs.dirs[key]; ok {
		if dir == "" {
			t.Fatalf("testbin: the plugins %s failed to build in an earlier test", key)
		}
		return dir
	}
	pluginDirs.dirs[key] = ""
	// Not "gatehouse-plugins-": extauth removes folders of that name as the plugin
	// copies of a server that is gone.
	dir := TempDir(t, "gatehouse-test-plugins-")
	for _, pkg := range pkgs {
		Plugin(t, pkg, dir, path.Base(pkg)+".so")
	}
	pluginDirs.dirs[key] = dir
	return dir
}

// SamplePlugins is the PluginDir of the sample plugin (required_header.so).
func SamplePlugins(t testing.TB) string {
	t.Helper()
	return PluginDir(t, "./plugins/required_header")
}

func goBuild(root string, args ...string) error {
	cmd := exec.Command("go", append([]string{"build"}, args...)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return nil
}
