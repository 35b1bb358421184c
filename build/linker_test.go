package build_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/build"
	"gatehouse.dev/gatehouse/loader"
)

// tinyModule writes a plugin module with no dependencies and returns its folder.
func tinyModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":  "module example.com/tiny\n\ngo 1.26\n",
		"main.go": "package main\n\nvar Plugin = \"tiny\"\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func hostLike() *loader.Contract {
	return &loader.Contract{GoVersion: runtime.Version(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		Settings: map[string]string{"CGO_ENABLED": "1"}}
}

// TestALinkerThatFailsGivesWayToTheDefault builds with a linker the C compiler does not
// know: the build still succeeds, says why it changed linkers, and the next build links
// with the default at once.
func TestALinkerThatFailsGivesWayToTheDefault(t *testing.T) {
	var log strings.Builder
	rb := &build.Rebuilder{Options: build.Options{Module: tinyModule(t), Out: t.TempDir(), Contract: hostLike(),
		OmitDWARF: true, Linker: "no-such-linker", Log: &log}}
	defer rb.Close()
	const note = "the no-such-linker linker failed"
	for i := 1; i <= 2; i++ {
		res, err := rb.Build(context.Background())
		if err != nil {
			t.Fatalf("build %d: %v\n%s", i, err, log.String())
		}
		if _, err := os.Stat(res.Path); err != nil {
			t.Fatalf("build %d: %v", i, err)
		}
		if n := strings.Count(log.String(), note); n != 1 {
			t.Fatalf("after build %d the log says %q %d times, want once:\n%s", i, note, n, log.String())
		}
	}
	if n := strings.Count(log.String(), "-fuse-ld=no-such-linker"); n != 1 {
		t.Fatalf("%d builds ran with the failing linker, want 1:\n%s", n, log.String())
	}
}

// TestTheFastLinkerLinksAPlugin builds with the linker FastLinker picks on this machine,
// if any, and finds no fallback needed.
func TestTheFastLinkerLinksAPlugin(t *testing.T) {
	ld := build.FastLinker(context.Background(), "")
	t.Logf("fast linker here: %q", ld)
	var log strings.Builder
	rb := &build.Rebuilder{Options: build.Options{Module: tinyModule(t), Out: t.TempDir(), Contract: hostLike(),
		OmitDWARF: true, Linker: ld, Log: &log}}
	defer rb.Close()
	if _, err := rb.Build(context.Background()); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if strings.Contains(log.String(), "linker failed") {
		t.Fatalf("the linker FastLinker chose failed:\n%s", log.String())
	}
	if ld != "" && !strings.Contains(log.String(), "-extldflags=-fuse-ld="+ld) {
		t.Fatalf("the build did not use %s:\n%s", ld, log.String())
	}
}
