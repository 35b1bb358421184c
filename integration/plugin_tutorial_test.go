package integration_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"gatehouse.dev/gatehouse/deploy/helm"
	"gatehouse.dev/gatehouse/integration/testbin"
)

// The plugin author's loop, walked as the tutorial of docs/plugins.md shows it: every
// console command of the tutorial runs in order (plugin new, make test, make build, make
// verify, make cases, gatehouse dev --plugin-module with an edit and a broken edit, make
// image), must succeed and print the lines shown; then the tutorial's Helm values render
// an init container for the image `make image` wrote.
func TestPluginTutorial(t *testing.T) {
	gatehouse := testbin.Gatehouse(t)
	root := testbin.Root(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs/plugins.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, tutorial, _ := strings.Cut(string(doc), "\n## Tutorial\n")
	tutorial, _, _ = strings.Cut(tutorial, "\n## ")
	var steps []testbin.ConsoleStep
	for rest := tutorial; ; {
		var block string
		var ok bool
		if _, rest, ok = strings.Cut(rest, "```console\n"); !ok {
			break
		}
		block, rest, _ = strings.Cut(rest, "```\n")
		steps = append(steps, testbin.ConsoleSteps(block)...)
	}
	if len(steps) < 7 {
		t.Fatalf("the tutorial has %d console commands; it lost its steps", len(steps))
	}

	// /home/me in the page is the author's working directory.
	home := t.TempDir()
	env := []string{"PATH=" + filepath.Dir(gatehouse) + ":" + os.Getenv("PATH"), "GATEHOUSE_SRC=" + root}
	sh := &tutorialShell{t: t, cwd: home, home: home, env: env}
	var imageLine string
	for _, s := range steps {
		got := sh.run(s)
		for _, l := range strings.Split(got, "\n") {
			if rest, ok := strings.CutPrefix(l, "image  "); ok {
				imageLine = rest
			}
		}
	}
	if sh.dev == nil || !sh.dev.Exited() {
		t.Error("the tutorial never started gatehouse dev in the background, or never stopped it")
	}
	if imageLine == "" {
		t.Fatal("make image printed no image line")
	}
	if _, err := os.Stat(filepath.Join(sh.cwd, "out/image/index.json")); err != nil {
		t.Errorf("make image wrote no OCI layout: %v", err)
	}

	_, values, _ := strings.Cut(tutorial, "**7. Name the image in the Helm values.**")
	_, values, _ = strings.Cut(values, "```yaml\n")
	values, _, _ = strings.Cut(values, "```\n")
	if got := renderedPluginImage(t, values, "plugin-apikey"); got != imageLine {
		t.Errorf("the tutorial's Helm values give init container plugin-apikey the image %q; make image wrote %q", got, imageLine)
	}
}

var volatile = regexp.MustCompile(`\d+(\.\d+)?(ns|µs|ms|s)\b|\(cached\)`)

// normalize makes a line comparable: durations become <t> and runs of blanks one space.
func normalize(line string) string {
	return strings.Join(strings.Fields(volatile.ReplaceAllString(line, "<t>")), " ")
}

// missingLines returns the first line of want that is not in got after the lines
// found before it, or "" when every line is there in order.
func missingLines(want, got string) string {
	gotLines := strings.Split(got, "\n")
	i := 0
	for _, w := range strings.Split(strings.TrimRight(want, "\n"), "\n") {
		if strings.TrimSpace(w) == "" {
			continue
		}
		for i < len(gotLines) && normalize(gotLines[i]) != normalize(w) {
			i++
		}
		if i == len(gotLines) {
			return w
		}
		i++
	}
	return ""
}

// renderedPluginImage renders the embedded chart with values and returns the image of
// the extauth Deployment's init container named container.
func renderedPluginImage(t *testing.T, values, container string) string {
	t.Helper()
	chrt, err := helm.Chart()
	if err != nil {
		t.Fatal(err)
	}
	var vals map[string]any
	if err := yaml.Unmarshal([]byte(values), &vals); err != nil {
		t.Fatalf("the tutorial's values: %v", err)
	}
	rv, err := chartutil.ToRenderValues(chrt, vals, chartutil.ReleaseOptions{Name: "gh", Namespace: "auth", IsInstall: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := engine.Render(chrt, rv)
	if err != nil {
		t.Fatalf("rendering the chart with the tutorial's values: %v", err)
	}
	for _, content := range files {
		for _, doc := range strings.Split(content, "\n---") {
			var d appsv1.Deployment
			if yaml.Unmarshal([]byte(doc), &d) != nil || d.Kind != "Deployment" {
				continue
			}
			for _, c := range d.Spec.Template.Spec.InitContainers {
				if c.Name == container {
					return c.Image
				}
			}
		}
	}
	t.Fatalf("the chart rendered no init container %s", container)
	return ""
}

func TestMissingLines(t *testing.T) {
	got := "go test ./...\nok  \texample.com/apikey\t(cached)\nCASE  WANT\nx  allow  1.2ms  ok\n"
	tests := []struct{ want, missing string }{
		{"ok  \texample.com/apikey\t0.005s\nx allow 310µs ok\n", ""},
		{"x allow 1ms ok\nok example.com/apikey 1s\n", "ok example.com/apikey 1s"},
		{"CASE WANT\nx deny 1ms ok\n", "x deny 1ms ok"},
	}
	for _, tt := range tests {
		if m := missingLines(tt.want, got); m != tt.missing {
			t.Errorf("missingLines(%q) = %q, want %q", tt.want, m, tt.missing)
		}
	}
}
