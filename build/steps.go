package build

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	gobuild "go/build"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"gatehouse.dev/gatehouse/loader"
)

func (b *builder) replaceGatehouse(ctx context.Context) error {
	out, err := b.output(ctx, b.src, b.env(false), "mod", "edit", "-json")
	if err != nil {
		return fmt.Errorf("plugin build: --gatehouse-src %s: %w", b.src, err)
	}
	var m goModJSON
	if err := json.Unmarshal(out, &m); err != nil || m.Module.Path != loader.GatehouseModule {
		return fmt.Errorf("plugin build: --gatehouse-src %s is not a checkout of %s (its go.mod says %q)", b.src, loader.GatehouseModule, m.Module.Path)
	}
	return b.gomod(ctx, "mod", "edit", "-replace="+loader.GatehouseModule+"="+b.src)
}

// pin brings shared modules to the host's versions, then tidies. A pin that tidy undoes
// (another requirement needs a newer version) is left for the pre-flight to judge: it
// matters only if the plugin links a package of that module.
func (b *builder) pin(ctx context.Context) ([]Pin, error) {
	list, err := b.buildList(ctx)
	if err != nil {
		return nil, err
	}
	pins := Pins(b.c, list, b.src != "")
	if len(pins) == 0 {
		return nil, nil
	}
	args := []string{"mod", "edit"}
	for _, p := range pins {
		args = append(args, p.Arg())
	}
	if err := b.gomod(ctx, args...); err != nil {
		return nil, err
	}
	if err := b.gomod(ctx, "mod", "tidy"); err != nil {
		return nil, b.hint(err)
	}
	if list, err = b.buildList(ctx); err != nil {
		return nil, err
	}
	for _, p := range Pins(b.c, list, b.src != "") {
		fmt.Fprintf(b.log, "note: %s stays at %s (host %s): another requirement of the plugin needs it (go mod graph | grep %s)\n", p.Path, p.From, p.To, p.Path)
	}
	return pins, nil
}

func (b *builder) buildList(ctx context.Context) ([]loader.Module, error) {
	out, err := b.output(ctx, b.dir, b.env(false), "list", "-m", "-json", "all")
	if err != nil {
		return nil, err
	}
	var list []loader.Module
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var m struct {
			loader.Module
			Main bool
		}
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return list, nil
		} else if err != nil {
			return nil, fmt.Errorf("plugin build: reading the build list: %w", err)
		}
		if !m.Main {
			list = append(list, m.Module)
		}
	}
}

// compile builds the root package from its list of files, which makes the go command
// give the plugin a path hashed from the build ("plugin/unnamed-…"), so a rebuilt
// plugin can be loaded beside the old one. The file is written under a temporary name
// and renamed, so a running server's loaded copy is never overwritten in place.
func (b *builder) compile(ctx context.Context, name string) (string, error) {
	pkg, err := b.rootPackage()
	if err != nil {
		return "", err
	}
	files := append(append([]string(nil), pkg.GoFiles...), pkg.CgoFiles...)
	outDir, err := filepath.Abs(b.o.Out)
	if err != nil {
		return "", err
	}
	final := filepath.Join(outDir, name+".so")
	tmp := filepath.Join(outDir, "."+name+".so.building")
	b.didReplay = b.replayed(ctx, pkg, files, tmp)
	if b.didReplay {
		if err := os.Rename(tmp, final); err != nil {
			return "", fmt.Errorf("plugin build: %w", err)
		}
		return final, nil
	}
	err = b.link(ctx, tmp, files)
	if err != nil && b.o.Linker != "" && linkerFailed(err) {
		// The chosen linker could not link this plugin (a cgo dependency it does not
		// handle, say): link with the compiler's default from now on.
		fmt.Fprintf(b.log, "note: the %s linker failed; linking with the C compiler's default linker\n", b.o.Linker)
		b.o.Linker = ""
		err = b.link(ctx, tmp, files)
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("plugin build: %w", err)
	}
	return final, nil
}

// link runs the go build that compiles files and links them into out. With
// Options.Replay it captures the compile and the link for the next builds.
func (b *builder) link(ctx context.Context, out string, files []string) error {
	args, env := b.buildArgs()
	shape := ""
	if b.o.Replay {
		if pkg, err := b.rootPackage(); err == nil {
			shape = shapeOf(pkg, args)
		}
	}
	b.rp.close()
	b.rp = nil
	if shape != "" {
		args = append(args, "-x", "-work")
	}
	args = append(append(args, "-o", out), files...)
	_, stderr, err := b.outputStderr(ctx, b.dir, b.env(true, env...), args...)
	if err == nil && shape != "" {
		b.rp = capture(shape, stderr)
	}
	return err
}

// buildArgs are the go build arguments before the output and the files.
func (b *builder) buildArgs() (args, env []string) {
	args, env = Flags(b.c)
	if ld := linkFlags(b.o); ld != "" {
		args = append(args, "-ldflags="+ld)
	}
	return args, env
}

// replayed builds files into out by replaying the last build's compile and link, if
// it may (see replayer), and says whether it did.
func (b *builder) replayed(ctx context.Context, pkg *gobuild.Package, files []string, out string) bool {
	if b.rp == nil {
		return false
	}
	args, _ := b.buildArgs()
	if shapeOf(pkg, args) != b.rp.shape {
		return false
	}
	if err := b.rp.run(ctx, b.dir, files, out); err != nil {
		fmt.Fprintf(b.log, "replaying the last compile and link failed; running go build: %v\n", err)
		os.Remove(out)
		return false
	}
	fmt.Fprintf(b.log, "$ (replayed the last build's compile and link: only code changed)\n")
	return true
}

// env is the environment of every go command: the workspace holding Gatehouse for the
// build with --gatehouse-src, no workspace otherwise.
func (b *builder) env(build bool, extra ...string) []string {
	work := "GOWORK=off"
	if build && b.work != "" {
		work = "GOWORK=" + b.work
	}
	env := append(os.Environ(), work)
	if tc := toolchain(b.c.GoVersion); tc != "" {
		env = append(env, "GOTOOLCHAIN="+tc)
	}
	return append(env, extra...)
}

// workFile writes the workspace that builds the plugin module with the Gatehouse
// source as a second main module.
func (b *builder) workFile() (string, error) {
	p := filepath.Join(b.tmp, "go.work")
	goLine := strings.TrimPrefix(toolchain(b.c.GoVersion), "go")
	if goLine == "" {
		goLine = "1.26.0"
	}
	content := fmt.Sprintf("go %s\n\nuse (\n\t%s\n\t%s\n)\n", goLine, strconv.Quote(b.dir), strconv.Quote(b.src))
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		return "", fmt.Errorf("plugin build: %w", err)
	}
	return p, nil
}

func (b *builder) gomod(ctx context.Context, args ...string) error {
	return b.run(ctx, b.dir, b.env(false), args...)
}

func (b *builder) run(ctx context.Context, dir string, env []string, args ...string) error {
	_, err := b.output(ctx, dir, env, args...)
	return err
}

func (b *builder) output(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	out, _, err := b.outputStderr(ctx, dir, env, args...)
	return out, err
}

// outputStderr runs a go command and returns what it printed on each stream.
func (b *builder) outputStderr(ctx context.Context, dir string, env []string, args ...string) ([]byte, string, error) {
	fmt.Fprintf(b.log, "$ (cd %s && %s %s)\n", dir, b.o.Go, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, b.o.Go, args...)
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, "", &CommandError{Command: b.o.Go + " " + strings.Join(args, " "), Err: err, Stderr: strings.TrimSpace(stripX(stderr.String()))}
	}
	return out, stderr.String(), nil
}

// CommandError is a go command of the build that failed, with what it printed: for a
// compile error, the compiler's messages.
type CommandError struct {
	Command string
	Err     error
	Stderr  string
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("plugin build: %s: %v: %s", e.Command, e.Err, e.Stderr)
}

func (e *CommandError) Unwrap() error { return e.Err }

// hint adds the likely fix to a failed `go mod tidy`.
func (b *builder) hint(err error) error {
	if b.src == "" && strings.Contains(err.Error(), loader.GatehouseModule) {
		return fmt.Errorf("%w; if %s is not published where you are, pass --gatehouse-src with a checkout of gatehouse %s", err, loader.GatehouseModule, b.c.GatehouseVersion)
	}
	return err
}
