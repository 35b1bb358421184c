package integration_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"gatehouse.dev/gatehouse/loader"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/pluginapi/pluginhost"
)

// testLoader runs the serving process's Loader in this test process (the plugins it
// opens stay loaded here), with the gatehouse binary as its trial-load child.
func testLoader(t *testing.T, gatehouse string, b *abiBuilds) {
	if c, err := loader.HostContract(); err != nil || c.Settings["-race"] == "true" {
		t.Fatalf("this test process opens plugins built without -race, so it must run without -race (contract: %v)", err)
	}
	newLoader := func(t *testing.T) (*loader.Loader, string, string) {
		dir, private := t.TempDir(), t.TempDir()
		return loader.NewWithOptions(dir, loader.Options{PrivateDir: private,
			Trial: loader.TrialRunner{Executable: gatehouse, Timeout: 3 * time.Second}}), dir, private
	}

	t.Run("the same content is opened once, under any name", func(t *testing.T) {
		l, dir, private := newLoader(t)
		good := b.build(t, requiredHeader)
		install(t, good, filepath.Join(dir, "required_header.so"))
		install(t, good, filepath.Join(dir, "copy.so"))
		var got []pluginapi.ExtAuthPlugin
		for _, file := range []string{"required_header.so", "copy.so", "required_header.so"} {
			p, err := l.Open(file, "Plugin")
			if err != nil {
				t.Fatalf("Open(%s): %v", file, err)
			}
			got = append(got, p)
		}
		if got[0] != got[1] || got[0] != got[2] {
			t.Errorf("Open returned different plugins for the same content: %v", got)
		}
		// .lock marks the folder as this live process's (see loader.RemoveStale).
		if names := slices.DeleteFunc(dirNames(t, private), func(n string) bool { return n == ".lock" }); len(names) != 1 || names[0] != sha(t, good)+".so" {
			t.Errorf("private copies %v; want one, named by the content's sha256", names)
		}
		if h := authorize(t, got[1], `{"RequiredHeader":"x-required","AllowedValues":["alpha"]}`, "/", map[string]string{"x-required": "alpha"}); h == nil || h["matched-allowed-headers"] != "true" {
			t.Errorf("the plugin opened under a second name does not serve: headers %v", h)
		}
	})

	t.Run("a rebuilt plugin with the same plugin path is refused while the loaded one keeps serving", func(t *testing.T) {
		l, dir, _ := newLoader(t)
		first, second := samePathBuilds(t, b)
		file := filepath.Join(dir, "samepath.so")
		install(t, first, file)
		p1, err := l.Open("samepath.so", "Plugin")
		if err != nil {
			t.Fatalf("Open(first build): %v", err)
		}
		svc := service(t, p1, "")
		install(t, second, file)
		_, err = l.Open("samepath.so", "Plugin")
		want := "loader: " + file + ": plugin path: another build with plugin path \"example.com/samepath\" is already loaded (from " + file + ", sha256 " + sha(t, first)[:12] + "); a process cannot load two plugins with the same plugin path, so the loaded version keeps serving; fix: restart required (or rebuild with `gatehouse plugin build`, which gives each build a unique plugin path)"
		if err == nil || err.Error() != want {
			t.Errorf("Open(second build) error\n%v\nwant\n%s", err, want)
		}
		if h := call(t, svc, "/", nil); h["x-greeting"] != "first" {
			t.Errorf("the loaded plugin stopped serving: headers %v", h)
		}
		install(t, first, file)
		if p, err := l.Open("samepath.so", "Plugin"); err != nil || p != p1 {
			t.Errorf("Open(first build again) = %v, %v; want the loaded plugin", p, err)
		}
		if r := abiRun(t, "", nil, gatehouse, "plugin", "verify", second); r.code != 0 {
			t.Errorf("the second build is refused by a fresh process too: %s", r.stdout)
		}
	})

	t.Run("refused plugins never reach the serving process", func(t *testing.T) {
		l, dir, _ := newLoader(t)
		for _, tc := range []struct {
			name, so, check string
		}{
			{"initpanic.so", b.build(t, testdataPlugin("initpanic")), "trial load"},
			{"inithang.so", b.build(t, testdataPlugin("inithang")), "trial load"},
			{"go125.so", go125(t, b), "go version"},
			{"nosymbol.so", b.build(t, testdataPlugin("nosymbol")), "trial load (lookup)"},
		} {
			install(t, tc.so, filepath.Join(dir, tc.name))
			_, err := l.Open(tc.name, "Plugin")
			var lerr *loader.Error
			if !errors.As(err, &lerr) || len(loader.Errors(lerr.Findings)) == 0 || loader.Errors(lerr.Findings)[0].Check != tc.check {
				t.Errorf("Open(%s) error %v; want a *loader.Error whose first finding is %q", tc.name, err, tc.check)
			}
		}
		good := b.build(t, requiredHeader)
		install(t, good, filepath.Join(dir, "required_header.so"))
		if _, err := l.Open("required_header.so", "Plugin"); err != nil {
			t.Errorf("a good plugin after the refused ones: %v", err)
		}
	})

	t.Run("a plugin trial-loaded ahead opens without a trial load of its own and reports as before", func(t *testing.T) {
		// Every trial child is counted by a wrapper around the gatehouse binary.
		count := filepath.Join(t.TempDir(), "trials")
		wrapper := filepath.Join(t.TempDir(), "gatehouse")
		abiWrite(t, wrapper, "#!/bin/sh\necho trial >> "+count+"\nexec "+gatehouse+" \"$@\"\n")
		if err := os.Chmod(wrapper, 0o755); err != nil {
			t.Fatal(err)
		}
		trials := func() int {
			data, _ := os.ReadFile(count)
			return strings.Count(string(data), "trial\n")
		}
		dir := t.TempDir()
		l := loader.NewWithOptions(dir, loader.Options{PrivateDir: t.TempDir(),
			Trial: loader.TrialRunner{Executable: wrapper, Timeout: 3 * time.Second}})
		fresh := loader.NewWithOptions(dir, loader.Options{PrivateDir: t.TempDir(),
			Trial: loader.TrialRunner{Executable: gatehouse, Timeout: 3 * time.Second}})
		// nosymbol exports Other, not Plugin: a step naming Plugin is refused, one
		// naming Other serves. Nothing in this process opened it before.
		install(t, b.build(t, testdataPlugin("nosymbol")), filepath.Join(dir, "nosymbol.so"))
		if !l.TrialAhead("nosymbol.so") || trials() != 1 {
			t.Fatalf("TrialAhead trial-loaded %d times and remembered nothing; want one trial, with Other, remembered", trials())
		}
		// Another symbol runs its own trial and is refused word for word as without
		// TrialAhead.
		_, prepared := l.Open("nosymbol.so", "Plugin")
		_, unprepared := fresh.Open("nosymbol.so", "Plugin")
		if prepared == nil || unprepared == nil || prepared.Error() != unprepared.Error() || trials() != 2 {
			t.Errorf("Open(Plugin) after TrialAhead: %v (%d trials); without TrialAhead: %v", prepared, trials(), unprepared)
		}
		// The symbol prepared is opened with no trial child.
		if p, err := l.Open("nosymbol.so", "Other"); err != nil || p == nil || trials() != 2 {
			t.Errorf("Open(Other) after TrialAhead: %v, %v after %d trials; want the plugin, with no trial of its own", p, err, trials())
		}
		// A trial that fails ahead of use serves the next Open of that symbol, as its own
		// trial would have: the same refusal, and no second child (a hang would cost two
		// timeouts). The Open after that runs its own, as a refusal that is not for good
		// is not remembered.
		for _, name := range []string{"nonpointer", "inithang"} {
			install(t, b.build(t, testdataPlugin(name)), filepath.Join(dir, name+".so"))
			before := trials()
			if l.TrialAhead(name+".so") || trials() != before+1 {
				t.Fatalf("%s: TrialAhead passed, or ran %d trials; want one that fails", name, trials()-before)
			}
			_, prepared := l.Open(name+".so", "Plugin")
			_, unprepared := fresh.Open(name+".so", "Plugin")
			if prepared == nil || unprepared == nil || prepared.Error() != unprepared.Error() || trials() != before+1 {
				t.Errorf("%s: Open after a failed TrialAhead: %v (%d trials in all); without it: %v", name, prepared, trials()-before, unprepared)
			}
			if _, again := l.Open(name+".so", "Plugin"); again == nil || trials() != before+2 {
				t.Errorf("%s: a second Open: %v after %d trials; want its own trial, refused", name, again, trials()-before)
			}
		}
		// Content opened already is not trial-loaded again, nor is a file that fails its
		// pre-flight.
		abiWrite(t, filepath.Join(dir, "notes.so"), "TODO: build the plugin\n")
		n := trials()
		if l.TrialAhead("nosymbol.so") || l.TrialAhead("notes.so") || l.TrialAhead("missing.so") || trials() != n {
			t.Errorf("TrialAhead of an opened plugin, a file that is not one, or a missing file ran a trial (%d) or remembered one", trials()-n)
		}
	})

	t.Run("a Go 1.25 plugin crashes the trial child, not the caller", func(t *testing.T) {
		so := go125(t, b)
		findings, res := loader.TrialRunner{Executable: gatehouse}.Run(context.Background(), "go125.so", so, "Plugin", nil, false)
		want := "the Go runtime aborted while opening the plugin; it printed:\nfatal error: runtime: no plugin module data\n"
		if len(findings) != 1 || !strings.HasPrefix(findings[0].Detail, want) || res == nil || res.Stage != loader.StageCrash {
			t.Errorf("trial load of a Go 1.25 plugin: %+v, %+v; want a crash reported as %q…", findings, res, want)
		}
	})
}

// samePathBuilds builds the samepath test plugin twice as the package example.com/samepath,
// with another Greeting the second time: two contents, one plugin path.
func samePathBuilds(t *testing.T, b *abiBuilds) (first, second string) {
	t.Helper()
	for i, greeting := range []string{"first", "second"} {
		mod := samePathModule(t, b.root, greeting)
		p := b.build(t, abiPlugin{name: "samepath-" + greeting, pkg: ".", dir: mod, env: []string{"GOFLAGS=-mod=mod"}})
		if i == 0 {
			first = p
		} else {
			second = p
		}
	}
	return first, second
}

// samePathModule writes the samepath plugin, with greeting, as a module of its own that
// uses this gatehouse checkout.
func samePathModule(t *testing.T, root, greeting string) string {
	t.Helper()
	mod := abiCopyDir(t, filepath.Join(root, "integration/testdata/plugins/samepath"))
	src := filepath.Join(mod, "samepath.go")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	abiWrite(t, src, strings.Replace(string(data), `const Greeting = "first"`, `const Greeting = "`+greeting+`"`, 1))
	abiWrite(t, filepath.Join(mod, "go.mod"), "module example.com/samepath\n\ngo 1.26.0\n\nrequire gatehouse.dev/gatehouse v0.0.0\n\nreplace gatehouse.dev/gatehouse => "+root+"\n")
	return mod
}

// install puts a copy of src at dst the way the plugin image's copier does: a new file
// renamed over the old name, so a loaded file is never written to.
func install(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
}

func service(t *testing.T, p pluginapi.ExtAuthPlugin, config string) pluginapi.AuthService {
	t.Helper()
	svc, err := pluginhost.NewService(context.Background(), p, []byte(config))
	if err != nil {
		t.Fatalf("NewService: %v", err)
	}
	if err := pluginhost.Start(context.Background(), svc); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return svc
}

// call authorizes a request for path with headers, returning the request headers the
// service set, or nil when it denied.
func call(t *testing.T, svc pluginapi.AuthService, path string, headers map[string]string) map[string]string {
	t.Helper()
	resp, err := svc.Authorize(context.Background(), &pluginapi.AuthorizationRequest{Method: "GET", Path: path, Headers: headers})
	if err != nil {
		t.Fatalf("Authorize: %v", err)
	}
	if !resp.Allowed {
		return nil
	}
	if resp.RequestHeaders == nil {
		return map[string]string{}
	}
	return resp.RequestHeaders
}

func authorize(t *testing.T, p pluginapi.ExtAuthPlugin, config, path string, headers map[string]string) map[string]string {
	t.Helper()
	return call(t, service(t, p, config), path, headers)
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func sha(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
