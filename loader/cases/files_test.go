package cases_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/loader/cases"
)

// TestReadFileTakesYAML: a cases file in YAML reads as the same cases in JSON do.
func TestReadFileTakesYAML(t *testing.T) {
	dir := t.TempDir()
	yml := filepath.Join(dir, "cases.yaml")
	js := filepath.Join(dir, "cases.json")
	os.WriteFile(yml, []byte("cases:\n- name: allowed\n  request: {headers: {x-api-key: k}}\n  want: {decision: allow}\n"), 0o644)
	os.WriteFile(js, []byte(`{"cases": [{"name": "allowed", "request": {"headers": {"x-api-key": "k"}}, "want": {"decision": "allow"}}]}`), 0o644)
	a, err := cases.ReadFile(yml)
	if err != nil {
		t.Fatal(err)
	}
	b, err := cases.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(b, a); d != "" || len(a) != 1 {
		t.Errorf("YAML and JSON differ (-json +yaml), %d cases:\n%s", len(a), d)
	}
	if _, err := cases.ReadFile(filepath.Join(dir, "none.yaml")); err == nil {
		t.Error("a missing file read without an error")
	}
}

// TestWriteTableCountsAndExplainsFailures: every case in the table, each failure's
// problems below it (continuation lines indented), and the count that passed.
func TestWriteTableCountsAndExplainsFailures(t *testing.T) {
	var b strings.Builder
	err := cases.WriteTable(&b, []cases.Result{
		{Name: "allowed", Want: "allow", Got: "allow", OK: true, Duration: 123 * time.Microsecond},
		{Name: "crash", Want: "deny 403", Got: "error", Problems: []string{"the plugin crashed:\npanic: boom"}, Duration: time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "CASE     WANT      GOT    TIME   RESULT\n" +
		"allowed  allow     allow  120µs  ok\n" +
		"crash    deny 403  error  1ms    FAIL\n" +
		"crash: the plugin crashed:\n    panic: boom\n" +
		"1 of 2 cases passed\n"
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
