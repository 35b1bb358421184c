package testbin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadmeBlock returns the fenced block that follows marker (an HTML comment) in the
// repository's README.md, so a test runs exactly what the README shows.
func ReadmeBlock(t testing.TB, marker string) string {
	t.Helper()
	return DocBlock(t, "README.md", marker)
}

// DocBlock returns the fenced block that follows marker (an HTML comment) in the
// document doc (a path from the repository root), so a test runs exactly what it shows.
func DocBlock(t testing.TB, doc, marker string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Root(t), doc))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), marker)
	if !ok {
		t.Fatalf("%s has no %q", doc, marker)
	}
	_, rest, _ = strings.Cut(rest, "```")
	_, rest, _ = strings.Cut(rest, "\n") // the fence's info string
	body, _, ok := strings.Cut(rest, "```")
	if !ok {
		t.Fatalf("%s: the block after %q does not end", doc, marker)
	}
	return body
}

// ConsoleStep is one "$ command" of a console block and the output shown under it.
type ConsoleStep struct {
	Command string
	Output  string
}

// ConsoleSteps splits a console block into its commands and their outputs.
func ConsoleSteps(body string) []ConsoleStep {
	var out []ConsoleStep
	for _, line := range strings.Split(strings.TrimRight(body, "\n"), "\n") {
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			out = append(out, ConsoleStep{Command: cmd})
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].Output += line + "\n"
		}
	}
	return out
}
