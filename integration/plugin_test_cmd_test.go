package integration_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/integration/testbin"
)

// misbehaveCases ask the misbehave test plugin to misbehave in every way `gatehouse
// plugin test` must survive; the last case runs after the crash, in a fresh child.
const misbehaveCases = `cases:
- name: fine
  request: {method: GET, path: /, headers: {x-mode: none}}
  want: {decision: allow, requestHeaders: {x-mode-seen: none}, absentHeaders: [x-user]}
- name: wrong expectation
  request: {headers: {x-mode: deny}}
  want: {decision: deny, status: 403, body: "yes"}
- name: panics
  request: {headers: {x-mode: panic}}
  want: {decision: allow}
- name: hangs
  request: {headers: {x-mode: hang}}
  want: {decision: allow}
- name: bad header
  request: {headers: {x-mode: bad-header}}
  want: {decision: allow}
- name: crashes
  request: {headers: {x-mode: crash}}
  want: {decision: allow}
- name: fine after the crash
  request: {method: POST, path: /x, body: "{}"}
  want: {decision: allow}
`

type caseResult struct {
	Name     string   `json:"name"`
	Want     string   `json:"want"`
	Got      string   `json:"got"`
	OK       bool     `json:"ok"`
	Problems []string `json:"problems"`
}

// gatehouse plugin test runs cases against the real .so in a child process: a plugin
// that panics, hangs, returns a header Envoy must not get or crashes its process fails
// that case with the reason, and the command goes on to the next case and exits 1.
func TestPluginTestCommandSurvivesMisbehaviour(t *testing.T) {
	gatehouse := testbin.Gatehouse(t)
	so := newABIBuilds(t).build(t, testdataPlugin("misbehave"))
	dir := t.TempDir()
	casesFile, step := filepath.Join(dir, "cases.yaml"), filepath.Join(dir, "step.yaml")
	writeFile(t, casesFile, misbehaveCases)
	writeFile(t, step, "- pluginAuth: {name: misbehave, exportedSymbolName: Plugin, config: {}}\n")

	r := abiRun(t, "", nil, gatehouse, "plugin", "test", so, "--config", step, "--cases", casesFile, "--timeout", "300ms", "-o", "json")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	var out struct {
		OK    bool         `json:"ok"`
		Cases []caseResult `json:"cases"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("-o json printed no JSON: %v\n%s", err, r.stdout)
	}
	want := []caseResult{
		{Name: "fine", Want: "allow", Got: "allow", OK: true},
		{Name: "wrong expectation", Want: "deny 403", Got: "deny 418", Problems: []string{"status: got 418, want 403", `body: got "no", want "yes"`}},
		{Name: "panics", Want: "allow", Got: "error", Problems: []string{"failed: panic: misbehave: asked to panic"}},
		{Name: "hangs", Want: "allow", Got: "error", Problems: []string{"failed: Authorize did not return within 300ms (set --timeout to wait longer)"}},
		{Name: "bad header", Want: "allow", Got: "error", Problems: []string{`failed: invalid header in the response: RequestHeaders "x-user": the value has a control byte (such as CR, LF or NUL) at offset 5`}},
		{Name: "crashes", Want: "allow", Got: "error"},
		{Name: "fine after the crash", Want: "allow", Got: "allow", OK: true},
	}
	// The crash's reason names the child's exit and shows what the plugin printed: the
	// panic on its own goroutine, with the plugin's file named as given, not a copy.
	if len(out.Cases) == len(want) && len(out.Cases[5].Problems) == 1 {
		p := out.Cases[5].Problems[0]
		wantPrinted := "died (it exited: exit status 2); it printed:\npanic: misbehave: a panic on the plugin's own goroutine\n"
		if strings.Contains(p, wantPrinted) && strings.Count(p, "\n") <= 13 {
			want[5].Problems = out.Cases[5].Problems
		} else {
			t.Errorf("the crash's reason %q lacks %q, or is not bounded to 12 lines of output", p, wantPrinted)
		}
	}
	if diff := cmp.Diff(want, out.Cases); diff != "" || out.OK {
		t.Errorf("ok %v (want false); cases (-want +got):\n%s", out.OK, diff)
	}

	// The table: one row per case, the reasons under it, and the count.
	r = abiRun(t, "", nil, gatehouse, "plugin", "test", so, "--config", step, "--cases", casesFile, "--timeout", "300ms")
	for _, line := range []string{"CASE", "panics: failed: panic: misbehave: asked to panic", "it printed:\n    panic: misbehave: a panic on the plugin's own goroutine", "2 of 7 cases passed"} {
		if !strings.Contains(r.stdout, line) {
			t.Errorf("the table lacks %q:\n%s", line, r.stdout)
		}
	}
	if r.code != 1 {
		t.Errorf("table run: exit %d, want 1", r.code)
	}

	// Only the good cases: exit 0.
	good := strings.Join(strings.Split(misbehaveCases, "\n")[:4], "\n") + "\n"
	writeFile(t, casesFile, good)
	if r := abiRun(t, "", nil, gatehouse, "plugin", "test", so, "--config", step, "--cases", casesFile); r.code != 0 || !strings.Contains(r.stdout, "1 of 1 cases passed") {
		t.Errorf("passing cases: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	// A cases file with mistakes is bad usage, reported all at once.
	writeFile(t, casesFile, "cases:\n- request: {}\n  want: {decision: maybe}\n- name: x\n  want: {decision: allow, status: 401}\n")
	r = abiRun(t, "", nil, gatehouse, "plugin", "test", so, "--config", step, "--cases", casesFile)
	for _, want := range []string{"cases[0]: no name", `cases[0] (): want: decision "maybe": want "allow" or "deny"`, "cases[1] (x): want: status and body are for a deny, not an allow"} {
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("bad cases: exit %d, stderr lacks %q:\n%s", r.code, want, r.stderr)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
