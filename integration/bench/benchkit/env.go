package benchkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Env is what every section of one run shares: the checkout, a scratch folder, the
// binaries built from the checkout, the processes started, and how to describe the run.
type Env struct {
	Root, Tmp string
	Bins      Binaries
	Procs     Procs
	Date      string // of the run, UTC
	Command   string // how the run was started
	CPUs      int
	CPUModel  string
	GoVersion string // the toolchain that built the servers, with GOOS/GOARCH
	ghz       string // found or installed on first use
}

// Binaries are what NewEnv builds into Tmp.
type Binaries struct {
	Gatehouse, Bare, PluginDir string
}

// NewEnv builds gatehouse, the required_header plugin and bareserver from the module
// the bench runs in, with the toolchain on PATH so the plugin matches its host.
func NewEnv(ctx context.Context, tmp string) (*Env, error) {
	root, err := ModuleRoot(ctx)
	if err != nil {
		return nil, err
	}
	out, err := Output(ctx, "", "go", "env", "GOVERSION", "GOOS", "GOARCH")
	if err != nil {
		return nil, err
	}
	f := append(strings.Fields(out), "", "", "")
	e := &Env{Root: root, Tmp: tmp, Date: time.Now().UTC().Format("2006-01-02"),
		Command: commandLine(os.Args[1:]),
		CPUs:    runtime.NumCPU(), CPUModel: cpuModel(), GoVersion: f[0] + " " + f[1] + "/" + f[2]}
	e.Bins = Binaries{Gatehouse: filepath.Join(tmp, "gatehouse"), Bare: filepath.Join(tmp, "bareserver"), PluginDir: filepath.Join(tmp, "plugins")}
	Progress("building gatehouse, the required_header plugin and bareserver")
	for _, args := range [][]string{
		{"build", "-o", e.Bins.Gatehouse, "./cmd/gatehouse"},
		{"build", "-buildmode=plugin", "-o", filepath.Join(e.Bins.PluginDir, "required_header.so"), "./plugins/required_header"},
		{"build", "-o", e.Bins.Bare, "./integration/bench/bareserver"},
	} {
		if _, err := Output(ctx, e.Root, "go", args...); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// ModuleRoot is the folder of the main module's go.mod.
func ModuleRoot(ctx context.Context) (string, error) {
	out, err := Output(ctx, "", "go", "env", "GOMOD")
	if mod := strings.TrimSpace(out); err != nil || mod == "" || mod == os.DevNull {
		return "", errors.Join(errors.New("not inside the gatehouse module: run from the repository"), err)
	}
	return filepath.Dir(strings.TrimSpace(out)), nil
}

// commandLine is how the run was started, for the report, without the flags that only
// say where its output goes.
func commandLine(args []string) string {
	out := []string{"go", "run", "./integration/bench"}
	for i := 0; i < len(args); i++ {
		switch a := strings.TrimLeft(args[i], "-"); {
		case a == "file" || a == "results":
			i++ // and its value
		case !strings.HasPrefix(a, "file=") && !strings.HasPrefix(a, "results="):
			out = append(out, args[i])
		}
	}
	return strings.Join(out, " ")
}

// Measured is the line that opens every section: when, where, with what.
func (e *Env) Measured(more string) string {
	return fmt.Sprintf("Measured %s on %d CPUs (%s), %s%s, with `%s`.\n\n", e.Date, e.CPUs, e.CPUModel, e.GoVersion, more, e.Command)
}

// MeasuredGhz is Measured for a section that loads with ghz: its version goes first.
func (e *Env) MeasuredGhz(ctx context.Context, more string) (string, error) {
	_, version, err := e.Ghz(ctx)
	return e.Measured(", ghz " + version + more), err
}

// Result is what section s of this run found.
func (e *Env) Result(s Section, goals []Goal, markdown string) Result {
	return Result{Section: s.Name, Date: e.Date, Command: e.Command, Goals: goals, Markdown: markdown}
}

// ghzModule is the load generator, installed when missing.
const ghzModule = "github.com/bojand/ghz/cmd/ghz@v0.93.0"

// Ghz returns ghz from PATH or where `go install` puts it, installing it there when it
// is in neither, and the module version it was built from.
func (e *Env) Ghz(ctx context.Context) (path, version string, err error) {
	if e.ghz == "" {
		if e.ghz, err = findGhz(ctx, e.Tmp); err != nil {
			return "", "", err
		}
	}
	// A `go install`ed ghz reports "dev" to --version: the binary's build info knows.
	out, err := Output(ctx, "", "go", "version", "-m", e.ghz)
	if err != nil {
		return "", "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/bojand/ghz" {
			return e.ghz, f[2], nil
		}
	}
	return e.ghz, "(unknown version)", nil
}

func findGhz(ctx context.Context, dir string) (string, error) {
	if p, err := exec.LookPath("ghz"); err == nil {
		return p, nil
	}
	out, err := Output(ctx, "", "go", "env", "GOBIN", "GOPATH")
	if err != nil {
		return "", err
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 2 {
		return "", fmt.Errorf("go env GOBIN GOPATH: unexpected output %q", out)
	}
	bin := strings.TrimSpace(lines[0])
	if gopath := filepath.SplitList(strings.TrimSpace(lines[1])); bin == "" && len(gopath) > 0 && gopath[0] != "" {
		bin = filepath.Join(gopath[0], "bin")
	} else if bin == "" {
		return "", errors.New("go env GOPATH is empty: set GOPATH or GOBIN")
	}
	p := filepath.Join(bin, "ghz")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	Progress("installing ghz: go install " + ghzModule)
	if _, err := Output(ctx, dir, "go", "install", ghzModule); err != nil {
		return "", fmt.Errorf("installing ghz: %w", err)
	}
	return p, nil
}
