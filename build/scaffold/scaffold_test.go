package scaffold_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/yaml"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/build/scaffold"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/examples"
	"gatehouse.dev/gatehouse/loader"
)

var contract = &loader.Contract{GatehouseVersion: "0.1.0", GoVersion: "go1.26.8"}

func TestWriteRefuses(t *testing.T) {
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "main.go"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		o       scaffold.Options
		wantErr string
	}{
		{"upper case", scaffold.Options{Name: "MyPlugin"}, `"MyPlugin" is not a plugin name: use 1 to 40 lower-case letters, digits, - and _, starting with a letter (it names the module, the step and NAME.so)`},
		{"path", scaffold.Options{Name: "../x"}, `"../x" is not a plugin name`},
		{"digit first", scaffold.Options{Name: "1x"}, `"1x" is not a plugin name`},
		{"empty", scaffold.Options{Name: ""}, `"" is not a plugin name`},
		{"non-empty directory", scaffold.Options{Name: "x", Dir: full}, full + " is not empty; choose a new directory with --dir (nothing was written)"},
		{"not a checkout", scaffold.Options{Name: "x", Dir: filepath.Join(t.TempDir(), "x"), GatehouseSrc: full}, "is not a checkout of gatehouse.dev/gatehouse (it has no pluginapi/plugin.go)"},
		{"no release", scaffold.Options{Name: "x", Dir: filepath.Join(t.TempDir(), "x"), Contract: &loader.Contract{GoVersion: "devel go1.27-abc"}}, `the host's Go version "devel go1.27-abc" is not a release`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.o.Contract == nil {
				tt.o.Contract = contract
			}
			_, _, err := scaffold.Write(tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Write error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	if b, _ := os.ReadFile(filepath.Join(full, "main.go")); string(b) != "mine" {
		t.Errorf("the existing main.go was overwritten: %q", b)
	}
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	src, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	got, written, err := scaffold.Write(scaffold.Options{Name: "key_check", Dir: dir, GatehouseSrc: src, Contract: contract})
	if err != nil || got != dir {
		t.Fatalf("Write = %s, %v", got, err)
	}
	want := []string{"go.mod", "main.go", "main_test.go", "step.yaml", "cases.yaml", "dev/gatehouse.yaml", "Makefile", "Dockerfile", ".gitignore", ".dockerignore"}
	if diff := cmp.Diff(want, written); diff != "" {
		t.Errorf("files written (-want +got):\n%s", diff)
	}
	goMod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	for _, line := range []string{"module example.com/key_check\n", "go 1.26.0\n", "toolchain go1.26.8\n", "require gatehouse.dev/gatehouse v0.1.0\n", "replace gatehouse.dev/gatehouse => " + src + "\n"} {
		if !strings.Contains(string(goMod), line) {
			t.Errorf("go.mod lacks %q:\n%s", line, goMod)
		}
	}
}

// The scaffolded Dockerfile writes the image `gatehouse plugin image` and
// images/plugin/Dockerfile write: same label, user, plugin folder and entrypoint.
func TestDockerfileMatchesThePluginImage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	if _, _, err := scaffold.Write(scaffold.Options{Name: "p", Dir: dir, Contract: contract}); err != nil {
		t.Fatal(err)
	}
	ours := instructions(t, filepath.Join(dir, "Dockerfile"))
	theirs := instructions(t, "../../images/plugin/Dockerfile")
	for _, prefix := range []string{"ENTRYPOINT ", "USER ", "LABEL dev.gatehouse.version=${GATEHOUSE_VERSION}", "ARG GATEHOUSE_VERSION="} {
		if o, th := find(ours, prefix), find(theirs, prefix); o == "" || o != th {
			t.Errorf("%s: scaffold %q, images/plugin/Dockerfile %q", prefix, o, th)
		}
	}
	if find(ours, "COPY --from=build --chmod=0755 /out/p.so /compiled-auth-plugins/") == "" {
		t.Errorf("the plugin is not copied to /compiled-auth-plugins/:\n%s", strings.Join(ours, "\n"))
	}
}

func instructions(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

func find(lines []string, prefix string) string {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// dev/gatehouse.yaml is what `gatehouse dev --plugin-module .` serves: resources the
// control plane accepts, whose AuthConfig runs the very step of step.yaml (the two are
// written from one template data, and must not drift apart in the templates).
func TestDevResourcesUseTheStep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	if _, _, err := scaffold.Write(scaffold.Options{Name: "p", Dir: dir, Contract: contract}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "dev/gatehouse.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res, problems := source.Decode(data, "dev/gatehouse.yaml")
	if len(problems) > 0 {
		t.Fatalf("dev/gatehouse.yaml: %v", problems)
	}
	var kinds []string
	var ac *apiv1.AuthConfig
	for _, r := range res {
		kinds = append(kinds, r.Kind+" "+r.ID())
		if a, ok := r.Object.(*apiv1.AuthConfig); ok {
			ac = a
		}
	}
	wantKinds := []string{"AuthConfig gatehouse-system.p", "VirtualService gatehouse-system.p", "Upstream " + examples.EchoUpstream}
	if diff := cmp.Diff(wantKinds, kinds, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Fatalf("dev/gatehouse.yaml's resources (-want +got):\n%s", diff)
	}
	stepYAML, err := os.ReadFile(filepath.Join(dir, "step.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var step []map[string]any
	if err := yaml.Unmarshal(stepYAML, &step); err != nil {
		t.Fatal(err)
	}
	var devDoc struct {
		Spec struct{ Configs []map[string]any }
	}
	first, _, _ := strings.Cut(string(data), "\n---\n")
	if err := yaml.Unmarshal([]byte(first), &devDoc); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(step, devDoc.Spec.Configs); diff != "" {
		t.Errorf("the AuthConfig's configs differ from step.yaml (-step.yaml +dev/gatehouse.yaml):\n%s", diff)
	}
	if ac == nil || len(ac.Spec.Configs) != 1 {
		t.Errorf("dev/gatehouse.yaml has no AuthConfig with one step: %+v", ac)
	}
}
