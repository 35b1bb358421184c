package translate_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/controlplane/translate"
)

func known(names ...string) func(string) bool {
	return func(n string) bool {
		for _, k := range names {
			if k == n {
				return true
			}
		}
		return false
	}
}

func key(n string) string { return "0." + n }

func TestParseTemplate(t *testing.T) {
	type part = translate.TemplatePart
	tests := []struct {
		name    string
		text    string
		want    []part
		wantErr string
	}{
		{name: "literal only", text: "Bearer x", want: []part{{Text: "Bearer x"}}},
		{name: "empty", text: "", want: nil},
		{name: "reference with spaces", text: "Bearer {{ token }}", want: []part{{Text: "Bearer "}, {Value: "0.token"}}},
		{name: "reference without spaces", text: "{{token}}", want: []part{{Value: "0.token"}}},
		{name: "two references and text", text: "{{ a }}-{{b}}!", want: []part{{Value: "0.a"}, {Text: "-"}, {Value: "0.b"}, {Text: "!"}}},
		{name: "single braces are text", text: "{a} }}", want: []part{{Text: "{a} }}"}}},
		{name: "unknown name", text: "{{ nope }}", wantErr: `{{ nope }}: no extractor is named "nope"`},
		{name: "unclosed", text: "x {{ a", wantErr: `"{{" at byte 2 is not closed by "}}"`},
		{name: "expression", text: `{{ header("x") }}`, wantErr: `only an extractor name may stand`},
		{name: "empty braces", text: "{{}}", wantErr: `only an extractor name may stand`},
		{name: "lua is text, never code", text: `"]] .. os.exit() .. [[`, want: []part{{Text: `"]] .. os.exit() .. [[`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := translate.ParseTemplate(tt.text, known("a", "b", "token"), key)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParseTemplate: the parser never panics; what it accepts has no "{{" left in its
// text parts, and writing the parts back as a template parses to the same parts.
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{"", "Bearer {{ token }}", "{{a}}{{b}}", "{{", "}}", "{{ a }", "{ {a} }", "{{ a }}}}", "{{{{a}}}}", "x{{\ta\n}}y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		parts, err := translate.ParseTemplate(text, known("a", "b", "token"), key)
		if err != nil {
			return
		}
		var b strings.Builder
		for _, p := range parts {
			if p.Value != "" {
				if p.Text != "" {
					t.Fatalf("part %+v is both text and a reference", p)
				}
				b.WriteString("{{ " + strings.TrimPrefix(p.Value, "0.") + " }}")
				continue
			}
			if strings.Contains(p.Text, "{{") {
				t.Fatalf("text part %q holds \"{{\"", p.Text)
			}
			b.WriteString(p.Text)
		}
		again, err := translate.ParseTemplate(b.String(), known("a", "b", "token"), key)
		if err != nil {
			t.Fatalf("%q (from %q) does not parse again: %v", b.String(), text, err)
		}
		if diff := cmp.Diff(parts, again); diff != "" {
			t.Fatalf("round trip of %q differs (-first +again):\n%s", text, diff)
		}
	})
}
