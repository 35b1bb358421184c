package integration_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// Regression (issue 12, finding 14): `gatehouse plugin image` packaged plugins that
// will not load (a -race build, a panic in init) and exited 0; the pod failed later.
// It verifies every plugin first and writes no image if one is refused.
func TestABIPluginImageVerifiesFirst(t *testing.T) {
	gatehouse := testbin.Gatehouse(t)
	b := newABIBuilds(t)
	good := b.build(t, requiredHeader)
	race := b.build(t, abiPlugin{name: "race", pkg: requiredHeader.pkg, args: []string{"-race"}})
	initpanic := b.build(t, testdataPlugin("initpanic"))
	copier := filepath.Join(t.TempDir(), "gatehouse-plugin-copier")
	build := exec.Command("go", "build", "-o", copier, "./images/copier")
	build.Dir, build.Env = testbin.Root(t), append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the copier: %v\n%s", err, out)
	}

	out := filepath.Join(t.TempDir(), "refused")
	r := abiRun(t, "", nil, gatehouse, "plugin", "image", "--out", out, "--copier", copier, good, race, initpanic)
	if r.code != 1 || !strings.Contains(r.stderr, "plugin image: 2 of 3 plugins would not load into this gatehouse (see above); no image written") {
		t.Errorf("plugin image with refused plugins: exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit 1 naming 2 of 3", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{race + ": refused", "-race: host false, plugin true", initpanic + ": refused", "the plugin panicked while loading"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, good+":") {
		t.Errorf("output reports the good plugin:\n%s", r.stdout)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("an image layout was written at %s (%v)", out, err)
	}

	out = filepath.Join(t.TempDir(), "good")
	if r := abiRun(t, "", nil, gatehouse, "plugin", "image", "--out", out, "--copier", copier, good); r.code != 0 || !strings.Contains(r.stdout, "layout "+out) {
		t.Errorf("plugin image with a good plugin: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}
