package devloop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"gatehouse.dev/gatehouse/build/devloop"
	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/internal/syncbuf"
	"gatehouse.dev/gatehouse/loader"
)

func TestMain(m *testing.M) { os.Exit(testbin.Main(m)) }

// logLines is a zerolog destination the test reads while the loop writes.
type logLines struct{ syncbuf.Buffer }

// count is how many lines have the message msg; with field set, how many of those
// also have field=value.
func (l *logLines) count(t *testing.T, msg, field, value string) int {
	t.Helper()
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if m["message"] == msg && (field == "" || m[field] == value) {
			n++
		}
	}
	return n
}

const (
	msgBuilding = "building the plugin module"
	msgBuilt    = "plugin built and checked; extauth loads it now"
	msgFailed   = "plugin build failed; the last good build keeps serving"
)

// TestLoopOnAScaffoldedModule runs the loop as a plugin author does: a module written by
// `gatehouse plugin new` in a folder of its own outside this repository, built, checked
// and published by the loop, then saved again and again. Every published file is loaded
// by the gatehouse binary it was built for and answers the module's request cases.
func TestLoopOnAScaffoldedModule(t *testing.T) {
	gatehouse, root := testbin.Gatehouse(t), testbin.Root(t)
	mod := filepath.Join(t.TempDir(), "myplugin")
	run := func(t *testing.T, args ...string) string {
		t.Helper()
		out, err := exec.Command(gatehouse, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("gatehouse %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(t, "plugin", "new", "myplugin", "--dir", mod, "--gatehouse-src", root)
	var contract loader.Contract
	if err := json.Unmarshal([]byte(run(t, "plugin", "contract")), &contract); err != nil {
		t.Fatal(err)
	}

	plugins := t.TempDir()
	log := &logLines{}
	l, err := devloop.New(devloop.Options{
		Log: zerolog.New(log), Module: mod, PluginDir: plugins, GatehouseSrc: root, Symbol: "Plugin",
		Contract: &contract, Trial: loader.TrialRunner{Executable: gatehouse},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx := context.Background()
	published := filepath.Join(plugins, "myplugin.so")
	edit := func(t *testing.T, file, old, new string) {
		t.Helper()
		p := filepath.Join(mod, file)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte(old)) {
			t.Fatalf("%s has no %q", file, old)
		}
		if err := os.WriteFile(p, bytes.Replace(data, []byte(old), []byte(new), 1), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// serves runs the module's request cases on the published file in a child of the
	// gatehouse binary: it loads, and its deny says what main.go says.
	serves := func(t *testing.T) {
		t.Helper()
		out := run(t, "plugin", "test", published, "--config", filepath.Join(mod, "step.yaml"),
			"--cases", filepath.Join(mod, "cases.yaml"))
		if !strings.Contains(out, "3 of 3 cases passed") {
			t.Fatalf("gatehouse plugin test:\n%s", out)
		}
	}
	want := func(t *testing.T, builds, built, preflights int) {
		t.Helper()
		got := [3]int{log.count(t, msgBuilding, "", ""), log.count(t, msgBuilt, "", ""), log.count(t, msgBuilt, "preflight", "ran")}
		if got != [3]int{builds, built, preflights} {
			t.Fatalf("builds started, published, pre-flights run = %v, want %v\n%s", got, [3]int{builds, built, preflights}, log.String())
		}
	}

	t.Run("the first build is published and loads", func(t *testing.T) {
		l.Rebuild(ctx, "")
		want(t, 1, 1, 1)
		serves(t)
	})
	t.Run("a save of main.go is built and checked; the pre-flight is kept", func(t *testing.T) {
		edit(t, "main.go", "is missing or not allowed", "must be one of the allowed keys")
		edit(t, "cases.yaml", "is missing or not allowed", "must be one of the allowed keys")
		l.Rebuild(ctx, "main.go")
		want(t, 2, 2, 1)
		// Only code changed: the first build's compile and link were replayed, and
		// what they made loads and answers below.
		if n := log.count(t, msgBuilt, "compiled", "replayed: only code changed since the last go build"); n != 1 {
			t.Fatalf("%d builds replayed, want the second:\n%s", n, log.String())
		}
		serves(t)
	})
	t.Run("a save of a test alone builds nothing", func(t *testing.T) {
		edit(t, "main_test.go", "an allowed value passes", "a value of Allowed passes")
		l.Rebuild(ctx, "main_test.go")
		want(t, 2, 2, 1)
	})
	t.Run("an edit of go.mod runs the pre-flight again", func(t *testing.T) {
		edit(t, "go.mod", "module example.com/myplugin", "// The plugin.\nmodule example.com/myplugin")
		l.Rebuild(ctx, "go.mod")
		want(t, 3, 3, 2)
		serves(t)
	})
	t.Run("a build that does not compile publishes nothing", func(t *testing.T) {
		before, err := os.ReadFile(published)
		if err != nil {
			t.Fatal(err)
		}
		edit(t, "main.go", "return service{cfg: *c}, nil", "return service{cfg: c}, nil")
		l.Rebuild(ctx, "main.go")
		if log.count(t, msgFailed, "", "") != 1 {
			t.Fatalf("no %q in the log:\n%s", msgFailed, log.String())
		}
		want(t, 4, 3, 2)
		after, err := os.ReadFile(published)
		if err != nil || !bytes.Equal(before, after) {
			t.Fatalf("the published file changed after a failed build (%v)", err)
		}
		edit(t, "main.go", "return service{cfg: c}, nil", "return service{cfg: *c}, nil")
	})
	t.Run("a build its trial load refuses is checked in full and not published", func(t *testing.T) {
		edit(t, "main.go", "var Plugin pluginapi", "var Exported pluginapi")
		l.Rebuild(ctx, "main.go")
		want(t, 5, 3, 2)
		// "it exports …" comes from the pre-flight's reading of the file: the full check ran.
		const refused = "plugin built but would not load; the last good build keeps serving"
		if n := log.count(t, refused, "", ""); n != 1 || !strings.Contains(log.String(), "(it exports Exported)") {
			t.Fatalf("want one %q naming the exported symbol:\n%s", refused, log.String())
		}
		edit(t, "main.go", "var Exported pluginapi", "var Plugin pluginapi")
	})
	t.Run("a save while the loop watches is built", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- l.Run(ctx) }()
		defer func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		}()
		// The watcher is added before Run's loop starts; a save that lands before it
		// would be missed, so save until a build starts.
		for i := 0; log.count(t, msgBuilt, "", "") < 4; i++ {
			if i == 600 {
				t.Fatalf("no build after saves of main.go:\n%s", log.String())
			}
			if i%100 == 0 {
				edit(t, "main.go", "must be one of the allowed keys", "must be one of the allowed keys")
				if err := os.WriteFile(filepath.Join(mod, "touch.go"), []byte(fmt.Sprintf("package main\n\nconst saved = %d\n", i)), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		serves(t)
	})
}
