package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// mention is a gatehouse command line in a document: in backquotes or after "$ ".
var mention = regexp.MustCompile("(?:`|\\$ )gatehouse((?: [a-z][a-z0-9_-]*)+)")

// Regression (issue 12, finding 17): examples/oidc/secret.yaml told readers to run
// `gatehouse create secret oauth`, a command that does not exist. Every gatehouse
// command the README, docs/ and examples/ mention must be one.
func TestDocumentedCommandsExist(t *testing.T) {
	root := &cobra.Command{Use: "gatehouse"}
	for _, c := range commands {
		root.AddCommand(c(io.Discard, io.Discard))
	}
	var files []string
	for _, pattern := range []string{"../../README.md", "../../docs/*.md", "../../examples/*/*", "../../deploy/helm/*.md"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	seen := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // a folder
		}
		for _, m := range mention.FindAllStringSubmatch(string(b), -1) {
			seen++
			words := strings.Fields(m[1])
			cmd, rest, err := root.Find(words)
			if err != nil || cmd == root || len(rest) > 0 && cmd.HasSubCommands() {
				t.Errorf("%s mentions `gatehouse %s`, which is not a gatehouse command", f, strings.Join(words, " "))
			}
		}
	}
	if seen < 10 {
		t.Errorf("found only %d gatehouse command lines in %v; is the pattern still right?", seen, files)
	}
}
