package build_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/build"
)

// TestOnlyACodeChangeIsReplayed builds a module again and again with Replay: a save of
// code alone replays the last compile and link and writes a new plugin; a new import
// runs go build again; a compile error reads as the compiler wrote it, with none of
// the commands -x printed.
func TestOnlyACodeChangeIsReplayed(t *testing.T) {
	dir := tinyModule(t)
	var log strings.Builder
	rb := &build.Rebuilder{Options: build.Options{Module: dir, Out: t.TempDir(), Contract: hostLike(),
		OmitDWARF: true, Replay: true, Log: &log}}
	defer rb.Close()
	const replayed = "replayed the last build's compile and link"
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var last []byte
	rebuild := func(wantReplayed int) {
		t.Helper()
		res, err := rb.Build(context.Background())
		if err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		if n := strings.Count(log.String(), replayed); n != wantReplayed {
			t.Fatalf("%d builds replayed, want %d:\n%s", n, wantReplayed, log.String())
		}
		data, err := os.ReadFile(res.Path)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) == string(last) {
			t.Fatal("the build wrote the same plugin as the one before")
		}
		last = data
	}

	rebuild(0)
	write("package main\n\nvar Plugin = \"tiny, edited\"\n")
	rebuild(1)
	write("package main\n\nvar Plugin = \"tiny, edited again\"\n")
	rebuild(2)
	write("package main\n\nimport \"strings\"\n\nvar Plugin = strings.ToUpper(\"tiny\")\n")
	rebuild(2) // a new import: go build
	write("package main\n\nimport \"strings\"\n\nvar Plugin = strings.ToLower(\"TINY\")\n")
	rebuild(3)

	write("package main\n\nimport \"strings\"\n\nvar Plugin = strings.ToLower(undefined)\n")
	_, err := rb.Build(context.Background())
	var ce *build.CommandError
	if !errors.As(err, &ce) || !strings.Contains(ce.Stderr, "undefined: undefined") {
		t.Fatalf("a compile error: %v", err)
	}
	for _, l := range strings.Split(ce.Stderr, "\n") {
		if strings.HasPrefix(l, "WORK=") || strings.Contains(l, "/compile ") || strings.Contains(l, "packagefile ") {
			t.Fatalf("the compile error carries what -x printed:\n%s", ce.Stderr)
		}
	}
}
