package v1_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

func authConfigWith(steps int, configEntries int) string {
	var b strings.Builder
	b.WriteString("apiVersion: enterprise.gateway.gatehouse.dev/v1\nkind: AuthConfig\nmetadata: {name: big, namespace: ns}\nspec:\n  configs:\n")
	for i := range steps {
		fmt.Fprintf(&b, "    - pluginAuth:\n        name: p%d\n        config:\n          Values:\n", i)
		for j := range configEntries {
			fmt.Fprintf(&b, "            - v%d\n", j)
		}
	}
	return b.String()
}

// Regression: there was no limit on what a source could hold; a 27 MB AuthConfig took
// the server to 1.38 GB. Files, steps and step configs have documented limits.
func TestLimits(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{name: "at the limits", yaml: authConfigWith(apiv1.MaxSteps, 100)},
		{
			name: "too many steps",
			yaml: authConfigWith(apiv1.MaxSteps+1, 1),
			want: []string{"x.yaml:6: AuthConfig ns.big: spec.configs: 65 steps, more than the 64 an AuthConfig may have"},
		},
		{
			name: "a step config too big",
			yaml: authConfigWith(1, apiv1.MaxConfigEntries),
			want: []string{"x.yaml:9: AuthConfig ns.big: spec.configs[0].pluginAuth.config: more than the 10000 entries a step config may hold"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := &apiv1.Set{}
			err := set.Add([]byte(tt.yaml), "x.yaml")
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if len(tt.want) > 0 && len(set.AuthConfigs) != 0 {
				t.Errorf("the AuthConfig past a limit was kept")
			}
		})
	}
}

func TestFileSizeLimit(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	data := []byte("# " + strings.Repeat("x", apiv1.MaxFileBytes) + "\n")
	if err := os.WriteFile(big, data, 0o644); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%s: %d bytes, more than the 4194304 (4 MiB) a resource file may hold; split it into several files", big, len(data))
	if _, err := apiv1.Load(dir); err == nil || err.Error() != want {
		t.Errorf("Load error = %v\nwant %s", err, want)
	}
	if err := (&apiv1.Set{}).Add(data, "stdin"); err == nil || !strings.HasPrefix(err.Error(), "stdin: ") {
		t.Errorf("Add error = %v, want the size limit", err)
	}
}

// TestDeepNestingIsRefusedNotACrash: a document nested millions deep ended the control
// plane and extauth with "fatal error: stack overflow" in the fast parser's recursion,
// on every restart. Nesting past MaxDepth is now a problem of that file, in either
// parser and either style, with the line it passes the limit on.
func TestDeepNestingIsRefusedNotACrash(t *testing.T) {
	const levels = 2_000_000
	head := "apiVersion: core.gatehouse.dev/v1\nkind: Upstream\nmetadata: {name: u, namespace: ns}\n"
	flow := head + "spec: " + strings.Repeat("[", levels) + strings.Repeat("]", levels) + "\n"
	var block strings.Builder
	block.WriteString(head + "spec:\n")
	for i := range 300 {
		fmt.Fprintf(&block, "%sk%d:\n", strings.Repeat(" ", i+1), i)
	}
	fmt.Fprintf(&block, "%sleaf: 1\n", strings.Repeat(" ", 301))
	ok := head + "spec:\n  static:\n    hosts: [{addr: 127.0.0.1, port: 80}]\n" + "  x: " + strings.Repeat("[", 200) + strings.Repeat("]", 200) + "\n"
	for _, tc := range []struct {
		name, doc, line string
		wantErr         bool
	}{
		{"flow nested two million deep", flow, ":4: collections nested more than 256 deep", true},
		{"flow nested two million deep, in the general parser", "# é\n" + flow, "exceeded max depth", true},
		{"flow nested 300 deep, in the general parser", "# é\n" + head + "spec: " + strings.Repeat("[", 300) + strings.Repeat("]", 300) + "\n", ":5: collections nested more than 256 deep", true},
		{"block mappings nested 300 deep", block.String(), "collections nested more than 256 deep", true},
		{"nested 200 deep is read (and its unknown field reported)", ok, "spec.x: unknown field", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s apiv1.Set
			err := s.Add([]byte(tc.doc), "deep.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.line) {
				t.Fatalf("err = %.300v, want it to contain %q", err, tc.line)
			}
		})
	}
}
