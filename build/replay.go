package build

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	gobuild "go/build"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// replayer repeats the compile and the link of the last `go build` of the root package
// when only the package's code changed since: the same files importing the same
// packages, no cgo and no embedded files, and go.mod and go.sum as they were (a
// Rebuilder that prepares again forgets it). Everything the go command does besides
// those two steps (loading the module graph, hashing every dependency's sources to
// find them in the build cache) then has the same outcome as last time, and is
// skipped. Each replay gets a plugin path of its own, hashed from the sources, as the
// go command gives each build of a list of files.
//
// The captured commands are those `go build -x -work` printed; their work folder is
// kept, since the compile and link read the import configurations written there. A
// replay that fails for any reason is followed by a full go build, which captures
// anew.
type replayer struct {
	shape   string // what the captured build depends on besides the files' contents
	work    string // the go command's work folder, kept
	path    string // the captured build's plugin path
	compile command
	link    command
}

// command is one tool invocation printed by `go build -x`.
type command struct {
	dir  string
	env  []string
	args []string
}

// shapeOf is what a replay of pkg's build depends on besides its files' contents,
// with the go build arguments; "" when it cannot be replayed.
func shapeOf(pkg *gobuild.Package, args []string) string {
	if len(pkg.CgoFiles) > 0 || len(pkg.EmbedPatterns) > 0 {
		return ""
	}
	return strings.Join(args, " ") + "\x00" + strings.Join(pkg.GoFiles, " ") + "\x00" + strings.Join(pkg.Imports, " ")
}

// capture reads the compile and link of the root package from what `go build -x
// -work` printed; nil when they are not both there (the go command found the package
// compiled in its cache, or the plugin up to date).
func capture(shape, stderr string) *replayer {
	rp := &replayer{shape: shape}
	dir := ""
	for _, line := range strings.Split(stderr, "\n") {
		words, ok := splitWords(line)
		if !ok || len(words) == 0 {
			continue
		}
		switch {
		case strings.HasPrefix(line, "WORK="):
			rp.work = strings.TrimPrefix(line, "WORK=")
			continue
		case words[0] == "cd" && len(words) == 2:
			dir = words[1]
			continue
		}
		var env []string
		for len(words) > 0 && isAssignment(words[0]) {
			env, words = append(env, words[0]), words[1:]
		}
		if len(words) == 0 {
			continue
		}
		switch tool := filepath.Base(words[0]); {
		case tool == "compile" && strings.HasPrefix(flagValue(words, "-p"), "plugin/unnamed-"):
			rp.compile = command{dir: dir, env: env, args: words}
			rp.path = flagValue(words, "-p")
		case tool == "link" && slices.Contains(words, "-buildmode=plugin"):
			rp.link = command{dir: dir, env: env, args: words}
		}
	}
	if rp.work == "" || rp.compile.args == nil || rp.link.args == nil || flagValue(rp.link.args, "-pluginpath") != rp.path {
		if rp.work != "" {
			os.RemoveAll(rp.work)
		}
		return nil
	}
	for _, c := range []*command{&rp.compile, &rp.link} {
		c.dir = strings.ReplaceAll(c.dir, "$WORK", rp.work)
		for i, a := range c.args {
			c.args[i] = strings.ReplaceAll(a, "$WORK", rp.work)
		}
	}
	return rp
}

// run compiles files of dir and links them into out, as the captured build did.
func (rp *replayer) run(ctx context.Context, dir string, files []string, out string) error {
	h := sha256.New()
	h.Write([]byte(rp.shape))
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "\x00%s\x00%d\x00", f, len(data))
		h.Write(data)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	path, id := "plugin/unnamed-"+sum[:40], sum[:20]

	compile := replaceFlag(rp.compile.args, "-p", path)
	compile = replaceFlag(compile, "-buildid", id+"/"+id)
	i := slices.Index(compile, "-pack")
	if i < 0 {
		return errors.New("replay: the captured compile has no -pack")
	}
	compile = compile[:i+1]
	for _, f := range files {
		compile = append(compile, "./"+f)
	}
	link := replaceFlag(rp.link.args, "-pluginpath", path)
	link = replaceFlag(link, "-o", out)
	for j, a := range link {
		if strings.HasPrefix(a, "-buildid=") {
			link[j] = "-buildid=" + id + "/" + id + "/" + id + "/" + id
		}
	}
	if err := runTool(ctx, dir, rp.compile.env, compile); err != nil {
		return err
	}
	return runTool(ctx, rp.link.dir, rp.link.env, link)
}

func (rp *replayer) close() {
	if rp != nil && rp.work != "" {
		os.RemoveAll(rp.work)
	}
}

func runTool(ctx context.Context, dir string, env, args []string) error {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("replay: %s: %w: %s", filepath.Base(args[0]), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// splitWords splits a command line as `go build -x` prints it: words separated by
// spaces, a word with special characters Go-quoted, an environment assignment's value
// single-quoted.
func splitWords(line string) ([]string, bool) {
	var words []string
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimLeft(line, " ") {
		switch {
		case line[0] == '"':
			q, err := strconv.QuotedPrefix(line)
			if err != nil {
				return nil, false
			}
			w, _ := strconv.Unquote(q)
			words, line = append(words, w), line[len(q):]
		default:
			end := strings.IndexByte(line, ' ')
			if end < 0 {
				end = len(line)
			}
			w := line[:end]
			if k, v, ok := strings.Cut(w, "='"); ok && strings.HasSuffix(v, "'") {
				w = k + "=" + strings.TrimSuffix(v, "'")
			}
			words, line = append(words, w), line[end:]
		}
	}
	return words, true
}

func isAssignment(w string) bool {
	k, _, ok := strings.Cut(w, "=")
	return ok && k != "" && !strings.HasPrefix(k, "-") && !strings.Contains(k, "/")
}

// flagValue is the value of flag in args, given as "flag value" or "flag=value".
func flagValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
	}
	return ""
}

// replaceFlag is a copy of args with flag's value set to v.
func replaceFlag(args []string, flag, v string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		if a == flag && i+1 < len(out) {
			out[i+1] = v
		} else if strings.HasPrefix(a, flag+"=") {
			out[i] = flag + "=" + v
		}
	}
	return out
}

// stripX removes from a go command's error output what -x printed (the commands and
// the files they write), leaving the compiler's and linker's messages.
func stripX(s string) string {
	if !strings.Contains(s, "\nWORK=") && !strings.HasPrefix(s, "WORK=") {
		return s
	}
	var kept []string
	heredoc := false
	for _, line := range strings.Split(s, "\n") {
		switch {
		case heredoc:
			heredoc = line != "EOF"
			continue
		case strings.Contains(line, "<< 'EOF'"):
			heredoc = true
			continue
		case isXLine(line):
			continue
		}
		kept = append(kept, line)
	}
	return strings.Join(kept, "\n")
}

// isXLine says whether line is a command printed by -x.
func isXLine(line string) bool {
	for _, p := range []string{"WORK=", "mkdir ", "cd ", "cat ", "cp ", "mv ", "rm ", "touch ", "# import config", "echo ", "go tool "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	words, ok := splitWords(line)
	for ok && len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	// A tool run is its absolute path and arguments; a tool's message is "path: …".
	return ok && len(words) > 0 && filepath.IsAbs(words[0]) && !strings.HasSuffix(words[0], ":")
}
