package integration_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/translate"
	"gatehouse.dev/gatehouse/integration/testbin"
)

// docBlock returns the body of the first fenced block of kind lang after the line
// holding marker in doc.
func docBlock(t *testing.T, doc, marker, lang string) string {
	t.Helper()
	i := strings.Index(doc, marker)
	if i < 0 {
		t.Fatalf("docs/plugins.md has no %q", marker)
	}
	open := "```" + lang + "\n"
	j := strings.Index(doc[i:], open)
	if j < 0 {
		t.Fatalf("docs/plugins.md has no %s block after %q", lang, marker)
	}
	body := doc[i+j+len(open):]
	return body[:strings.Index(body, "```\n")]
}

// Regression (issue 12, finding 13): the step snippet of docs/plugins.md failed
// `gatehouse plugin verify --config` (field "": got array). The example plugin, the
// step that uses it and the verify output the page shows are checked here: the plugin
// is built from a copy that must equal the page's, verified with the page's step as
// --config, and must print the page's line.
func TestABIDocsPluginsSnippets(t *testing.T) {
	root := testbin.Root(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs/plugins.md"))
	if err != nil {
		t.Fatal(err)
	}
	code := docBlock(t, string(doc), "## Write a plugin", "go")
	copied, err := os.ReadFile(filepath.Join(root, "integration/testdata/plugins/docsprefix/main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if string(copied) != code {
		t.Fatalf("integration/testdata/plugins/docsprefix/main.go differs from the plugin in docs/plugins.md; copy the page's code block into it")
	}
	step := filepath.Join(t.TempDir(), "step.yaml")
	if err := os.WriteFile(step, []byte(docBlock(t, string(doc), "The step that uses it:", "yaml")), 0o644); err != nil {
		t.Fatal(err)
	}
	console := docBlock(t, string(doc), "## Verify it", "console")
	const cmdLine = "$ gatehouse plugin verify ./out/prefix.so --config step.yaml\n"
	if !strings.HasPrefix(console, cmdLine) {
		t.Fatalf("the verify example no longer starts with %q", cmdLine)
	}
	wantLine, _, _ := strings.Cut(strings.TrimPrefix(console, cmdLine), "\n")

	gatehouse := testbin.Gatehouse(t)
	so := newABIBuilds(t).build(t, testdataPlugin("docsprefix"))
	r := abiRun(t, "", nil, gatehouse, "plugin", "verify", so, "--config", step)
	want := strings.Replace(wantLine, "./out/prefix.so", so, 1) + "\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("gatehouse plugin verify %s --config <the page's step>: exit %d, printed\n%s\nwant exit 0 and\n%s\nstderr: %s", so, r.code, r.stdout, want, r.stderr)
	}
}

// The isolation example of docs/plugins.md is a step the control plane accepts, with
// the settings it shows.
func TestDocsIsolationSnippet(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testbin.Root(t), "docs/plugins.md"))
	if err != nil {
		t.Fatal(err)
	}
	step := docBlock(t, string(doc), "With **`isolation: process`**", "yaml")
	var b strings.Builder
	b.WriteString("apiVersion: enterprise.gateway.gatehouse.dev/v1\nkind: AuthConfig\nmetadata: {name: a, namespace: ns}\nspec:\n  configs:\n")
	for _, line := range strings.Split(strings.TrimRight(step, "\n"), "\n") {
		b.WriteString("    " + line + "\n")
	}
	set := &apiv1.Set{}
	if err := set.Add([]byte(b.String()), "docs/plugins.md"); err != nil {
		t.Fatal(err)
	}
	r := translate.ExtAuth(set)[0]
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	pa := r.Config.GetSteps()[0].GetPluginAuth()
	if pa.GetIsolation() != "process" || pa.GetMemoryLimitBytes() != 256<<20 {
		t.Errorf("the docs' step gives isolation %q, memory limit %d; want process, 256Mi", pa.GetIsolation(), pa.GetMemoryLimitBytes())
	}
}
