package translate

import (
	"fmt"
	"strings"
)

// ParseTemplate splits a header template into literal text and references written
// {{ name }} (spaces inside the braces optional). known says whether a name is an
// extractor; the reference's Value is key(name). Anything else between "{{" and "}}"
// and an unclosed "{{" are errors: a template is data, never code.
func ParseTemplate(text string, known func(string) bool, key func(string) string) ([]TemplatePart, error) {
	var parts []TemplatePart
	lit := func(s string) {
		if s == "" {
			return
		}
		if n := len(parts); n > 0 && parts[n-1].Value == "" {
			parts[n-1].Text += s
			return
		}
		parts = append(parts, TemplatePart{Text: s})
	}
	rest := text
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			lit(rest)
			return parts, nil
		}
		lit(rest[:i])
		end := strings.Index(rest[i+2:], "}}")
		if end < 0 {
			return nil, fmt.Errorf("%q at byte %d is not closed by \"}}\"", "{{", len(text)-len(rest)+i)
		}
		name := strings.TrimSpace(rest[i+2 : i+2+end])
		switch {
		case !isIdentifier(name):
			return nil, fmt.Errorf("{{ %s }}: only an extractor name may stand between \"{{\" and \"}}\"", name)
		case !known(name):
			return nil, fmt.Errorf("{{ %s }}: no extractor is named %q", name, name)
		}
		parts = append(parts, TemplatePart{Value: key(name)})
		rest = rest[i+2+end+2:]
	}
}

// isIdentifier: a letter or "_", then letters, digits and "_".
func isIdentifier(s string) bool {
	for i, r := range s {
		letter := r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return s != ""
}
