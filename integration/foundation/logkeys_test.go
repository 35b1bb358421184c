package foundation_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// duplicateKeys returns the keys that a JSON log line holds more than once (top level).
func duplicateKeys(line string) []string {
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	seen := map[string]bool{}
	var dups []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return dups
		}
		key, _ := tok.(string)
		if seen[key] {
			dups = append(dups, key)
		}
		seen[key] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return dups
		}
	}
	return dups
}

// checkLogKeys fails t for every log line of output that repeats a key: log pipelines
// reject or mangle such lines (issue 12, finding 15).
func checkLogKeys(t *testing.T, output string) {
	t.Helper()
	for _, line := range strings.Split(output, "\n") {
		if dups := duplicateKeys(line); len(dups) > 0 {
			t.Errorf("log line repeats %v: %s", dups, line)
		}
	}
}

func TestDuplicateKeys(t *testing.T) {
	if got := duplicateKeys(`{"level":"info","component":"dev","component":"gateway","x":{"a":1,"a":2}}`); len(got) != 1 || got[0] != "component" {
		t.Errorf("duplicateKeys = %v, want [component]", got)
	}
	if got := duplicateKeys(`{"level":"info","step":"oidc"}`); len(got) != 0 {
		t.Errorf("duplicateKeys = %v, want none", got)
	}
}
