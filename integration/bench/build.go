package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ghzModule is the load generator the issue names, installed when missing.
const ghzModule = "github.com/bojand/ghz/cmd/ghz@v0.93.0"

// binaries are what buildAll builds.
type binaries struct {
	gatehouse, bare, pluginDir string
}

// buildAll builds gatehouse, the required_header plugin and bareserver into dir with
// the toolchain on PATH, so the plugin matches the binary that loads it.
func buildAll(ctx context.Context, root, dir string) (binaries, error) {
	b := binaries{
		gatehouse: filepath.Join(dir, "gatehouse"),
		bare:      filepath.Join(dir, "bareserver"),
		pluginDir: filepath.Join(dir, "plugins"),
	}
	builds := [][]string{
		{"build", "-o", b.gatehouse, "./cmd/gatehouse"},
		{"build", "-buildmode=plugin", "-o", filepath.Join(b.pluginDir, "required_header.so"), "./plugins/required_header"},
		{"build", "-o", b.bare, "./integration/bench/bareserver"},
	}
	for _, args := range builds {
		if _, err := output(ctx, root, "go", args...); err != nil {
			return binaries{}, err
		}
	}
	return b, nil
}

// findGhz returns ghz from PATH, GOBIN or GOPATH/bin, installing it with `go install`
// when it is in none of them.
func findGhz(ctx context.Context, dir string) (string, error) {
	if p, err := exec.LookPath("ghz"); err == nil {
		return p, nil
	}
	bin, err := goBin(ctx)
	if err != nil {
		return "", err
	}
	p := filepath.Join(bin, "ghz")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	progress("installing ghz: go install " + ghzModule)
	if _, err := output(ctx, dir, "go", "install", ghzModule); err != nil {
		return "", fmt.Errorf("installing ghz: %w", err)
	}
	return p, nil
}

// goBin is where `go install` puts commands: GOBIN, or the first GOPATH entry's bin.
func goBin(ctx context.Context) (string, error) {
	out, err := output(ctx, "", "go", "env", "GOBIN", "GOPATH")
	if err != nil {
		return "", err
	}
	lines := strings.Split(out, "\n")
	if len(lines) < 2 {
		return "", fmt.Errorf("go env GOBIN GOPATH: unexpected output %q", out)
	}
	if gobin := strings.TrimSpace(lines[0]); gobin != "" {
		return gobin, nil
	}
	gopath := filepath.SplitList(strings.TrimSpace(lines[1]))
	if len(gopath) == 0 || gopath[0] == "" {
		return "", errors.New("go env GOPATH is empty: set GOPATH or GOBIN")
	}
	return filepath.Join(gopath[0], "bin"), nil
}

// ghzVersion is the module version ghz was built from, such as "v0.93.0", read
// from the binary because a `go install`ed ghz reports "dev" to --version.
func ghzVersion(ctx context.Context, ghz string) (string, error) {
	out, err := output(ctx, "", "go", "version", "-m", ghz)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "mod" && f[1] == "github.com/bojand/ghz" {
			return f[2], nil
		}
	}
	return "(unknown version)", nil
}
