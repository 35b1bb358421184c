package integration_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/loader"
)

// abiBuilds builds the test plugins of one TestPluginABI run, each once, at most two at
// a time (a build that recompiles the standard library with -race takes a minute on two
// cores; the Go build cache makes later runs fast).
type abiBuilds struct {
	root, out string
	slots     chan struct{}

	mu    sync.Mutex
	onces map[string]*abiOnce
}

type abiOnce struct {
	once sync.Once
	path string
	err  error
}

func newABIBuilds(t *testing.T) *abiBuilds {
	return &abiBuilds{root: testbin.Root(t), out: t.TempDir(), slots: make(chan struct{}, 2), onces: map[string]*abiOnce{}}
}

// abiPlugin is a plugin build: a package (relative to the repository root, or a module
// directory when dir is set), extra go build flags and environment.
type abiPlugin struct {
	name string   // output file name without .so; the cache key
	pkg  string   // package to build, relative to dir
	dir  string   // working directory; empty means the repository root
	args []string // extra go build flags
	env  []string // extra environment
}

// build returns the path of p's .so, building it the first time it is asked for.
func (b *abiBuilds) build(t *testing.T, p abiPlugin) string {
	t.Helper()
	b.mu.Lock()
	o := b.onces[p.name]
	if o == nil {
		o = &abiOnce{}
		b.onces[p.name] = o
	}
	b.mu.Unlock()
	o.once.Do(func() {
		b.slots <- struct{}{}
		defer func() { <-b.slots }()
		out := filepath.Join(b.out, p.name+".so")
		dir := b.root
		if p.dir != "" {
			dir = p.dir
		}
		args := append(append([]string{"build", "-buildmode=plugin"}, p.args...), "-o", out, p.pkg)
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), p.env...)
		if msg, err := cmd.CombinedOutput(); err != nil {
			o.err = errors.New(string(msg))
			return
		}
		o.path = out
	})
	if o.err != nil {
		t.Fatalf("building plugin %s: %v", p.name, o.err)
	}
	return o.path
}

// abiResult is a finished command.
type abiResult struct {
	stdout, stderr string
	code           int
}

// run runs bin with args in dir and returns what it printed and its exit status.
func abiRun(t *testing.T, dir string, env []string, bin string, args ...string) abiResult {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running %s %v: %v", bin, args, err)
	}
	return abiResult{stdout: stdout.String(), stderr: stderr.String(), code: code}
}

// abiContract is the contract of the gatehouse binary under test, as printed by
// `gatehouse plugin contract`.
func abiContract(t *testing.T, gatehouse string) *loader.Contract {
	t.Helper()
	r := abiRun(t, "", nil, gatehouse, "plugin", "contract")
	if r.code != 0 {
		t.Fatalf("gatehouse plugin contract: exit %d: %s", r.code, r.stderr)
	}
	var c loader.Contract
	if err := json.Unmarshal([]byte(r.stdout), &c); err != nil {
		t.Fatalf("gatehouse plugin contract printed no contract: %v\n%s", err, r.stdout)
	}
	return &c
}

// abiCopyDir copies the files of src (one level) to a new temporary directory.
func abiCopyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		abiWrite(t, filepath.Join(dst, e.Name()), string(data))
	}
	return dst
}

func abiWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// abiFirstLines is the first n lines of s.
func abiFirstLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "")
}
