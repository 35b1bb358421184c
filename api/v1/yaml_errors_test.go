package v1_test

import (
	"strings"
	"testing"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// Regression: yaml.v3 counts the lines of its parser's errors from 0 (its scanner's
// from 1), so half the syntax errors pointed one line above the problem. Each case
// marks with ← the line an editor shows for it.
func TestSyntaxErrorLines(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{
			name: "unclosed flow sequence",
			yaml: "a: 1\nb: [1,\n  2\nc: 3\n", // ← 4, in what opens on 2
			want: "x.yaml:4: document 1: yaml: did not find expected ',' or ']' (in what starts on line 2)",
		},
		{
			name: "unclosed flow mapping",
			yaml: "a: 1\nb: {x: 1\n", // ← 3 (the end), in what opens on 2
			want: "x.yaml:3: document 1: yaml: did not find expected ',' or '}' (in what starts on line 2)",
		},
		{
			name: "key at the wrong indentation",
			yaml: "a: 1\nb:\n  c: 1\n d: 2\n", // ← 4
			want: "x.yaml:4: document 1: yaml: did not find expected key",
		},
		{
			name: "mapping inside a sequence",
			yaml: "a: 1\nb:\n  - x\n  y: 2\n", // ← 4, in what starts on 3
			want: "x.yaml:4: document 1: yaml: did not find expected '-' indicator (in what starts on line 3)",
		},
		{
			name: "scanner: tab in a later document",
			yaml: "a: 1\n---\nkind: Upstream\n\tmetadata: {}\n", // ← 4, in what starts on 3
			want: "x.yaml:4: document 2: yaml: found a tab character that violates indentation (in what starts on line 3)",
		},
		{
			name: "scanner: tab",
			yaml: "a: 1\n\tb: 2\n", // ← 2
			want: "x.yaml:2: document 1: yaml: found a tab character that violates indentation",
		},
		{
			name: "scanner: unclosed quote",
			yaml: "a: 1\nb: \"x\nc: 2\n", // ← 4 (the end), in what opens on 2
			want: "x.yaml:4: document 1: yaml: found unexpected end of stream (in what starts on line 2)",
		},
		{
			name: "scanner: mapping value in a plain scalar",
			yaml: "a: 1\nb:\n  c: 1\n   d: 2\n", // ← 4
			want: "x.yaml:4: document 1: yaml: mapping values are not allowed in this context",
		},
		{
			name: "later document: lines count from the file's start",
			yaml: "a: 1\n---\na: 1\nb:\n  c: 1\n d: 2\n", // ← 6, in what starts on 3
			want: "x.yaml:6: document 2: yaml: did not find expected key (in what starts on line 3)",
		},
		{
			name: "unclosed on the first line",
			yaml: "[a\n", // ← 2 (the end)
			want: "x.yaml:2: document 1: yaml: did not find expected ',' or ']'",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The syntax error comes last, after the errors of the documents before.
			err := (&apiv1.Set{}).Add([]byte(tt.yaml), "x.yaml")
			if err == nil || err.Error() != tt.want && !strings.HasSuffix(err.Error(), "\n"+tt.want) {
				t.Errorf("Add error = %v\nwant it to end with %s", err, tt.want)
			}
		})
	}
}
