package foundation_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/code"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// devPluginModuleGoMod makes the sample plugin a module of its own, as an author's is.
const devPluginModuleGoMod = "module example.com/required_header\n\ngo 1.26.0\n\nrequire gatehouse.dev/gatehouse v0.0.0\n"

// devBuildWait bounds a build of the plugin module: the first one tidies and pins, and
// the machine may be shared. Nothing is timed here; the benchmark times the loop.
const devBuildWait = 3 * time.Minute

// TestDevPluginModule walks the author's live loop with `gatehouse dev --plugin-module`
// on a copy of the sample plugin: the module as it is serves from the start; a save
// that changes the behaviour is served without a restart; a save that does not compile
// is shown once in dev's output (a second broken save says so in one line) while the
// version before keeps serving; the fix is served.
func TestDevPluginModule(t *testing.T) {
	root := testbin.Root(t)
	mod := t.TempDir()
	src, err := os.ReadFile(filepath.Join(root, "plugins/required_header/required_header.go"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(mod, "required_header.go")
	writeFile(t, file, string(src))
	writeFile(t, filepath.Join(mod, "go.mod"), devPluginModuleGoMod)

	gw, exAddr, echo := testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t)
	p := testbin.Start(t, nil, testbin.Gatehouse(t), "dev", "--plugin-module", mod, "--plugin-dir", t.TempDir(),
		"--gatehouse-src", root, "--listen", gw, "--extauth-listen", exAddr, "--echo-listen", echo)
	testbin.WaitTCP(t, p, gw, devBuildWait)
	ex := &extauthProc{proc: p, client: dial(t, exAddr)}
	const id = "gatehouse-system.plugin-auth" // examples/default, served by dev without --resources
	alpha, gamma := map[string]string{"x-required": "alpha"}, map[string]string{"x-required": "gamma"}
	allowedWith := func(v string) verdict {
		return verdict{RPC: code.Code_OK, Headers: map[string]string{"matched-allowed-headers": v}}
	}
	servesEventually := func(t *testing.T, want verdict) {
		t.Helper()
		testbin.Eventually(t, devBuildWait, func() error {
			if got := verdictOf(ex.check(t, id, alpha)); !cmp.Equal(got, want) {
				return fmt.Errorf("x-required: alpha answered %+v, want %+v", got, want)
			}
			return nil
		})
	}

	t.Run("the module as built at start serves", func(t *testing.T) {
		if got := verdictOf(ex.check(t, id, alpha)); !cmp.Equal(got, allowedWithMatch) {
			t.Errorf("x-required: alpha: %+v, want %+v", got, allowedWithMatch)
		}
		if got := verdictOf(ex.check(t, id, gamma)); !cmp.Equal(got, forbidden) {
			t.Errorf("x-required: gamma: %+v, want %+v", got, forbidden)
		}
	})

	t.Run("a save that changes the behaviour is served", func(t *testing.T) {
		edit(t, file, `WithRequestHeader("matched-allowed-headers", "true")`, `WithRequestHeader("matched-allowed-headers", "edited")`)
		servesEventually(t, allowedWith("edited"))
	})

	t.Run("a save that does not compile is shown once and the version before keeps serving", func(t *testing.T) {
		edit(t, file, "return pluginapi.Forbidden(), nil", "return pluginapi.Forbidden(missing), nil")
		failedLine := waitLog(t, p, "plugin build failed; the last good build keeps serving", 1)
		if e, _ := failedLine["error"].(string); !strings.HasPrefix(e, "./required_header.go:") || !strings.Contains(e, "undefined: missing") {
			t.Errorf("the failure shows %q; want the compiler's message, ./required_header.go:LINE:COL: undefined: missing", e)
		}
		if got := verdictOf(ex.check(t, id, alpha)); !cmp.Equal(got, allowedWith("edited")) {
			t.Errorf("x-required: alpha after the broken save: %+v, want the version before, %+v", got, allowedWith("edited"))
		}
		// Events that change nothing (an editor touching the file) build nothing; a
		// second save that is still broken is one line that points at the first.
		now := time.Now()
		if err := os.Chtimes(file, now, now); err != nil {
			t.Fatal(err)
		}
		appendTo(t, file, "\n// still broken\n")
		waitLog(t, p, "plugin build failed again, as shown above; the last good build keeps serving", 1)
		if n := strings.Count(p.Output(), "undefined: missing"); n != 1 {
			t.Errorf("the compiler's message is in dev's output %d times, want once:\n%s", n, p.Output())
		}
		if got := verdictOf(ex.check(t, id, alpha)); !cmp.Equal(got, allowedWith("edited")) {
			t.Errorf("x-required: alpha after the second broken save: %+v, want %+v", got, allowedWith("edited"))
		}
	})

	t.Run("the fix is served", func(t *testing.T) {
		edit(t, file, "return pluginapi.Forbidden(missing), nil", "return pluginapi.Forbidden(), nil")
		edit(t, file, `"matched-allowed-headers", "edited"`, `"matched-allowed-headers", "fixed"`)
		servesEventually(t, allowedWith("fixed"))
		if got := verdictOf(ex.check(t, id, gamma)); !cmp.Equal(got, forbidden) {
			t.Errorf("x-required: gamma: %+v, want %+v", got, forbidden)
		}
	})
	checkLogKeys(t, p.Output())
}

// edit replaces old with new in file, in place, as an editor saves.
func edit(t *testing.T, file, old, new string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s has no %q to replace", file, old)
	}
	writeFile(t, file, strings.Replace(string(data), old, new, 1))
}

func appendTo(t *testing.T, file, text string) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// waitLog waits until p has logged n lines with message msg and returns the last.
func waitLog(t *testing.T, p *testbin.Process, msg string, n int) map[string]any {
	t.Helper()
	var last map[string]any
	testbin.Eventually(t, devBuildWait, func() error {
		var found int
		for _, l := range strings.Split(p.Output(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["message"] == msg {
				found, last = found+1, m
			}
		}
		if found != n {
			return fmt.Errorf("%d lines %q logged, want %d", found, msg, n)
		}
		return nil
	})
	return last
}

// TestDevPluginModuleDocs runs the session docs/operating.md shows for `gatehouse dev
// --plugin-module`, in a folder holding a copy of the sample plugin as a module, on free
// ports. A curl after an edit is repeated until it answers as shown, as a reader waits
// for dev's log line.
func TestDevPluginModuleDocs(t *testing.T) {
	root := testbin.Root(t)
	wd := t.TempDir()
	mod := filepath.Join(wd, "required_header")
	if err := os.Mkdir(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "plugins/required_header/required_header.go"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(mod, "required_header.go"), string(src))
	writeFile(t, filepath.Join(mod, "go.mod"), devPluginModuleGoMod)
	bin := testbin.Gatehouse(t)
	gw, exAddr, echo := testbin.FreeAddr(t), testbin.FreeAddr(t), testbin.FreeAddr(t)
	replacer := strings.NewReplacer("localhost:8080", gw)
	dir := wd
	steps := testbin.ConsoleSteps(testbin.DocBlock(t, "docs/operating.md", "<!-- dev-plugin-module"))
	if len(steps) != 5 {
		t.Fatalf("the session has %d commands, want the 5 this test knows", len(steps))
	}
	for _, st := range steps {
		switch cmd := st.Command; {
		case strings.HasPrefix(cmd, "cd "):
			dir = filepath.Join(dir, strings.TrimPrefix(cmd, "cd "))
		case strings.HasPrefix(cmd, "gatehouse dev ") && strings.HasSuffix(cmd, " &"):
			line := bin + strings.TrimSuffix(strings.TrimPrefix(cmd, "gatehouse"), " &") +
				" --listen " + gw + " --extauth-listen " + exAddr + " --echo-listen " + echo
			p := testbin.Start(t, []string{"GATEHOUSE_SRC=" + root}, "/bin/sh", "-c", "cd "+dir+" && exec "+line)
			testbin.WaitTCP(t, p, gw, devBuildWait)
		case strings.HasPrefix(cmd, "curl "):
			testbin.Eventually(t, devBuildWait, func() error {
				out, err := exec.Command("/bin/sh", "-c", "cd "+dir+" && "+replacer.Replace(cmd)).CombinedOutput()
				if err != nil || string(out) != st.Output {
					return fmt.Errorf("%s: %q (%v), want %q", cmd, out, err, st.Output)
				}
				return nil
			})
		default:
			out, err := exec.Command("/bin/sh", "-c", "cd "+dir+" && "+cmd).CombinedOutput()
			if err != nil || string(out) != st.Output {
				t.Fatalf("%s: %q (%v), want %q", cmd, out, err, st.Output)
			}
		}
	}
}
