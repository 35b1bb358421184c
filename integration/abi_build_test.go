package integration_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/loader"
)

// testBuild runs `gatehouse plugin build` on out-of-tree plugin modules and loads what
// it writes.
func testBuild(t *testing.T, gatehouse string, b *abiBuilds) {
	host := abiContract(t, gatehouse)
	hostSys, ok := host.Module("golang.org/x/sys")
	if !ok || hostSys.Version == "v0.50.0" {
		t.Fatalf("the host links golang.org/x/sys %q; testdata/plugins/outoftree must ask for another version than the host's", hostSys.Version)
	}
	newLoader := func(t *testing.T) (*loader.Loader, string) {
		dir := t.TempDir()
		return loader.NewWithOptions(dir, loader.Options{PrivateDir: t.TempDir(), Trial: loader.TrialRunner{Executable: gatehouse}}), dir
	}

	t.Run("an out-of-tree module builds, verifies and serves", func(t *testing.T) {
		mod := abiCopyDir(t, filepath.Join(b.root, "integration/testdata/plugins/outoftree"))
		out := t.TempDir()
		r := abiRun(t, "", nil, gatehouse, "plugin", "build", "--module", mod, "--out", out, "--gatehouse-src", b.root)
		so := filepath.Join(out, "outoftree.so")
		if r.code != 0 || r.stdout != so+"\n" {
			t.Fatalf("gatehouse plugin build: exit %d, printed %q; want 0 and %q\nstderr:\n%s", r.code, r.stdout, so+"\n", r.stderr)
		}
		if pin := "pinned golang.org/x/sys v0.50.0 -> " + hostSys.Version + "\n"; !strings.Contains(r.stderr, pin) {
			t.Errorf("build output lacks %q:\n%s", pin, r.stderr)
		}
		gomod, _ := os.ReadFile(filepath.Join(mod, "go.mod"))
		for _, line := range []string{"golang.org/x/sys " + hostSys.Version, "replace gatehouse.dev/gatehouse => " + b.root} {
			if !strings.Contains(string(gomod), line) {
				t.Errorf("go.mod lacks %q:\n%s", line, gomod)
			}
		}
		step := filepath.Join(t.TempDir(), "step.yaml")
		abiWrite(t, step, "pluginAuth:\n  name: outoftree\n  exportedSymbolName: Plugin\n  config:\n    Prefix: /api\n")
		if r := abiRun(t, "", nil, gatehouse, "plugin", "verify", so, "--config", step); r.code != 0 ||
			r.stdout != so+": loads (symbol Plugin: main.prefixPlugin, config *main.Config)\n" {
			t.Errorf("verify: exit %d\n%s", r.code, r.stdout)
		}
		l, dir := newLoader(t)
		install(t, so, filepath.Join(dir, "outoftree.so"))
		p, err := l.Open("outoftree.so", "Plugin")
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		svc := service(t, p, `{"Prefix":"/api"}`)
		if h := call(t, svc, "/api/orders", nil); h == nil || h["x-outoftree-host"] == "" {
			t.Errorf("/api/orders: headers %v; want allowed with x-outoftree-host", h)
		}
		if h := call(t, svc, "/admin", nil); h != nil {
			t.Errorf("/admin: allowed with %v; want denied", h)
		}
	})

	t.Run("every build gets its own plugin path, so a rebuild loads beside the old one", func(t *testing.T) {
		l, dir := newLoader(t)
		var services []string
		for _, greeting := range []string{"built-first", "built-second"} {
			mod := samePathModule(t, b.root, greeting)
			out := t.TempDir()
			r := abiRun(t, "", nil, gatehouse, "plugin", "build", "--quiet", "--module", mod, "--out", out, "--gatehouse-src", b.root)
			if r.code != 0 {
				t.Fatalf("gatehouse plugin build: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			install(t, filepath.Join(out, "samepath.so"), filepath.Join(dir, "samepath.so"))
			p, err := l.Open("samepath.so", "Plugin")
			if err != nil {
				t.Fatalf("Open(%s build): %v", greeting, err)
			}
			services = append(services, call(t, service(t, p, ""), "/", nil)["x-greeting"])
		}
		if services[0] != "built-first" || services[1] != "built-second" {
			t.Errorf("greetings %v; want both builds serving side by side", services)
		}
	})

	t.Run("for a -trimpath host, as the images build it", func(t *testing.T) {
		trimmed := filepath.Join(t.TempDir(), "gatehouse")
		if r := abiRun(t, b.root, nil, "go", "build", "-trimpath", "-o", trimmed, "./cmd/gatehouse"); r.code != 0 {
			t.Fatalf("go build -trimpath gatehouse: %s", r.stderr)
		}
		mod := abiCopyDir(t, filepath.Join(b.root, "integration/testdata/plugins/outoftree"))
		out := t.TempDir()
		r := abiRun(t, "", nil, trimmed, "plugin", "build", "--quiet", "--module", mod, "--out", out, "--gatehouse-src", b.root)
		if r.code != 0 {
			t.Fatalf("gatehouse plugin build for a -trimpath host: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		// The same module built with -trimpath but without the workspace: gatehouse is
		// then a replaced dependency, whose files get other paths than the host's main
		// module, so the plugin API package hashes differently.
		plain := filepath.Join(out, "plain.so")
		if r := abiRun(t, mod, []string{"GOFLAGS=-mod=mod", "GOWORK=off"}, "go", "build", "-buildmode=plugin", "-trimpath", "-o", plain, "."); r.code != 0 {
			t.Fatalf("go build: %s", r.stderr)
		}
		r = abiRun(t, "", nil, trimmed, "plugin", "verify", plain)
		want := plain + ": refused, 1 error\n" +
			"  error   package hashes: 1 shared package (gatehouse.dev/gatehouse/pluginapi): compiled differently from the host's copy, so plugin.Open refuses the plugin (\"plugin was built with a different version of package …\"); fix: build the plugin from the sources the host was built from (a replace directive, an edited module cache or, without -trimpath, another source directory all change the hashes); `gatehouse plugin build --module DIR --out DIR` builds with the host's settings (pass --gatehouse-src with the directory gatehouse was built from)\n" +
			"  trial load skipped: the pre-flight found errors, so the plugin is not opened\n"
		if r.code != 1 || r.stdout != want {
			t.Errorf("verify of a replace-built plugin: exit %d\n%s\nwant exit 1 and\n%s", r.code, r.stdout, want)
		}
	})
}
