package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// The generated section of BENCHMARKS.md lies between these markers, so other
// sections (written by hand or by other benchmarks) can live beside it.
const (
	startMarker = "<!-- bench:plugin:start -->"
	endMarker   = "<!-- bench:plugin:end -->"
)

// sectionHeading introduces the section when the markers are not there yet.
const sectionHeading = "## Plugin chain: gatehouse against a bare ext_authz server (`make bench`)\n\n"

// updateSection puts text between the markers of file, creating the file or adding
// the section at its end when needed, and leaves everything else as it was.
func updateSection(file, text string) error {
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	doc, err := replaceSection(string(old), text)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return os.WriteFile(file, []byte(doc), 0o644)
}

// replaceSection returns doc with text between the markers.
func replaceSection(doc, text string) (string, error) {
	block := startMarker + "\n" + strings.TrimRight(text, "\n") + "\n" + endMarker
	ns, ne := strings.Count(doc, startMarker), strings.Count(doc, endMarker)
	switch {
	case ns == 0 && ne == 0:
		if doc == "" {
			doc = "# Benchmarks\n"
		}
		return strings.TrimRight(doc, "\n") + "\n\n" + sectionHeading + block + "\n", nil
	case ns != 1 || ne != 1:
		return "", fmt.Errorf("want one %s and one %s, found %d and %d: fix the file by hand", startMarker, endMarker, ns, ne)
	}
	i, j := strings.Index(doc, startMarker), strings.Index(doc, endMarker)
	if j < i {
		return "", fmt.Errorf("%s comes before %s: fix the file by hand", endMarker, startMarker)
	}
	return doc[:i] + block + doc[j+len(endMarker):], nil
}
