package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// section is a generated part of BENCHMARKS.md: the text between
// <!-- bench:NAME:start --> and <!-- bench:NAME:end -->, so other sections (written by
// hand or by other benchmarks) can live beside it.
type section struct {
	name    string // "plugin", "oidc", "pluginload"
	heading string // introduces the section when its markers are not there yet
}

var (
	pluginSection = section{name: "plugin",
		heading: "## Plugin chain: gatehouse against a bare ext_authz server (`make bench`)\n\n"}
	oidcSection = section{name: "oidc",
		heading: "## OIDC login step: Checks with a valid session (`make bench`)\n\n"}
	pluginLoadSection = section{name: "pluginload",
		heading: "## Plugin load time: a new .so until it serves (`make bench`)\n\n"}
)

func (s section) start() string { return "<!-- bench:" + s.name + ":start -->" }
func (s section) end() string   { return "<!-- bench:" + s.name + ":end -->" }

// update puts text between the markers of s in file, creating the file or adding the
// section at its end when needed, and leaves everything else as it was.
func (s section) update(file, text string) error {
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	doc, err := s.replace(string(old), text)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return os.WriteFile(file, []byte(doc), 0o644)
}

// replace returns doc with text between the markers of s.
func (s section) replace(doc, text string) (string, error) {
	start, end := s.start(), s.end()
	block := start + "\n" + strings.TrimRight(text, "\n") + "\n" + end
	ns, ne := strings.Count(doc, start), strings.Count(doc, end)
	switch {
	case ns == 0 && ne == 0:
		if doc == "" {
			doc = "# Benchmarks\n"
		}
		return strings.TrimRight(doc, "\n") + "\n\n" + s.heading + block + "\n", nil
	case ns != 1 || ne != 1:
		return "", fmt.Errorf("want one %s and one %s, found %d and %d: fix the file by hand", start, end, ns, ne)
	}
	i, j := strings.Index(doc, start), strings.Index(doc, end)
	if j < i {
		return "", fmt.Errorf("%s comes before %s: fix the file by hand", end, start)
	}
	return doc[:i] + block + doc[j+len(end):], nil
}
